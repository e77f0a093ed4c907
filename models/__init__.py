"""Architecture models and the shared blocks they are built from.

``REGISTRY`` maps each registered model name to ``"module:Class"``; a model module is
imported only when that model is used, so listing models stays fast.  Third-party
packages can add models through the ``cxl_dse.models`` entry-point group.
"""

REGISTRY: dict[str, str] = {
    "directcxl": "models.directcxl.model:DirectCxl",
    "flexmem": "models.flexmem.model:FlexMem",
    "ginkgo": "models.ginkgo.model:Ginkgo",
    "cxl-expander": "models.cxl_expander.model:CxlExpander",
    "dockerssd-isp": "models.dockerssd.isp:DockerSsdIsp",
    "dockerssd-llm": "models.dockerssd.llm:DockerSsdLlm",
    "cxl-ssd": "models.cxl_ssd.model:CxlSsd",
    "expand": "models.expand.model:Expand",
    "cxl-gpu": "models.cxl_gpu.model:CxlGpu",
    "espresso": "models.espresso.model:Espresso",
    "bandslim": "models.bandslim.model:BandSlim",
    "rdio": "models.rdio.model:RdIO",
    "ncs": "models.ncs.model:Ncs",
    "iks": "models.iks.model:Iks",
    "mhj": "models.mhj.model:Mhj",
    "fs2": "models.fs2.model:Fs2",
    "llm-serve": "models.llm_serve.model:LlmServe",
    "cold-store": "models.cold_store.model:ColdStore",
}

# CVXPY provisioning / placement problems for `dse optimize`: name -> "module:function".
OPTIMIZE: dict[str, str] = {
    "cxl-gpu-llm": "models.cxl_gpu.llm_tier:largest_model",
    "espresso-harvest": "models.espresso.optimize:harvest",
    "cxl-expander-provision": "models.cxl_expander.optimize:provision",
    "ncs-tiers": "models.ncs.optimize:tier_assignment",
    "iks-channel-split": "models.iks.optimize:channel_split",
}
