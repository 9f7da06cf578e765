"""Per-call cost of the Python profiling API, next to an empty ``with`` block.

Targets: ``with prof.stage("x"): pass`` <= 1 us; ``get_active_profiler()`` with profiling off
<= 0.3 us. Each subject is timed in the same rounds as its anchor (round k: anchor and subject
back to back, the order alternating; see bench_rounds.py), and the figures are the medians over
the rounds and their ratio. Timings use the process CPU clock by default (``--clock wall`` for
wall time): on a shared, loaded machine wall time mostly measures how often the process was
descheduled.

Run: python bench/python_profiler_bench.py [--number N] [--rounds R]
"""

import argparse
import contextlib
import os
import time
import timeit

from bench_rounds import interleaved, medians
from pypto.compile_profiling import CompileProfiler, get_active_profiler


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def ns_per_call(statement, make_globals, number, clock):
    """A function timing ``number`` executions of ``statement``: nanoseconds per execution.

    ``make_globals()`` runs before each timing, outside it, so that e.g. a fresh profiler keeps
    its record buffer from growing across rounds.
    """
    def timing():
        timer = timeit.Timer(statement, globals=make_globals(), timer=clock)
        return timer.timeit(number=number) / number * 1e9
    return timing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=200_000, help="executions per timing")
    parser.add_argument("--rounds", type=int, default=11, help="interleaved rounds (medians)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    os.environ.pop("PYPTO_COMPILE_PROFILING", None)
    assert get_active_profiler() is None

    nullcontext = contextlib.nullcontext()
    def timing(statement, make_globals):
        return ns_per_call(statement, make_globals, args.number, clock)

    empty_with = timing("with nullcontext: pass", lambda: {"nullcontext": nullcontext})
    empty_call = timing("f()", lambda: {"f": lambda: None})
    stage = timing('with prof.stage("x"): pass', lambda: {"prof": CompileProfiler()})
    off = timing("get_active_profiler()", lambda: {"get_active_profiler": get_active_profiler})

    # (subject label, subject, target ns, anchor label, anchor)
    pairs = [
        ('with prof.stage("x"): pass', stage, 1000.0, "with contextlib.nullcontext(): pass",
         empty_with),
        ("get_active_profiler()  [profiling off]", off, 300.0,
         "with contextlib.nullcontext(): pass", empty_with),
        ("get_active_profiler()  [profiling off]", off, 300.0, "(lambda: None)()", empty_call),
    ]
    print(f"clock: {args.clock}, medians of {args.rounds} interleaved rounds x {args.number}")
    for label, subject, target, anchor_label, anchor in pairs:
        anchor_ns, subject_ns, ratio = medians(*interleaved(anchor, subject, args.rounds))
        verdict = "met" if subject_ns <= target else "MISSED"
        print(f"  anchor  {anchor_label:40s} {anchor_ns:8.1f} ns")
        print(f"  subject {label:40s} {subject_ns:8.1f} ns  target <= {target:.0f} ns: "
              f"{verdict}")
        print(f"  ratio subject / anchor: {ratio:6.2f}x")


if __name__ == "__main__":
    main()
