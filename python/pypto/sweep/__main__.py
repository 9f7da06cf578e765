"""``python -m pypto.sweep`` / ``pypto sweep``: the command line of pypto.sweep.

    pypto sweep examples/blocked_add.py --param BLOCK=32,64,128 --workers 2
    pypto sweep a.py b.py --scheduler tcp://10.0.0.5:8786 --cache-dir /shared/pypto-cache

Exit codes: 0 every job passed; 1 some job failed (its row says why); 2 usage error.
"""

import argparse
import sys

from pypto.sweep import BACKENDS, sweep
from pypto.sweep.jobs import DEVICE_STATISTICS, TOP_STAGES


def parse_value(text):
    """An int, a float, or True/False: what a module constant may be."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text in ("True", "False"):
        return text == "True"
    raise ValueError(f"'{text}' is not an int, a float, True or False")


def parse_param(text):
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not values.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=v1,v2,..., got '{text}'")
    try:
        return name, [parse_value(v.strip()) for v in values.split(",")]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--param {name}: {e}") from None


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def non_negative(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got '{text}'")
    return value


def build_parser():
    columns = (["job", "passed", "cache_hit", "total_s", "wall_s"] +
               [f"{s}_s" for s in TOP_STAGES] + [f"device_{s}_s" for s in DEVICE_STATISTICS])
    p = argparse.ArgumentParser(
        prog="pypto sweep",
        description="Run programs over a grid of module constants, in parallel on Dask (an "
                    "embedded local cluster unless --scheduler names one), and report a table "
                    "(CSV, Parquet), the profile aggregated over the jobs and the best "
                    "configuration.",
        epilog="Exit codes: 0 every job passed; 1 some job failed; 2 usage error.")
    p.add_argument("files", nargs="+", metavar="FILE", help="DSL source files (.py)")
    p.add_argument("--param", action="append", type=parse_param, default=[],
                   metavar="NAME=v1,v2,...",
                   help="a module constant of FILE and its values (repeat for a grid)")
    p.add_argument("--program", help="the @pl.program class, when a file has several")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="an existing Dask scheduler (default: a local cluster)")
    p.add_argument("--workers", type=positive, default=2,
                   help="worker processes of the local cluster or pool (default 2)")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="auto: Dask if installed, else a process pool")
    p.add_argument("--rounds", type=positive, default=1, help="measured launches per job")
    p.add_argument("--warmup", type=non_negative, default=0, help="unmeasured launches first")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the random inputs")
    p.add_argument("--device-cores", type=positive, help="simulated cores per run (default 4)")
    p.add_argument("--cache-dir", help="binary cache shared by all workers")
    p.add_argument("-o", "--output", help="output directory (default sweep_output/sweep_<time>)")
    p.add_argument("--sort-by", default="device_median_s", metavar="COLUMN",
                   help="column the printed table is sorted by: a --param name or one of "
                        f"{', '.join(columns)} (default device_median_s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    names = [name for name, _ in args.param]
    if len(set(names)) != len(names):
        print("pypto sweep: a --param is given twice", file=sys.stderr)
        return 2
    try:
        result = sweep(args.files, dict(args.param), program=args.program, backend=args.backend,
                       scheduler=args.scheduler, workers=args.workers, rounds=args.rounds,
                       warmup=args.warmup, seed=args.seed, device_cores=args.device_cores,
                       cache_dir=args.cache_dir, out_dir=args.output, sort_by=args.sort_by,
                       progress=not args.no_progress)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"pypto sweep: {e}", file=sys.stderr)
        return 2
    print(result.summary(), end="")
    print(f"results: {result.csv_path}" +
          (f", {result.parquet_path}" if result.parquet_path else " (no pyarrow: no Parquet)") +
          f"; profile: {result.profile_path}")
    return 1 if result.failed else 0


if __name__ == "__main__":
    sys.exit(main())
