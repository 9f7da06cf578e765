"""Instructions and cache misses per IR node of the pass pipeline, from a cache simulator.

    python bench/passes_cache_profile.py [--bench build/bench/passes_bench] [--sizes 16 4096]

Wall time of `passes_bench` at 4096 unrolled iterations moves by ±25% and more on a shared
machine: the IR is tens of MB, so its cost is mostly cache misses, and the last-level cache is
shared with whatever else runs on the host. Valgrind's cachegrind counts the same quantities
deterministically. For each size, `passes_bench --compile-loop N K` runs once with K = 0 and once
with K extra compiles; the difference, divided by K times the IR's node count, is the cost of one
compile per node. The simulated first level is this machine's L1 data cache and the simulated
last level its per-core L2, so "L2 misses" are the loads that had to go to the shared L3 or to
memory. Needs `valgrind` (Debian package).
"""

import argparse
import math
import os
import re
import subprocess
import tempfile

NODES_PER_COMPILE_TARGET = 120_000  # enough compiles of small programs to outweigh start-up


def cache_size(index, default):
    """Size in bytes and associativity of cpu0's cache `index` (0: L1d, 2: L2), from sysfs."""
    base = f"/sys/devices/system/cpu/cpu0/cache/index{index}"
    try:
        with open(f"{base}/size") as f:
            text = f.read().strip()
        with open(f"{base}/ways_of_associativity") as f:
            ways = int(f.read())
    except OSError:
        return default
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1], 1)
    return int(text.rstrip("KM")) * scale, ways


def simulate(bench, size, compiles, l1, l2):
    """Counts of one run of `passes_bench --compile-loop size compiles`: (counts, ir nodes)."""
    with tempfile.NamedTemporaryFile(suffix=".cg") as out:
        proc = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=yes",
             f"--D1={l1[0]},{l1[1]},64", f"--LL={l2[0]},{l2[1]},64",
             f"--cachegrind-out-file={out.name}", bench, "--compile-loop", str(size),
             str(compiles)],
            capture_output=True, text=True, check=True)
    nodes = int(re.search(r"ir_nodes (\d+)", proc.stdout).group(1))

    def count(label):
        match = re.search(label + r":\s+([\d,]+)", proc.stderr)
        return int(match.group(1).replace(",", ""))

    return {"instructions": count("I   refs"), "L1d misses": count("D1  misses"),
            "L2 misses": count("LLd misses")}, nodes


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench",
                        default=os.path.join(here, "..", "build", "bench", "passes_bench"),
                        help="the passes_bench executable (default: the one of a build in build/)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 4096],
                        help="unrolled iterations of the benchmark program")
    args = parser.parse_args()
    l1 = cache_size(0, (48 << 10, 12))
    l2 = cache_size(2, (1 << 20, 16))
    print(f"simulated L1d {l1[0] >> 10} KiB {l1[1]}-way, L2 {l2[0] >> 10} KiB {l2[1]}-way; "
          "per IR node of one compile (parse + Default pipeline, verification on)")
    rows = []
    for size in args.sizes:
        base, nodes = simulate(args.bench, size, 0, l1, l2)
        compiles = max(1, math.ceil(NODES_PER_COMPILE_TARGET / nodes))
        more, _ = simulate(args.bench, size, compiles, l1, l2)
        per_node = {k: (more[k] - base[k]) / (compiles * nodes) for k in base}
        rows.append((size, nodes, per_node))
        print(f"  {size:5d} iterations, {nodes:7d} nodes, {compiles:3d} compiles: " +
              "  ".join(f"{k} {v:8.2f}" for k, v in per_node.items()))
    if len(rows) > 1:
        # A small program's IR stays in L2, so its L2 misses are about zero: a ratio of those
        # says nothing, the difference does.
        (small, _, a), (large, _, b) = rows[0], rows[-1]
        print(f"  {large} vs {small}: instructions {b['instructions'] / a['instructions']:.2f}x, "
              f"L1d misses {b['L1d misses'] / a['L1d misses']:.2f}x, "
              f"L2 misses +{b['L2 misses'] - a['L2 misses']:.1f} per node")


if __name__ == "__main__":
    main()
