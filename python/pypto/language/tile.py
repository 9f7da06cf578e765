"""``pl.tile.<op>``: the same functions as ``pl.<op>`` (PyPTO spells tile ops both ways), plus
PyPTO's tile-namespace names: ``create`` (``pl.create_tile``), ``full``, ``extract``, the scalar
``max`` / ``min``, the scalar forms ``adds`` / ``subs`` / ``muls`` / ``divs``, and
``MaskPattern`` (the mask forms of ``pl.gather`` / ``pl.scatter``)."""

from pypto.language._ops import missing_ops as _missing_ops
from pypto.language._ops_generated import *  # noqa: F403 - the namespace is the op list
from pypto.language._ops_generated import __all__ as _generated
from pypto.language._ops_generated import create_tile as create
from pypto.language._spellings import SCALAR_FORMS as _SCALAR_FORMS
from pypto.language._spellings import extract, full, max, min  # noqa: A004 - PyPTO's names
from pypto.language._types import MaskPattern  # noqa: F401 - pl.tile.MaskPattern

globals().update(_missing_ops(_generated))
globals().update(_SCALAR_FORMS)
