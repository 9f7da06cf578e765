# construct: @pl.function(strict_ssa=True)
# expect: works
"""A kernel parsed in strict SSA mode: every name is assigned once."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class StrictKernel:
    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
    def axpy_block(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
                   out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        tx = pl.load(x, [0, 0], [16, 32])
        ty = pl.load(y, [0, 0], [16, 32])
        scaled = pl.mul(tx, 2.0)
        total = pl.add(scaled, ty)
        written = pl.store(total, [0, 0], out)
        return written

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.axpy_block(x, y, out)
        return out


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = 2.0 * tensors["x"] + tensors["y"]
