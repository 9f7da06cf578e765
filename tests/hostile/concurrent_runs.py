"""One process of the concurrent-retention test (tests/python/test_hostile_environment.py): runs a
small program `runs` times with output-folder retention on (PYPTO_KEEP_OUTPUTS, set by the
caller), while other processes do the same in the same build folder. Prints one JSON line per
run: {"passed": bool, "error": text}."""

import json
import sys

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run


@pl.program
class Shared:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(x, [0, 0], [32, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.k(x, y)
        return y


def golden(tensors, params=None):
    tensors["y"][:] = 2 * tensors["x"]


def main(runs):
    specs = [TensorSpec("x", [32, 32], pl.FP32, init_value=np.ones((32, 32), np.float32)),
             TensorSpec("y", [32, 32], pl.FP32, is_output=True)]
    for _ in range(runs):
        result = run(Shared, specs, golden, config=RunConfig(isolate=False))
        print(json.dumps({"passed": bool(result.passed), "error": result.error or ""}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
