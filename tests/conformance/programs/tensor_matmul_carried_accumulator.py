# construct: acc = pl.add(acc, pl.matmul(a_view, w_view)) in a loop of a tensor-level InCore kernel; a computed tensor as a matmul operand; pl.reshape of a reduction in the loop
# expect: works
"""The shape of PyPTO's decode-layer kernels (qwen3's output projection and MLP): an accumulator
tensor made by pl.full is carried by a K loop and takes pl.add of a tensor matmul each trip; after
the loop a computed tensor is a matmul operand. The kernel keeps the accumulator whole in a Vec
tile; each product is made in Acc and moved to Vec; the computed operand reaches the cube
through a scratch tensor, as a2a3 hands it from the vector core to the cube core."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

B, H, KC, OC = 16, 128, 32, 16


@pl.program
class CarriedMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[B, H], pl.FP32], w: pl.Tensor[[H, OC], pl.FP32],
              w2: pl.Tensor[[OC, OC], pl.FP32],
              y: pl.Out[pl.Tensor[[B, OC], pl.FP32]]) -> pl.Tensor[[B, OC], pl.FP32]:
        acc = pl.full([B, OC], dtype=pl.FP32, value=0.0)
        sq = pl.full([1, B], dtype=pl.FP32, value=0.0)
        for kb in pl.range(H // KC):
            a_chunk = pl.slice(a, [B, KC], [0, kb * KC])
            acc = pl.add(acc, pl.matmul(a_chunk, pl.slice(w, [KC, OC], [kb * KC, 0])))
            sq = pl.add(sq, pl.reshape(pl.row_sum(pl.mul(a_chunk, a_chunk)), [1, B]))
        hidden = pl.row_expand_mul(acc, pl.reshape(pl.rsqrt(pl.add(sq, 1.0)), [B, 1]))
        y = pl.assemble(y, pl.matmul(hidden, w2), [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[B, H], pl.FP32], w: pl.Tensor[[H, OC], pl.FP32],
             w2: pl.Tensor[[OC, OC], pl.FP32],
             y: pl.Out[pl.Tensor[[B, OC], pl.FP32]]) -> pl.Tensor[[B, OC], pl.FP32]:
        y = self.block(a, w, w2, y)
        return y


def tensor_specs():
    return [TensorSpec("a", [B, H], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("w", [H, OC], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("w2", [OC, OC], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [B, OC], pl.FP32, is_output=True)]


def golden(tensors):
    a = tensors["a"].astype(np.float64)
    acc = a @ tensors["w"]
    hidden = acc / np.sqrt((a * a).sum(axis=1, keepdims=True) + 1.0)
    tensors["y"][:] = hidden @ tensors["w2"]
