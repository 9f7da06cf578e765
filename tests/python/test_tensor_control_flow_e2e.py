"""Tensor-level kernels whose computed tensors cross loops and branches, as PyPTO's programs
write them (a loop carrying an accumulator tensor, a branch choosing between two tensor ops, a
while loop with break), and tensors a kernel creates and then stores into. The passes keep each
carried tensor whole in a tile (ConvertTensorToTileOps, tensor_whole_tiles.h); the device runs
the tiles and the results are checked against numpy."""

import numpy as np

import pypto
import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run


@pl.program
class LoopAccumulator:
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        init = pl.create_tensor([64], dtype=pl.FP32)
        for i, (acc,) in pl.range(10, init_values=(init,)):
            new_acc = pl.add(acc, x)
            result = pl.yield_(new_acc)
        return result


@pl.program
class BranchPerTrip:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        r: pl.Tensor[[32, 64], pl.FP32] = x
        for i in pl.range(5):
            if i == 0:
                r = pl.mul(r, 2.0)
            else:
                r = pl.add(r, 1.0)
        return r


def while_with_break(n):
    @pl.program
    class WhileWithBreak:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32],
                 y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            i: pl.Scalar[pl.INT64] = 0
            while i < n:
                if i > 5:
                    break
                x = pl.add(x, 1.0)
                i = i + 1
            return x

    return WhileWithBreak


@pl.program
class StoreIntoACreatedTensor:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32]) -> pl.Tensor[[8, 32], pl.FP32]:
        out = pl.create_tensor([8, 32], pl.FP32)
        t = pl.load(x, [0, 0], [8, 32], target_memory=pl.MemorySpace.Vec)
        pl.store(pl.exp(t), [0, 0], out)
        return out


def _normal(shape):
    return TensorSpec("x", shape, pl.FP32, init_value=np.random.standard_normal)


def test_a_loop_carrying_a_tensor_accumulates_on_the_device():
    result = run(LoopAccumulator,
                 [_normal([64]), TensorSpec("ret0_out", [64], pl.FP32, is_output=True)],
                 lambda t: t["ret0_out"].__setitem__(slice(None), 10 * t["x"]))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["ret0_out"], 10 * result.inputs["x"], rtol=1e-5)


def test_the_carried_tensor_is_one_tile_and_the_kernel_gains_an_out_parameter():
    kernel = pypto.ir.compile(LoopAccumulator).program.function("main").as_python()
    assert "ret0_out: pl.Out[pl.Tensor[[64], pl.FP32]]" in kernel, kernel
    assert "for i, (acc,) in pl.range(10, init_values=(init,)):" in kernel, kernel
    assert "pl.create_tile([64]" in kernel, kernel
    assert "pl.create_tensor" not in kernel, kernel


def test_branches_yielding_tensors_run_against_numpy():
    result = run(BranchPerTrip,
                 [_normal([32, 64]), TensorSpec("y", [32, 64], pl.FP32, is_output=True)],
                 lambda t: t["y"].__setitem__(slice(None), t["x"] * 2.0 + 4.0))
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["y"], result.inputs["x"] * 2 + 4, rtol=1e-5)


def test_a_while_loop_with_break_carries_the_tensor_it_updates():
    for n, trips in [(3, 3), (50, 6)]:
        result = run(while_with_break(n),
                     [_normal([16, 16]), TensorSpec("y", [16, 16], pl.FP32, is_output=True)],
                     config=RunConfig(workers=1))
        assert result.passed, result.error
        np.testing.assert_allclose(result.outputs["y"], result.inputs["x"] + trips, rtol=1e-5)


def test_a_tensor_created_and_stored_into_is_the_returned_output():
    result = run(StoreIntoACreatedTensor,
                 [_normal([8, 32]), TensorSpec("ret0_out", [8, 32], pl.FP32, is_output=True)])
    assert result.passed, result.error
    np.testing.assert_allclose(result.outputs["ret0_out"], np.exp(result.inputs["x"]),
                               rtol=1e-5)


def test_a_carried_tensor_too_large_for_vec_is_a_located_error():
    @pl.program
    class TooLarge:
        @pl.function(type=pl.FunctionType.InCore)
        def main(self, x: pl.Tensor[[512, 512], pl.FP32],
                 y: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
            r: pl.Tensor[[512, 512], pl.FP32] = x
            for i in pl.range(3):
                r = pl.add(r, 1.0)
            return r

    try:
        pypto.ir.compile(TooLarge)
    except pypto.errors.CompileError as e:
        text = str(e)
    else:
        raise AssertionError("compiled a kernel whose carried tensor does not fit Vec")
    assert "test_tensor_control_flow_e2e.py:" in text, text
    assert "of shape [512, 512] (1048576 bytes) is kept whole in Vec" in text, text
