# construct: pl.system.sync_src / sync_dst / sync_set / sync_wait / set_ffts / bar_v / bar_m / bar_all / fence / cacheinvalid, pl.PipeType
# expect: works
"""The NPU's pipe flags, barriers, fences and cache maintenance between a load, a computation
and a store. The CPU device's cores run in order: they are ordering points (fence a memory
fence) and leave the result unchanged."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Ordered:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
          y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        pl.system.set_ffts(ws)
        pl.system.cacheinvalid()
        t = pl.load(x, [0, 0], [16, 64])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)
        t = pl.exp(t)
        pl.system.bar_v()
        pl.system.bar_m()
        pl.system.sync_set(event_id=1, pipe=pl.PipeType.MTE3, ffts_mode=2)
        pl.system.sync_wait(event_id=1, pipe=pl.PipeType.MTE3)
        pl.system.bar_all()
        y = pl.store(t, [0, 0], y)
        pl.system.fence()
        pl.system.cacheinvalid(y, [1, 64], [0, 0])
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], ws: pl.Tensor[[256], pl.INT64],
             y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        y = self.k(x, ws, y)
        return y


def tensor_specs():
    return [TensorSpec("x", [16, 64], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("ws", [256], pl.INT64, init_value=0),
            TensorSpec("y", [16, 64], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["y"][:] = np.exp(tensors["x"])
