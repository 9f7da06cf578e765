# construct: pl.paged_gather(src, indices, block_table, block_size=, size=, max_indices=)
# expect: works
"""Rows of a paged pool gathered into Vec through a block table: logical row k lives in
physical row block_table[k // block_size] * block_size + k % block_size."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class PagedGather:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, pool: pl.Tensor[[32, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             bt: pl.Tensor[[4], pl.INT32],
             y: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.paged_gather(pool, idx, bt, block_size=8, size=16, max_indices=4,
                                   space=pl.MemorySpace.Vec)
            y = pl.assemble(y, rows, [0, 0])
        return y


def tensor_specs():
    return [TensorSpec("pool", [32, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("idx", [4], pl.INT32, init_value=np.array([1, 10, 19, 31], np.int32)),
            TensorSpec("bt", [4], pl.INT32, init_value=np.array([3, 1, 2, 0], np.int32)),
            TensorSpec("y", [4, 16], pl.FP32, is_output=True)]


def golden(tensors):
    k = tensors["idx"]
    tensors["y"][:] = tensors["pool"][tensors["bt"][k // 8] * 8 + k % 8]
