"""PyPTO's ``pypto.runtime.tensor_spec``: the run's tensors (``TensorSpec``, the one class of
``pypto.runtime``, whose ``create_tensor`` makes a torch tensor) and scalar arguments
(``ScalarSpec``).
"""

from dataclasses import dataclass
from typing import Union

from pypto.runtime import TensorSpec

__all__ = ["TensorSpec", "ScalarSpec", "SCALAR_CTYPE_MAP"]

#: A ScalarSpec's ctype name -> the ctypes type that holds its value in golden.py.
SCALAR_CTYPE_MAP = {
    "int64": "ctypes.c_int64",
    "int32": "ctypes.c_int32",
    "uint64": "ctypes.c_uint64",
    "uint32": "ctypes.c_uint32",
    "float": "ctypes.c_float",
    "double": "ctypes.c_double",
}


@dataclass
class ScalarSpec:
    """A scalar argument of the entry function: passed after all the tensors, in order."""

    name: str
    value: Union[int, float]
    ctype: str = "int64"

    def __post_init__(self):
        if self.ctype not in SCALAR_CTYPE_MAP:
            raise ValueError(f"ScalarSpec '{self.name}': ctype {self.ctype!r} is not one of "
                             f"{', '.join(SCALAR_CTYPE_MAP)}")
