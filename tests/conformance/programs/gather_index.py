# construct: pl.gather(input, dim, index) on tiles and tensors
# expect: works
"""torch.gather's index form: a tile gathered along its columns in a kernel, and a tensor
gathered along its rows inside a `pl.at` scope (lowered to loads and the tile form)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class IndexGather:
    @pl.function(type=pl.FunctionType.InCore)
    def by_columns(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32],
                   y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        t = pl.gather(pl.load(x, [0, 0], [8, 16]), -1, pl.load(i, [0, 0], [8, 8]))
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32],
             r: pl.Tensor[[4, 16], pl.INT32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             z: pl.Out[pl.Tensor[[4, 16], pl.FP32]],
             ) -> tuple[pl.Tensor[[8, 8], pl.FP32], pl.Tensor[[4, 16], pl.FP32]]:
        y = self.by_columns(x, i, y)
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.tensor.gather(x, dim=0, index=r)
            z = pl.assemble(z, rows, [0, 0])
        return y, z


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("i", [8, 8], pl.INT32,
                       init_value=lambda s: np.random.randint(0, 16, s).astype(np.int32)),
            TensorSpec("r", [4, 16], pl.INT32,
                       init_value=lambda s: np.random.randint(0, 8, s).astype(np.int32)),
            TensorSpec("y", [8, 8], pl.FP32, is_output=True),
            TensorSpec("z", [4, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.take_along_axis(tensors["x"], tensors["i"], axis=1)
    tensors["z"][:] = np.take_along_axis(tensors["x"], tensors["r"], axis=0)
