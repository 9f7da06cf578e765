# construct: pl.scatter(input, dim, index, src) (index form)
# expect: works
"""torch.scatter's index form on tensors in a `pl.at` scope: a copy of the input with the
source's elements placed at the index's columns, the last write winning."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class IndexScatter:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, base: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32],
             v: pl.Tensor[[8, 8], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.tensor.scatter(base, dim=-1, index=i, src=v)
            y = pl.assemble(y, out, [0, 0])
        return y


def tensor_specs():
    return [TensorSpec("base", [8, 16], pl.FP32, init_value=lambda s: -np.ones(s, np.float32)),
            TensorSpec("i", [8, 8], pl.INT32,
                       init_value=lambda s: np.random.randint(0, 16, s).astype(np.int32)),
            TensorSpec("v", [8, 8], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [8, 16], pl.FP32, is_output=True)]


def golden(tensors):
    out = tensors["base"].copy()
    for r in range(8):
        for k in range(8):
            out[r, tensors["i"][r, k]] = tensors["v"][r, k]
    tensors["y"][:] = out
