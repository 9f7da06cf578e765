# construct: row and column broadcasts of whole tensors in a kernel (row_expand_max, col_expand_div)
# expect: works
"""Broadcasts written on tensors: ConvertTensorToTileOps loads blocks of rows of x with the same
rows of the [R, 1] operand and all of the [1, C] one."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TensorBroadcasts:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 64], pl.FP32], floor: pl.Tensor[[32, 1], pl.FP32],
          scale: pl.Tensor[[1, 64], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        r: pl.Tensor[[32, 64], pl.FP32] = pl.col_expand_div(pl.row_expand_max(x, floor), scale)
        return pl.assemble(y, r, [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], floor: pl.Tensor[[32, 1], pl.FP32],
             scale: pl.Tensor[[1, 64], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        return self.k(x, floor, scale, y)


def tensor_specs():
    return [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("floor", [32, 1], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("scale", [1, 64], pl.FP32,
                       init_value=lambda shape: np.random.uniform(0.5, 2.0, shape)),
            TensorSpec("y", [32, 64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.maximum(tensors["x"], tensors["floor"]) / tensors["scale"]
