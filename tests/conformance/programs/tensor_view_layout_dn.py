# construct: pl.tensor.view(x, layout=pl.TensorLayout.DN): the same memory read column-major
# expect: works
"""PyPTO's ND/DN alias: viewing a row-major [8, 16] tensor as DN reads its memory column-major,
the [16, 8] transpose, without a copy. The kernel stores that view, so the output is x.T."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ColumnMajorAlias:
    @pl.function(type=pl.FunctionType.InCore)
    def transposed(self, x: pl.Tensor[[8, 16], pl.FP32],
                   y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        xt: pl.Tensor[[16, 8], pl.FP32, pl.TensorView(stride=[1, 16], layout=pl.TensorLayout.DN)] = (
            pl.tensor.view(x, layout=pl.TensorLayout.DN))
        y = pl.store(pl.load(xt, [0, 0], [16, 8]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 8], pl.FP32]]) -> pl.Tensor[[16, 8], pl.FP32]:
        y = self.transposed(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 8], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"].T
