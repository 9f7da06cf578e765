# construct: strict_ssa=True rejects a second assignment
# expect: unsupported
# names: strict
"""In strict SSA mode a name may be assigned only once: the second `t = ...` is an error
(this program is meant to be rejected)."""

import pypto.language as pl


@pl.program
class StrictViolation:
    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)
    def twice(self, x: pl.Tensor[[16, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 32])
        t = pl.exp(t)
        out = pl.store(t, [0, 0], out)
        return out
