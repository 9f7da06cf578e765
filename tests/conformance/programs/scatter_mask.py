# construct: pl.scatter(input, mask_pattern=..., dst=...) (mask form)
# expect: works
"""The inverse of the mask-form gather: two compact halves written into the even (P0101) and
the odd (P1010) columns of one destination, the second keeping the first's writes."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class MaskScatter:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, even: pl.Tensor[[8, 8], pl.FP32], odd: pl.Tensor[[8, 8], pl.FP32],
             dst: pl.Tensor[[8, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.scatter(even, mask_pattern=pl.tile.MaskPattern.P0101, dst=dst)
            y = pl.assemble(y, out, [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            both = pl.tensor.scatter(odd, mask_pattern=pl.tile.MaskPattern.P1010, dst=y)
            y = pl.assemble(y, both, [0, 0])
        return y


def tensor_specs():
    return [TensorSpec("even", [8, 8], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("odd", [8, 8], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("dst", [8, 16], pl.FP32, init_value=lambda s: np.full(s, 9, np.float32)),
            TensorSpec("y", [8, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:, 0::2] = tensors["even"]
    tensors["y"][:, 1::2] = tensors["odd"]
