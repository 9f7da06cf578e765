# construct: cross-core pipe both ways (dir_mask=3, pl.tpush_to_aic / pl.tpop_from_aiv / pl.tfree_to_aiv)
# expect: works
"""The Vector core prepares each block (a + 1) and pushes it to the Cube, which multiplies it
by b and pushes the product back; the Vector core adds one and stores it. One AIV lane (no
split), two slots each way."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

M, K, N, BLOCKS = 16, 32, 16, 3
IN_SLOT = M * K * 4
OUT_SLOT = M * N * 4


@pl.program
class PipeBoth:
    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[BLOCKS * M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             out: pl.Out[pl.Tensor[[BLOCKS * M, N], pl.FP32]]):
        v2c = pl.reserve_buffer(name="v2c", size=IN_SLOT * 2)
        c2v = pl.import_peer_buffer(name="c2v", peer_func="vector")
        pl.aic_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=IN_SLOT)
        b_mat = pl.load(b, [0, 0], [K, N], target_memory=pl.MemorySpace.Mat)
        b_right = pl.move(b_mat, target_memory=pl.MemorySpace.Right)
        for i in pl.range(BLOCKS):
            x: pl.Tile[[M, K], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)
            x_left = pl.move(x, target_memory=pl.MemorySpace.Left)
            pl.tfree_to_aiv(x)
            y = pl.matmul(x_left, b_right)
            pl.tpush_to_aiv(y, split=0)

    @pl.function(type=pl.FunctionType.AIV)
    def vector(self, a: pl.Tensor[[BLOCKS * M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               out: pl.Out[pl.Tensor[[BLOCKS * M, N], pl.FP32]]) -> pl.Tensor[[BLOCKS * M, N], pl.FP32]:
        c2v = pl.reserve_buffer(name="c2v", size=OUT_SLOT * 2)
        v2c = pl.import_peer_buffer(name="v2c", peer_func="cube")
        pl.aiv_initialize_pipe(c2v, v2c, dir_mask=3, slot_size=IN_SLOT)
        for i in pl.range(BLOCKS):
            x = pl.add(pl.load(a, [i * M, 0], [M, K]), 1.0)
            pl.tpush_to_aic(x, split=0)
        for i in pl.range(BLOCKS):
            y: pl.Tile[[M, N], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
            z = pl.add(y, 1.0)
            pl.tfree_to_aic(y)
            out = pl.store(z, [i * M, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: pl.Tensor[[BLOCKS * M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
              out: pl.Out[pl.Tensor[[BLOCKS * M, N], pl.FP32]]) -> pl.Tensor[[BLOCKS * M, N], pl.FP32]:
        self.cube(a, b, out)
        out = self.vector(a, b, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[BLOCKS * M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             out: pl.Out[pl.Tensor[[BLOCKS * M, N], pl.FP32]]) -> pl.Tensor[[BLOCKS * M, N], pl.FP32]:
        out = self.group(a, b, out)
        return out


def tensor_specs():
    return [TensorSpec("a", [BLOCKS * M, K], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [K, N], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [BLOCKS * M, N], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = (tensors["a"] + 1.0) @ tensors["b"] + 1.0


RTOL = 1e-4
ATOL = 1e-4
