# construct: @pl.jit.host with device=r
# expect: works
"""The function style of a multi-rank program: a @pl.jit.host orchestrator dispatches a @pl.jit
function to every rank, passing its rank as a scalar: y[r] = x[r] * (r + 1)."""

import numpy as np

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.ir.distributed_compiled_program import DistributedConfig

DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1])


@pl.jit.incore
def scale(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
          rank: pl.Scalar[pl.INT32]):
    t = pl.load(x, [0, 0], [8, 8])
    y = pl.store(pl.add(pl.mul(t, pl.cast(rank, target_type=pl.FP32)), t), [0, 0], y)
    return y


@pl.jit
def device_orch(x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
                rank: pl.Scalar[pl.INT32]):
    return scale(x, y, rank)


@pl.jit.host
def host_orch(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    for r in pl.range(pld.world_size()):
        device_orch(x[r], y[r], r, device=r)


def arguments():
    return {"x": np.random.standard_normal((2, 8, 8)).astype(np.float32),
            "y": np.zeros((2, 8, 8), np.float32)}


def golden(tensors):
    tensors["y"][:] = tensors["x"] * np.array([1, 2], np.float32).reshape(2, 1, 1)
