"""``pl.system.<op>``: synchronisation and system ops (``_ops_system.py``, generated from the
C++ op registry by scripts/gen_ops.py).

On the CPU device a simulated core runs its instructions in order, so the NPU's pipe flags and
barriers (``sync_src``, ``sync_dst``, ``sync_set``, ``sync_wait``, ``bar_v``, ``bar_m``,
``bar_all``) are ordering points, ``fence`` is a memory fence, ``cacheinvalid`` has nothing to
invalidate, and ``syncall`` is a real barrier across the blocks of a ``pl.spmd`` launch (which
must not have more blocks than ``available_cluster_count()``).
"""

from pypto.language._ops_system import *  # noqa: F403 - the namespace is the op list
from pypto.language._ops_system import __all__  # noqa: F401
