# construct: cross-core pipe, Cube to Vector with an UP_DOWN split (pl.tpush_to_aiv / pl.tpop_from_aic)
# expect: works
"""A Group runs its AIC and AIV kernels together: the Cube computes a matmul and pushes the
product through a pipe; each of the two AIV lanes pops its half of the rows, adds one and stores
its half. The buffer holds two slots, so the Cube waits for the lanes to free them."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ROWS, COLS, BLOCKS = 16, 16, 4
SLOT = ROWS * COLS * 4
HALF = ROWS // 2


@pl.program
class PipeC2V:
    @pl.function(type=pl.FunctionType.AIC, attrs={"split": pl.SplitMode.UP_DOWN})
    def cube(self, a: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32], b: pl.Tensor[[COLS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]):
        peer = pl.import_peer_buffer(name="c2v", peer_func="vector")
        pl.aic_initialize_pipe(dir_mask=1, slot_size=SLOT, c2v_consumer_buf=peer)
        b_mat = pl.load(b, [0, 0], [COLS, COLS], target_memory=pl.MemorySpace.Mat)
        b_right = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
        for i in pl.range(BLOCKS):
            a_mat = pl.load(a, [i * ROWS, 0], [ROWS, COLS], target_memory=pl.MemorySpace.Mat)
            a_left = pl.move(a_mat, target_memory=pl.MemorySpace.Left)
            acc = pl.matmul(a_left, b_right)
            pl.tpush_to_aiv(acc, split=1)

    @pl.function(type=pl.FunctionType.AIV, attrs={"split": pl.SplitMode.UP_DOWN})
    def vector(self, a: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32], b: pl.Tensor[[COLS, COLS], pl.FP32],
               out: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]) -> pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]:
        buf = pl.reserve_buffer(name="c2v", size=SLOT * 2, base=pl.AUTO)
        pl.aiv_initialize_pipe(dir_mask=1, slot_size=SLOT, c2v_consumer_buf=buf)
        lane = pl.tile.get_subblock_idx()
        for i in pl.range(BLOCKS):
            half: pl.Tile[[HALF, COLS], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=1)
            plus = pl.add(half, 1.0)
            pl.tfree_to_aic(half)
            out = pl.store(plus, [i * ROWS + lane * HALF, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group, attrs={"split": pl.SplitMode.UP_DOWN})
    def group(self, a: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32], b: pl.Tensor[[COLS, COLS], pl.FP32],
              out: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]) -> pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]:
        self.cube(a, b, out)
        out = self.vector(a, b, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32], b: pl.Tensor[[COLS, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]]) -> pl.Tensor[[BLOCKS * ROWS, COLS], pl.FP32]:
        out = self.group(a, b, out)
        return out


def tensor_specs():
    return [TensorSpec("a", [BLOCKS * ROWS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [COLS, COLS], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [BLOCKS * ROWS, COLS], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = tensors["a"] @ tensors["b"] + 1.0


RTOL = 1e-4
ATOL = 1e-4
