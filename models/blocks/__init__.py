"""Shared building blocks that the architecture models are composed from.

Blocks are plain, vectorized functions with explicit parameters (no classes to
instantiate, no global state beyond read-only tables):

* ``link``       PCIe 1.0-7.0 and CXL 1.1-4.0 links: raw bandwidth by generation and lanes,
                 TLP / flit overheads, CXL.mem protocol efficiency of the 68 B, 256 B and
                 latency-optimized 256 B flits for a read/write mix, serialization, port /
                 switch / retimer latency, NVMe command overheads, RDMA and TCP round trips.
* ``cache``      hit rate of a (DRAM) cache in front of slower media: working-set model for
                 Zipf / power-law reuse, Che's approximation of LRU, stride and prefetch
                 coverage of streams, and a trace-driven path through libCacheSim.
* ``cost``       bill-of-materials lines and totals, capex amortization (straight line or
                 with a cost of capital), energy cost, TCO, and dated price tables
                 (``prices/``: cloud object storage tiers, cloud instances, components).
* ``energy``     per-operation energy: link pJ/bit, DRAM activate/read/write/refresh and
                 background power from IDD currents, flash page operations from ICC x VCC.
* ``queueing``   M/M/1, M/M/c, M/G/1, M/D/1, tail percentiles, mean-value analysis.
* ``dram``       idle and loaded latency, sustainable bandwidth of a DRAM channel from its
                 timings (calibrated against DRAMsim3, ``results/calibration/dram.toml``).
* ``flash``      a NAND/Z-NAND/Optane-class SSD backend as a queueing network, saturation
                 IOPS, GC write amplification (calibrated against MQSim, ``flash.toml``).
* ``memssd``     a CXL-attached SSD used as memory (internal DRAM cache in front of flash),
                 shared by the cxl-ssd and expand models.
* ``calibration`` loading of the fitted constants (``DSE_CALIBRATION``).
* ``llm/``       transformer training and inference over memory tiers (Calculon's method).

Conventions
-----------
* **Vectorized.** Every numeric argument may be a scalar or a numpy array; arrays
  broadcast against each other and results come back as numpy arrays (0-d for scalar
  inputs).  Categorical arguments (PCIe generation, flit mode, cache policy, storage
  tier, ...) take a label, a sequence of labels, or an integer array of codes into the
  module's label tuple (e.g. ``link.FLIT_MODES``), so a model can pass
  ``Batch`` codes straight through when its ``Param.choices`` is that tuple.
* **Units in names.** ``_ns``, ``_gbps`` (GB/s = 1e9 B/s), ``_gbit_s`` (1e9 bit/s), ``_b``
  (bytes), ``_gib``, ``_usd``, ``_w``, ``_pj`` ...; see :mod:`dse.units`.
* **Sources.** Every constant is defined once, next to a comment or table column naming
  its source (a specification section, a paper, a datasheet, a digest in
  ``shared/research/``) or saying ``assumption:`` and why.
* **Errors.** Bad labels or out-of-range inputs raise :class:`dse.errors.DseError` with the
  allowed values.
"""
