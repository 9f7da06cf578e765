"""``pypto sweep`` / ``python -m pypto.sweep``: the command line of pypto.sweep.

    pypto sweep examples/blocked_add.py --param BLOCK=32,64,128 --processes 2
    pypto sweep a.py b.py --scheduler tcp://10.0.0.5:8786 --cache-dir /shared/pypto-cache

The command line is the ``pypto`` tool's, on the parser of its other commands
(tools/sweep_command.cpp): it checks the request (files, --param names, option ranges), then runs
``python -m pypto.sweep --request JSON`` with it, which is this module's ``run_request``.
``python -m pypto.sweep ARGS`` is ``pypto sweep ARGS``.

Exit codes: 0 every job passed; 1 some job failed (its row says why); 2 usage error.
"""

import json
import sys

from pypto import __main__ as cli
from pypto.sweep import sweep


def run_request(request):
    """Runs the sweep `pypto sweep` checked and described (a dict); returns the exit code."""
    params = {name: request["params"][name] for name in request["param_order"]}
    try:
        result = sweep(request["files"], params, program=request["program"] or None,
                       backend=request["backend"], scheduler=request["scheduler"] or None,
                       processes=request["processes"], seed=request["seed"],
                       out_dir=request["out_dir"] or None, sort_by=request["sort_by"],
                       progress=request["progress"], **request["options"])
    except (ValueError, RuntimeError, OSError) as e:
        print(f"pypto sweep: {e}", file=sys.stderr)
        return 2
    print(result.summary(), end="")
    print(f"results: {result.csv_path}" +
          (f", {result.parquet_path}" if result.parquet_path else " (no pyarrow: no Parquet)") +
          f"; profile: {result.profile_path}")
    return 1 if result.failed else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 2 and argv[0] == "--request":
        return run_request(json.loads(argv[1]))
    return cli.main(["sweep", *argv])


if __name__ == "__main__":
    sys.exit(main())
