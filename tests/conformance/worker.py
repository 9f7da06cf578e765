"""Runs ONE conformance program in this process and writes what happened as JSON.

The runner (runner.py) starts this file in a child process per program, so a program that
crashes the compiler or hangs costs only its own child. Used as

    python worker.py PROGRAM.py RESULT.json

it imports the program file (which parses its ``@pl.program`` classes: the *parse* stage),
compiles every program and ``@pl.jit`` specialisation it defines with ``pypto.ir.compile``
(*compile*), and, when the file gives a golden, runs one of them on the simulated device and
compares (*run*). The first stage that fails ends the attempt; its exception's type and text
are recorded, for the runner to judge against the file's header.

What a program file may define (see README.md beside this file):

- ``@pl.program`` classes and ``@pl.jit`` functions (module level);
- ``golden(tensors)``: fills the output arrays of ``tensors`` (a dict by parameter name) in
  place from the inputs, as ``pypto.runtime.run``'s golden does;
- ``tensor_specs()``: the ``TensorSpec`` list of the program to run, or ``arguments()``: a dict
  parameter name -> numpy array or Python scalar for the ``@pl.jit`` function to call;
- ``RUN``: the program or jit function to run, when the file defines more than one;
- ``DISTRIBUTED_CONFIG``: a multi-rank program's ``DistributedConfig``: its host orchestrator
  is compiled for those ranks and run on ``arguments()`` (in parameter order).
"""

import importlib.util
import json
import os
import sys
import tempfile
import time

# Importing a program file must not leave __pycache__ folders among the programs.
sys.dont_write_bytecode = True
import traceback

import numpy as np

# Inputs of every program are seeded: a golden comparison must not depend on the run.
SEED = 0


def _error(stage, exc):
    return {"stage": stage, "type": type(exc).__name__, "text": str(exc),
            "traceback": "".join(traceback.format_exception(type(exc), exc,
                                                            exc.__traceback__))[-4000:]}


def _load(path):
    """Imports the program file under a name of its own; the decorators parse its programs."""
    name = "conformance_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # @pl.program finds its constants through the module
    spec.loader.exec_module(module)
    return module


def _programs_and_jits(module):
    from pypto.ir.program import Program
    from pypto.language._jit import JitFunction

    programs = [v for v in vars(module).values() if isinstance(v, Program)]
    jits = [v for v in vars(module).values() if isinstance(v, JitFunction)]
    return programs, jits


def _jit_arguments(module):
    np.random.seed(SEED)
    return dict(module.arguments())


def _run_target(module, programs, jits):
    target = getattr(module, "RUN", None)
    if target is not None:
        return target
    candidates = jits if hasattr(module, "arguments") else programs
    if len(candidates) != 1:
        raise ValueError(f"the file has a golden and {len(candidates)} candidates to run; "
                         f"name one with RUN = ...")
    return candidates[0]


def _compile(module, programs, jits, out_dir):
    from pypto import ir

    from pypto.ir.program import DynamicProgram

    for index, program in enumerate(programs):
        if isinstance(program, DynamicProgram) and hasattr(module, "tensor_specs"):
            # An entry with pl.dynamic dimensions compiles for the tensors it runs with.
            program = program.specialise(module.tensor_specs())
        ir.compile(program, output_dir=os.path.join(out_dir, f"program{index}"))
    for index, jit in enumerate(jits):
        if not hasattr(module, "arguments"):
            continue  # a jit function needs arguments to be specialised
        specialised = jit.specialise(**_jit_arguments(module))
        ir.compile(specialised, output_dir=os.path.join(out_dir, f"jit{index}"))


def _run_program(module, program, out_dir):
    from pypto.runtime import RunConfig, run

    np.random.seed(SEED)
    specs = module.tensor_specs()
    config = RunConfig(work_dir=os.path.join(out_dir, "run"), isolate=False,
                       write_golden_data=False, timeout=60.0,
                       rtol=getattr(module, "RTOL", 1e-5), atol=getattr(module, "ATOL", 1e-5))
    result = run(program, specs, lambda tensors, params=None: module.golden(tensors), config)
    if not result.passed:
        if result.exception is not None:
            raise result.exception
        raise RuntimeError(result.error or "the run did not pass")


def _run_jit(module, jit, out_dir):
    from pypto.runtime import RunConfig

    arguments = _jit_arguments(module)
    expected = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in arguments.items()}
    module.golden(expected)
    jit(**arguments, config=RunConfig(work_dir=os.path.join(out_dir, "jit_run"), isolate=False,
                                      write_golden_data=False))
    rtol, atol = getattr(module, "RTOL", 1e-5), getattr(module, "ATOL", 1e-5)
    for name, want in expected.items():
        if not isinstance(want, np.ndarray):
            continue
        got = arguments[name]
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            worst = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            raise AssertionError(f"argument '{name}' differs from the golden "
                                 f"(largest difference {worst:g})")


def _compile_distributed(module, programs, jits, out_dir):
    """A multi-rank program (the file sets DISTRIBUTED_CONFIG): its host orchestrator (RUN, the
    @pl.jit.host function, or the only program) compiled for those ranks on ``arguments()``,
    given in the host orchestrator's parameter order."""
    from pypto import ir
    from pypto.language._jit_host import JitHostFunction
    from pypto.runtime import RunConfig

    hosts = [j for j in jits if isinstance(j, JitHostFunction)]
    target = getattr(module, "RUN", None) or (hosts[0] if hosts else None)
    if target is None:
        if len(programs) != 1:
            raise ValueError("a multi-rank file names its program with RUN = ...")
        target = programs[0]
    arguments = _jit_arguments(module)
    if isinstance(target, JitHostFunction):
        config = RunConfig(work_dir=os.path.join(out_dir, "dist"),
                           distributed_config=module.DISTRIBUTED_CONFIG)
        compiled = target.compile(*arguments.values(), config=config)
    else:
        compiled = ir.compile(target, output_dir=os.path.join(out_dir, "dist"),
                              distributed_config=module.DISTRIBUTED_CONFIG)
    return compiled, arguments


def _run_distributed(module, compiled, arguments):
    expected = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in arguments.items()}
    module.golden(expected)
    compiled(*arguments.values())
    rtol, atol = getattr(module, "RTOL", 1e-5), getattr(module, "ATOL", 1e-5)
    for name, want in expected.items():
        got = arguments[name]
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            raise AssertionError(f"argument '{name}' differs from the golden")


def attempt(path):
    """What happened to the program file at ``path``: a JSON-able dict."""
    outcome = {"stages": [], "error": None}
    with tempfile.TemporaryDirectory(prefix="pypto_conformance_") as out_dir:
        os.environ.setdefault("PYPTO_PROG_BUILD_DIR", os.path.join(out_dir, "build_output"))
        stage = "parse"
        try:
            module = _load(path)
            programs, jits = _programs_and_jits(module)
            if not programs and not jits:
                raise ValueError("the file defines no @pl.program class and no @pl.jit function")
            outcome["stages"].append("parse")
            stage = "compile"
            if hasattr(module, "DISTRIBUTED_CONFIG"):
                compiled, arguments = _compile_distributed(module, programs, jits, out_dir)
                outcome["stages"].append("compile")
                if hasattr(module, "golden"):
                    stage = "run"
                    _run_distributed(module, compiled, arguments)
                    outcome["stages"].append("run")
                return outcome
            _compile(module, programs, jits, out_dir)
            outcome["stages"].append("compile")
            if hasattr(module, "golden"):
                stage = "run"
                target = _run_target(module, programs, jits)
                if target in jits:
                    _run_jit(module, target, out_dir)
                else:
                    _run_program(module, target, out_dir)
                outcome["stages"].append("run")
        except BaseException as exc:  # noqa: BLE001 - any failure is the program's outcome
            outcome["error"] = _error(stage, exc)
    return outcome


def main(argv):
    if len(argv) != 3:
        print("usage: worker.py PROGRAM.py RESULT.json", file=sys.stderr)
        return 2
    started = time.perf_counter()
    outcome = attempt(os.path.abspath(argv[1]))
    outcome["seconds"] = time.perf_counter() - started
    with open(argv[2], "w", encoding="utf-8") as f:
        json.dump(outcome, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
