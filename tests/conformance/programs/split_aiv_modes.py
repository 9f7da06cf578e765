# construct: for aiv in pl.split_aiv(2, mode=UP_DOWN / LEFT_RIGHT), pl.aiv_shard: a vector region per AIV lane
# expect: works
"""A cube product read on the two vector lanes of the cluster: with UP_DOWN each lane gets half
the rows of the accumulator through pl.aiv_shard, with LEFT_RIGHT half the columns; each lane
stores its half at the offset its lane index gives."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

SA = 64


@pl.program
class SplitAivModes:
    @pl.function
    def main(self, a: pl.Tensor[[SA, SA], pl.FP32], b: pl.Tensor[[SA, SA], pl.FP32],
             out_ud: pl.Out[pl.Tensor[[SA, SA], pl.FP32]],
             out_lr: pl.Out[pl.Tensor[[SA, SA], pl.FP32]]
             ) -> tuple[pl.Tensor[[SA, SA], pl.FP32], pl.Tensor[[SA, SA], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
            a_l1 = pl.load(a, [0, 0], [SA, SA], target_memory=pl.MemorySpace.Mat)
            b_l1 = pl.load(b, [0, 0], [SA, SA], target_memory=pl.MemorySpace.Mat)
            a_left = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
            b_right = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
            qk = pl.matmul(a_left, b_right)
            for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
                qk_h = pl.aiv_shard(qk)  # this lane's [SA / 2, SA] rows, in Vec
                out_ud = pl.store(pl.mul(qk_h, 2.0), [aiv_id * (SA // 2), 0], out_ud)
            for aiv2 in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
                qk_w = pl.aiv_shard(qk)  # this lane's [SA, SA / 2] columns
                out_lr = pl.store(pl.mul(qk_w, 3.0), [0, aiv2 * (SA // 2)], out_lr)
        return out_ud, out_lr


def tensor_specs():
    return [TensorSpec("a", [SA, SA], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [SA, SA], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out_ud", [SA, SA], pl.FP32, is_output=True),
            TensorSpec("out_lr", [SA, SA], pl.FP32, is_output=True)]


def golden(tensors):
    product = tensors["a"] @ tensors["b"]
    tensors["out_ud"][:] = product * 2.0
    tensors["out_lr"][:] = product * 3.0


RTOL = 1e-4
ATOL = 1e-4
