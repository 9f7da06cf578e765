# construct: pl.at(name_hint=..., optimizations=[...]) scope arguments
# expect: works
# note: name_hint names the outlined kernel; optimizations, allow_early_resolve and windowize steer only the NPU
"""Two inline kernels, named by their hints, one with an NPU core-split optimization."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class NamedScopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="top_half",
                   optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            t = pl.load(x, [0, 0], [8, 32])
            y = pl.store(pl.add(t, 1.0), [0, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom_half", allow_early_resolve=True):
            t = pl.load(x, [8, 0], [8, 32])
            y = pl.store(pl.mul(t, 2.0), [8, 0], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:8] = tensors["x"][:8] + 1.0
    tensors["y"][8:] = tensors["x"][8:] * 2.0
