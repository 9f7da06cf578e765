# construct: pl.array.create(n, pl.TASK_ID), tids[i] = tid, deps=[tids], pl.system.task_dummy
# expect: works
"""An array of TaskIds collects one phase's tasks; deps=[tids] waits for all of them, and
pl.system.task_dummy turns them into one TaskId (a barrier task that runs nothing). The
array's size may be arithmetic on constants."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

PHASES, BRANCHES, TILE = 2, 2, 8
ROWS = PHASES * BRANCHES * TILE


@pl.program
class Phases:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, x: pl.Tensor[[ROWS, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        t: pl.Tile[[TILE, 16], pl.FP32] = pl.load(x, [row, 0], [TILE, 16])
        return pl.store(pl.sub(t, 1.0), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES * 1, pl.TASK_ID)
            for phase in pl.range(PHASES):
                fence = pl.system.task_dummy(deps=[tids])
                for branch in pl.parallel(BRANCHES):
                    row: pl.Scalar[pl.INDEX] = (phase * BRANCHES + branch) * TILE
                    y, tid = pl.submit(self.stripe, x, row, y, deps=[fence])
                    tids[branch] = tid
        return y


def tensor_specs():
    return [TensorSpec("x", [ROWS, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [ROWS, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] - 1.0
