# construct: the 4-bit dtypes pl.FP4, pl.INT4 and pl.UINT4 in tensors and tiles
# expect: works
"""An FP4 (E2M1) tensor read, cast to FP8E4M3FN and FP32 (PyPTO casts its FP4 operands before
computing), and INT4 arithmetic, which wraps in four bits."""

import ml_dtypes
import numpy as np

import pypto.language as pl
from pypto.runtime import TensorSpec


@pl.program
class FourBit:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 32], pl.FP4], n: pl.Tensor[[16, 32], pl.INT4],
               y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
               m: pl.Out[pl.Tensor[[16, 32], pl.INT4]]) -> pl.Tensor[[16, 32], pl.FP32]:
        as_fp8 = pl.cast(pl.load(a, [0, 0], [16, 32]), pl.FP8E4M3FN)
        y = pl.store(pl.mul(pl.cast(as_fp8, pl.FP32), 2.0), [0, 0], y)
        t = pl.load(n, [0, 0], [16, 32])
        m = pl.store(pl.add(t, t), [0, 0], m)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP4], n: pl.Tensor[[16, 32], pl.INT4],
             y: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
             m: pl.Out[pl.Tensor[[16, 32], pl.INT4]]) -> pl.Tensor[[16, 32], pl.FP32]:
        y = self.kernel(a, n, y, m)
        return y


def tensor_specs():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 16, (16, 32)).astype(np.uint8)
    return [TensorSpec("a", [16, 32], pl.FP4, init_value=codes.view(ml_dtypes.float4_e2m1fn)),
            TensorSpec("n", [16, 32], pl.INT4,
                       init_value=rng.integers(-8, 8, (16, 32)).astype(ml_dtypes.int4)),
            TensorSpec("y", [16, 32], pl.FP32, is_output=True),
            TensorSpec("m", [16, 32], pl.INT4, is_output=True)]


def golden(tensors):
    tensors["y"][:] = tensors["a"].astype(np.float32) * 2.0
    tensors["m"][:] = tensors["n"] + tensors["n"]  # ml_dtypes' int4 wraps in four bits
