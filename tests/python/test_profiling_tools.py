"""Profiling beyond the tree, from Python and the `pypto profile` tool: Chrome trace, list view,
memory, pass statistics, failure profiles, profile files (show/diff/convert/html, the HTML page
checked in headless Chromium) and the PYPTO_COMPILE_PROFILING exit report."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import pypto.language as pl
from cli_tool import cli
from pypto import ir
from pypto.compile_profiling import CompileProfiler
from pypto.errors import CompileError
from summary_text import HEADER, profiles, root_stages, stage_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PASSES = ["LowerSplitAiv", "UnrollLoops", "ConvertToSSA", "Simplify", "FlattenCallExpr",
          "OutlineHierarchyScopes", "OutlineIncoreScopes", "ConvertTensorToTileOps", "AutoTileMatmulL0",
          "InferTileMemorySpace", "InitMemRef", "MemoryReuse", "AllocateMemoryAddr",
          "DeriveCallDirections"]


@pytest.fixture(autouse=True)
def no_env_profiler(monkeypatch):
    for name in ["PYPTO_COMPILE_PROFILING", "PYPTO_COMPILE_PROFILING_DIR",
                 "PYPTO_COMPILE_PROFILING_MEMORY"]:
        monkeypatch.delenv(name, raising=False)


def walk(stages, depth=0):
    for stage in stages:
        yield stage, depth
        yield from walk(stage["children"], depth + 1)


@pytest.fixture(scope="module")
def ffn(tmp_path_factory):
    """ffn.py compiled by the tool with --profile: (profile path, profile dict)."""
    out = tmp_path_factory.mktemp("ffn") / "out"
    proc = cli("compile", EXAMPLES / "ffn.py", "-o", out, "--profile", cwd=out.parent)
    assert proc.returncode == 0, proc.stderr
    path = out / "report" / "pipeline_profile.json"
    return path, json.loads(path.read_text())


def check_chrome_trace(trace, stage_count):
    """The Trace Event Format's rules for what we emit (the JSON Object Format with complete and
    metadata events): every event has name/ph/ts/pid/tid, X events a dur >= 0, X events nest
    per thread, every thread with events is named by a thread_name metadata event."""
    names, spans = {}, {}
    for event in trace["traceEvents"]:
        for key in ["name", "ph", "ts", "pid", "tid"]:
            assert key in event, (key, event)
        assert event["ph"] in ("X", "M")
        if event["ph"] == "M":
            if event["name"] == "thread_name":
                names[event["tid"]] = event["args"]["name"]
            continue
        assert event["dur"] >= 0
        spans.setdefault(event["tid"], []).append((event["ts"], event["ts"] + event["dur"],
                                                   event["name"]))
    assert sum(len(s) for s in spans.values()) == stage_count
    for tid, events in spans.items():
        assert tid in names, f"no thread_name for tid {tid}"
        events.sort(key=lambda e: (e[0], -e[1]))
        open_ends = []
        for begin, end, name in events:
            while open_ends and open_ends[-1] <= begin + 1e-9:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-6, f"{name} overlaps on {tid}"
            open_ends.append(end)
    return names, spans


def test_chrome_trace_of_a_compile_has_the_formats_structure(tmp_path):
    program = pl.parse((EXAMPLES / "ffn.py").read_text(), file_name="ffn.py")
    with CompileProfiler() as prof:
        ir.compile(program, output_dir=tmp_path / "out")
    text = prof.to_chrome_trace(tmp_path / "trace" / "ffn.trace.json")
    trace = json.loads((tmp_path / "trace" / "ffn.trace.json").read_text())
    assert json.loads(text) == trace
    stages = list(walk(prof.to_dict()["stages"]))
    names, spans = check_chrome_trace(trace, len(stages))
    main = trace["traceEvents"][0]["tid"]
    assert names[main] == "main"
    kernels = [e for e in trace["traceEvents"] if e["name"].startswith("kernel_codegen:")]
    assert len(kernels) == 2
    for kernel in kernels:  # on the main thread's track or on a named worker's own track
        assert kernel["tid"] == main or names[kernel["tid"]].startswith("codegen worker")
    assert {e["name"] for e in trace["traceEvents"]} >= set(PASSES)


def test_self_time_and_list_view():
    with CompileProfiler() as prof:
        with prof.stage("outer"):
            with prof.stage("inner"):
                sum(range(200000))
            with prof.stage("inner"):
                sum(range(200000))
    outer = prof.to_dict()["stages"][0]
    inner_total = sum(c["seconds"] for c in outer["children"])
    assert outer["self_seconds"] == pytest.approx(outer["seconds"] - inner_total, abs=1e-9)
    lines = prof.summary(view="list").splitlines()
    # A column header, then one row per name, sorted by self time.
    header = lines.index("  name                            count     total      self   self%")
    rows = [line.split() for line in lines[header + 1:] if line.startswith("  ")]
    percents = [float(row[-1].rstrip("%")) for row in rows]
    assert percents == sorted(percents, reverse=True)
    # The time outside the stages (entering the profiler, leaving it) has a row of its own when
    # there is any; on a busy machine it can outweigh either stage's own time, so it may come
    # anywhere in the list.
    named = [row for row in rows if row[0] != "(untracked)"]
    assert [row[:2] for row in named] == [["inner", "2"], ["outer", "1"]]
    assert all(0.0 <= p <= 100.0 for p in percents)
    assert prof.summary(view="tree") == prof.summary()
    with pytest.raises(ValueError, match="'tree' or 'list'"):
        prof.summary(view="flat")


def test_memory_of_a_stage_allocating_100_mb():
    with CompileProfiler(memory=True) as prof:
        with prof.stage("allocate"):
            block = b"\x01" * (100 << 20)
    assert prof.memory and not CompileProfiler().memory
    stage = prof.to_dict()["stages"][0]
    assert stage["rss_growth_bytes"] >= 90 << 20, stage
    assert stage["rss_bytes"] >= stage["rss_growth_bytes"]
    # Sizes have three significant digits, as times do: "rss 136MB +100MB", "+95.3MB".
    growth = re.search(r"\n  allocate .* rss \S+B \+(\d+(?:\.\d+)?)MB\n", prof.summary())
    assert growth and 90.0 <= float(growth.group(1)) < 1000.0, prof.summary()
    del block


def test_pass_statistics_are_stage_metadata_only_when_profiling(tmp_path):
    program = pl.parse((EXAMPLES / "softmax.py").read_text(), file_name="softmax.py")
    with CompileProfiler() as prof:
        ir.compile(program, output_dir=tmp_path / "out")
    passes = next(s for s, _ in walk(prof.to_dict()["stages"]) if s["name"] == "passes")
    runs = [c for c in passes["children"] if c["name"] in PASSES]
    assert [r["name"] for r in runs] == PASSES
    for before, after in zip(runs, runs[1:]):
        assert after["pass"]["ir_size_before"] == before["pass"]["ir_size_after"]
    assert any(r["pass"]["changed"] for r in runs)
    for r in runs:
        assert r["pass"]["changed"] or r["pass"]["ir_size_before"] == r["pass"]["ir_size_after"]
    assert re.search(r"\n +ConvertToSSA .* ir \d+(\u2192\d+| =)\n", prof.summary())


def over_capacity_program():
    """add.py with 512×512 tiles: 1 MiB each, beyond Vec's 192 KiB, so AllocateMemoryAddr fails."""
    text = (EXAMPLES / "add.py").read_text().replace("128", "512")
    return pl.parse(text, file_name="big.py")


def test_failed_compile_writes_a_report_naming_the_error(tmp_path):
    with pytest.raises(CompileError) as info:
        ir.compile(over_capacity_program(), output_dir=tmp_path, profiling=True)
    report = json.loads((tmp_path / "report" / "pipeline_profile.json").read_text())
    failed = [s for s, _ in walk(report["stages"]) if s.get("failed")]
    assert [s["name"] for s in failed] == ["passes", "AllocateMemoryAddr"]
    for stage in failed:
        assert stage["error"] == str(info.value)
        assert "big.py:" in stage["error"] and "Vec" in stage["error"]
    first_line = str(info.value).splitlines()[0]
    summary = (tmp_path / "report" / "pipeline_profile.txt").read_text()
    assert "AllocateMemoryAddr" in summary and f"[failed: {first_line}" in summary


def test_python_stage_left_by_an_exception_carries_its_message():
    with CompileProfiler() as prof:
        with pytest.raises(KeyError):
            with prof.stage("lookup"):
                raise KeyError("missing")
    assert prof.to_dict()["stages"][0]["error"] == "KeyError: 'missing'"


def test_profile_show_list_and_min_percent(ffn, tmp_path):
    path, profile = ffn
    tree = cli("profile", "show", path, cwd=tmp_path)
    assert tree.returncode == 0 and tree.stdout.startswith("PyPTO Compile Profile")
    assert "kernel_codegen:" in tree.stdout and "AllocateMemoryAddr" in tree.stdout
    listed = cli("profile", "show", path, "--list", cwd=tmp_path)
    assert listed.returncode == 0 and "count     total      self   self%" in listed.stdout
    # A measured stage could take half of a run on a busy machine: give UnrollLoops a known 1%.
    small = json.loads(path.read_text())
    unroll = next(s for s, _ in walk(small["stages"]) if s["name"] == "UnrollLoops")
    unroll["seconds"] = small["total_seconds"] / 100
    (tmp_path / "small.json").write_text(json.dumps(small))
    pruned = cli("profile", "show", tmp_path / "small.json", "--min-percent", "50", cwd=tmp_path)
    assert pruned.returncode == 0 and "UnrollLoops" not in pruned.stdout
    kept = cli("profile", "show", tmp_path / "small.json", "--min-percent", "0.5", cwd=tmp_path)
    assert kept.returncode == 0 and "UnrollLoops" in kept.stdout
    # A missing file is a usage error, as for every command: one line, exit 2.
    bad = cli("profile", "show", tmp_path / "nope.json", cwd=tmp_path)
    assert bad.returncode == 2 and "File does not exist" in bad.stderr
    assert len(bad.stderr.splitlines()) == 1
    (tmp_path / "broken.json").write_text('{"total_seconds": 1, "stages": [{"name": "x"}]}')
    bad = cli("profile", "show", tmp_path / "broken.json", cwd=tmp_path)
    assert bad.returncode == 1 and "stages[0]: 'seconds' is missing" in bad.stderr
    assert "Traceback" not in bad.stderr and "json.exception" not in bad.stderr


def test_profile_diff_finds_a_planted_slowdown(ffn, tmp_path):
    path, profile = ffn
    slow = json.loads(path.read_text())
    passes = next(s for s, _ in walk(slow["stages"]) if s["name"] == "passes")
    target = max((c for c in passes["children"] if c["name"] in PASSES),
                 key=lambda c: c["seconds"])
    target["seconds"] *= 2
    (tmp_path / "slow.json").write_text(json.dumps(slow))
    args = ["--threshold", "50", "--min-seconds", "0"]
    proc = cli("profile", "diff", path, tmp_path / "slow.json", *args, "--fail-on-regression",
               cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith(f"compile;passes;{target['name']} ")
                or l.startswith(f"passes;{target['name']} "))
    assert "+100.0%" in line and line.endswith("REGRESSED")
    # Without the flag the report is the same and the exit status 0.
    assert cli("profile", "diff", path, tmp_path / "slow.json", *args, cwd=tmp_path).returncode == 0


def test_profile_diff_of_two_compiles_of_one_program_passes(ffn, tmp_path):
    path, _ = ffn
    # With the default thresholds (25% and 5 ms). A compile takes a few ms, so one scheduler
    # delay on a loaded machine (e.g. codegen waiting to join its worker thread) can exceed them
    # in one stage: what is claimed is that a repeat of the same compile passes, so the best of
    # three repeats counts, and every diff must still name the stages of both profiles.
    outputs = []
    for attempt in range(3):
        out = tmp_path / f"again{attempt}"
        compiled = cli("compile", EXAMPLES / "ffn.py", "-o", out, "--profile", cwd=tmp_path)
        assert compiled.returncode == 0, compiled.stderr
        proc = cli("profile", "diff", path, out / "report" / "pipeline_profile.json",
                   "--fail-on-regression", cwd=tmp_path)
        assert proc.returncode in (0, 1), proc.stderr
        assert all(f"\n{stage} " in proc.stdout for stage in
                   ["parse", "passes", "passes;AllocateMemoryAddr", "codegen",
                    "codegen;write_sources"])
        outputs.append(proc.stdout)
        if proc.returncode == 0:
            assert proc.stdout.rstrip().endswith("0 stage(s) regressed (slower by more than 25% "
                                                 "and by at least 5.00ms)"), proc.stdout
            assert "REGRESSED" not in proc.stdout
            break
    else:
        pytest.fail("every repeat regressed:\n" + "\n".join(outputs))


def test_profile_convert_folded_chrome_and_speedscope(ffn, tmp_path):
    path, profile = ffn
    assert cli("profile", "convert", path, "--to", "folded", "-o", tmp_path / "f.txt",
               cwd=tmp_path).returncode == 0
    lines = (tmp_path / "f.txt").read_text().splitlines()
    total = 0
    for line in lines:
        assert re.fullmatch(r"[^;\n]+(;[^;\n]+)* \d+", line), line
        total += int(line.rsplit(" ", 1)[1])
    # Weights are self times in µs: they add up to the total plus the time parallel stages
    # overlapped (their self times all count), within one µs per stage of rounding.
    stages = list(walk(profile["stages"]))
    expected = sum(s["self_seconds"] for s, _ in stages) + profile.get("untracked_seconds", 0)
    assert abs(total - expected * 1e6) <= len(stages)
    overlap = sum(s["self_seconds"] for s, _ in stages) + profile.get(
        "untracked_seconds", 0) - profile["total_seconds"]
    assert overlap >= -1e-6

    assert cli("profile", "convert", path, "--to", "chrome", "-o", tmp_path / "t.json",
               cwd=tmp_path).returncode == 0
    check_chrome_trace(json.loads((tmp_path / "t.json").read_text()), len(stages))

    assert cli("profile", "convert", path, "--to", "speedscope", "-o", tmp_path / "s.json",
               cwd=tmp_path).returncode == 0
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    opened = sum(1 for p in doc["profiles"] for e in p["events"] if e["type"] == "O")
    assert opened == len(stages)
    bad = cli("profile", "convert", path, "--to", "svg", "-o", tmp_path / "x", cwd=tmp_path)
    assert bad.returncode == 2 and not (tmp_path / "x").exists()


def chromium():
    for name in ["chromium", "chromium-browser", "google-chrome"]:
        if shutil.which(name):
            return shutil.which(name)
    pytest.fail("headless Chromium is needed (Debian package `chromium`, in scripts/deps-apt.txt)")


def headless(*args, tmp_path):
    return subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--enable-logging=stderr", "--v=0",
                           f"--user-data-dir={tmp_path / 'chromium-profile'}", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_html_report_renders_in_headless_chromium(ffn, tmp_path):
    path, profile = ffn
    page = tmp_path / "report.html"
    proc = cli("profile", "html", path, "-o", page, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    # Self-contained: nothing refers to a resource outside the file (d3's banner comment names
    # its home page, which is not loaded).
    assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:|//)""", html)
    assert "<script src" not in html and "<link" not in html and "@import" not in html

    dom = headless("--dump-dom", page.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr
    assert "CONSOLE" not in dom.stderr or "Uncaught" not in dom.stderr, dom.stderr
    assert not re.search(r":CONSOLE\(\d+\)\].*(Error|Uncaught)", dom.stderr), dom.stderr
    assert "data-error=\"" not in dom.stdout  # set by the page on an uncaught error
    assert 'data-ready="report"' in dom.stdout  # the page's scripts ran to the end
    stages = list(walk(profile["stages"]))
    tree_rows = set(re.findall(r'<tr[^>]* data-name="([^"]*)"', dom.stdout))
    assert tree_rows == {s["name"] for s, _ in stages}
    assert 'class="item stage' in dom.stdout  # the timeline drew stages
    assert "By name (sorted by self time)" in dom.stdout

    shot = tmp_path / "profile_report.png"
    snap = headless(f"--screenshot={shot}", "--window-size=1400,1000", page.as_uri(),
                    tmp_path=tmp_path)
    assert snap.returncode == 0 and shot.stat().st_size > 10000, snap.stderr
    keep = ROOT / "build" / "test-artefacts"
    if keep.parent.is_dir():
        keep.mkdir(exist_ok=True)
        shutil.copy(shot, keep / shot.name)
        print(f"screenshot kept at {keep / shot.name}")


def run_python(code, tmp_path, **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_COMPILE_PROFILING")}
    environ.update(env, PYPTO_PROG_BUILD_DIR=str(tmp_path / "build_output"))
    return subprocess.run([sys.executable, *code], cwd=EXAMPLES, env=environ,
                          capture_output=True, text=True, timeout=300)


def test_env_var_exit_report_of_add_py(tmp_path):
    out = tmp_path / "profile"
    proc = run_python(["add.py"], tmp_path, PYPTO_COMPILE_PROFILING="1",
                      PYPTO_COMPILE_PROFILING_DIR=str(out))
    assert proc.returncode == 0, proc.stderr
    # stdout: the run's own profile, printed once when run() ends.
    assert proc.stdout.count(HEADER) == 1, proc.stdout
    assert root_stages(profiles(proc.stdout)[0]) == ["compile", "golden_write",
                                                    "device_execution"]
    # stderr: the exit report, once: the whole process, parse included, at its top level only
    # (the run printed its own tree), and the time outside the stages named by when it passed.
    assert proc.stderr.count(HEADER) == 1, proc.stderr
    exit_report = profiles(proc.stderr)[0]
    assert root_stages(exit_report)[:4] == ["parse", "compile", "golden_write",
                                           "device_execution"]
    assert not set(PASSES) & stage_names(exit_report), proc.stderr
    assert "(before the first stage: start-up, imports)" in proc.stderr
    assert "(untracked)" not in proc.stderr.split(HEADER)[1]
    assert f"Compile profile written to {out}/pipeline_profile.{{txt,json}}" in proc.stderr
    # The file has the whole tree.
    text = (out / "pipeline_profile.txt").read_text()
    assert text.startswith(HEADER) and set(PASSES) <= stage_names(profiles(text)[0])
    data = json.loads((out / "pipeline_profile.json").read_text())
    assert [s["name"] for s in data["stages"]] == ["parse", "compile", "golden_write",
                                                   "device_execution"]
    quiet = run_python(["add.py"], tmp_path)
    assert quiet.returncode == 0 and HEADER not in quiet.stderr + quiet.stdout


def test_env_var_exit_report_also_when_the_program_raises(tmp_path):
    script = tmp_path / "raises.py"
    script.write_text((EXAMPLES / "add.py").read_text() + "\nraise RuntimeError('after the run')\n")
    proc = run_python([str(script)], tmp_path, PYPTO_COMPILE_PROFILING="1")
    assert proc.returncode == 1
    assert "RuntimeError: after the run" in proc.stderr
    assert proc.stderr.count(HEADER) == 1 and proc.stdout.count(HEADER) == 1
    assert "device_execution" in stage_names(profiles(proc.stderr)[0])
    # The report follows the traceback.
    assert proc.stderr.index("PyPTO Compile Profile") > proc.stderr.index("RuntimeError")


def test_env_var_exit_report_counts_the_time_before_the_first_stage(tmp_path):
    # The process-wide profile starts when pypto is imported: a program's own work before its
    # first compile is in the total, shown as untracked, not left out.
    out = tmp_path / "profile"
    script = tmp_path / "waits.py"
    script.write_text("import time\nimport pypto.language\ntime.sleep(0.3)\n" +
                      (EXAMPLES / "add.py").read_text())
    proc = run_python([str(script)], tmp_path, PYPTO_COMPILE_PROFILING="1",
                      PYPTO_COMPILE_PROFILING_DIR=str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "pipeline_profile.json").read_text())
    assert data["total_seconds"] >= 0.3
    assert data["untracked_seconds"] >= 0.3
    covered = sum(s["seconds"] for s in data["stages"])
    assert abs(covered + data["untracked_seconds"] - data["total_seconds"]) < 1e-3


def test_cli_env_var_exit_report_prints_once(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_COMPILE_PROFILING")}
    env.update(PYPTO_COMPILE_PROFILING="1", PYPTO_COMPILE_PROFILING_DIR=str(tmp_path / "p"))
    for command in ["compile", "run"]:
        out = tmp_path / command
        proc = cli(command, EXAMPLES / "add.py", "-o", out, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        # The command's own profile on stdout, as with --profile, parse included; the exit
        # report on stderr. Each once.
        assert proc.stdout.count(HEADER) == 1, proc.stdout
        assert proc.stderr.count(HEADER) == 1, proc.stderr
        own, exit_report = profiles(proc.stdout)[0], profiles(proc.stderr)[0]
        expected = (["parse", "passes", "codegen"] if command == "compile"
                    else ["parse", "compile", "golden_write", "device_execution"])
        assert root_stages(own) == expected, proc.stdout
        assert root_stages(exit_report)[:len(expected)] == expected, proc.stderr
        # The exit report runs after the pass registry's static destructors could have: its pass
        # names must still be intact.
        assert set(PASSES) <= stage_names(own) and set(PASSES) <= stage_names(exit_report)
        assert (out / "report" / "pipeline_profile.json").is_file()
        written = json.loads((tmp_path / "p" / "pipeline_profile.json").read_text())
        assert [s["name"] for s in written["stages"]] == expected
