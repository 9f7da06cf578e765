"""Cost of a cached @pl.jit call against calling its compiled program directly.

Both sides run the same compiled 128x128 FP32 add on the same numpy arrays, in process at 1 and
2 workers and in the default isolated configuration; numpy's np.add into a ready output and
numba's @njit loop (when numba is installed: an optional bench dependency) are timed in the same
run beside them. The anchor calls the driver with the compiled program in hand
(`_core.driver.call`); the subject calls the @pl.jit function, which first computes the
specialisation key from its arguments (shapes, dtypes, scalars, config), finds the compiled
program in its cache and checks the arrays. The difference of the medians is what @pl.jit adds
per call. Each sample is a batch of calls; anchor and subject alternate in interleaved rounds
(bench_rounds.py) and figures are medians over the rounds.

The device call itself (a few hundred microseconds, mostly starting the simulated cores) varies
by more than the overhead, so the overhead is also measured alone: the same rounds with the
driver call replaced by a stub on both sides (an empty Python call as the anchor, the @pl.jit
function with its cache, key, checks and driver session as the subject).

On a machine shared with other work, wall times include waiting for a CPU. In process the
calling thread runs a one-task launch itself (the device's workers stay asleep), so the same
interleaved rounds are also timed in the calling thread's CPU time (time.thread_time), which
leaves that wait out.

    python bench/jit_call_bench.py [--rounds 30] [--calls 200]
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pypto.language as pl  # noqa: E402
from bench_rounds import interleaved, medians, timed  # noqa: E402
from pypto import _core  # noqa: E402
from pypto.language import _jit  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

N = 128


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], c)
    return c


def numba_add():
    """numba's @njit element-wise add into a ready output, or None without numba (an optional
    bench dependency: pip install numba)."""
    try:
        import numba  # noqa: PLC0415
    except ImportError:
        return None

    @numba.njit(cache=False)
    def njit_add(a, b, c):
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                c[i, j] = a[i, j] + b[i, j]

    return njit_add


def cpu_timed(fn):
    """The calling thread's CPU seconds for fn()."""
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def per_call_rounds(fn, calls, rounds):
    """Median over ``rounds`` samples of ``calls`` calls of fn, per call."""
    samples = []
    for _ in range(rounds):
        samples.append(timed(lambda: [fn() for _ in range(calls)]) / calls)
    return sorted(samples)[len(samples) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=200, help="calls per timed sample")
    options = parser.parse_args()

    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    c = np.zeros_like(a)
    njit_add = numba_add()
    if njit_add is not None:
        njit_add(a, b, c)  # compiles
    calls = range(options.calls)
    per_call = 1e6 / options.calls
    print(f"128x128 FP32 add, {options.calls} calls per sample, {options.rounds} interleaved "
          f"rounds, medians per call:")
    with tempfile.TemporaryDirectory() as work:
        for label, config in [
                ("in process, 1 worker", RunConfig(isolate=False, workers=1,
                                                   work_dir=os.path.join(work, "w1"))),
                ("in process, 2 workers", RunConfig(isolate=False, workers=2,
                                                    work_dir=os.path.join(work, "w2"))),
                ("default (isolated)", RunConfig(work_dir=os.path.join(work, "iso")))]:
            add._cache.clear()
            add(a, b, c, config=config)  # compiles and builds the specialisation
            assert np.array_equal(c, a + b)
            (compiled,) = add._cache.values()
            driver_program = compiled._driver_program()
            _, driver_config = _jit._driver_config(config)
            arrays, dtypes = [a, b, c], ["FP32"] * 3

            def direct():
                for _ in calls:
                    _core.driver.call(None, driver_program, arrays, dtypes, driver_config)

            def jit():
                for _ in calls:
                    add(a, b, c, config=config)

            def numpy_add():
                for _ in calls:
                    np.add(a, b, out=c)

            direct_times, jit_times = interleaved(lambda: timed(direct), lambda: timed(jit),
                                                  options.rounds)
            numpy_time = per_call_rounds(lambda: np.add(a, b, out=c), options.calls, options.rounds)
            numba_time = (per_call_rounds(lambda: njit_add(a, b, c), options.calls, options.rounds)
                          if njit_add is not None else None)
            anchor, subject, _ = medians(direct_times, jit_times)
            numba_text = f"{numba_time * 1e6:.2f} us" if numba_time is not None else "(no numba)"
            print(f"  {label:<22} @pl.jit {subject * per_call:8.2f} us   compiled program "
                  f"called directly {anchor * per_call:8.2f} us   numpy np.add(out=) "
                  f"{numpy_time * 1e6:.2f} us   numba @njit {numba_text}")
            if config.isolate:
                continue  # the launch runs in the device server: not this thread's CPU time
            cpu_anchor, cpu_subject, _ = medians(*interleaved(
                lambda: cpu_timed(direct), lambda: cpu_timed(jit), options.rounds))
            print(f"  {'':<22} calling thread's CPU time: @pl.jit {cpu_subject * per_call:8.2f} "
                  f"us   called directly {cpu_anchor * per_call:8.2f} us")

        # What @pl.jit adds around the driver call: the same rounds with the driver call
        # replaced by a stub on both sides.
        config = RunConfig(isolate=False, workers=1, work_dir=os.path.join(work, "w1"))
        add._cache.clear()
        add(a, b, c, config=config)
        (compiled,) = add._cache.values()
        driver_program = compiled._driver_program()
        _, driver_config = _jit._driver_config(config)
        arrays, dtypes = [a, b, c], ["FP32"] * 3
        result = (0.0, False, False, [])

        class StubDriver:
            Session = _core.driver.Session

            @staticmethod
            def call(*args):
                return result

        class StubCore:
            driver = StubDriver

        def stub_direct():
            for _ in calls:
                StubDriver.call(None, driver_program, arrays, dtypes, driver_config)

        def jit():
            for _ in calls:
                add(a, b, c, config=config)

        real_core = _jit._core
        _jit._core = StubCore
        try:
            stub_times = interleaved(lambda: timed(stub_direct), lambda: timed(jit),
                                     options.rounds)
        finally:
            _jit._core = real_core
    stub_anchor, stub_subject, _ = medians(*stub_times)
    print(f"  @pl.jit overhead (driver call stubbed out on both sides): "
          f"{(stub_subject - stub_anchor) * per_call:.2f} us")


if __name__ == "__main__":
    main()
