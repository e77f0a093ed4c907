"""Architecture models and the shared blocks they are built from.

``REGISTRY`` maps each registered model name to ``"module:Class"``; a model module is
imported only when that model is used, so listing models stays fast.  Third-party
packages can add models through the ``cxl_dse.models`` entry-point group.
"""

REGISTRY: dict[str, str] = {
    "cxl-expander": "models.cxl_expander.model:CxlExpander",
}

# CVXPY provisioning / placement problems for `dse optimize`: name -> "module:function".
OPTIMIZE: dict[str, str] = {
    "cxl-expander-provision": "models.cxl_expander.optimize:provision",
}
