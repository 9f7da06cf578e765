"""What ``pypto.runtime.benchmark`` adds to each launch beyond the kernel's own time.

``benchmark(program, specs, golden, rounds=N)`` launches the compiled program N times on one
device (one process, one set of worker threads) and reports each round's time. A round is one
launch: the orchestration submits the task, a worker runs the kernel, the launch waits for it.
The kernel's own time is what the device swimlane records for its task (``execute.device.tasks``:
start to end on its core, for the last launch of each benchmark), so the figure reported is

    overhead per launch = median round time - the task's time in the swimlane

for the 128x128 FP32 add of ``../shared/examples/add.py`` in process at 1 and 2 workers and
isolated (the device server). numpy's ``np.add(a, b, out=c)`` on the same arrays is timed in the
same process between the benchmarks, as the reference for the kernel's work. Each configuration
runs ``--repeats`` benchmarks of ``--rounds`` rounds; figures are medians over all rounds and the
median of the per-benchmark task times.

    python bench/benchmark_overhead_bench.py [--rounds 200] [--repeats 5]
"""

import argparse
import os
import runpy
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pypto.runtime import RunConfig, benchmark  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def task_seconds(profile):
    """The duration of the last launch's tasks in the swimlane (sum, one task here)."""
    def find(stages):
        for s in stages:
            if s["name"] == "execute" and "device" in s:
                return s["device"]
            found = find(s.get("children", []))
            if found:
                return found
        return None

    device = find(profile["stages"])
    fields = device["task_fields"]
    start, end = fields.index("start"), fields.index("end")
    return sum(t[end] - t[start] for t in device["tasks"])


def numpy_add_seconds(rounds):
    a = np.random.standard_normal((128, 128)).astype(np.float32)
    b = np.full((128, 128), 1.5, dtype=np.float32)
    c = np.empty_like(a)
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        np.add(a, b, out=c)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--examples", default=os.path.join(HERE, "..", "..", "shared", "examples"))
    args = parser.parse_args()
    example = runpy.run_path(os.path.join(args.examples, "add.py"), run_name="bench")
    program, specs, golden = example["AddProgram"], example["SPECS"], example["golden"]
    with tempfile.TemporaryDirectory(prefix="benchmark_overhead_bench_") as work:
        configs = [
            ("in process, 1 worker", dict(isolate=False, workers=1)),
            ("in process, 2 workers", dict(isolate=False, workers=2)),
            ("isolated (device server)", dict(isolate=True, workers=1)),
        ]
        rows, numpy_times = {}, []
        for repeat in range(args.repeats):
            for label, fields in configs:
                config = RunConfig(work_dir=os.path.join(work, label.split()[0]),
                                   write_golden_data=False, **fields)
                result = benchmark(program, specs, golden, rounds=args.rounds, warmup=5,
                                   config=config)
                assert result.passed, result.error
                rounds, tasks = rows.setdefault(label, ([], []))
                rounds.extend(result.round_times)
                tasks.append(task_seconds(result.profile))
                numpy_times.extend(numpy_add_seconds(args.rounds))
    print(f"benchmark() of the 128x128 add, {args.repeats} x {args.rounds} rounds per "
          f"configuration, medians")
    print(f"numpy np.add(a, b, out=c): {statistics.median(numpy_times) * 1e6:.2f} us")
    print(f"{'configuration':<28} {'round':>10} {'task':>10} {'overhead':>10}")
    for label, (rounds, tasks) in rows.items():
        r, t = statistics.median(rounds), statistics.median(tasks)
        print(f"{label:<28} {r * 1e6:>8.2f}us {t * 1e6:>8.2f}us {(r - t) * 1e6:>8.2f}us")


if __name__ == "__main__":
    main()
