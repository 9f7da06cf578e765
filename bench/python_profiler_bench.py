"""Per-call cost of the Python profiling API, next to an empty ``with`` block.

Targets: ``with prof.stage("x"): pass`` <= 1 us; ``get_active_profiler()`` with profiling off
<= 0.3 us. All figures come from one process and one run, so the ratios are comparable.
Timings use the process CPU clock by default (``--clock wall`` for wall time): on a shared,
loaded machine wall time mostly measures how often the process was descheduled.

Run: python bench/python_profiler_bench.py [--number N] [--repeat R]
"""

import argparse
import contextlib
import os
import time
import timeit

from pypto.compile_profiling import CompileProfiler, get_active_profiler


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def best_ns(statement, setup_globals, number, repeat, clock):
    """Best-of-``repeat`` nanoseconds per execution of ``statement``."""
    timer = timeit.Timer(statement, globals=setup_globals, timer=clock)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000, help="executions per timing")
    parser.add_argument("--repeat", type=int, default=7, help="timings; the best is kept")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    os.environ.pop("PYPTO_COMPILE_PROFILING", None)
    assert get_active_profiler() is None

    nullcontext = contextlib.nullcontext()
    def best(statement, setup_globals, repeat=args.repeat):
        return best_ns(statement, setup_globals, args.number, repeat, clock)

    baseline = best("with nullcontext: pass", {"nullcontext": nullcontext})
    call_baseline = best("f()", {"f": lambda: None})

    # A fresh profiler per timing keeps its record buffer from growing across repeats.
    stage_ns = min(
        best('with prof.stage("x"): pass', {"prof": CompileProfiler()}, repeat=1)
        for _ in range(args.repeat)
    )
    off_ns = best("get_active_profiler()", {"get_active_profiler": get_active_profiler})

    rows = [
        ("with contextlib.nullcontext(): pass", baseline, None),
        ('with prof.stage("x"): pass', stage_ns, 1000.0),
        ("(lambda: None)()", call_baseline, None),
        ("get_active_profiler()  [profiling off]", off_ns, 300.0),
    ]
    print(f"clock: {args.clock}, best of {args.repeat} x {args.number}")
    for label, ns, target in rows:
        verdict = ""
        if target is not None:
            verdict = f"  target <= {target:.0f} ns: {'met' if ns <= target else 'MISSED'}"
        print(f"{label:42s} {ns:8.1f} ns{verdict}")
    print(f"ratio stage / nullcontext with:          {stage_ns / baseline:6.2f}x")
    print(f"ratio get_active_profiler / nullcontext: {off_ns / baseline:6.2f}x")
    print(f"ratio get_active_profiler / empty call:  {off_ns / call_baseline:6.2f}x")


if __name__ == "__main__":
    main()
