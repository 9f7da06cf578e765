"""Throughput of the reductions col_sum, row_min and row_argmax of a 4096x4096 FP32 tensor through
pypto.runtime.run (compiled kernels on the CPU-simulator device, 2 simulated cores) next to
numpy's `a.sum(axis=0)`, `a.min(axis=1)` and `a.argmax(axis=1)`, in one process.

    python bench/reduction_throughput_bench.py [--rounds N]

Each op runs in 16 tasks of 256 rows, on tiles of 4 whole rows (64 KiB). col_sum's tasks each
fold their rows into one [1, 4096] partial sum, and a last task adds the 16 partials. numpy (the
anchor) and run() (the subject) are timed in the same rounds (round k: both back to back, the
order alternating; see bench_rounds.py); figures are medians over the rounds and ratios of those
medians. The device's figure is RunResult.execution_time (orchestration and all tasks); numpy's
anchor is the reduction into a ready output (bench_rounds.NumpyAnchor). The issue's target: the
device within 1.5x of numpy (ratio numpy / device >= 0.67).
"""

import argparse
import tempfile

import numpy as np

import pypto.language as pl
from bench_rounds import NumpyAnchor, interleaved, medians
from pypto.runtime import RunConfig, TensorSpec, run

N, ROWS, TR = 4096, 256, 4
TASKS = N // ROWS
COLS_PER_BLOCK = 1024  # the final col_sum of the 16 partials, a block of columns at a time


@pl.program
class ColSum:
    @pl.function(type=pl.FunctionType.InCore)
    def partial(self, a: pl.Tensor[[ROWS, N], pl.FP32],
                p: pl.Out[pl.Tensor[[1, N], pl.FP32]]) -> pl.Tensor[[1, N], pl.FP32]:
        acc = pl.col_sum(pl.load(a, [0, 0], [TR, N]))
        for i in pl.range(1, ROWS // TR):
            acc = pl.add(acc, pl.col_sum(pl.load(a, [i * TR, 0], [TR, N])))
        p = pl.store(acc, [0, 0], p)
        return p

    @pl.function(type=pl.FunctionType.InCore)
    def total(self, p: pl.Tensor[[TASKS, N], pl.FP32],
              o: pl.Out[pl.Tensor[[1, N], pl.FP32]]) -> pl.Tensor[[1, N], pl.FP32]:
        for j in pl.range(N // COLS_PER_BLOCK):
            s = pl.col_sum(pl.load(p, [0, j * COLS_PER_BLOCK], [TASKS, COLS_PER_BLOCK]))
            o = pl.store(s, [0, j * COLS_PER_BLOCK], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             o: pl.Out[pl.Tensor[[1, N], pl.FP32]]) -> pl.Tensor[[1, N], pl.FP32]:
        p = pl.create_tensor([TASKS, N], dtype=pl.FP32)
        for r in pl.range(TASKS):
            self.partial(pl.slice(a, [ROWS, N], [r * ROWS, 0]), pl.slice(p, [1, N], [r, 0]))
        o = self.total(p, o)
        return o


@pl.program
class RowMin:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, a: pl.Tensor[[ROWS, N], pl.FP32],
             o: pl.Out[pl.Tensor[[ROWS, 1], pl.FP32]]) -> pl.Tensor[[ROWS, 1], pl.FP32]:
        for i in pl.range(ROWS // TR):
            o = pl.store(pl.row_min(pl.load(a, [i * TR, 0], [TR, N])), [i * TR, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             o: pl.Out[pl.Tensor[[N, 1], pl.FP32]]) -> pl.Tensor[[N, 1], pl.FP32]:
        for r in pl.range(TASKS):
            self.rows(pl.slice(a, [ROWS, N], [r * ROWS, 0]), pl.slice(o, [ROWS, 1], [r * ROWS, 0]))
        return o


@pl.program
class RowArgmax:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, a: pl.Tensor[[ROWS, N], pl.FP32],
             o: pl.Out[pl.Tensor[[ROWS, 1], pl.INT32]]) -> pl.Tensor[[ROWS, 1], pl.INT32]:
        for i in pl.range(ROWS // TR):
            o = pl.store(pl.row_argmax(pl.load(a, [i * TR, 0], [TR, N])), [i * TR, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32],
             o: pl.Out[pl.Tensor[[N, 1], pl.INT32]]) -> pl.Tensor[[N, 1], pl.INT32]:
        for r in pl.range(TASKS):
            self.rows(pl.slice(a, [ROWS, N], [r * ROWS, 0]), pl.slice(o, [ROWS, 1], [r * ROWS, 0]))
        return o


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (medians)")
    args = parser.parse_args()
    a = np.random.default_rng(0).standard_normal((N, N), dtype=np.float32)
    work = tempfile.mkdtemp()
    sums = np.empty(N, np.float32)
    mins = np.empty(N, np.float32)
    argmaxes = np.empty(N, np.int64)
    cases = [
        # name, program, output shape and dtype, numpy plain, numpy into a ready output
        ("col_sum   ", ColSum, [1, N], pl.FP32, lambda: a.sum(axis=0),
         lambda: np.sum(a, axis=0, out=sums), sums),
        ("row_min   ", RowMin, [N, 1], pl.FP32, lambda: a.min(axis=1),
         lambda: np.min(a, axis=1, out=mins), mins),
        ("row_argmax", RowArgmax, [N, 1], pl.INT32, lambda: a.argmax(axis=1),
         lambda: np.argmax(a, axis=1, out=argmaxes), argmaxes),
    ]
    print(f"4096x4096 FP32, medians of {args.rounds} interleaved rounds, device: 2 simulated "
          "cores, in process; ratio = numpy into a ready output / device (target >= 0.67)")
    for name, program, shape, dtype, plain, ready, out in cases:
        specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
                 TensorSpec("o", shape, dtype, is_output=True)]

        def golden(t, params=None, plain=plain, shape=shape):
            t["o"][:] = np.asarray(plain()).reshape(shape)

        # Partial sums add in another order than numpy's pairwise sum.
        config = RunConfig(work_dir=work, isolate=False, workers=2, dump_passes=False,
                           rtol=1e-4, atol=1e-3)

        def subject(program=program, specs=specs, golden=golden, config=config):
            r = run(program, specs, golden, config)
            assert r.passed, r.error
            return r.execution_time

        anchor = NumpyAnchor(plain, ready, out)
        numpy_times, device_times = interleaved(anchor, subject, args.rounds)
        numpy_s, device_s, _ = medians(numpy_times, device_times)
        ready_s, _, _ = medians(anchor.ready_times, device_times)
        print(f"  {name}  numpy {numpy_s * 1e3:7.2f} ms, into a ready output {ready_s * 1e3:7.2f} "
              f"ms   device {device_s * 1e3:7.2f} ms   {ready_s / device_s:5.2f}x numpy ready "
              f"({numpy_s / device_s:4.2f}x plain)")


if __name__ == "__main__":
    main()
