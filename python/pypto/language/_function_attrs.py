"""Values that PyPTO programs pass in ``@pl.function(attrs={...})``.

They are hints for PyPTO's hardware back end; the C++ parser keeps them, as written, to print
them back. They do not change what a function computes on the simulated device.
"""

import enum

__all__ = ["SplitMode"]


class SplitMode(str, enum.Enum):
    """How a cross-core transfer between a cube (AIC) and vector (AIV) kernel is split between
    the two vector cores: not at all, by rows (``UP_DOWN``) or by columns (``LEFT_RIGHT``)."""

    NONE = "NONE"
    UP_DOWN = "UP_DOWN"
    LEFT_RIGHT = "LEFT_RIGHT"

    def __repr__(self):
        return "pl.SplitMode." + self.value
