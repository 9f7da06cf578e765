# construct: pl.TensorView valid_shape on a kernel's tensor parameter (a dynamic name the caller's window gives)
# expect: works
"""A kernel parameter declares that only `[16, VALID]` of its `[16, 64]` tensor holds data, with
`VALID` a `pl.dynamic` name that only the view uses: each call gives it the valid extent of the
window it passes (`pl.slice(..., valid_shape=[16, n])`, n read at run time). The kernel loads
the tensor in two column blocks without a valid_shape of its own: each load reads only what the
declared region leaves of its block (the second block starts at column 32), and the rest of
each tile is padded with zeros."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

VALID = pl.dynamic("VALID")


@pl.program
class ValidRegionParameter:
    @pl.function(type=pl.FunctionType.InCore)
    def copy_valid(self, x: pl.Tensor[[16, 64], pl.FP32,
                                      pl.TensorView(valid_shape=[16, VALID],
                                                    layout=pl.TensorLayout.ND)],
                   y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for j in pl.range(2):
            t = pl.load(x, [0, j * 32], [16, 32])
            t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
            y = pl.store(t, [0, j * 32], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], config: pl.Tensor[[1], pl.INT64],
             y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        n = pl.tensor.read(config, [0])
        window = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, n])
        y = self.copy_valid(window, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("config", [1], pl.INT64, init_value=np.array([45], np.int64)),
            TensorSpec("y", [16, 64], pl.FP32, is_output=True)]


def golden(tensors):
    y = tensors["x"].copy()
    y[:, 45:] = 0.0
    tensors["y"][:] = y
