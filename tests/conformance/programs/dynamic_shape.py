# construct: pl.dynamic dimensions in tensor shapes
# expect: works
"""Tensor parameters whose row count is a `pl.dynamic` dimension, fixed only when the program
runs; the kernel walks the rows in blocks of 16."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ROWS = pl.dynamic("ROWS")
BLOCK = 16


@pl.program
class DynamicRows:
    @pl.function(type=pl.FunctionType.InCore)
    def add_rows(self, a: pl.Tensor[[ROWS, 32], pl.FP32], b: pl.Tensor[[ROWS, 32], pl.FP32],
                 out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]],
                 n_blocks: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, 32], pl.FP32]:
        for i in pl.range(n_blocks):
            ta = pl.load(a, [i * BLOCK, 0], [BLOCK, 32])
            tb = pl.load(b, [i * BLOCK, 0], [BLOCK, 32])
            out = pl.store(pl.add(ta, tb), [i * BLOCK, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[ROWS, 32], pl.FP32], b: pl.Tensor[[ROWS, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[ROWS, 32], pl.FP32]]) -> pl.Tensor[[ROWS, 32], pl.FP32]:
        out = self.add_rows(a, b, out, 3)
        return out


def tensor_specs():
    return [TensorSpec("a", [48, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [48, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [48, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = tensors["a"] + tensors["b"]
