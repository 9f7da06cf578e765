"""``pl.tensor.<op>``: PyPTO's namespace of the ops on global tensors. The ops are the same
functions as ``pl.<op>`` (they take tensors or tiles); the parser checks that a
``pl.tensor.<op>`` call is given tensors. ``create`` is ``pl.create_tensor``; ``dump_tag`` is
PyPTO's selective-dump marker."""

from pypto.language._ops import missing_ops as _missing_ops
from pypto.language._ops_generated import *  # noqa: F403 - the namespace is the op list
from pypto.language._ops_generated import __all__ as _generated
from pypto.language._ops_generated import create_tensor as create
from pypto.language._spellings import SCALAR_FORMS as _SCALAR_FORMS
from pypto.language._spellings import dump_tag, full

globals().update(_missing_ops(_generated))
globals().update(_SCALAR_FORMS)
