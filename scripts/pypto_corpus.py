#!/usr/bin/env python3
"""Measures how much of PyPTO's own repository this compiler takes, unmodified.

    python scripts/pypto_corpus.py CHECKOUT [-j N] [--out DIR] [--no-examples]

CHECKOUT is a PyPTO checkout, or a bare git directory (its HEAD is extracted with
``git archive``). Every ``@pl.program`` class and ``@pl.jit`` function of its tests/ut,
tests/st and examples files is found with Python's ``ast``. Each program class is cut out of
its file as written and put in a module of its own, after what it may need from its file (the
imports and module-level assignments and helper functions, and the assignments and helper
functions before it in the function that encloses it; each guarded, since many name things this compiler does not
have); that module is then imported (*parse*) and the program compiled with
``pypto.ir.compile`` (*compile*). A ``@pl.jit`` function needs the arguments of a call to be
specialised, so it is counted but tried only through the examples: each example file with a
``__main__`` block is run as a script (*run-and-match*: it exits 0, having checked its own
results).

Programs written inside ``with pytest.raises(...)`` are expected to be rejected; they are
counted apart as *negative*. Everything runs in child processes with time limits; results and
the report go under /tmp (``--out``), nothing into the repository.

Prints a table ``set | programs | parse | compile | run-and-match`` and the most frequent
first-error causes, with names and numbers stripped so that alike errors count together.
"""

import argparse
import ast
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence

SETS = ("tests/ut", "tests/st", "examples")
PROGRAM_TIME_LIMIT = 60  # seconds for one program's parse + compile
EXAMPLE_TIME_LIMIT = 300  # seconds for one example script
REPO_PYTHON = pathlib.Path(__file__).resolve().parents[1] / "python"


# ---------------------------------------------------------------------------------------------
# Finding the programs


def checkout_dir(source: pathlib.Path, scratch: pathlib.Path) -> pathlib.Path:
    """``source`` itself when it is a work tree, else its HEAD extracted into ``scratch``."""
    if (source / "tests").is_dir() or (source / "examples").is_dir():
        return source
    if not ((source / "HEAD").exists() and (source / "objects").is_dir()):
        sys.exit(f"error: {source} is neither a PyPTO checkout (no tests/ or examples/) nor a "
                 f"bare git directory")
    target = scratch / "checkout"
    target.mkdir(parents=True, exist_ok=True)
    present = subprocess.run(["git", "--git-dir", str(source), "ls-tree", "--name-only", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.split()
    wanted = [p for p in ("tests", "examples", "python") if p in present]
    archive = subprocess.run(["git", "--git-dir", str(source), "archive", "HEAD", *wanted],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _is_decorator(node: ast.expr, *names: str) -> bool:
    """Whether a decorator is ``pl.<name>`` or ``pl.<name>(...)`` for one of ``names``."""
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node) in {f"pl.{n}" for n in names}


def _raises_block(node: ast.AST) -> bool:
    return isinstance(node, ast.With) and any(
        "raises" in ast.unparse(item.context_expr).split("(")[0] for item in node.items)


def _guarded(code: str) -> str:
    """``code`` that may fail (a name this compiler lacks) without stopping the module."""
    return "try:\n" + textwrap.indent(code, "    ") + "\nexcept Exception:\n    pass\n"


def _segment(lines: List[str], node: ast.stmt) -> str:
    """The source of a statement (``ast.get_source_segment`` re-splits the whole file on every
    call, which made finding the programs of a large test file take minutes)."""
    if node.lineno == node.end_lineno:
        return lines[node.lineno - 1][node.col_offset:node.end_col_offset]
    first = lines[node.lineno - 1][node.col_offset:]
    middle = lines[node.lineno:node.end_lineno - 1]
    last = lines[node.end_lineno - 1][:node.end_col_offset]
    return "\n".join([first, *middle, last])


def _context_statement(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign)):
        return True
    # Module-level helpers (@pl.function, @pl.inline, plain functions); not the tests.
    return isinstance(stmt, ast.FunctionDef) and not stmt.name.startswith("test")


def find_programs(root: pathlib.Path) -> List[dict]:
    """Every @pl.program class and @pl.jit function of the three sets: one dict each."""
    found = []
    for set_name in SETS:
        for path in sorted((root / set_name).rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if "@pl.program" not in text and "@pl.jit" not in text:
                continue
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            rel = str(path.relative_to(root))
            lines = text.splitlines()
            prelude = "".join(_guarded(_segment(lines, s))
                              for s in tree.body if _context_statement(s)
                              and not any(_is_decorator(d, "program") for d in
                                          getattr(s, "decorator_list", [])))
            _walk(tree, [], lines, rel, set_name, prelude, found)
    return found


def _walk(node, parents, lines, rel, set_name, prelude, found):
    for child in ast.iter_child_nodes(node):
        chain = parents + [node]
        if isinstance(child, ast.ClassDef) and any(_is_decorator(d, "program")
                                                  for d in child.decorator_list):
            found.append(_program(child, chain, lines, rel, set_name, prelude))
            continue
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _is_decorator(d, "jit") for d in child.decorator_list):
            found.append({"set": set_name, "file": rel, "line": child.lineno, "kind": "jit",
                          "name": child.name,
                          "negative": any(_raises_block(p) for p in chain)})
        _walk(child, chain, lines, rel, set_name, prelude, found)


def _program(cls, chain, lines, rel, set_name, prelude):
    # Assignments and function definitions made before the class in the functions that enclose
    # it (a test's constants and helpers).
    local = ""
    for parent in chain:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in parent.body:
                if stmt.lineno >= cls.lineno:
                    break
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    local += _guarded(textwrap.dedent(_segment(lines, stmt)))
                elif isinstance(stmt, ast.FunctionDef):  # a helper the test defines first
                    top = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
                    local += _guarded(textwrap.dedent("\n".join(lines[top - 1:stmt.end_lineno])))
    # Parameters of the enclosing functions (pytest's parametrised values): a program using one
    # cannot be tried out of its test, and is reported so rather than as a compiler error.
    params = sorted({a.arg for parent in chain
                     if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for a in parent.args.args + parent.args.kwonlyargs} - {"self"})
    first = min([d.lineno for d in cls.decorator_list] + [cls.lineno])
    source = textwrap.dedent("\n".join(lines[first - 1:cls.end_lineno])) + "\n"
    return {"set": set_name, "file": rel, "line": cls.lineno, "kind": "program",
            "name": cls.name, "negative": any(_raises_block(p) for p in chain),
            "params": params, "module": prelude + local + "\n\n" + source}


# ---------------------------------------------------------------------------------------------
# Trying them (in child processes)

WORKER = r'''
import json, os, signal, sys, tempfile, traceback
jobs = json.load(open(sys.argv[1]))
start = int(sys.argv[2])
out = open(sys.argv[3], "a")
def on_alarm(*_):
    raise TimeoutError("no result within the time limit")
signal.signal(signal.SIGALRM, on_alarm)
for index in range(start, len(jobs)):
    job = jobs[index]
    out.write(json.dumps({"index": index, "started": True}) + "\n"); out.flush()
    result = {"index": index, "stages": []}
    stage = "parse"
    signal.alarm(int(sys.argv[4]))
    try:
        namespace = {"__name__": "corpus_program"}
        code = compile(open(job["path"]).read(), job["path"], "exec")
        exec(code, namespace)
        from pypto.ir.program import Program
        program = namespace.get(job["name"])
        if not isinstance(program, Program):
            raise RuntimeError("the class did not become a program (its decorator failed "
                               "silently or was replaced)")
        result["stages"].append("parse")
        stage = "compile"
        from pypto import ir
        with tempfile.TemporaryDirectory() as out_dir:
            compiled = ir.compile(program, output_dir=out_dir)
        # A program with pl.dynamic dimensions compiles per shape when called: not counted as
        # compiled, only as waiting for its call's shapes.
        deferred = type(compiled).__name__ == "DynamicCompiledProgram"
        result["stages"].append("compile-per-call-shape" if deferred else "compile")
    except BaseException as e:
        result["error"] = {"stage": stage, "type": type(e).__name__, "text": str(e)[:2000]}
    finally:
        signal.alarm(0)
    out.write(json.dumps(result) + "\n"); out.flush()
'''


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    # The source tree's package only when a built extension sits in it (a development tree);
    # otherwise the installed package.
    if any((REPO_PYTHON / "pypto").glob("_core*.so")):
        env["PYTHONPATH"] = str(REPO_PYTHON) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYPTO_COMPILE_PROFILING", None)
    return env


def try_programs(programs: List[dict], work: pathlib.Path, jobs: int) -> None:
    """Fills in each program's ``stages`` and ``error``; in ``jobs`` chunks run in parallel."""
    sources = work / "programs"
    sources.mkdir(parents=True, exist_ok=True)
    for index, program in enumerate(programs):
        program["path"] = str(sources / f"p{index:05d}.py")
        pathlib.Path(program["path"]).write_text(program["module"], encoding="utf-8")
    chunks = [programs[i::jobs] for i in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(lambda c: _run_chunk(c[1], work / f"chunk{c[0]}"), enumerate(chunks)))


def _run_chunk(chunk: List[dict], folder: pathlib.Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jobs.json").write_text(json.dumps(
        [{"path": p["path"], "name": p["name"]} for p in chunk]))
    (folder / "worker.py").write_text(WORKER)
    results = folder / "results.jsonl"
    start = 0
    while start < len(chunk):
        build_dir = tempfile.mkdtemp(prefix="corpus_build_")
        env = dict(_env(), PYPTO_PROG_BUILD_DIR=build_dir)
        proc = subprocess.run([sys.executable, str(folder / "worker.py"), str(folder / "jobs.json"),
                               str(start), str(results), str(PROGRAM_TIME_LIMIT)],
                              capture_output=True, text=True, env=env, cwd=build_dir)
        shutil.rmtree(build_dir, ignore_errors=True)
        done = {}
        for line in results.read_text().splitlines():
            record = json.loads(line)
            if not record.get("started"):
                done[record["index"]] = record
        for index, record in done.items():
            chunk[index]["stages"] = record["stages"]
            chunk[index]["error"] = record.get("error")
        missing = [i for i in range(len(chunk)) if i not in done]
        if not missing:
            break
        # The worker died on this program (a crash of the compiler): record it, go on after it.
        crashed = missing[0]
        chunk[crashed]["stages"] = []
        chunk[crashed]["error"] = {
            "stage": "parse or compile", "type": "Crash",
            "text": f"the process died (status {proc.returncode}): "
                    f"{(proc.stderr.strip().splitlines() or [''])[-1][:300]}"}
        with results.open("a") as f:
            f.write(json.dumps({"index": crashed, "stages": [],
                                "error": chunk[crashed]["error"]}) + "\n")
        start = crashed + 1


def run_examples(root: pathlib.Path, programs: List[dict]) -> Dict[str, dict]:
    """Each example file with a ``__main__`` block, run as a script from the checkout."""
    outcomes = {}
    files = sorted({p["file"] for p in programs if p["set"] == "examples"})
    for rel in files:
        if '__name__ == "__main__"' not in (root / rel).read_text(encoding="utf-8"):
            continue
        build_dir = tempfile.mkdtemp(prefix="corpus_example_")
        env = dict(_env(), PYPTO_PROG_BUILD_DIR=build_dir)
        env["PYTHONPATH"] = env["PYTHONPATH"] + os.pathsep + str(root)
        # A file inside packages (examples/__init__.py...) may import relatively: run it as the
        # module it is, as `python -m`, from the checkout's root.
        parts = pathlib.PurePosixPath(rel).with_suffix("").parts
        in_package = all((root.joinpath(*parts[:i]) / "__init__.py").exists()
                         for i in range(1, len(parts)))
        command = ["-m", ".".join(parts)] if in_package else [str(root / rel)]
        try:
            proc = subprocess.run([sys.executable, *command], capture_output=True,
                                  text=True, env=env, cwd=str(root), timeout=EXAMPLE_TIME_LIMIT)
            ok = proc.returncode == 0
            last = (proc.stderr.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            ok, last = False, f"TimeoutExpired: no exit within {EXAMPLE_TIME_LIMIT} s"
        shutil.rmtree(build_dir, ignore_errors=True)
        outcomes[rel] = {"passed": ok, "error": None if ok else last}
    return outcomes


# ---------------------------------------------------------------------------------------------
# Report

LOCATION = re.compile(r"^\S*?:\d+(:\d+)?: (error: )?")


def cause(error: dict, params: Sequence[str] = ()) -> str:
    """The error's first line with names and numbers stripped, so alike errors count together."""
    missing = re.match(r"name '(\w+)' is not defined", error["text"])
    if error["type"] == "NameError" and missing and missing.group(1) in params:
        return "(not tried) uses a parameter of its enclosing test function"
    text = error["text"].strip().splitlines()[0] if error["text"].strip() else ""
    text = LOCATION.sub("", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "<name>", text)
    text = re.sub(r"/[\w./+-]+", "<path>", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    text = re.sub(r"\[[^\]]*\]", "[...]", text)
    return f"{error['stage']}: {error['type']}: {text[:140]}"


def quoted_names(error: dict) -> List[str]:
    first = error["text"].strip().splitlines()[0] if error["text"].strip() else ""
    if error["type"] == "AttributeError" and "'" not in first:
        return [first]  # AttributeError: HOST
    return re.findall(r"'([^']{1,60})'", first)[:1]


def report(programs: List[dict], examples: Dict[str, dict]) -> str:
    lines = ["| set | programs | parse | compile | run-and-match |", "|---|---|---|---|---|"]
    for set_name in SETS:
        for negative in (False, True):
            chosen = [p for p in programs if p["set"] == set_name and p["negative"] == negative
                      and p["kind"] == "program"]
            jits = [p for p in programs if p["set"] == set_name and p["negative"] == negative
                    and p["kind"] == "jit"]
            if not chosen and not jits:
                continue
            label = set_name + (" (negative: expected to fail)" if negative else "")
            parsed = sum("parse" in p.get("stages", []) for p in chosen)
            compiled = sum("compile" in p.get("stages", []) for p in chosen)
            deferred = sum("compile-per-call-shape" in p.get("stages", []) for p in chosen)
            run = "-"
            if set_name == "examples" and not negative and examples:
                run = f"{sum(o['passed'] for o in examples.values())}/{len(examples)} scripts"
            per_shape = f" (+{deferred} pl.dynamic, compiled per call shape)" if deferred else ""
            lines.append(f"| {label} | {len(chosen)} classes + {len(jits)} jit | {parsed} | "
                         f"{compiled}{per_shape} | {run} |")
    causes = collections.Counter(cause(p["error"], p.get("params", ())) for p in programs
                                 if p["kind"] == "program" and not p["negative"] and p.get("error"))
    names = collections.Counter(n for p in programs if p["kind"] == "program"
                                and not p["negative"] and p.get("error")
                                for n in quoted_names(p["error"]))
    out = ["\n".join(lines), "", "Top 30 first-error causes (positive programs):", ""]
    out += [f"{count:6d}  {text}" for text, count in causes.most_common(30)]
    out += ["", "Most frequent names in those errors:", ""]
    out += ["  " + ", ".join(f"{n} ({c})" for n, c in names.most_common(40))]
    failed = {k: v for k, v in examples.items() if not v["passed"]}
    if examples:
        out += ["", f"Example scripts: {len(examples) - len(failed)} of {len(examples)} pass"]
        out += [f"  {k}: {v['error'][:160]}" for k, v in sorted(failed.items())]
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="PyPTO checkout folder or bare git directory")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="child processes at once")
    parser.add_argument("--out", default=None, help="output folder (default: a new one in /tmp)")
    parser.add_argument("--no-examples", action="store_true", help="do not run example scripts")
    parser.add_argument("--only", default="", help="only files whose path contains this text")
    parser.add_argument("--report-from", default=None, metavar="RESULTS_JSON",
                        help="print the report of an earlier run's results.json and exit")
    args = parser.parse_args(argv)
    if args.report_from:
        saved = json.loads(pathlib.Path(args.report_from).read_text())
        print(report(saved["programs"], saved["examples"]), end="")
        return 0
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="pypto_corpus_"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    root = checkout_dir(pathlib.Path(args.checkout).resolve(), out)
    programs = [p for p in find_programs(root) if args.only in p["file"]]
    print(f"{len(programs)} programs and jit functions found under {root}", flush=True)
    try_programs([p for p in programs if p["kind"] == "program"], out / "work", max(1, args.jobs))
    examples = {} if args.no_examples else run_examples(root, programs)
    text = report(programs, examples)
    for p in programs:
        p.pop("module", None)
    (out / "results.json").write_text(json.dumps({"programs": programs, "examples": examples},
                                                 indent=1))
    (out / "report.md").write_text(text)
    print(text)
    print(f"({time.perf_counter() - started:.0f} s; results and report in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
