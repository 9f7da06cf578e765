"""Pass-pipeline options of PyPTO's namespace (``pypto.pypto_core.passes``).

``MemoryPlanner`` names who places on-chip buffers in PyPTO: its own passes (``PYPTO``), its
capacity-constrained planner (``DSA_RP``) or the ptoas assembler (``PTOAS``). The CPU device has
one memory planner (the compiler's own), so every choice compiles the same way here; the value
is accepted so that test cases selecting one run unchanged.
"""

import enum

__all__ = ["MemoryPlanner"]


class MemoryPlanner(enum.Enum):
    PYPTO = "pypto"
    DSA_RP = "dsa-rp"
    PTOAS = "ptoas"
