# construct: pl.gather(input, kvalue=, cmp_mode=, out_cols=) (compare form)
# expect: unsupported
# names: compare form
"""Per row, the column numbers of the elements equal to a scalar and how many there are: it
type-checks and runs in the reference interpreter, but kernel code generation does not have it
yet."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class CompareGather:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[4, 16], pl.INT32], dst: pl.Out[pl.Tensor[[4, 4], pl.INT32]],
             counts: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[4, 4], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            found, n = pl.gather(x, kvalue=1, cmp_mode="eq", out_cols=4)
            dst = pl.assemble(dst, found, [0, 0])
            counts = pl.assemble(counts, n, [0, 0])
        return dst


def tensor_specs():
    return [TensorSpec("x", [4, 16], pl.INT32,
                       init_value=lambda s: (np.arange(64).reshape(s) % 4 == 1).astype(np.int32)),
            TensorSpec("dst", [4, 4], pl.INT32, is_output=True),
            TensorSpec("counts", [1, 4], pl.INT32, is_output=True)]


def golden(tensors):
    tensors["dst"][:] = [[1, 5, 9, 13]] * 4
    tensors["counts"][:] = 4
