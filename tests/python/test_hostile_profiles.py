"""The caller's environment against the profile tools (tests/hostile/profile_files.py): malformed
and lying profile files through `pypto profile show|diff|convert|html`, and output targets the
writers must write through instead of replacing (a symlink, a FIFO, a device, `-`), from the
tool and from CompileProfiler. Every command: no signal, no hang, exit 0/1 (2 for an input that
is no file: a usage error), one clear line on failure, no library text, bounded output, no raw
terminal control bytes."""

import concurrent.futures
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import threading
import time

import pytest

from cli_tool import PYPTO
from pypto.compile_profiling import CompileProfiler, ProfilerError

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))
import profile_files  # noqa: E402

TIMEOUT = 30
LEAKS = re.compile(r"std::|nlohmann|json\.exception|terminate called|basic_string|vector::|"
                   r"what\(\):|Traceback \(most recent|Segmentation fault|core dumped")
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
MAX_OUTPUT = 4 << 20  # bytes of stdout: nothing proportional to a count the file claims


def _tool(*args, cwd):
    start = time.monotonic()
    try:
        p = subprocess.run([PYPTO, "profile", *map(str, args)], cwd=cwd, capture_output=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"rc": None, "out": b"", "err": b"hang", "seconds": TIMEOUT}
    return {"rc": p.returncode, "out": p.stdout, "err": p.stderr,
            "seconds": time.monotonic() - start}


def _commands(path, work):
    return {
        "show": ["show", path],
        "list": ["show", "--list", path],
        "diff": ["diff", path, path],
        "convert": ["convert", path, "--to", "chrome", "-o", work / "trace.json"],
        "folded": ["convert", path, "--to", "folded", "-o", work / "stacks.txt"],
        "html": ["html", path, "-o", work / "report.html"],
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    assert PYPTO, "the pypto tool is not installed (pip install . installs it, or set PYPTO_CLI)"
    root = tmp_path_factory.mktemp("hostile_profiles")
    cases = profile_files.write_cases(root / "files")
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        for cls, name, path, expect in cases:
            work = root / "work" / f"{cls}_{name}"
            work.mkdir(parents=True)
            for command, args in _commands(path, work).items():
                jobs[(cls, name, expect, command, work)] = pool.submit(_tool, *args, cwd=work)
    return {key: job.result() for key, job in jobs.items()}


def test_every_class_is_tried(results):
    classes = {cls for cls, _, _, _, _ in results}
    assert {"depth", "counts", "numbers", "types", "names", "size", "special"} <= classes
    assert len(results) >= 200


def test_no_command_crashes_hangs_or_leaks(results):
    problems = []
    for (cls, name, expect, command, work), r in results.items():
        where = f"{cls}/{name} {command}"
        err = r["err"].decode("utf-8", "replace")
        if r["rc"] is None:
            problems.append(f"{where}: hang")
            continue
        if r["rc"] not in ((2,) if expect == "usage" else (0, 1)):
            problems.append(f"{where}: exit {r['rc']}: {err[-500:]}")
        if LEAKS.search(err) or LEAKS.search(r["out"].decode("utf-8", "replace")):
            problems.append(f"{where}: library text: {err[-500:]}")
        if len(r["out"]) > MAX_OUTPUT:
            problems.append(f"{where}: {len(r['out'])} bytes printed")
        if CONTROL.search(r["out"]) or CONTROL.search(r["err"]):
            problems.append(f"{where}: raw control bytes in the output")
        if r["seconds"] > 10:
            problems.append(f"{where}: took {r['seconds']:.1f} s")
        if expect == "ok" and r["rc"] != 0:
            problems.append(f"{where}: failed: {err[-500:]}")
        if expect == "error":
            if r["rc"] != 1:
                problems.append(f"{where}: accepted a malformed profile")
            elif not err.startswith("pypto profile: ") or err.count("\n") != 1:
                problems.append(f"{where}: not one clear line: {err[-500:]!r}")
        if expect == "usage" and (not err.startswith("pypto: ") or err.count("\n") != 1):
            problems.append(f"{where}: not one clear usage line: {err[-500:]!r}")
    assert not problems, "\n".join(problems)


def test_names_are_escaped_on_the_terminal(results):
    out = results[("names", "terminal_escapes", "ok", "show",
                   next(w for c, n, _, cmd, w in results if n == "terminal_escapes"))]["out"]
    assert b"evil\\x1b[2J\\x1b]0;title\\x07\\x0dname" in out, out
    assert b"p\\x1b[31mred" in out, out


def test_a_script_opening_name_stays_inside_the_html_data(results):
    work = next(w for c, n, _, cmd, w in results if n == "html_script")
    page = (work / "report.html").read_text()
    data = page.split('id="profile">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data
    names = [s["name"] for s in json.loads(data)["stages"]]
    assert names == ["<!--<script>", "</script><b>"]


# --- output targets -------------------------------------------------------------------------

@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"total_seconds": 0.01, "stages": [
        {"name": "compile", "seconds": 0.005, "children": []}]}))
    return path


def _read_fifo_in_thread(path, into, delay=0.0):
    """A Python thread that opens the FIFO after `delay` seconds: a writer that held the GIL
    while it waits for a reader would never let it get there."""
    def read():
        time.sleep(delay)
        into.append(pathlib.Path(path).read_bytes())

    thread = threading.Thread(target=read)
    thread.daemon = True
    thread.start()
    return thread


@pytest.mark.parametrize("command", [["html"], ["convert", "--to", "speedscope"]])
def test_the_tool_writes_through_a_fifo_and_a_symlink(tmp_path, profile, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = _read_fifo_in_thread(fifo, got)
    p = subprocess.run([PYPTO, "profile", command[0], profile, *command[1:], "-o", fifo],
                       capture_output=True, timeout=TIMEOUT)
    reader.join(TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    assert len(got[0]) > 100
    target = tmp_path / "target.txt"
    target.write_text("old")
    (tmp_path / "link").symlink_to(target)
    p = subprocess.run([PYPTO, "profile", command[0], profile, *command[1:], "-o",
                        tmp_path / "link"], capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "link").is_symlink() and len(target.read_bytes()) > 100
    (tmp_path / "null").symlink_to("/dev/null")
    p = subprocess.run([PYPTO, "profile", command[0], profile, *command[1:], "-o",
                        tmp_path / "null"], capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0 and (tmp_path / "null").is_symlink(), p.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dash_means_standard_output(tmp_path, profile):
    p = subprocess.run([PYPTO, "profile", "convert", profile, "--to", "chrome", "-o", "-"],
                       capture_output=True, timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "traceEvents" in json.loads(p.stdout)  # the trace alone: no "wrote -" line
    assert not (tmp_path / "-").exists()


def test_a_folder_as_output_is_one_clear_error(tmp_path, profile):
    p = subprocess.run([PYPTO, "profile", "html", profile, "-o", tmp_path],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 1
    assert "it is a folder" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert tmp_path.is_dir()


def test_profiler_writers_keep_symlinks_and_fifos(tmp_path):
    profiler = CompileProfiler()
    with profiler:
        with profiler.stage("work"):
            pass
    target = tmp_path / "target.json"
    target.write_text("old")
    (tmp_path / "link.json").symlink_to(target)
    profiler.to_json(str(tmp_path / "link.json"))
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads(target.read_text())["stages"][0]["name"] == "work"
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    got = []
    reader = _read_fifo_in_thread(fifo, got, delay=0.3)
    profiler.to_chrome_trace(str(fifo))
    reader.join(TIMEOUT)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert "traceEvents" in json.loads(got[0])
    with pytest.raises(ProfilerError, match="it is a folder"):
        profiler.to_json(str(tmp_path))


@pytest.mark.parametrize("command", [["html"], ["convert", "--to", "chrome"],
                                     ["convert", "--to", "folded"],
                                     ["convert", "--to", "speedscope"]])
@pytest.mark.parametrize("target", [name for name, _, _ in profile_files.OUTPUT_TARGETS])
def test_output_targets(tmp_path, profile, command, target):
    work = tmp_path / "work"
    path = profile_files.prepare_output_target(str(work), target)
    expect = dict((n, e) for n, _, e in profile_files.OUTPUT_TARGETS)[target]
    got = []
    reader = _read_fifo_in_thread(path, got) if expect == "fifo" else None
    p = subprocess.run([PYPTO, "profile", command[0], profile, *command[1:], "-o", path],
                       capture_output=True, timeout=TIMEOUT, cwd=work)
    if reader:
        reader.join(TIMEOUT)
    err = p.stderr.decode()
    if expect == "error":
        assert p.returncode == 1 and err.startswith("pypto profile: ") and err.count("\n") == 1
        assert os.path.isdir(path)
        return
    assert p.returncode == 0, err
    assert not LEAKS.search(err)
    written = {"fifo": lambda: got[0], "stdout": lambda: p.stdout}.get(
        expect, lambda: pathlib.Path(path).read_bytes() if expect != "device" else b"x" * 100)()
    assert len(written) >= 10, written  # the folded stacks of one stage are one short line
    mode = os.lstat(path).st_mode if path != "-" else None
    if expect in ("through_link", "device"):
        assert stat.S_ISLNK(mode), "the link was replaced"
    if expect == "fifo":
        assert stat.S_ISFIFO(mode), "the FIFO was replaced"
    if expect == "stdout":
        assert not (work / "-").exists()
    leftovers = [name for name in os.listdir(work) if ".tmp." in name]
    assert not leftovers, leftovers

