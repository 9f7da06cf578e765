"""Throughput of a 4096x4096 FP32 add through pypto.runtime.run (compiled kernels on the
CPU-simulator device) next to numpy's `a + b`, in one process, and 2 simulated cores vs 1.

    python bench/runtime_throughput_bench.py [--repeat N]

Two figures per configuration: RunResult.execution_time (orchestration and all tasks on the
simulated cores) and the profile's device_execution/execute stage, which adds loading the program
library and, for an isolated run, forking the device process that contains faults. run() places
the tensors in memory shared with that process, so no data is copied between the two.
"""

import argparse
import os
import tempfile
import time

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, TensorSpec, run

# Each task adds 256 rows; each tile is 32 KB. TR, TC can be overridden (PYPTO_BENCH_TILE=8x1024)
# to see how the tile shape's memory access pattern matters.
N, ROWS = 4096, 256
TR, TC = (int(v) for v in os.environ.get("PYPTO_BENCH_TILE", "2x4096").split("x"))


@pl.program
class BigAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_rows(self, a: pl.Tensor[[ROWS, N], pl.FP32], b: pl.Tensor[[ROWS, N], pl.FP32],
                 c: pl.Out[pl.Tensor[[ROWS, N], pl.FP32]]) -> pl.Tensor[[ROWS, N], pl.FP32]:
        for i in pl.range(ROWS // TR):
            for j in pl.range(N // TC):
                s = pl.add(pl.load(a, [i * TR, j * TC], [TR, TC]),
                           pl.load(b, [i * TR, j * TC], [TR, TC]))
                c = pl.store(s, [i * TR, j * TC], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        for r in pl.range(N // ROWS):
            self.add_rows(pl.slice(a, [ROWS, N], [r * ROWS, 0]),
                          pl.slice(b, [ROWS, N], [r * ROWS, 0]),
                          pl.slice(c, [ROWS, N], [r * ROWS, 0]))
        return c


def golden(tensors, params=None):
    np.add(tensors["a"], tensors["b"], out=tensors["c"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
             TensorSpec("b", [N, N], pl.FP32, init_value=b),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    work = tempfile.mkdtemp()

    numpy_s = min(_time(lambda: a + b) for _ in range(args.repeat))
    results = {}
    for label, isolate, workers in [("in-process, 1 core ", False, 1),
                                    ("in-process, 2 cores", False, 2),
                                    ("isolated,   2 cores", True, 2)]:
        device, execute = [], []
        for _ in range(args.repeat):
            r = run(BigAdd, specs, golden, RunConfig(work_dir=work, isolate=isolate,
                                                      workers=workers, dump_passes=False,
                                                      compile_profiling=True))
            assert r.passed, r.error
            device.append(r.execution_time)
            execute.append(_stage(r.profile, "device_execution", "execute"))
        results[label] = (min(device), min(execute))

    gb = 3 * N * N * 4 / 1e9
    print(f"numpy a + b                : {numpy_s * 1e3:8.2f} ms  {gb / numpy_s:6.2f} GB/s")
    print("pypto (device: orchestration and tasks; execute stage: also loading the program and,")
    print("       when isolated, forking the device process and mapping the tensors into it)")
    for label, (dev, exe) in results.items():
        print(f"  {label}  device {dev * 1e3:8.2f} ms  {numpy_s / dev:5.2f}x numpy   "
              f"execute stage {exe * 1e3:8.2f} ms  {numpy_s / exe:5.2f}x numpy  (target >= 0.5x)")
    one, two = results["in-process, 1 core "][0], results["in-process, 2 cores"][0]
    print(f"2 cores vs 1 (device time): speed-up {one / two:.2f}x")


def _stage(profile, *path):
    stages = profile["stages"]
    for name in path:
        stage = next(s for s in stages if s["name"] == name)
        stages = stage["children"]
    return stage["seconds"]


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
