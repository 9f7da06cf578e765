# construct: sorting (pl.tile.sort32, pl.tile.mrgsort)
# expect: works
"""sort32 sorts blocks of 32 values into (value, index) pairs; one mrgsort merges the four runs
of a 128-value row."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Sort:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, v: pl.Tensor[[2, 128], pl.FP32], i: pl.Tensor[[2, 128], pl.UINT32],
          o: pl.Out[pl.Tensor[[2, 256], pl.FP32]]) -> pl.Tensor[[2, 256], pl.FP32]:
        pairs = pl.tile.sort32(pl.load(v, [0, 0], [2, 128]), pl.load(i, [0, 0], [2, 128]))
        o = pl.store(pl.tile.mrgsort(pairs, block_len=64), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, v: pl.Tensor[[2, 128], pl.FP32], i: pl.Tensor[[2, 128], pl.UINT32],
             o: pl.Out[pl.Tensor[[2, 256], pl.FP32]]) -> pl.Tensor[[2, 256], pl.FP32]:
        return self.k(v, i, o)


def tensor_specs():
    return [TensorSpec("v", [2, 128], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("i", [2, 128], pl.UINT32,
                       init_value=lambda shape: np.tile(np.arange(128, dtype=np.uint32), (2, 1))),
            TensorSpec("o", [2, 256], pl.FP32, is_output=True)]


def golden(tensors):
    out = tensors["o"]
    for r in range(2):
        order = np.argsort(-tensors["v"][r], kind="stable")
        out[r, 0::2] = tensors["v"][r][order]
        out[r, 1::2] = order.astype(np.uint32).view(np.float32)
