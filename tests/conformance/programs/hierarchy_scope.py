# construct: with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator) (hierarchy scope)
# expect: works
"""A host orchestrator whose two CHIP blocks each compute on the device: the first doubles the
sum of its inputs, the second (named by name_hint) their difference. Each block becomes a chip
orchestration the host dispatches, and its CORE_GROUP scope that orchestration's kernel."""

import numpy as np

import pypto.language as pl
from pypto.ir.distributed_compiled_program import DistributedConfig

M = 64
DISTRIBUTED_CONFIG = DistributedConfig(device_ids=[0, 1])


@pl.program
class HierarchyScopes:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[M, M], pl.FP32], b: pl.Tensor[[M, M], pl.FP32],
                  total: pl.Out[pl.Tensor[[M, M], pl.FP32]],
                  diff: pl.Out[pl.Tensor[[M, M], pl.FP32]]) -> pl.Tensor[[M, M], pl.FP32]:
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                doubled = pl.mul(pl.add(a, b), 2.0)
                total_out = pl.assemble(total, doubled, [0, 0])
        with pl.at(pl.Level.CHIP, pl.Role.Orchestrator, name_hint="difference"):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(diff, pl.sub(a, b), [0, 0])
        return total_out


def arguments():
    return {"a": np.random.standard_normal((M, M)).astype(np.float32),
            "b": np.random.standard_normal((M, M)).astype(np.float32),
            "total": np.zeros((M, M), np.float32), "diff": np.zeros((M, M), np.float32)}


def golden(tensors):
    tensors["total"][:] = (tensors["a"] + tensors["b"]) * 2.0
    tensors["diff"][:] = tensors["a"] - tensors["b"]
