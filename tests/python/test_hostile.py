"""The hostile-program suite (tests/hostile/generate.py): every program goes through pl.parse, the
@pl.program import path and run() (tests/hostile/run_program.py, in a subprocess), and through
`pypto compile` and `pypto run`. For every program and path: no death by a signal, no hang past
the timeout, no library text in what the user sees, and the outcome the program's `# expect:`
line names. Subprocesses run in parallel, so the suite takes well under the CI budget.
"""

import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
import generate  # noqa: E402

from cli_tool import PYPTO  # noqa: E402

TIMEOUT = 120  # seconds per path; the limits inside the compiler are far below this
# Text of C++ libraries, bindings or the runtime that must never reach a user.
LEAKS = re.compile(r"std::|nlohmann|json\.exception|incompatible function arguments|"
                   r"terminate called|basic_string|vector::|what\(\):|Traceback \(most recent"
                   r"|Segmentation fault|core dumped|AddressSanitizer|runtime error:")
# Diagnostics of a program: file:line:col: error: message.
LOCATED = re.compile(r"\.py:\d+:\d+: error: ")


def _run(cmd, cwd, env=None):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=TIMEOUT, env=env)
        return {"rc": p.returncode, "out": p.stdout.decode("utf-8", "replace"),
                "err": p.stderr.decode("utf-8", "replace"), "seconds": time.monotonic() - start}
    except subprocess.TimeoutExpired:
        return {"rc": None, "out": "", "err": f"timed out after {TIMEOUT} s", "seconds": TIMEOUT}


def _python(paths, cwd):
    """The Python ways for a batch of programs: one result per program (its own "rc": the
    batch's when the batch ran through, else that of a rerun of the program alone)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.environ.get("PYTHONPATH", ""), str(ROOT / "tests" / "hostile")]))
    script = str(ROOT / "tests" / "hostile" / "run_program.py")
    batch = _run([sys.executable, script, *map(str, paths)], cwd=cwd, env=env)
    if batch["rc"] == 0:
        lines = {json.loads(line)["path"]: line for line in batch["out"].splitlines()
                 if line.startswith("{")}
        if all(str(p) in lines for p in paths):
            return {p: dict(batch, out=lines[str(p)]) for p in paths}
    return {p: _run([sys.executable, script, str(p)], cwd=cwd, env=env) for p in paths}


def _cli(path, work):
    work.mkdir(parents=True, exist_ok=True)
    return {
        "compile": _run([PYPTO, "compile", str(path), "-o", str(work / "out")], cwd=work),
        "run": _run([PYPTO, "run", str(path), "--workers", "1"], cwd=work),
    }


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    assert PYPTO, "the pypto tool is not installed (pip install . installs it, or set PYPTO_CLI)"
    root = tmp_path_factory.mktemp("hostile")
    programs = generate.write_suite(root / "programs")
    classes = sorted({cls for _, cls, _ in programs})
    (root / "work").mkdir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        # The Python batches first: they are the long ones.
        python = [pool.submit(_python, [p for p, c, _ in programs if c == cls], root / "work")
                  for cls in classes]
        cli = {path: pool.submit(_cli, path, root / "work" / cls / path.stem)
               for path, cls, _ in programs}
        by_path = {}
        for f in python:
            by_path.update(f.result())
        return [(path, cls, expect, {"python": by_path[path], **cli[path].result()})
                for path, cls, expect in programs]


def test_suite_is_large_and_varied(suite):
    assert len(suite) >= 150
    assert len({cls for _, cls, _, _ in suite}) >= 30


def _problems(path, expect, results):
    problems = []
    for name, r in results.items():
        text = r["out"] + r["err"]
        if r["rc"] is None:
            problems.append(f"{name}: hang ({r['err']})")
        elif r["rc"] < 0:
            problems.append(f"{name}: killed by signal {-r['rc']}: {text[-2000:]}")
        if LEAKS.search(text):
            problems.append(f"{name}: library text leaked: {LEAKS.search(text).group(0)!r} in "
                            f"{text[-2000:]}")
    py = results["python"]
    if py["rc"] not in (0, None):
        problems.append(f"python paths raised (exit {py['rc']}): {py['err'][-2000:]}")
    compile_, run_ = results["compile"], results["run"]
    kind, _, want = expect.partition(" ")
    if kind == "compile-error":
        if compile_["rc"] == 0:
            problems.append("compiled, but a compile error was expected")
        elif want not in compile_["err"]:
            problems.append(f"compile error does not say {want!r}: {compile_['err'][-1500:]}")
        elif compile_["rc"] == 1 and not compile_["err"].strip():
            problems.append("compile failed without a message")
    elif kind == "run-error":
        if compile_["rc"] != 0:
            problems.append(f"compile failed: {compile_['err'][-1500:]}")
        elif run_["rc"] == 0 or want not in run_["out"] + run_["err"]:
            problems.append(f"run did not fail with {want!r}: {(run_['out'] + run_['err'])[-1500:]}")
    elif kind == "ok":
        if compile_["rc"] != 0:
            problems.append(f"compile failed: {compile_['err'][-1500:]}")
        elif run_["rc"] != 0:
            problems.append(f"run failed: {(run_['out'] + run_['err'])[-1500:]}")
    return problems


def test_no_signal_hang_leak_or_wrong_outcome(suite):
    failures = []
    for path, cls, expect, results in suite:
        for p in _problems(path, expect, results):
            failures.append(f"{cls}/{path.name}: {p}")
    assert not failures, f"{len(failures)} problems:\n" + "\n\n".join(failures)


def test_compile_errors_are_located(suite):
    # A program's error names file:line:col (the class names parse errors and type errors alike).
    unlocated = []
    for path, cls, expect, results in suite:
        if expect.startswith("compile-error ") and results["compile"]["rc"] not in (0, None):
            if not LOCATED.search(results["compile"]["err"]):
                unlocated.append(f"{cls}/{path.name}: {results['compile']['err'][-600:]}")
    assert not unlocated, "\n".join(unlocated)


def test_python_paths_report_the_same_outcome(suite):
    bad = []
    for path, cls, expect, results in suite:
        if results["python"]["rc"] != 0:
            continue
        lines = results["python"]["out"].strip().splitlines()
        got = json.loads(lines[-1]) if lines else {}
        got.pop("path", None)
        # Python itself refuses to import a file that is not UTF-8: that is no compiler outcome.
        if expect == "ok" and any(v != "ok" and not v.startswith("python: ")
                                  for v in got.values()):
            bad.append(f"{cls}/{path.name}: {got}")
        if expect.startswith("compile-error ") and got.get("import") == "ok":
            want = expect.partition(" ")[2]
            runs = [v for k, v in got.items() if k.startswith("run")]
            if not runs or any(want not in v for v in runs):
                bad.append(f"{cls}/{path.name}: expected {want!r} from run(), got {got}")
    assert not bad, "\n".join(bad)
