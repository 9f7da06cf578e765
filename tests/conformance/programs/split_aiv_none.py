# construct: for aiv in pl.split_aiv(2, mode=pl.SplitMode.NONE): both AIV lanes run the region, dispatching work by lane
# expect: works
"""Task-parallel lanes: both run the whole region and pick their own rows by the lane index
(3 and 2 rows of a 5-row tensor), in a kernel function and in an orchestration (where the
region becomes a kernel of its own)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TaskParallelLanes:
    @pl.function(type=pl.FunctionType.InCore)
    def lanes(self, a: pl.Tensor[[5, 64], pl.FP32], b: pl.Tensor[[5, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[5, 64], pl.FP32]]) -> pl.Tensor[[5, 64], pl.FP32]:
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            if aiv_id == 0:
                a0: pl.Tile[[3, 64], pl.FP32] = pl.load(a, [0, 0], [3, 64])
                out = pl.store(pl.add(a0, pl.load(b, [0, 0], [3, 64])), [0, 0], out)
            else:
                a1: pl.Tile[[2, 64], pl.FP32] = pl.load(a, [3, 0], [2, 64])
                out = pl.store(pl.sub(a1, pl.load(b, [3, 0], [2, 64])), [3, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[5, 64], pl.FP32], b: pl.Tensor[[5, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[5, 64], pl.FP32]], twice: pl.Out[pl.Tensor[[4, 64], pl.FP32]]
             ) -> tuple[pl.Tensor[[5, 64], pl.FP32], pl.Tensor[[4, 64], pl.FP32]]:
        out = self.lanes(a, b, out)
        for aiv in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            rows = pl.load(a, [aiv * 2, 0], [2, 64])
            twice = pl.store(pl.mul(rows, 2.0), [aiv * 2, 0], twice)
        return out, twice


def tensor_specs():
    return [TensorSpec("a", [5, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("b", [5, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [5, 64], pl.FP32, is_output=True),
            TensorSpec("twice", [4, 64], pl.FP32, is_output=True)]


def golden(tensors):
    a, b = tensors["a"], tensors["b"]
    tensors["out"][:3] = a[:3] + b[:3]
    tensors["out"][3:] = a[3:] - b[3:]
    tensors["twice"][:] = a[:4] * 2.0
