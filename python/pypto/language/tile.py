"""``pl.tile.<op>``: the same functions as ``pl.<op>`` (PyPTO spells tile ops both ways)."""

from pypto.language._ops import missing_ops as _missing_ops
from pypto.language._ops_generated import *  # noqa: F403 - the namespace is the op list
from pypto.language._ops_generated import __all__ as _generated

globals().update(_missing_ops(_generated))
