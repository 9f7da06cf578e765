"""PyPTO's ``pypto.pypto_core.ir``: the C++ core's IR module (``pypto._core.ir``), whose names
it gives, and ``CoreType`` (the kind of an AI core, which PyPTO's SoC model counts by)."""

from pypto import _core
from pypto.backend.soc import CoreType

__all__ = ["CoreType"]


def __getattr__(name):
    return getattr(_core.ir, name)


def __dir__():
    return sorted(set(dir(_core.ir)) | {"CoreType"})
