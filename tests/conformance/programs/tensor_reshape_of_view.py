# construct: pl.reshape of a tensor view that is not contiguous but needs no copy (a row of a transpose as a column)
# expect: works
"""pl.reshape of a tensor is a view of the same elements: besides contiguous tensors, any view
whose new shape only splits or merges dimensions laid out one after another, unit dimensions
anywhere (a [1, 8] row of a transposed tensor read as an [8, 1] column)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ColumnsFromTranspose:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[8, 4], pl.FP32]]) -> pl.Tensor[[8, 4], pl.FP32]:
        xt = pl.transpose(x, 0, 1)
        for h in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="column"):
                col = pl.reshape(pl.slice(xt, [1, 8], [h * 2, 0]), [8, 1])
                out = pl.assemble(out, col, [0, h])
        return out


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [8, 4], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = tensors["x"][:, 0:8:2]
