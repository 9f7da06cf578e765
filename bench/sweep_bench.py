"""Sweep throughput on Dask: jobs per second on the sweep's embedded cluster of 1 and of 2
worker processes, against running the same jobs in a loop in this process, all with a warm binary
cache (every program already built: a job is parse, compile, a cache hit, the device run and
the check).

    python bench/sweep_bench.py [--rounds N] [--grid 12]

The loop is the anchor. The clusters are started once, before timing (their start-up is
reported apart); each round runs the loop, the 1-worker and the 2-worker sweep back to back,
the order rotating from round to round (see bench_rounds.py for why), and the figures are
medians over the rounds. The scheduling overhead per job is (1-worker sweep - loop) / jobs:
what submitting a job to Dask, shipping it and its row, and the worker process cost on top of
the job itself.
"""

import argparse
import logging
import os
import pathlib
import statistics
import tempfile
import time

from pypto.sweep import sweep

BLOCKED_ADD = pathlib.Path(__file__).resolve().parents[1] / "examples" / "blocked_add.py"
GRIDS = {
    12: {"BLOCK": [16, 32, 64, 128], "COLS": [16, 32, 64]},
    24: {"BLOCK": [8, 16, 32, 64, 128, 256], "COLS": [8, 16, 32, 64]},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--grid", type=int, choices=sorted(GRIDS), default=12)
    args = parser.parse_args()
    from distributed import Client

    from pypto.sweep.executors import embedded_cluster

    params = GRIDS[args.grid]
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        # One launch per job, as the figures of bench/README.md: this measures scheduling, not
        # the device (a sweep's default of 5 rounds would add its launches to every job).
        common = dict(cache_dir=cache, progress=False, rounds=1, warmup=0)
        warm = sweep(BLOCKED_ADD, params, backend="serial", out_dir=os.path.join(tmp, "w"),
                     **common)
        assert all(r["passed"] for r in warm.rows), [r["error"] for r in warm.rows]
        jobs = len(warm.rows)
        clients, startup = {}, {}
        for n in (1, 2):
            start = time.perf_counter()
            # The LocalCluster of `pypto sweep` (this script has its main guard).
            clients[n] = Client(embedded_cluster(n, subprocess_workers=False))
            clients[n].wait_for_workers(n)  # the workers start in processes of their own
            startup[n] = time.perf_counter() - start
        # One untimed sweep per cluster: each worker process imports pypto and loads its
        # caches once, which is start-up, not throughput.
        for n, client in clients.items():
            sweep(BLOCKED_ADD, params, client=client, out_dir=os.path.join(tmp, f"x{n}"),
                  **common)

        def timed_sweep(label, **kw):
            start = time.perf_counter()
            result = sweep(BLOCKED_ADD, params, out_dir=os.path.join(tmp, label), **common, **kw)
            elapsed = time.perf_counter() - start
            assert all(r["passed"] and r["cache_hit"] for r in result.rows)
            return elapsed

        sides = {"loop (this process)": lambda: timed_sweep("loop", backend="serial"),
                 "Dask, 1 worker": lambda: timed_sweep("d1", client=clients[1]),
                 "Dask, 2 workers": lambda: timed_sweep("d2", client=clients[2])}
        times = {name: [] for name in sides}
        names = list(sides)
        for k in range(args.rounds):
            order = names[k % len(names):] + names[:k % len(names)]
            for name in order:
                times[name].append(sides[name]())
        for client in clients.values():
            cluster = client.cluster
            client.close()
            cluster.close()

    anchor = statistics.median(times[names[0]])
    print(f"{jobs} jobs of {BLOCKED_ADD.name} (warm cache), medians of {args.rounds} rounds; "
          f"{os.cpu_count()} CPUs")
    print(f"{'':24}{'seconds':>10}{'jobs/s':>10}{'vs loop':>10}")
    for name in names:
        m = statistics.median(times[name])
        print(f"{name:24}{m:>10.3f}{jobs / m:>10.1f}{anchor / m:>9.2f}x")
    overhead = (statistics.median(times[names[1]]) - anchor) / jobs
    print(f"scheduling overhead per job (1 worker - loop): {overhead * 1e3:.1f} ms")
    print(f"cluster start-up: 1 worker {startup[1]:.2f} s, 2 workers {startup[2]:.2f} s")


if __name__ == "__main__":
    logging.getLogger("distributed").setLevel(logging.ERROR)
    main()
