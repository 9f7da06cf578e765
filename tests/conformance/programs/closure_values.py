# construct: closure values (module-level lists and numbers as op arguments)
# expect: works
"""Offsets and tile shapes held in module-level Python lists, used by name inside the kernel."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec

ORIGIN = [0, 0]
TILE = [16, 32]
SCALE = 0.25


@pl.program
class ClosureArgs:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_block(self, x: pl.Tensor[[16, 32], pl.FP32],
                    y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(x, ORIGIN, TILE)
        y = pl.store(pl.mul(t, SCALE), ORIGIN, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.scale_block(x, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["x"] * SCALE
