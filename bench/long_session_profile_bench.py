"""Cost of profiling a long session: cached @pl.jit calls under PYPTO_COMPILE_PROFILING=1, timed
in blocks. With a constant cost per profiled call every block takes the same time; a cost that
grows with the calls already recorded shows as blocks that get slower. The exit report (written
when the process ends, to PYPTO_COMPILE_PROFILING_DIR) is timed too, in a subprocess of its own.

    python bench/long_session_profile_bench.py [--blocks 10] [--calls 2000] [--no-profiling]

Prints one line per block (seconds) and, at the end, the median block, the last block over the
first, and how long the process took to exit (the exit report) and the report's size.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

N = 32


def session(blocks, calls):
    import numpy as np

    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], c)
        return c

    a = np.ones((N, N), np.float32)
    b = np.ones((N, N), np.float32)
    c = np.zeros_like(a)
    config = RunConfig(isolate=False, workers=1)
    add(a, b, c, config=config)  # compiles; every call after this one is a cache hit
    times = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(calls):
            add(a, b, c, config=config)
        times.append(time.perf_counter() - start)
        print(json.dumps({"block_seconds": times[-1]}), flush=True)
    print(json.dumps({"exit_started": time.time()}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--calls", type=int, default=2000, help="calls per block")
    parser.add_argument("--no-profiling", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        session(options.blocks, options.calls)
        return
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, PYPTO_PROG_BUILD_DIR=os.path.join(work, "build"),
                   PYPTO_COMPILE_PROFILING_DIR=os.path.join(work, "report"))
        env.pop("PYPTO_COMPILE_PROFILING", None)
        if not options.no_profiling:
            env["PYPTO_COMPILE_PROFILING"] = "1"
        # The exit summary goes to stderr: a file, not a pipe nobody reads while the child runs.
        errors = open(os.path.join(work, "stderr.txt"), "w+")
        child = subprocess.Popen(
            [sys.executable, __file__, "--child", "--blocks", str(options.blocks), "--calls",
             str(options.calls)], env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
        blocks, exit_started = [], None
        for line in child.stdout:
            record = json.loads(line)
            if "block_seconds" in record:
                blocks.append(record["block_seconds"])
                print(f"block {len(blocks):3d}: {record['block_seconds']:.3f} s", flush=True)
            else:
                exit_started = record["exit_started"]
        child.wait()
        exit_seconds = time.time() - exit_started
        report = os.path.join(work, "report", "pipeline_profile.json")
        size = os.path.getsize(report) if os.path.exists(report) else None
        print(f"median block {statistics.median(blocks):.3f} s, last/first "
              f"{blocks[-1] / blocks[0]:.2f}, exit (report) {exit_seconds:.2f} s, report "
              f"{size} bytes, exit code {child.returncode}")
        errors.seek(0)
        summary = errors.read()
        print(f"exit summary: {summary.count(chr(10))} lines on stderr")
        if child.returncode != 0:
            print(summary[-2000:])
        errors.close()


if __name__ == "__main__":
    main()
