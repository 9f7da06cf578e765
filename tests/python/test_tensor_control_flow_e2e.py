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


# A decode-layer block as PyPTO's model kernels write it: an accumulator tensor carried by a K
# loop takes pl.add of a tensor matmul of two views each trip; a computed tensor (Vec) is a matmul
# operand (it goes through a scratch tensor, as a2a3 hands it from the vector to the cube core);
# a reduction's result is reshaped in the loop.
B, H, KC, OC = 16, 256, 64, 32


@pl.program
class MatmulInACarriedLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, OC], pl.BF16],
              w2: pl.Tensor[[OC, OC], pl.BF16],
              y: pl.Out[pl.Tensor[[B, OC], pl.FP32]],
              norm: pl.Out[pl.Tensor[[1, B], pl.FP32]]) -> tuple[pl.Tensor[[B, OC], pl.FP32],
                                                                 pl.Tensor[[1, B], pl.FP32]]:
        acc = pl.full([B, OC], dtype=pl.FP32, value=0.0)
        sq = pl.full([1, B], dtype=pl.FP32, value=0.0)
        for kb in pl.range(H // KC):
            a_chunk = pl.slice(a, [B, KC], [0, kb * KC])
            acc = pl.add(acc, pl.matmul(a_chunk, pl.slice(w, [KC, OC], [kb * KC, 0]),
                                        out_dtype=pl.FP32))
            x = pl.cast(a_chunk, target_type=pl.FP32)
            sq = pl.add(sq, pl.reshape(pl.row_sum(pl.mul(x, x)), [1, B]))
        hidden = pl.cast(pl.mul(acc, 0.5), target_type=pl.BF16)
        y = pl.assemble(y, pl.matmul(hidden, w2, out_dtype=pl.FP32), [0, 0])
        norm = pl.assemble(norm, sq, [0, 0])
        return y, norm

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, OC], pl.BF16],
             w2: pl.Tensor[[OC, OC], pl.BF16], y: pl.Out[pl.Tensor[[B, OC], pl.FP32]],
             norm: pl.Out[pl.Tensor[[1, B], pl.FP32]]) -> tuple[pl.Tensor[[B, OC], pl.FP32],
                                                                pl.Tensor[[1, B], pl.FP32]]:
        y, norm = self.block(a, w, w2, y, norm)
        return y, norm


def test_a_tensor_matmul_feeds_a_carried_accumulator_and_a_computed_operand_is_spilled():
    import ml_dtypes  # requirements-dev.txt

    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(3)
    a = rng.standard_normal((B, H)).astype(bf16)
    w = (rng.standard_normal((H, OC)) * 0.1).astype(bf16)
    w2 = (rng.standard_normal((OC, OC)) * 0.1).astype(bf16)
    y = np.zeros((B, OC), np.float32)
    norm = np.zeros((1, B), np.float32)
    compiled = pypto.ir.compile(MatmulInACarriedLoop)
    compiled(a, w, w2, y, norm)
    f32 = np.float32
    acc = a.astype(f32) @ w.astype(f32)
    hidden = (acc * 0.5).astype(bf16).astype(f32)
    np.testing.assert_allclose(y, hidden @ w2.astype(f32), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(norm[0], (a.astype(f32) ** 2).sum(axis=1), rtol=1e-4)
    kernel = compiled.program.function("block").as_python()
    # The product is made in Acc and moved to Vec for the add; the computed operand goes
    # through the scratch tensor the kernel gained.
    assert "target_memory=pl.MemorySpace.Vec" in kernel, kernel
    assert "hidden_spill: pl.Out[pl.Tensor[[16, 32], pl.BF16]]" in kernel, kernel


# Two accumulators carried by loops of their own, each started by a tensor pl.matmul and grown by
# pl.matmul_acc of views (PyPTO's gate/up projection of a decode layer), then combined by an
# elementwise op: each matmul_acc is acc + a @ b, the product made in Acc and added in Vec.
KA = 4


@pl.program
class MatmulAccInCarriedLoops:
    @pl.function(type=pl.FunctionType.InCore)
    def gate_up(self, x: pl.Tensor[[B, KA * KC], pl.BF16], wg: pl.Tensor[[KA * KC, OC], pl.BF16],
                wu: pl.Tensor[[KA * KC, OC], pl.BF16],
                y: pl.Out[pl.Tensor[[B, OC], pl.FP32]]) -> pl.Tensor[[B, OC], pl.FP32]:
        gate = pl.matmul(pl.slice(x, [B, KC], [0, 0]), pl.slice(wg, [KC, OC], [0, 0]),
                         out_dtype=pl.FP32)
        for kb in pl.range(1, KA):
            gate = pl.matmul_acc(gate, pl.slice(x, [B, KC], [0, kb * KC]),
                                 pl.slice(wg, [KC, OC], [kb * KC, 0]))
        gate_vec = pl.add(gate, 0.0)
        up = pl.matmul(pl.slice(x, [B, KC], [0, 0]), pl.slice(wu, [KC, OC], [0, 0]),
                       out_dtype=pl.FP32)
        for kb in pl.range(1, KA):
            up = pl.matmul_acc(up, pl.slice(x, [B, KC], [0, kb * KC]),
                               pl.slice(wu, [KC, OC], [kb * KC, 0]))
        y = pl.assemble(y, pl.mul(gate_vec, up), [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[B, KA * KC], pl.BF16], wg: pl.Tensor[[KA * KC, OC], pl.BF16],
             wu: pl.Tensor[[KA * KC, OC], pl.BF16],
             y: pl.Out[pl.Tensor[[B, OC], pl.FP32]]) -> pl.Tensor[[B, OC], pl.FP32]:
        y = self.gate_up(x, wg, wu, y)
        return y


def test_tensor_matmul_acc_grows_accumulators_carried_by_loops():
    import ml_dtypes  # requirements-dev.txt

    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(5)
    x = rng.standard_normal((B, KA * KC)).astype(bf16)
    wg = (rng.standard_normal((KA * KC, OC)) * 0.1).astype(bf16)
    wu = (rng.standard_normal((KA * KC, OC)) * 0.1).astype(bf16)
    y = np.zeros((B, OC), np.float32)
    compiled = pypto.ir.compile(MatmulAccInCarriedLoops)
    compiled(x, wg, wu, y)
    f32 = np.float32
    gate = x.astype(f32) @ wg.astype(f32)
    up = x.astype(f32) @ wu.astype(f32)
    np.testing.assert_allclose(y, gate * up, rtol=1e-4, atol=1e-4)
    kernel = compiled.program.function("gate_up").as_python()
    # No matmul_acc is left: each trip's product is made whole in Acc and added in Vec.
    assert "matmul_acc" not in kernel, kernel
    assert kernel.count("pl.tile.matmul(") + kernel.count("pl.matmul(") >= 4, kernel


def test_tensor_matmul_acc_of_another_dtype_than_its_accumulator_is_a_located_error():
    text = '''import pypto.language as pl


@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.BF16], w: pl.Tensor[[64, 32], pl.BF16],
          y: pl.Out[pl.Tensor[[16, 32], pl.BF16]]) -> pl.Tensor[[16, 32], pl.BF16]:
        acc = pl.full([16, 32], dtype=pl.BF16, value=0.0)
        for kb in pl.range(2):
            acc = pl.matmul_acc(acc, pl.slice(x, [16, 32], [0, kb * 32]),
                                pl.slice(w, [32, 32], [kb * 32, 0]))
        y = pl.assemble(y, acc, [0, 0])
        return y
'''
    program = pl.parse(text, file_name="mixed.py")
    try:
        pypto.ir.compile(program)
    except pypto.errors.CompileError as e:
        message = str(e)
    else:
        raise AssertionError("compiled a BF16 accumulator of an FP32 product")
    assert "mixed.py:11:19: error: pl.matmul_acc accumulates a FP32 product" in message, message
    assert "the accumulator is BF16" in message, message
