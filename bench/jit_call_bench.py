"""Cost of a cached @pl.jit call against calling its compiled program directly.

Both sides run the same compiled 128x128 FP32 add on the same numpy arrays, in process
(RunConfig(isolate=False): a forked device would hide the difference under milliseconds of
process start). The anchor calls the driver with the compiled program in hand
(`_core.driver.call`); the subject calls the @pl.jit function, which first computes the
specialisation key from its arguments (shapes, dtypes, scalars, config), finds the compiled
program in its cache and checks the arrays. The difference of the medians is what @pl.jit adds
per call. Each sample is a batch of calls; anchor and subject alternate in interleaved rounds
(bench_rounds.py) and figures are medians over the rounds.

The device call itself (a few hundred microseconds, mostly starting the simulated cores) varies
by more than the overhead, so the overhead is also measured alone: the same rounds with the
driver call replaced by a stub on both sides (an empty Python call as the anchor, the @pl.jit
function with its cache, key, checks and driver session as the subject).

    python bench/jit_call_bench.py [--rounds 30] [--calls 200]
"""

import argparse
import os
import sys
import tempfile

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=200, help="calls per timed sample")
    options = parser.parse_args()

    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    c = np.zeros_like(a)
    with tempfile.TemporaryDirectory() as work:
        config = RunConfig(isolate=False, workers=1, work_dir=os.path.join(work, "out"))
        add(a, b, c, config=config)  # compiles and builds the specialisation
        assert np.array_equal(c, a + b)
        # The compiled program the cache holds, and the driver config the call uses.
        (compiled,) = add._cache.values()
        _, driver_config = _jit._driver_config(config)
        arrays, dtypes = [a, b, c], ["FP32"] * 3
        calls = range(options.calls)

        def direct():
            for _ in calls:
                _core.driver.call(None, compiled, arrays, dtypes, driver_config)

        def jit():
            for _ in calls:
                add(a, b, c, config=config)

        direct_times, jit_times = interleaved(lambda: timed(direct), lambda: timed(jit),
                                              options.rounds)
        assert add.cache_info()["misses"] == 1

        # The same without the device: everything @pl.jit does around the driver call.
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
                StubDriver.call(None, compiled, arrays, dtypes, driver_config)

        real_core = _jit._core
        _jit._core = StubCore
        try:
            stub_times = interleaved(lambda: timed(stub_direct), lambda: timed(jit),
                                     options.rounds)
        finally:
            _jit._core = real_core
    anchor, subject, ratio = medians(direct_times, jit_times)
    stub_anchor, stub_subject, _ = medians(*stub_times)
    per_call = 1e6 / options.calls
    print(f"128x128 add, {options.calls} calls per sample, {options.rounds} interleaved rounds, "
          f"medians per call:")
    print(f"  compiled program, called directly : {anchor * per_call:8.2f} us  (anchor)")
    print(f"  @pl.jit function, cached          : {subject * per_call:8.2f} us  "
          f"(ratio {ratio:.3f})")
    print(f"  difference                        : {(subject - anchor) * per_call:8.2f} us")
    print(f"  with the device call stubbed out  : {stub_subject * per_call:8.2f} us  @pl.jit, "
          f"{stub_anchor * per_call:.2f} us  direct")
    print(f"  @pl.jit overhead per call         : {(stub_subject - stub_anchor) * per_call:8.2f} us")


if __name__ == "__main__":
    main()
