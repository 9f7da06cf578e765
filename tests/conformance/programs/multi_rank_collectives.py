# construct: pld.tensor.allreduce (built-in collectives)
# expect: unsupported
# names: pld.tensor.allreduce
"""PyPTO's built-in collectives (`pld.tensor.allreduce`, `allgather`, ...) are compositions of
notify/wait and remote loads; they are not provided yet: write the composition (see
multi_rank_remote_load_store.py)."""

import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class BuiltinAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def reduce(self, data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],
               signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)
        return data
