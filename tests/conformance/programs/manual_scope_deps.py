# construct: with pl.manual_scope(): pl.submit(..., deps=[tid]) chains, seeded with tid = None
# expect: works
"""Inside a manual scope tasks wait only for the TaskIds in their deps=: each branch is a chain
of stripe writes threaded through `prev = None` and the TaskId pl.submit returns, and the
branches run side by side."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

BRANCHES, STEPS, TILE = 2, 3, 8
ROWS = BRANCHES * STEPS * TILE


@pl.program
class BranchChains:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, x: pl.Tensor[[ROWS, 16], pl.FP32], row: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        t: pl.Tile[[TILE, 16], pl.FP32] = pl.load(x, [row, 0], [TILE, 16])
        return pl.store(pl.mul(t, 2.0), [row, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        with pl.manual_scope():
            for branch in pl.parallel(BRANCHES):
                prev = None
                for step in pl.range(STEPS):
                    row = (step * BRANCHES + branch) * TILE
                    y, prev = pl.submit(self.stripe, x, row, y, deps=[prev])
        return y


def tensor_specs():
    return [TensorSpec("x", [ROWS, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [ROWS, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 2.0 * tensors["x"]
