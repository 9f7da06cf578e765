"""Throughput of a 4096x4096 FP32 add through pypto.runtime.run (compiled kernels on the
CPU-simulator device) next to numpy's `a + b`, in one process, and 2 simulated cores vs 1.

    python bench/runtime_throughput_bench.py [--rounds N]

Two figures per configuration: RunResult.execution_time (orchestration and all tasks on the
simulated cores) and the profile's device_execution/execute stage, which adds loading the program
library and, for an isolated run, forking the device process that contains faults. run() places
the tensors in memory shared with that process, so no data is copied between the two.

Two tile shapes: the favourable one (2x4096 by default, PYPTO_BENCH_TILE=RxC to change it),
whose long rows suit the simulator's memory access, and a plain 64x64 tile as a kernel author
would write it; both in 16 tasks of 256 rows, and the 64x64 tile once more as one task per tile
(4096 tasks). numpy (the anchor) and run() (the subject) are timed in the same rounds (round k:
both back to back, the order alternating; see bench_rounds.py); figures are medians over the
rounds and ratios of those medians. numpy is timed as `a + b` and, right after, into a ready
output (bench_rounds.NumpyAnchor); the device's ratios are to the latter, which like the device's
time has its output mapped before it starts.

`--ops` times the elementwise ops beyond the arithmetic the same way (log, rsqrt, sin, the
scalar form adds, a comparison cmps and the partial ops part_add and part_max, in the favourable
tile, in process): numpy's
`np.log(a, out=c)` and so on against the device, with the target that the device takes at most
1.5x numpy's time.
"""

import argparse
import os
import tempfile
import time

import numpy as np

import pypto.language as pl
from bench_rounds import NumpyAnchor, interleaved, medians, stage_seconds
from pypto.runtime import RunConfig, TensorSpec, run

# Each task adds 256 rows.
N, ROWS = 4096, 256
FAVOURABLE_TILE = tuple(int(v) for v in os.environ.get("PYPTO_BENCH_TILE", "2x4096").split("x"))
PLAIN_TILE = (64, 64)
# The device configurations of the add (label, isolate, workers); the ratios' table compares the
# first two.
CONFIGS = [("in-process, 1 core ", False, 1),
           ("in-process, 2 cores", False, 2),
           ("isolated,   2 cores", True, 2)]


def make_program(TR, TC):
    """The add program with TR x TC tiles (@pl.program reads TR and TC from this frame)."""

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

    return BigAdd


def make_task_per_tile_program(TR, TC):
    """The add program with one task per TR x TC tile (4096 tasks for 64x64 tiles), as a kernel
    author may also write it: what it measures on top of the other shapes is submitting and
    ordering thousands of tasks."""

    @pl.program
    class TileTasksAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def add_tile(self, a: pl.Tensor[[TR, TC], pl.FP32], b: pl.Tensor[[TR, TC], pl.FP32],
                     c: pl.Out[pl.Tensor[[TR, TC], pl.FP32]]) -> pl.Tensor[[TR, TC], pl.FP32]:
            s = pl.add(pl.load(a, [0, 0], [TR, TC]), pl.load(b, [0, 0], [TR, TC]))
            c = pl.store(s, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                 c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            for i in pl.range(N // TR):
                for j in pl.range(N // TC):
                    self.add_tile(pl.slice(a, [TR, TC], [i * TR, j * TC]),
                                  pl.slice(b, [TR, TC], [i * TR, j * TC]),
                                  pl.slice(c, [TR, TC], [i * TR, j * TC]))
            return c

    return TileTasksAdd


def golden(tensors, params=None):
    np.add(tensors["a"], tensors["b"], out=tensors["c"])


def make_op_program(expr, TR, TC, out_dtype="FP32", out_cols=N):
    """One op of `x` (a TR x TC tile of the input) per tile: `expr` is the call, e.g.
    "pl.log(x)", its result a [TR, out_cols * TC // N] tile of `out_dtype`; the program text is
    built here because the op varies."""
    OC = out_cols * TC // N
    text = f"""
import pypto.language as pl

@pl.program
class BigOp:
    @pl.function(type=pl.FunctionType.InCore)
    def op_rows(self, a: pl.Tensor[[{ROWS}, {N}], pl.FP32],
                c: pl.Out[pl.Tensor[[{ROWS}, {out_cols}], pl.{out_dtype}]]
                ) -> pl.Tensor[[{ROWS}, {out_cols}], pl.{out_dtype}]:
        for i in pl.range({ROWS // TR}):
            for j in pl.range({N // TC}):
                x = pl.load(a, [i * {TR}, j * {TC}], [{TR}, {TC}])
                c = pl.store({expr}, [i * {TR}, j * {OC}], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{N}, {N}], pl.FP32],
             c: pl.Out[pl.Tensor[[{N}, {out_cols}], pl.{out_dtype}]]
             ) -> pl.Tensor[[{N}, {out_cols}], pl.{out_dtype}]:
        for r in pl.range({N // ROWS}):
            self.op_rows(pl.slice(a, [{ROWS}, {N}], [r * {ROWS}, 0]),
                         pl.slice(c, [{ROWS}, {out_cols}], [r * {ROWS}, 0]))
        return c
"""
    return pl.parse(text)


def packed_less_than_zero(a):
    """pl.cmps(x, 0.0, cmp_type=2)'s predicate mask of a row-major block of whole rows."""
    return np.packbits(a < 0, axis=1, bitorder="little")


# op: (the call on tile x, numpy into a ready output `out`, the input's range, the result's
# dtype, its columns, numpy's ready output's dtype, the golden)
OPS = {
    "log": ("pl.log(x)", lambda a, out: np.log(a, out=out), (0.01, 100.0)),
    "rsqrt": ("pl.rsqrt(x)", lambda a, out: np.divide(1.0, np.sqrt(a, out=out), out=out),
              (0.01, 100.0)),
    "sin": ("pl.sin(x)", lambda a, out: np.sin(a, out=out), (-10.0, 10.0)),
    "adds": ("pl.adds(x, 1.5)", lambda a, out: np.add(a, np.float32(1.5), out=out), (-1.0, 1.0)),
    # The device's mask packs 8 results a byte (UINT8 elements); numpy writes a bool per result.
    "cmps": ("pl.cmps(x, 0.0, cmp_type=2)", lambda a, out: np.less(a, 0.0, out=out), (-1.0, 1.0),
             "UINT8", N // 8, np.bool_, packed_less_than_zero),
    # The partial ops of fully valid tiles compute the plain op.
    "part_add": ("pl.part_add(x, x)", lambda a, out: np.add(a, a, out=out), (-1.0, 1.0)),
    "part_max": ("pl.part_max(x, pl.neg(x))",
                 lambda a, out: np.maximum(a, np.negative(a, out=out), out=out), (-1.0, 1.0)),
}


def elementwise_ops(work, rounds):
    """Each op of OPS on 4096x4096 FP32 against numpy, in process on 1 and 2 cores."""
    print("elementwise ops, 4096x4096 FP32, tile "
          f"{FAVOURABLE_TILE[0]}x{FAVOURABLE_TILE[1]}, in process (target: device <= 1.5x numpy)")
    for name, spec in OPS.items():
        expr, numpy_op, (lo, hi) = spec[:3]
        out_dtype, out_cols, ready_dtype, make_golden = (spec[3:] if len(spec) > 3 else
                                                         ("FP32", N, np.float32, None))
        a = np.random.default_rng(2).uniform(lo, hi, (N, N)).astype(np.float32)
        ready = np.empty((N, N), dtype=ready_dtype)
        program = make_op_program(expr, *FAVOURABLE_TILE, out_dtype=out_dtype, out_cols=out_cols)
        specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
                 TensorSpec("c", [N, out_cols], getattr(pl, out_dtype), is_output=True)]

        def op_golden(tensors, params=None, numpy_op=numpy_op, make_golden=make_golden):
            if make_golden:
                tensors["c"][:] = make_golden(tensors["a"])
            else:
                numpy_op(tensors["a"], tensors["c"])

        for label, workers in (("1 core ", 1), ("2 cores", 2)):
            config = RunConfig(work_dir=work, isolate=False, workers=workers, rtol=1e-5,
                               atol=1e-5)

            def subject():
                r = run(program, specs, op_golden, config)
                assert r.passed, r.error
                return r.execution_time

            anchor = NumpyAnchor(lambda: numpy_op(a, np.empty_like(ready)),
                                 lambda: numpy_op(a, ready), ready)
            _, device_times = interleaved(anchor, subject, rounds)
            ready_s, device_s, ratio = medians(anchor.ready_times, device_times)
            verdict = "ok" if ratio <= 1.5 else "SLOWER than the target"
            print(f"  {name:6s} {label}  numpy {ready_s * 1e3:7.2f} ms   device "
                  f"{device_s * 1e3:7.2f} ms   device/numpy {ratio:5.2f}x  {verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians)")
    parser.add_argument("--ops", action="store_true",
                        help="only the elementwise ops (log, rsqrt, sin, adds, cmps, part_add, "
                             "part_max) against numpy")
    args = parser.parse_args()
    if args.ops:
        elementwise_ops(tempfile.mkdtemp(), args.rounds)
        return
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
             TensorSpec("b", [N, N], pl.FP32, init_value=b),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    work = tempfile.mkdtemp()
    gb = 3 * N * N * 4 / 1e9
    ready_c = np.empty((N, N), dtype=np.float32)

    print(f"medians of {args.rounds} interleaved rounds; anchors: numpy a + b and, right after "
          "it, numpy into a ready output (the ratios' anchor)")
    print("pypto device: orchestration and tasks; execute stage: also loading the program and,")
    print("       when isolated, forking the device process and mapping the tensors into it")
    rows, cols = PLAIN_TILE
    add_target = " (target >= 1.0x in process, >= 0.8x isolated)"
    programs = [
        (f"tile {FAVOURABLE_TILE[0]}x{FAVOURABLE_TILE[1]} (favourable)",
         make_program(*FAVOURABLE_TILE), add_target),
        (f"tile {rows}x{cols} (plain)", make_program(*PLAIN_TILE), add_target),
        (f"tile {rows}x{cols}, a task per tile ({(N // rows) * (N // cols)} tasks)",
         make_task_per_tile_program(*PLAIN_TILE), ""),
    ]
    for title, program, target in programs:
        print(f"{title}:")
        device_by_config = {}
        for label, isolate, workers in CONFIGS:
            config = RunConfig(work_dir=work, isolate=isolate, workers=workers,
                               dump_passes=False, compile_profiling=True)
            execute = []

            def subject():
                r = run(program, specs, golden, config)
                assert r.passed, r.error
                execute.append(stage_seconds(r.profile, "device_execution", "execute"))
                return r.execution_time

            anchor = NumpyAnchor(lambda: a + b, lambda: np.add(a, b, out=ready_c), ready_c)
            numpy_times, device_times = interleaved(anchor, subject, args.rounds)
            numpy_s, device_s, _ = medians(numpy_times, device_times)
            ready_s, _, _ = medians(anchor.ready_times, device_times)
            _, execute_s, _ = medians(numpy_times, execute)
            device_by_config[label] = device_s
            print(f"  {label}  numpy a + b {numpy_s * 1e3:7.2f} ms, into a ready output "
                  f"{ready_s * 1e3:7.2f} ms {gb / ready_s:6.2f} GB/s   device "
                  f"{device_s * 1e3:7.2f} ms {ready_s / device_s:5.2f}x numpy ready{target} "
                  f"({numpy_s / device_s:4.2f}x a + b)   execute stage {execute_s * 1e3:7.2f} ms "
                  f"{ready_s / execute_s:5.2f}x")
        one, two = device_by_config[CONFIGS[0][0]], device_by_config[CONFIGS[1][0]]
        print(f"  2 cores vs 1 (device time, medians): speed-up {one / two:.2f}x")
    end_to_end(make_program(*FAVOURABLE_TILE), work, args.rounds)


def end_to_end(program, work, rounds):
    """run() as a user calls it (default RunConfig: isolated, golden files written, and once
    with write_golden_data=False), inputs made by the run from a generator, against what a numpy
    user does anyway: make the inputs, compute the golden, compare with np.allclose."""
    rng = np.random.default_rng(1)

    def make(shape):
        return rng.standard_normal(shape, dtype=np.float32)

    def numpy_user():
        start = time.perf_counter()
        a, b = make((N, N)), make((N, N))
        golden_c = a + b
        assert np.allclose(a + b, golden_c)
        return time.perf_counter() - start

    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=make),
             TensorSpec("b", [N, N], pl.FP32, init_value=make),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    print("run() end to end (tile 2x4096) against a numpy user's own work "
          "(two standard_normal inputs, a + b, np.allclose):")
    for label, config in (("defaults             ", RunConfig(work_dir=work)),
                          ("write_golden_data=False", RunConfig(work_dir=work,
                                                                write_golden_data=False))):
        def subject():
            start = time.perf_counter()
            r = run(program, specs, golden, config)
            assert r.passed, r.error
            return time.perf_counter() - start

        user_times, run_times = interleaved(numpy_user, subject, rounds)
        user_s, run_s, ratio = medians(user_times, run_times)
        print(f"  {label}  numpy user {user_s * 1e3:8.1f} ms   run() {run_s * 1e3:8.1f} ms  "
              f"{ratio:5.2f}x  (target <= 3x)")


if __name__ == "__main__":
    main()
