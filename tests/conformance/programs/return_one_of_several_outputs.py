# construct: a kernel that writes two Out parameters and returns one of them
# expect: works
"""`kernel` writes `ext` (with pl.assemble, its result unused) and `b`, and returns `b` only: the
returned tensor is the Out parameter it was written into, so what went into `ext` stays there
(a kernel's first Out parameter does not take its first return value regardless)."""

import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class ReturnOneOfSeveralOutputs:
    @pl.function(type=pl.FunctionType.Inline)
    def write_out(self, x: pl.Tensor[[8, 16], pl.FP32],
                  out: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        out = pl.tensor.assemble(out, x, [0, 0])
        return out

    @pl.function
    def main(self, a: pl.Tensor[[8, 16], pl.FP32], ext: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             b: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        self.write_out(a, ext)
        b = pl.tensor.assemble(b, pl.mul(a, 3.0), [0, 0])
        return b


def tensor_specs():
    return [TensorSpec("a", [8, 16], pl.FP32, init_value=np.random.standard_normal),
            TensorSpec("ext", [8, 16], pl.FP32, is_output=True),
            TensorSpec("b", [8, 16], pl.FP32, is_output=True)]


def golden(tensors):
    tensors["ext"][:] = tensors["a"]
    tensors["b"][:] = 3.0 * tensors["a"]
