"""Cost of a cached ``run()`` of the 128x128 add example against the same work done in numpy.

The subject is ``pypto.runtime.run(AddProgram, SPECS, golden, config)`` of
``../shared/examples/add.py`` (its program, specs and golden), called again after a first run
compiled it: the run makes the inputs from the specs (a random normal and a constant), computes
the golden, runs the program on the device and compares. The anchor is what a numpy user writes
for the same: the two inputs made the same way, ``a + b``, the golden's ``a + b`` and an
``allclose``. Both are timed in interleaved rounds (bench_rounds.py); figures are medians.

Two configurations: the default (``RunConfig()``: the device in a child process, inputs and
expected outputs written to the output folder) and ``RunConfig(isolate=False,
write_golden_data=False)`` (in process, nothing written). Each subject's result is checked to
have reused its first run's compile (``compile_cache_hit``).

    python bench/run_call_bench.py [--rounds 30] [--examples ../shared/examples]
"""

import argparse
import os
import runpy
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_rounds import interleaved, medians, timed  # noqa: E402
from pypto.runtime import RunConfig, run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def numpy_work():
    a = np.random.standard_normal((128, 128)).astype(np.float32)
    b = np.full((128, 128), 1.5, dtype=np.float32)
    c = a + b
    expected = a + b
    assert np.allclose(c, expected, rtol=1e-5, atol=1e-5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--examples", default=os.path.join(HERE, "..", "..", "shared", "examples"))
    args = parser.parse_args()
    example = runpy.run_path(os.path.join(args.examples, "add.py"), run_name="bench")
    program, specs, golden = example["AddProgram"], example["SPECS"], example["golden"]
    print(f"run() of the cached 128x128 add example against numpy, {args.rounds} interleaved "
          f"rounds, medians")
    print(f"{'configuration':<42} {'numpy':>10} {'run()':>10} {'ratio':>8}")
    with tempfile.TemporaryDirectory(prefix="run_call_bench_") as work:
        configs = [("default (isolated, golden data written)",
                    RunConfig(work_dir=os.path.join(work, "default"))),
                   ("isolate=False, write_golden_data=False",
                    RunConfig(work_dir=os.path.join(work, "inproc"), isolate=False,
                              write_golden_data=False))]
        for label, config in configs:
            first = run(program, specs, golden, config)
            assert first.passed, first.error

            def subject(config=config):
                result = run(program, specs, golden, config)
                assert result.passed and result.compile_cache_hit, result

            anchor_times, subject_times = interleaved(lambda: timed(numpy_work),
                                                      lambda: timed(subject), args.rounds)
            anchor, subj, ratio = medians(anchor_times, subject_times)
            print(f"{label:<42} {anchor * 1e3:>8.3f}ms {subj * 1e3:>8.3f}ms {ratio:>7.1f}x")


if __name__ == "__main__":
    main()
