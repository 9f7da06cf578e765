# construct: with pl.at(level=..., deps=[tid]) as tid: an inline kernel's TaskId and its deps
# expect: works
"""`with pl.at(...) as tid` names the task the scope becomes; a later scope lists it in deps=.
In a manual scope that explicit edge is what orders the second scope after the first."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class TwoStages:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32],
             scratch: pl.InOut[pl.Tensor[[16, 32], pl.FP32]],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.manual_scope():
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="square") as squared:
                t = pl.load(x, [0, 0], [16, 32])
                scratch = pl.store(pl.mul(t, t), [0, 0], scratch)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="shift", deps=[squared]):
                s = pl.load(scratch, [0, 0], [16, 32])
                y = pl.store(pl.add(s, 1.0), [0, 0], y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 32], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("scratch", [16, 32], pl.FP32, init_value=0.0),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["scratch"][:] = tensors["x"] * tensors["x"]
    tensors["y"][:] = tensors["scratch"] + 1.0
