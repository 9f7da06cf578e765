"""Host sub-workers bound at run time, as PyPTO declares them: a SubWorker written with a `...`
body is a callback point (`Program.get_function(name).requires_runtime_binding`), which
`prepare(callbacks={name: fn})` binds; the callback gets the sub-worker's arguments as one list;
a run without the binding is refused before it starts."""

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig

N = 32


@pl.program
class Inspected:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return self.tile_add(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(f: pl.Tensor[[N, N], pl.FP32]):
        """Bound at run time."""
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def concrete(f: pl.Tensor[[N, N], pl.FP32]):
        f.sum()

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out: pl.Tensor[[N, N], pl.FP32] = self.chip_orch(a, b, f)
        self.inspect(out)
        self.concrete(out)
        return out


def test_get_function_says_which_sub_workers_are_bound_at_run_time():
    assert Inspected.get_function("inspect").requires_runtime_binding is True
    assert Inspected.get_function("concrete").requires_runtime_binding is False
    assert Inspected.get_function("tile_add").requires_runtime_binding is False
    assert Inspected.get_function("tile_add").name == "tile_add"
    assert Inspected.get_function("nothing") is None


def test_a_callback_gets_the_arguments_as_one_list_and_runs_in_the_sub_workers_place():
    compiled = ir.compile(Inspected, distributed_config=DistributedConfig(device_ids=[0]))
    a = np.full((N, N), 2.0, np.float32)
    b = np.full((N, N), 3.0, np.float32)
    f = np.zeros((N, N), np.float32)
    seen = []
    with compiled.prepare(callbacks={"inspect": lambda args: seen.append(
            (len(args), float(args[0][0, 0]), args[0].shape))}) as rt:
        rt(a, b, f)
    np.testing.assert_array_equal(f, a + b)
    assert seen == [(1, 5.0, (N, N))]


def test_a_run_without_its_callbacks_is_refused_before_it_starts():
    compiled = ir.compile(Inspected, distributed_config=DistributedConfig(device_ids=[0]))
    with pytest.raises(ValueError, match="'inspect' are declared with a '...' body"):
        compiled.prepare()
    f = np.zeros((N, N), np.float32)
    with pytest.raises(ValueError, match="prepare\\(callbacks=\\{'inspect': function\\}\\)"):
        compiled(np.ones((N, N), np.float32), np.ones((N, N), np.float32), f)
    assert not f.any()


def test_a_callback_for_no_sub_worker_is_refused_by_name():
    compiled = ir.compile(Inspected, distributed_config=DistributedConfig(device_ids=[0]))
    with pytest.raises(ValueError, match=r"'nothing' are not sub-workers of Inspected \(its "
                                         r"sub-workers: concrete, inspect\)"):
        compiled.prepare(callbacks={"inspect": print, "nothing": print})


def test_the_callbacks_tensor_argument_reads_as_torch():
    torch = pytest.importorskip("torch")
    from pypto.runtime.distributed_runner import _tensor_from_continuous

    array = np.arange(4, dtype=np.float32)
    tensor = _tensor_from_continuous(array)
    tensor[0] = 7.0  # the same memory
    assert array[0] == 7.0
    same = torch.ones(2)
    assert _tensor_from_continuous(same) is same


@pl.program
class HostIntermediates:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_sub(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.sub(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_sub(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        return self.tile_sub(a, b, f)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def combine(diff: pl.Tensor[[N, N], pl.FP32], f: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        f[:] = diff * 3

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                  f: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        diff: pl.Tensor[[N, N], pl.FP32] = pl.create_tensor([N, N], dtype=pl.FP32)
        out_diff: pl.Tensor[[N, N], pl.FP32] = self.chip_sub(a, b, diff)
        self.combine(out_diff, f)
        return f


def test_host_tensors_of_its_own_carry_a_chip_result_to_a_sub_worker_and_outs_are_allocated():
    compiled = ir.compile(HostIntermediates, distributed_config=DistributedConfig(device_ids=[0]))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((N, N)).astype(np.float32)
    b = rng.standard_normal((N, N)).astype(np.float32)
    # PyPTO's return style: the Out tensor f is not given, so the call makes it and returns it.
    f = compiled(a, b)
    assert isinstance(f, np.ndarray) and f.shape == (N, N)
    np.testing.assert_allclose(f, (a - b) * 3, rtol=1e-6)
