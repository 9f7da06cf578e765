"""Device time of a 512x512x512 FP32 matmul in 128x128 tiles through pypto.runtime.run, next to
numpy's `a @ b` with the same number of threads, in one process.

    python bench/matmul_throughput_bench.py [--rounds N]

The program computes each 128x128 block of C in one task (16 tasks), accumulating four
128x128x128 tile matmuls (Left/Right tiles moved from Mat); the device runs the tasks on as many
simulated cores as numpy's BLAS has threads. numpy (the anchor) and run() (the subject) are timed
in the same rounds, the order alternating (bench_rounds.py); figures are medians. numpy is timed
as `a @ b` and, right after, into a ready output (bench_rounds.NumpyAnchor): the device's
ratio is to the latter, which like the device's time has its output mapped before it starts.

Each run() launches the program twice (RunConfig.rounds=2) and both launches are reported: the
first, which is what a single run() measures, and the second, right after an identical launch,
as numpy's ready-output call comes right after its own `a @ b`. The first pairs a device
launch after the run's golden and golden files with numpy's second call (the strict ratio); the
second pairs like with like (each side's second call of the same product).

numpy's BLAS build, kernel and thread count are printed when threadpoolctl is importable. Some
machines set OPENBLAS_CORETYPE (and OPENBLAS_L2_SIZE), which makes numpy's OpenBLAS run an older
kernel; to compare with numpy at its best, run this script with both unset:
`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/matmul_throughput_bench.py`.
"""

import argparse
import os
import tempfile

import numpy as np

import pypto.language as pl
from bench_rounds import NumpyAnchor, interleaved, medians, stage_seconds
from pypto.runtime import RunConfig, TensorSpec, run

N, T = 512, 128


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def block(self, a: pl.Tensor[[T, N], pl.FP32], b: pl.Tensor[[N, T], pl.FP32],
              c: pl.Out[pl.Tensor[[T, T], pl.FP32]]) -> pl.Tensor[[T, T], pl.FP32]:
        a0 = pl.load(a, [0, 0], [T, T], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [T, T], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, N // T):
            ak = pl.load(a, [0, k * T], [T, T], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [k * T, 0], [T, T], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
             c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        for i in pl.range(N // T):
            for j in pl.range(N // T):
                self.block(pl.slice(a, [T, N], [i * T, 0]), pl.slice(b, [N, T], [0, j * T]),
                           pl.slice(c, [T, T], [i * T, j * T]))
        return c


def golden(tensors, params=None):
    np.matmul(tensors["a"], tensors["b"], out=tensors["c"])


def single_threaded_golden(tensors, params=None):
    """The golden with numpy's BLAS on one thread, so that no BLAS thread is left spinning
    while the device runs right after it (a no-op limit without threadpoolctl)."""
    with _blas_threads(1):
        golden(tensors, params)


def blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    # numpy's own BLAS (in numpy.libs or numpy's site folder), not the one pypto's runtime links.
    blas = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    ours = [lib for lib in blas if "numpy" in lib["filepath"] or
            lib["filepath"].startswith(numpy_dir)]
    return (ours or blas or [None])[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (medians)")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds of sleep, then one untimed call, before each side's "
                        "timed call, so that numpy's BLAS threads, which spin-wait after a "
                        "call, stop before the device runs")
    parser.add_argument("--single-threaded-golden", action="store_true",
                        help="compute run()'s golden with numpy's BLAS on one thread")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    info = blas_info()
    if info:
        print(f"numpy BLAS: {info['internal_api']} {info['version']}, kernel "
              f"{info.get('architecture')}, {info['num_threads']} threads by default")
    else:
        print("numpy BLAS: unknown (threadpoolctl not importable): its thread count cannot be "
              "set, only the default one is measured")
    specs = [TensorSpec("a", [N, N], pl.FP32, init_value=a),
             TensorSpec("b", [N, N], pl.FP32, init_value=b),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]
    work = tempfile.mkdtemp()
    print(f"medians of {args.rounds} interleaved rounds; anchors: numpy a @ b and, right after "
          f"it, numpy into a ready output (the ratio's anchor); "
          f"{args.settle} s settling before each call; golden on "
          f"{'one BLAS thread' if args.single_threaded_golden else 'numpy BLAS default threads'}")
    reference = single_threaded_golden if args.single_threaded_golden else golden
    for threads in ((1, 2) if info else (2,)):
        with _blas_threads(threads):
            measure(specs, work, threads, args.rounds, args.settle, reference)


def _blas_threads(n):
    """numpy's BLAS limited to n threads for the block (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def measure(specs, work, threads, rounds, settle, reference):
    a, b = specs[0].init_value, specs[1].init_value
    flop = 2.0 * N ** 3
    for label, isolate in (("in-process", False), ("isolated  ", True)):
        config = RunConfig(work_dir=work, isolate=isolate, workers=threads, rtol=1e-4,
                           atol=1e-3, compile_profiling=True, rounds=2)
        execute, second = [], []

        def subject():
            r = run(TiledMatmul, specs, reference, config)
            assert r.passed, r.error
            execute.append(stage_seconds(r.profile, "device_execution", "execute"))
            second.append(r.round_times[1])
            return r.round_times[0]

        ready_c = np.empty((N, N), dtype=np.float32)
        anchor = NumpyAnchor(lambda: a @ b, lambda: np.matmul(a, b, out=ready_c),
                             ready_c)
        numpy_times, device_times = interleaved(anchor, subject, rounds, settle)
        numpy_s, device_s, _ = medians(numpy_times, device_times)
        ready_s, _, _ = medians(anchor.ready_times, device_times)
        _, execute_s, _ = medians(numpy_times, execute)
        _, second_s, _ = medians(numpy_times, second)
        print(f"  {label} ({threads} cores)  numpy a @ b {numpy_s * 1e3:6.2f} ms, into a ready "
              f"output {ready_s * 1e3:6.2f} ms {flop / ready_s / 1e9:6.1f} GFLOP/s   "
              f"device {device_s * 1e3:6.2f} ms {flop / device_s / 1e9:6.1f} GFLOP/s "
              f"{ready_s / device_s:5.2f}x numpy ready ({numpy_s / device_s:4.2f}x a @ b), "
              f"second launch {second_s * 1e3:6.2f} ms {ready_s / second_s:5.2f}x numpy ready   "
              f"execute stage (both launches) {execute_s * 1e3:6.2f} ms")



if __name__ == "__main__":
    main()
