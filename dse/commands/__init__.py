"""CLI command modules.  Every module here defines ``register(app)`` and is picked up by
``dse.cli``; command bodies import heavy libraries lazily so ``dse --help`` stays fast."""
