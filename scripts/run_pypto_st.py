#!/usr/bin/env python3
"""Runs PyPTO's own system tests (``tests/st`` of a PyPTO checkout), unmodified, against the
installed ``pypto`` package on the simulator platforms, and reports what happened.

    python scripts/run_pypto_st.py PATH [--platform a2a3sim,a5sim] [--devices 0-7] [--timeout 180] [-j 1]
                                        [--only runtime/ops] [-k EXPR] [--top 25] [--json FILE]
                                        [--pytest-arg=--enable-chip-swimlane]

PATH is a PyPTO checkout: a directory holding ``tests/st``, or a bare git repository (its HEAD is
extracted with ``git archive`` into a temporary directory). Each test file runs in its own pytest
process, so that a crash or a hang costs one file, not the run: a test that outlives
``--timeout`` seconds fails with a timeout (an alarm inside the process, and a hard cap on the
whole file as a backstop). At the end the passed/failed/errors/skipped counts are printed, with
the most common failure causes (the first line of each failure's error, with numbers and paths
folded so that alike failures group together).

Needs only the standard library and pytest (torch must be installed for PyPTO's harness).
The same file is also the pytest plugin the child processes load (``-p run_pypto_st``): it
arms the per-test alarm and writes each test's outcome to a JSON-lines file.
"""

import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Environment variables by which the parent hands settings to the plugin in each child.
_RECORD_ENV = "PYPTO_ST_RECORD_FILE"
_TIMEOUT_ENV = "PYPTO_ST_TEST_TIMEOUT"


# ----------------------------------------------------------------------------------------------
# The plugin side (runs inside each pytest child process).
# ----------------------------------------------------------------------------------------------

class _TestTimeout(Exception):
    """Raised in the test by the per-test alarm."""


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _TestTimeout(f"test timed out after {os.environ.get(_TIMEOUT_ENV)} s "
                       f"(run_pypto_st --timeout)")


def _record(entry):
    path = os.environ.get(_RECORD_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _failure_message(report):
    """The error text of a failed report: pytest's crash message, else its long text."""
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None and crash.message:
        return crash.message
    return str(report.longrepr or "")


try:
    import pytest as _pytest
except ImportError:  # the parent side runs without importing pytest
    _pytest = None

if _pytest is not None:

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):  # noqa: ARG001
        seconds = int(float(os.environ.get(_TIMEOUT_ENV, "0") or 0))
        if seconds > 0 and hasattr(signal, "SIGALRM"):
            previous = signal.signal(signal.SIGALRM, _alarm)
            signal.alarm(seconds)
            try:
                yield
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
        else:
            yield

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            entry = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome}
            if report.failed:
                entry["message"] = _failure_message(report)
            elif report.skipped and isinstance(report.longrepr, tuple):
                entry["message"] = str(report.longrepr[2])
            _record(entry)

    def pytest_collectreport(report):
        if report.failed:
            _record({"nodeid": report.nodeid, "when": "collect", "outcome": "failed",
                     "message": _failure_message(report)})


# ----------------------------------------------------------------------------------------------
# The parent side: find the tests, run them file by file, count.
# ----------------------------------------------------------------------------------------------

def _checkout(path, scratch):
    """The checkout's root directory; a bare git repository is extracted into ``scratch``."""
    path = Path(path).resolve()
    if (path / "tests" / "st").is_dir():
        return path
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        archive = subprocess.run(["git", "--git-dir", str(path), "archive", "--format=tar", "HEAD"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        if archive.returncode != 0:
            sys.exit(f"run_pypto_st: cannot read HEAD of {path}: "
                     f"{archive.stderr.decode(errors='replace').strip()}")
        root = Path(scratch) / "pypto"
        root.mkdir()
        archive_file = Path(scratch) / "head.tar"
        archive_file.write_bytes(archive.stdout)
        with tarfile.open(archive_file) as tar:
            tar.extractall(root)  # noqa: S202 - the project's own repository
        archive_file.unlink()
        if (root / "tests" / "st").is_dir():
            return root
    sys.exit(f"run_pypto_st: {path} is neither a PyPTO checkout (no tests/st in it) nor a bare "
             f"git repository of one; give the path of a PyPTO checkout")


def _test_files(st_dir, only):
    files = sorted(st_dir.rglob("test_*.py"))
    files = [f for f in files if "harness" not in f.relative_to(st_dir).parts[:1]]
    if only:
        wanted = [st_dir / o for o in only]
        files = [f for f in files if any(f == w or w in f.parents for w in wanted)]
    return files


def _run_file(root, test_file, args, record_dir):
    """Runs one test file; returns (records, note) where note describes a crash or a hang."""
    flat_name = test_file.relative_to(root).as_posix().replace("/", "__")
    record = Path(record_dir) / (flat_name + ".jsonl")
    env = dict(os.environ)
    env[_RECORD_ENV] = str(record)
    env[_TIMEOUT_ENV] = str(args.timeout)
    # The child must import this file as the plugin, and the installed pypto (never a 'pypto'
    # folder of the checkout).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parent),
                                                    env.get("PYTHONPATH", "")) if p)
    command = [args.python, "-m", "pytest", str(test_file), "-p", "run_pypto_st",
               "-p", "no:cacheprovider", "-q", "--no-header", "-rN", "--tb=line",
               f"--platform={args.platform}", f"--device={args.devices}", f"--rootdir={root}"]
    if args.k:
        command += ["-k", args.k]
    command += args.pytest_arg
    hard_cap = args.file_timeout
    note = None
    try:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=hard_cap)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            note = f"file killed after {hard_cap} s (run_pypto_st --file-timeout)"
        else:
            # 0: all passed, 1: failures, 5: nothing selected; anything else without records is a
            # crash of the process (a signal) or of pytest itself.
            if process.returncode not in (0, 1, 5) and not record.exists():
                tail = output.decode(errors="replace").strip().splitlines()[-3:]
                note = f"pytest exited with {process.returncode}: {' | '.join(tail)}"
            elif process.returncode < 0:
                note = f"pytest process died with signal {-process.returncode}"
    except OSError as e:
        return [], f"cannot start pytest: {e}"
    records = []
    if record.exists():
        for line in record.read_text(encoding="utf-8").splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records, note


def _outcomes(records):
    """Each test's single outcome: 'passed', 'failed', 'error' (setup/teardown/collection) or
    'skipped', with its message."""
    by_test = {}
    for r in records:
        nodeid, when, outcome = r["nodeid"], r["when"], r["outcome"]
        message = r.get("message", "")
        if when == "collect":
            by_test[nodeid] = ("error", message)
        elif outcome == "skipped":
            by_test.setdefault(nodeid, ("skipped", message))
        elif outcome == "failed":
            kind = "failed" if when == "call" else "error"
            if by_test.get(nodeid, ("",))[0] not in ("failed", "error"):
                by_test[nodeid] = (kind, message)
        elif when == "call":
            by_test.setdefault(nodeid, ("passed", ""))
    return by_test


_PATH = re.compile(r"(?:[\w.+-]*/)+([\w.+-]+)")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")


def cause_of(message):
    """The failure's cause, grouped: the first line of the error that is not the harness's own
    wrapping, with file paths reduced to file names and numbers to N."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "(no message)"
    # A collection error's text is a traceback whose "E   " lines are the exception itself.
    raised = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    if raised:
        named = [ln for ln in raised if re.match(r"^[\w.]+(Error|Exception|Exit)\b", ln)]
        lines = named + raised
    # A located error rendered like a SyntaxError: 'File "x.py", line N', the source, a caret,
    # then "pypto.errors.ParseError: message".
    if lines[0].startswith('File "'):
        named = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception): ", ln)]
        lines = named + lines
    line = lines[0]
    # The harness wraps the run's error: "AssertionError: Test failed for X: <error>". Prefer
    # the located compiler diagnostic ("file:line:col: error: ...") when there is one.
    for candidate in lines:
        if ": error: " in candidate:
            line = candidate.split(": error: ", 1)[1]
            break
    else:
        for prefix in ("AssertionError: ", "assert "):
            if line.startswith(prefix):
                line = line[len(prefix):]
        # "Test failed for 64x64: ValueError: ..." -> the inner error
        m = re.match(r"^(?:Test |test )?[\w ]*failed[^:]*:\s*(.+)$", line)
        if m and m.group(1):
            line = m.group(1)
    # The same parse error reads "ParseError: X" where it was raised at import and "...: error:
    # X" where the harness reported it: one cause.
    line = re.sub(r"^(?:pypto\.errors\.)?(?:ParseError|CompileError): ", "", line)
    line = _PATH.sub(r"\1", line)
    line = _HEX.sub("0xN", line)
    line = _NUMBER.sub("N", line)
    return line[:160]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a PyPTO checkout, or a bare git repository of one")
    parser.add_argument("--platform", default="a2a3sim,a5sim",
                        help="the --platform filter of PyPTO's conftest (default: a2a3sim,a5sim)")
    parser.add_argument("--devices", default="0-7",
                        help="the --device list of PyPTO's conftest (default 0-7): simulated devices, "
                             "one per rank of the multi-rank tests, which skip themselves when "
                             "given fewer devices than ranks")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per test (default 180)")
    parser.add_argument("--file-timeout", type=int, default=1800,
                        help="seconds per test file before it is killed (default 1800)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="test files run at once")
    parser.add_argument("--only", action="append", default=[],
                        help="a file or folder under tests/st to run (repeatable)")
    parser.add_argument("-k", help="pytest -k expression")
    parser.add_argument("--pytest-arg", action="append", default=[],
                        help="one more argument for pytest, e.g. --pytest-arg=--dump-passes "
                             "(repeatable)")
    parser.add_argument("--top", type=int, default=25, help="failure causes listed (default 25)")
    parser.add_argument("--json", help="also write every test's outcome and message here")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python whose pypto and pytest run the tests")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each file's counts")
    args = parser.parse_args(argv)

    scratch = tempfile.mkdtemp(prefix="pypto_st_")
    try:
        root = _checkout(args.checkout, scratch)
        st_dir = root / "tests" / "st"
        files = _test_files(st_dir, args.only)
        if not files:
            sys.exit(f"run_pypto_st: no test files under {st_dir} match {args.only}")
        record_dir = Path(scratch) / "records"
        record_dir.mkdir()
        started = time.monotonic()
        outcomes, notes = {}, []
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [(f, pool.submit(_run_file, root, f, args, record_dir)) for f in files]
            for test_file, future in futures:
                records, note = future.result()
                file_outcomes = _outcomes(records)
                rel = test_file.relative_to(root).as_posix()
                if note:
                    notes.append(f"{rel}: {note}")
                    if not file_outcomes:
                        file_outcomes = {rel: ("error", note)}
                outcomes.update(file_outcomes)
                if args.verbose:
                    counts = collections.Counter(kind for kind, _ in file_outcomes.values())
                    print(f"{rel}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())),
                          flush=True)
        elapsed = time.monotonic() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    counts = collections.Counter(kind for kind, _ in outcomes.values())
    causes = collections.Counter(cause_of(message) for kind, message in outcomes.values()
                                 if kind in ("failed", "error"))
    print(f"\nPyPTO tests/st on {args.platform}: {len(files)} files, {len(outcomes)} tests "
          f"in {elapsed:.0f} s")
    # Each file whose process crashed or hung; its tests count as errors above.
    for note in notes[:5] if not args.verbose else notes:
        print(f"  note: {note}")
    if len(notes) > 5 and not args.verbose:
        print(f"  ... {len(notes) - 5} more files with notes (-v lists them)")
    if causes:
        print(f"\nMost common failure causes (of {sum(causes.values())} failures and errors):")
        for cause, n in causes.most_common(args.top):
            print(f"  {n:5d}  {cause}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"platform": args.platform, "counts": dict(counts),
                       "tests": {k: {"outcome": o, "message": m}
                                 for k, (o, m) in sorted(outcomes.items())}}, f, indent=1)
    # The closing line, in the form test tooling reads.
    print(f"\n{counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors, "
          f"{counts['skipped']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
