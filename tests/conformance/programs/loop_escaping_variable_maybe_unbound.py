# construct: a variable first assigned inside a loop that may run no trip, read after it
# expect: unsupported
# names: first assigned inside a loop that may run no iteration
"""Python would raise UnboundLocalError here when `n` is 0: the loop's trip count is known at run
time only, so `y` may never be bound. The compiler says so where `y` is first assigned."""

import pypto.language as pl


@pl.program
class MaybeUnbound:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[16, 32], pl.FP32], n: pl.Scalar[pl.INDEX],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(n):
            t = pl.load(x, [0, 0], [16, 32])
        y = pl.store(t, [0, 0], y)
        return y
