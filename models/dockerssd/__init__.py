"""DockerSSD (IEEE Micro 2025): containerized in-storage processing (``dockerssd-isp``,
``isp.py``) and computing-enabled SSD pools serving LLMs (``dockerssd-llm``, ``llm.py`` +
``pool.py``).  Shared hardware, tables and prices in ``hardware.py``; fits of the constants
the article does not give in ``calibration.py``; claims of both models in ``claims.yaml``."""

from dse.architecture import Architecture

ARCH = Architecture(
    models={"dockerssd-isp": "isp:DockerSsdIsp", "dockerssd-llm": "llm:DockerSsdLlm"},
    readme_order=3,
    claims="claims.yaml",
    figures="figures:figures",
    calibration="calibration",
    cv="cv",
)
