# construct: break and continue in a loop with init_values (and pl.while_ without parentheses)
# expect: works
"""PyPTO's explicit loop-carried form with exits: `continue` keeps the carried tile for the next
trip, `break` leaves with it. Trips 0, 2 and 3 add x (trip 1 continues, trip 4 breaks), then a
`for acc, n in pl.while_(...)` loop that breaks after two trips doubles the sum twice more."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class LoopCarriedExits:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, x: pl.Tensor[[16, 32], pl.FP32],
              y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t0 = pl.load(x, [0, 0], [16, 32])
        for i, (acc,) in pl.range(6, init_values=(t0,)):
            if i == 1:
                continue
            if i == 4:
                break
            acc_next: pl.Tile[[16, 32], pl.FP32] = pl.add(acc, t0)
            acc_out: pl.Tile[[16, 32], pl.FP32] = pl.yield_(acc_next)
        n0: pl.Scalar[pl.INDEX] = 0
        for s, n in pl.while_(init_values=(acc_out, n0)):
            pl.cond(n < 5)
            if n == 2:
                break
            s_out, n_out = pl.yield_(pl.add(s, s), n + 1)
        y = pl.store(s_out, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = 16.0 * tensors["x"]
