# construct: pl.system.syncall(), pl.system.available_cluster_count(): a barrier across the blocks of an SPMD launch
# expect: works
"""A launch of as many blocks as the device has cores (4 by default): each block writes its
rows, meets the others at pl.system.syncall, then reads the rows its neighbour wrote."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ROWS, COLS, BLOCKS = 16, 32, 4


@pl.program
class Exchange:
    @pl.function(type=pl.FunctionType.InCore)
    def exchange(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
                 buf: pl.InOut[pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]]
                 ) -> pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]:
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        buf = pl.store(pl.mul(pl.load(x, [b * ROWS, 0], [ROWS, COLS]), 2.0), [b * ROWS, 0], buf)
        pl.system.fence()
        pl.system.syncall(core_type="aiv_only")
        theirs = pl.load(buf, [(b + 1) % n * ROWS, 0], [ROWS, COLS])
        return pl.store(pl.add(theirs, 1.0), [(BLOCKS + b) * ROWS, 0], buf)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32],
             buf: pl.InOut[pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]]
             ) -> pl.Tensor[[2 * BLOCKS * ROWS, COLS], pl.FP32]:
        with pl.spmd(pl.system.available_cluster_count(), sync_start=True):
            buf = self.exchange(x, buf)
        return buf


def tensor_specs():
    return [TensorSpec("x", [BLOCKS * ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("buf", [2 * BLOCKS * ROWS, COLS], pl.FP32, init_value=0.0,
                       is_output=True)]


def golden(tensors):
    doubled = tensors["x"] * 2.0
    tensors["buf"][:BLOCKS * ROWS] = doubled
    tensors["buf"][BLOCKS * ROWS:] = np.roll(doubled, -ROWS, axis=0) + 1.0
