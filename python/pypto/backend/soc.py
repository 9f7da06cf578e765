"""PyPTO's model of a chip (``pypto.backend.Backend910B.instance().soc`` and the like): dies of
clusters of cores, each core with its on-chip memories, and the moves between memories.

The core counts are the chips' (Ascend910B: 24 cube and 48 vector cores on one die; Ascend950:
two dies of 18 clusters of one cube and two vector cores), which programs size their launches
by (``pl.spmd(48)`` for a barrier over every vector core). The memories and moves are the ones
this compiler enforces for the platform, read from the C++ core (``ir::memory_space_capacity``,
``ir::is_legal_transfer``): the capacities AllocateMemoryAddr checks (one set for both chips, as
the simulated device has), a 64-byte alignment (its allocator's), and no Bias buffer, which this
compiler has no memory space for. The simulated device runs a launch's blocks on ``RunConfig.workers``
threads, however many cores the model has.
"""

import abc
import enum
from typing import Dict, List, Optional, Tuple

from pypto import _core

__all__ = ["CoreType", "Mem", "Core", "Cluster", "Die", "SoC", "Backend", "Backend910B",
           "Backend950", "get_backend_instance"]

ALIGNMENT = 64  # AllocateMemoryAddr's (src/passes/allocate_memory_addr.cpp)


class CoreType(enum.IntEnum):
    """The kind of an AI core: a vector core (AIV) or a cube core (AIC)."""

    VECTOR = 0
    CUBE = 1


def _memory_space(name: str):
    from pypto.language import MemorySpace  # noqa: PLC0415 - language imports this package

    return MemorySpace[name]


class Mem:
    """An on-chip memory of a core: its space, its size in bytes and its alignment."""

    __slots__ = ("mem_type", "mem_size", "alignment")

    def __init__(self, mem_type, mem_size: int, alignment: int) -> None:
        self.mem_type = mem_type
        self.mem_size = int(mem_size)
        self.alignment = int(alignment)

    def _key(self) -> tuple:
        return (str(self.mem_type), self.mem_size, self.alignment)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mem) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Mem({self.mem_type}, {self.mem_size}, {self.alignment})"


class Core:
    """A core of one kind with its memories."""

    __slots__ = ("core_type", "mems")

    def __init__(self, core_type: CoreType, mems: List[Mem]) -> None:
        self.core_type = CoreType(core_type)
        self.mems = list(mems)

    def _key(self) -> tuple:
        return (self.core_type, tuple(self.mems))

    def __eq__(self, other) -> bool:
        return isinstance(other, Core) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Core({self.core_type.name}, {self.mems})"


class Cluster:
    """Cores scheduled together: how many of each."""

    __slots__ = ("core_counts",)

    def __init__(self, core_counts: Dict[Core, int]) -> None:
        self.core_counts = dict(core_counts)

    def total_core_count(self) -> int:
        return sum(self.core_counts.values())

    def __eq__(self, other) -> bool:
        return isinstance(other, Cluster) and self.core_counts == other.core_counts

    def __hash__(self) -> int:
        return hash(tuple(sorted((hash(c), n) for c, n in self.core_counts.items())))


class Die:
    """A die: how many clusters of each kind."""

    __slots__ = ("cluster_counts",)

    def __init__(self, cluster_counts: Dict[Cluster, int]) -> None:
        self.cluster_counts = dict(cluster_counts)

    def total_cluster_count(self) -> int:
        return sum(self.cluster_counts.values())

    def total_core_count(self) -> int:
        return sum(c.total_core_count() * n for c, n in self.cluster_counts.items())

    def __eq__(self, other) -> bool:
        return isinstance(other, Die) and self.cluster_counts == other.cluster_counts

    def __hash__(self) -> int:
        return hash(tuple(sorted((hash(c), n) for c, n in self.cluster_counts.items())))


class SoC:
    """A chip: how many dies of each kind."""

    __slots__ = ("die_counts",)

    def __init__(self, die_counts: Dict[Die, int]) -> None:
        self.die_counts = dict(die_counts)

    def total_die_count(self) -> int:
        return sum(self.die_counts.values())

    def total_cluster_count(self) -> int:
        return sum(d.total_cluster_count() * n for d, n in self.die_counts.items())

    def total_core_count(self) -> int:
        return sum(d.total_core_count() * n for d, n in self.die_counts.items())


def _core_memories(core_type: CoreType) -> List[Mem]:
    """The memories of one kind of core, with the compiler's capacities."""
    names = ("Vec",) if core_type == CoreType.VECTOR else ("Mat", "Left", "Right", "Acc")
    sizes = dict(_core.ir.memory_spaces())
    return [Mem(_memory_space(n), sizes[n], ALIGNMENT) for n in names]


class Backend(abc.ABC):
    """A chip generation: its SoC model and the platform its programs compile for."""

    _type_name = ""
    _platform = ""
    _instance: Optional["Backend"] = None

    def __init__(self) -> None:
        self._soc = self._build_soc()

    @classmethod
    def instance(cls) -> "Backend":
        """The one instance of this backend."""
        if cls.__dict__.get("_instance") is None:
            cls._instance = cls()
        return cls._instance

    @abc.abstractmethod
    def _build_soc(self) -> SoC:
        """The chip model of this backend (each concrete backend builds its own)."""

    @property
    def soc(self) -> SoC:
        return self._soc

    def get_type_name(self) -> str:
        return self._type_name

    def get_core_count(self, core_type: CoreType) -> int:
        """How many cores of ``core_type`` the chip has."""
        total = 0
        for die, dies in self._soc.die_counts.items():
            for cluster, clusters in die.cluster_counts.items():
                for core, cores in cluster.core_counts.items():
                    if core.core_type == core_type:
                        total += cores * clusters * dies
        return total

    def get_mem_size(self, mem_type) -> int:
        """The bytes of memory space ``mem_type`` on one core (0 for global memory)."""
        return dict(_core.ir.memory_spaces())[_space_name(mem_type)]

    def find_mem_path(self, from_mem, to_mem) -> list:
        """The shortest chain of direct moves from one memory space to another, both ends
        included ([] when there is none)."""
        moves = _core.ir.legal_transfers(self._platform)
        start, goal = _space_name(from_mem), _space_name(to_mem)
        paths: Dict[str, Tuple[str, ...]] = {start: (start,)}
        frontier = [start]
        while frontier and goal not in paths:
            following = []
            for here in frontier:
                for source, target in moves:
                    if source == here and target not in paths:
                        paths[target] = paths[here] + (target,)
                        following.append(target)
            frontier = following
        return [_memory_space(n) for n in paths.get(goal, ())]


def _space_name(space) -> str:
    return getattr(space, "name", str(space).rsplit(".", 1)[-1])


class Backend910B(Backend):
    """Ascend910B (the a2a3 platforms): one die of 24 cube and 48 vector cores."""

    _type_name = "910B"
    _platform = "a2a3"

    def _build_soc(self) -> SoC:
        cube = Cluster({Core(CoreType.CUBE, _core_memories(CoreType.CUBE)): 1})
        vector = Cluster({Core(CoreType.VECTOR, _core_memories(CoreType.VECTOR)): 1})
        return SoC({Die({cube: 24, vector: 48}): 1})


class Backend950(Backend):
    """Ascend950 (the a5 platforms): two dies of 18 clusters of one cube and two vector cores."""

    _type_name = "950"
    _platform = "a5"

    def _build_soc(self) -> SoC:
        cluster = Cluster({Core(CoreType.CUBE, _core_memories(CoreType.CUBE)): 1,
                           Core(CoreType.VECTOR, _core_memories(CoreType.VECTOR)): 2})
        return SoC({Die({cluster: 18}): 2})


def get_backend_instance(backend_type) -> Backend:
    """The Backend of a BackendType, whatever backend the process is configured with."""
    from pypto.backend import BackendType  # noqa: PLC0415 - the package imports this module

    if backend_type == BackendType.Ascend950:
        return Backend950.instance()
    if backend_type == BackendType.Ascend910B:
        return Backend910B.instance()
    raise TypeError(f"get_backend_instance expects a pypto.backend.BackendType, got "
                    f"{backend_type!r}")
