"""PyPTO's core namespace for the passes (``pypto.pypto_core.passes``): the same module as
``pypto.passes`` (the passes by name, ``PassContext``, ``MemoryPlanner``, ...)."""

from pypto.passes import *  # noqa: F401,F403 - one module under both of PyPTO's names
from pypto.passes import __all__  # noqa: F401
