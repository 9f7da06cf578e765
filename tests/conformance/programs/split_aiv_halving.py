# construct: pl.split_aiv(mode=UP_DOWN / LEFT_RIGHT) over full-width vector code: halved per lane
# expect: works
"""Full-width vector code in a data-parallel region, halved for each lane: every vector tile
keeps the lane's half of its rows (UP_DOWN) or columns (LEFT_RIGHT), each load and store moved
to the lane's half. Scaling by the lane index + 1 shows which lane wrote what."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Halved:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], ud: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
             lr: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
             ) -> tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            rows: pl.Tile[[32, 64], pl.FP32] = pl.load(x, [0, 0], [32, 64])  # 16 rows per lane
            ud = pl.store(pl.mul(rows, pl.cast(aiv + 1, pl.FP32)), [0, 0], ud)
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            cols = pl.load(x, [0, 0], [32, 64])  # 32 columns per lane
            lr = pl.store(pl.add(pl.exp(cols), pl.cast(aiv, pl.FP32)), [0, 0], lr)
        return ud, lr


def tensor_specs():
    return [TensorSpec("x", [32, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("ud", [32, 64], pl.FP32, is_output=True),
            TensorSpec("lr", [32, 64], pl.FP32, is_output=True)]


def golden(tensors):
    x = tensors["x"]
    tensors["ud"][:16] = x[:16]
    tensors["ud"][16:] = x[16:] * 2.0
    tensors["lr"][:, :32] = np.exp(x[:, :32])
    tensors["lr"][:, 32:] = np.exp(x[:, 32:]) + 1.0
