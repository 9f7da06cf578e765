# construct: pl.assemble of tensors in an orchestration (a lower-rank source into a 3-D target)
# expect: works
"""Each kernel result [4, 16] is copied into batch b of a [2, 4, 16] output."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class Assemble:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: pl.Tensor[[4, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        out = pl.store(pl.add(pl.load(x, [0, 0], [4, 16]), pl.load(x, [0, 0], [4, 16])), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 4, 16], pl.FP32]]) -> pl.Tensor[[2, 4, 16], pl.FP32]:
        for b in pl.range(2):
            chunk: pl.Tensor[[4, 16], pl.FP32] = pl.create_tensor([4, 16], dtype=pl.FP32)
            chunk = self.double(x, chunk)
            out = pl.assemble(out, chunk, [b, 0, 0])
        return out


def tensor_specs():
    return [TensorSpec("x", [4, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("out", [2, 4, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["out"][:] = np.stack([2 * tensors["x"]] * 2)
