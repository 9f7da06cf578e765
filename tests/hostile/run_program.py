"""Runs hostile programs through the Python ways into the compiler, in this process:
``pl.parse`` of the text, the ``@pl.program`` import path (running the module), and
``pypto.runtime.run()`` of each program the import produced. Prints one JSON line per program
given: its path and, for each way, "ok" or "<ExceptionType>: <message>" (run() reports failures
in its result, so for it the text is ``RunResult.error``).

The caller runs this in a subprocess with a timeout and checks the exit status: a signal, a
hang or an exception type that is not ours is a failure of the compiler, whatever the program.
Several programs share one process (starting Python and numpy dominates the time); when that
process fails, the caller reruns its programs one by one to tell which did it.
"""

import json
import pathlib
import re
import runpy
import sys
import traceback

import numpy as np

import pypto.language as pl
from pypto.errors import CompileError
from pypto.ir import Program
from pypto.runtime import RunConfig, TensorSpec, run

# Tensors run() allocates for a program's parameters stay small; larger ones are given as
# one-element specs (run() then reports the mismatch, which is all the path needs to show).
MAX_SPEC_ELEMENTS = 1 << 20

_TENSOR = re.compile(r"pl\.Tensor\[\[([0-9, ]+)\], pl\.(\w+)\]")


def _describe(e):
    return f"{type(e).__name__}: {e}"


def _specs(program):
    main = next((f for f in program.functions if f.type.value == "Orchestration"), None)
    if main is None:
        return []
    specs = []
    for p in main.params:
        m = _TENSOR.search(p.type)
        if not m:
            continue
        shape = [int(d) for d in m.group(1).split(",")]
        if np.prod(shape, dtype=object) > MAX_SPEC_ELEMENTS:
            shape = [1] * len(shape)
        dtype = getattr(pl, m.group(2))
        specs.append(TensorSpec(p.name, shape, dtype, init_value=1.0,
                                is_output=p.direction != "In"))
    return specs


def main(path):
    data = pathlib.Path(path).read_bytes()
    results = {"path": path}

    text = data.decode("utf-8", errors="replace")
    try:
        pl.parse(text, file_name=path)
        results["parse"] = "ok"
    except CompileError as e:
        results["parse"] = _describe(e)

    programs = []
    try:
        compile(data, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        # Python's own compiler rejects the file before any decorator runs.
        results["import"] = "python: " + _describe(e)
    else:
        try:
            module = runpy.run_path(path, run_name="hostile")
            programs = [v for v in module.values() if isinstance(v, Program)]
            results["import"] = "ok"
        except CompileError as e:
            results["import"] = _describe(e)
        except Exception as e:  # noqa: BLE001 - sorted below
            # The module's own code may raise (an annotation `[64 // 0]` is evaluated by
            # Python); an exception from inside pypto is a bug, so it propagates.
            frames = traceback.extract_tb(e.__traceback__)
            if frames and frames[-1].filename == path:
                results["import"] = "module: " + _describe(e)
            else:
                raise

    for i, program in enumerate(programs):
        r = run(program, _specs(program), config=RunConfig(workers=1))
        results[f"run{i}"] = "ok" if r.passed else f"RunResult.error: {r.error}"

    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        main(arg)
