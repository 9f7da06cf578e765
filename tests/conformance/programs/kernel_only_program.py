# construct: program with no Orchestration function (a kernel on its own)
# expect: works
"""A program made of one InCore kernel and nothing else: running it launches the kernel once."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class LoneKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def max_block(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                  out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        ta = pl.load(a, [0, 0], [16, 32])
        tb = pl.load(b, [0, 0], [16, 32])
        out = pl.store(pl.maximum(ta, tb), [0, 0], out)
        return out


def tensor_specs():
    return [TensorSpec("a", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = np.maximum(tensors["a"], tensors["b"])
