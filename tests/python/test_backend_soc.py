"""PyPTO's chip models (pypto.backend.Backend910B / Backend950): core counts by kind, the
memories of each core with the capacities the compiler enforces, and the moves between them."""

import pytest

import pypto.language as pl
from pypto import backend
from pypto.pypto_core import ir as core_ir


def cores(bk, kind):
    total = 0
    for die, dies in bk.soc.die_counts.items():
        for cluster, clusters in die.cluster_counts.items():
            for core, n in cluster.core_counts.items():
                if core.core_type == kind:
                    total += n * clusters * dies
    return total


def test_the_910b_has_24_cube_and_48_vector_cores():
    bk = backend.Backend910B.instance()
    assert bk is backend.Backend910B.instance()  # one instance
    assert core_ir.CoreType is backend.CoreType
    assert cores(bk, core_ir.CoreType.VECTOR) == 48 == bk.get_core_count(backend.CoreType.VECTOR)
    assert cores(bk, core_ir.CoreType.CUBE) == 24 == bk.get_core_count(backend.CoreType.CUBE)
    assert bk.soc.total_die_count() == 1 and bk.soc.total_core_count() == 72
    assert bk.get_type_name() == "910B"


def test_the_950_has_two_dies_of_mixed_clusters():
    bk = backend.get_backend_instance(backend.BackendType.Ascend950)
    assert bk is backend.Backend950.instance()
    assert bk.soc.total_die_count() == 2 and bk.soc.total_cluster_count() == 36
    assert bk.get_core_count(backend.CoreType.CUBE) == 36
    assert bk.get_core_count(backend.CoreType.VECTOR) == 72
    (die,) = bk.soc.die_counts
    (cluster,) = die.cluster_counts
    assert sorted(c.core_type.name for c, n in cluster.core_counts.items() for _ in range(n)) == \
        ["CUBE", "VECTOR", "VECTOR"]


def test_memories_are_the_capacities_the_allocator_enforces(tmp_path):
    bk = backend.Backend910B.instance()
    vector_core = next(c for d in bk.soc.die_counts for cl in d.cluster_counts
                       for c in cl.core_counts if c.core_type == backend.CoreType.VECTOR)
    (vec,) = vector_core.mems
    assert vec.mem_type == pl.MemorySpace.Vec and vec.mem_size == bk.get_mem_size(pl.MemorySpace.Vec)
    assert vec.alignment == 64
    # AllocateMemoryAddr refuses a tile larger than Vec, naming that capacity.
    elements = vec.mem_size // 4

    def program(cols):
        return pl.parse(f"""
import pypto.language as pl

@pl.program
class Fill:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, out: pl.Out[pl.Tensor[[1, {cols}], pl.FP32]]) -> pl.Tensor[[1, {cols}], pl.FP32]:
        t = pl.tile.full([1, {cols}], dtype=pl.FP32, value=1.0)
        return pl.store(t, [0, 0], out)
""")

    from pypto import ir
    from pypto.errors import CompileError

    ir.compile(program(elements // 4), output_dir=str(tmp_path / "fits"))
    with pytest.raises(CompileError, match=f"does not fit in Vec \\(capacity {vec.mem_size} bytes"):
        ir.compile(program(elements + 16), output_dir=str(tmp_path / "over"))


def test_mem_paths_follow_the_platforms_moves():
    a2a3, a5 = backend.Backend910B.instance(), backend.Backend950.instance()
    ms = pl.MemorySpace
    assert a2a3.find_mem_path(ms.DDR, ms.Left) == [ms.DDR, ms.Mat, ms.Left]
    assert a2a3.find_mem_path(ms.Acc, ms.DDR) == [ms.Acc, ms.DDR]
    # a2a3 moves no tile from Vec into the cube's memories but through global memory; a5 does.
    assert a2a3.find_mem_path(ms.Vec, ms.Left) == [ms.Vec, ms.DDR, ms.Mat, ms.Left]
    assert a5.find_mem_path(ms.Vec, ms.Left) == [ms.Vec, ms.Mat, ms.Left]
    assert a2a3.find_mem_path(ms.Left, ms.Vec) == []  # nothing leaves Left but into a matmul
