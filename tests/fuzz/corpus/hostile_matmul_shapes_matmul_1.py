import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        x = pl.create_tile([1, 4611686018427387904], dtype=pl.FP32, target_memory=pl.MemorySpace.Left)
        y = pl.create_tile([1, 2], dtype=pl.FP32, target_memory=pl.MemorySpace.Right)
        z = pl.matmul(x, y)
        c = pl.store(z, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.k(a, c)
        return c
