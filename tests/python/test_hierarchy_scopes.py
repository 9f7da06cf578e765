"""Hierarchy scopes: `with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):` (any level
above CORE_GROUP) in an orchestrator. OutlineHierarchyScopes makes each block a function of
that level and role, named `<func>_<level>[_orch]_<n>` (or by its name_hint), and a call where
the block was; in a host orchestrator each CHIP block is then a chip orchestration the host
dispatches, and the CORE_GROUP scopes inside it become its kernels."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.errors import ParseError
from pypto.ir.distributed_compiled_program import DistributedConfig

N = 32


@pl.program
class TwoChipBlocks:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  total: pl.Out[pl.Tensor[[N, N], pl.FP32]],
                  diff: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                s = pl.add(a, b)
                total_out = pl.assemble(total, pl.mul(s, 2.0), [0, 0])
        with pl.at(level=pl.Level.UMA, role=pl.Role.Orchestrator, name_hint="subtract"):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(diff, pl.sub(a, b), [0, 0])
        return total_out


@pl.program
class HostScopeInMain:
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
            y: pl.Tensor[[64], pl.FP32] = pl.add(x, x)
            with pl.at(level=pl.Level.POD):
                z: pl.Tensor[[64], pl.FP32] = pl.mul(y, y)
        return z


def test_chip_blocks_of_a_host_orchestrator_run_as_chip_orchestrations():
    compiled = ir.compile(TwoChipBlocks, distributed_config=DistributedConfig(device_ids=[0, 1]))
    rng = np.random.default_rng(7)
    a = rng.standard_normal((N, N)).astype(np.float32)
    b = rng.standard_normal((N, N)).astype(np.float32)
    total = np.zeros((N, N), np.float32)
    diff = np.zeros((N, N), np.float32)
    compiled(a, b, total, diff)
    np.testing.assert_allclose(total, (a + b) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(diff, a - b, rtol=1e-6)
    # Each block was compiled as a device program of its own. Without device= both run on rank
    # 0, the second after the first (the ranks meet in a barrier between them).
    dispatched = sorted(p.name for p in (compiled.output_dir / "next_levels").iterdir())
    assert dispatched == ["builtin.tensor.barrier__fp32", "host_orch_chip_orch_0", "subtract"]


def test_outlined_functions_carry_the_level_and_role_and_pypto_names():
    after = passes.outline_hierarchy_scopes()(passes.convert_to_ssa()(HostScopeInMain))
    names = [f.name for f in after.functions]
    # Inner blocks first, each named after the function it was outlined from.
    assert names == ["main_host_orch_0_cluster0_0", "main_host_orch_0", "main"]
    host = after.get_function("main_host_orch_0")
    assert (str(host.level), str(host.role)) == ("Level.HOST", "Role.Orchestrator")
    pod = after.get_function("main_host_orch_0_cluster0_0")
    assert str(pod.level) == "Level.CLUSTER_0" and pod.role is None
    text = after.as_python()
    assert "pl.at(level=pl.Level.HOST" not in text
    assert "self.main_host_orch_0(x)" in text


def test_printed_hierarchy_scope_keeps_its_level_and_role():
    text = HostScopeInMain.as_python()
    assert "with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):" in text
    assert "with pl.at(level=pl.Level.CLUSTER_0):" in text


@pytest.mark.parametrize("scope, message", [
    ("with pl.at(level=pl.Level.CHIP, role=pl.Role.SubWorker):",
     "a SubWorker is not a scope: declare it as a function"),
    ("with pl.at(level=pl.Level.CORE_GROUP, role=pl.Role.Orchestrator):",
     "a CORE_GROUP scope is a kernel and has no role"),
    ("with pl.at(level=pl.Level.AIV):",
     "pl.at(level=pl.Level.AIV) is not a scope"),
    ("with pl.at(level=pl.Level.CHIP) as tid:",
     "a hierarchy scope (pl.Level.CHIP) is a call of its own function, not a task"),
])
def test_misused_hierarchy_scopes_are_located_errors(scope, message):
    source = f"""
@pl.program
class Bad:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[8, 8], pl.FP32],
                  out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        {scope}
            out = pl.assemble(out, pl.add(a, a), [0, 0])
        return out
"""
    with pytest.raises(ParseError) as info:
        pl.parse(source)
    assert message in str(info.value)
    assert ":7:" in str(info.value)


def test_a_hierarchy_scope_inside_a_kernel_is_refused():
    with pytest.raises(ParseError, match="a hierarchy scope belongs in an orchestrator"):
        @pl.program
        class InKernel:
            @pl.function(type=pl.FunctionType.InCore)
            def kernel(self, a: pl.Tensor[[8, 8], pl.FP32],
                       out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
                with pl.at(level=pl.Level.CHIP):
                    t = pl.load(a, [0, 0], [8, 8])
                return pl.store(t, [0, 0], out)
