"""pypto.profile_view and the results' displays: the text summary of a profile dict matches the
C++ summary line for line, the HTML is self-contained and escapes every name, repeated siblings
are merged, bad profile files are refused with the file's name, and the reprs of RunResult,
BenchmarkResult, JitCallInfo and SweepResult stay short."""

import copy
import html.parser
import json
import pathlib

import numpy as np
import pytest

import pypto.language as pl
from cli_tool import cli
from pypto import ir
from pypto.compile_profiling import (CompileProfiler, ProfileView, StageRecord, load_profile,
                                     render_profile)
from pypto.runtime import RunConfig, TensorSpec, benchmark, run
from pypto.sweep.results import SweepResult, aggregate_profiles

HOSTILE = "<!--<script>alert(1)</script>"


@pl.program
class Doubler:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(x, [0, 0], [32, 32])), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        y = self.k(x, y)
        return y


@pl.jit
def double(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
        y = pl.store(pl.add(t, t), [0, 0], y)
    return y


def specs():
    return [TensorSpec("x", [32, 32], pl.FP32, init_value=np.ones((32, 32), np.float32)),
            TensorSpec("y", [32, 32], pl.FP32, is_output=True)]


def golden(tensors, params=None):
    tensors["y"][:] = 2 * tensors["x"]


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture(scope="module")
def run_profile(tmp_path_factory):
    """A profiled run's profile: compile, golden_write and device_execution with its swimlane."""
    root = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYPTO_COMPILE_PROFILING", raising=False)
        mp.setenv("PYPTO_PROG_BUILD_DIR", str(root / "build_output"))
        mp.setenv("PYPTO_CACHE_DIR", str(root / "cache"))
        result = run(Doubler, specs(), golden, RunConfig(compile_profiling=True, isolate=False))
    assert result.passed, result.error
    return result.profile


def stage(name, seconds, start, children=(), **extra):
    return {"name": name, "seconds": seconds, "start": start, "children": list(children), **extra}


def live_profiler():
    """A profiler with what the summary has columns for: memory, a failure with a two-line
    error, repeated leaves, a control character in a name and an open StageRecord."""
    with CompileProfiler(memory=True) as prof:
        ir.compile(Doubler)
        with prof.stage("tab\tand\x1bescape"):
            for _ in range(3):
                with prof.stage("verify"):
                    pass
        with pytest.raises(ValueError):
            with prof.stage("boom"):
                raise ValueError("first line\nsecond line")
    return prof


# ----------------------------------------------------------------------------------------- text


def test_text_of_a_dict_is_the_cpp_summary(isolated, tmp_path):
    prof = live_profiler()
    expected = prof.summary()
    assert "verify (3×)" in expected and "[failed: ValueError: first line]" in expected
    assert "rss " in expected and "\\x1b" in expected
    assert render_profile(prof) == expected
    assert render_profile(prof.to_dict()) == expected
    assert render_profile(prof.to_json()) == expected  # the JSON text itself
    path = tmp_path / "p.json"
    prof.to_json(path)
    assert render_profile(path) == expected and render_profile(str(path)) == expected


def test_text_of_a_compile_report_is_its_txt_file(isolated):
    out = pathlib.Path(ir.compile(Doubler, profiling=True))
    report = out / "report"
    assert render_profile(report / "pipeline_profile.json") == \
        (report / "pipeline_profile.txt").read_text(encoding="utf-8")


def test_text_of_a_run_with_a_device_timeline_matches_pypto_profile_show(run_profile, tmp_path):
    # `pypto profile show` reads the file with keys sorted: compare without metadata, whose
    # order is the one thing the tool does not keep.
    profile = copy.deepcopy(run_profile)
    profile.pop("metadata", None)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(profile))
    proc = cli("profile", "show", path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = render_profile(path)
    assert text == proc.stdout
    assert "core 0 " in text and "device_execution" in text


def test_merged_stages_of_an_exit_report_and_min_percent(tmp_path):
    profile = {"total_seconds": 1.0, "stages": [
        stage("call", 0.9, 0.0, [stage("specialize", 0.2, 0.0, count=20, min_seconds=0.005,
                                       median_seconds=0.01, max_seconds=0.02)],
              count=20, min_seconds=0.04, median_seconds=0.045, max_seconds=0.06),
        stage("tiny", 0.001, 0.95)]}
    text = render_profile(profile)
    assert "  call (20×)" in text and "min 40.0ms median 45.0ms max 60.0ms" in text
    assert "specialize (20×)" in text
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(profile))
    assert text == cli("profile", "show", path, cwd=tmp_path).stdout
    assert "tiny" not in render_profile(profile, min_percent=1.0)
    assert render_profile(profile, min_percent=1.0) == \
        cli("profile", "show", path, "--min-percent", "1", cwd=tmp_path).stdout


def test_empty_profile():
    assert "(no stages recorded)" in render_profile({"total_seconds": 0.0, "stages": []})
    assert "(no stages recorded)" in ProfileView(CompileProfiler()).html()


# ----------------------------------------------------------------------------------------- HTML


class Elements(html.parser.HTMLParser):
    """The tags and comments of an HTML text, to check what a browser would make of it."""

    def __init__(self):
        super().__init__()
        self.tags, self.comments, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        self.text.append(data)


def parse(text):
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


def test_html_is_self_contained_and_shows_the_run(run_profile, tmp_path):
    page = render_profile(run_profile, format="html", path=tmp_path / "p.html")
    assert (tmp_path / "p.html").read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>")
    found = parse(page)
    tags = {tag for tag, _ in found.tags}
    assert {"details", "summary", "svg", "rect"} <= tags
    assert not tags & {"script", "iframe", "img", "link", "object", "embed"}
    for _, attrs in found.tags:  # nothing to fetch, nothing to run
        assert not {"src", "href"} & set(attrs) and not any(k.startswith("on") for k in attrs)
    assert "url(" not in page and "@import" not in page
    text = "".join(found.text)
    for name in ["compile", "passes", "golden_write", "device_execution", "execute"]:
        assert name in text
    # The device swimlane: one row per simulated core.
    cores = int(load_profile(run_profile)["metadata"]["workers"])
    for core in range(cores):
        assert f"core {core} · " in text
    # Top-level stages show their children; deeper levels start folded.
    details = [attrs for tag, attrs in found.tags if tag == "details" and
               "pv-sec" not in attrs.get("class", "")]
    assert "open" in details[0] and any("open" not in d for d in details)
    assert len(ProfileView(run_profile).html()) < 60_000


def test_every_name_is_escaped():
    profile = {"total_seconds": 1.0, "metadata": {HOSTILE: HOSTILE},
               "threads": [{"id": 1, "name": HOSTILE}, {"id": 2, "name": "w"}],
               "stages": [stage(HOSTILE, 0.5, 0.0, [stage(HOSTILE, 0.1, 0.0, failed=True,
                                                          error=HOSTILE + "\n" + HOSTILE)]),
                          stage("worker", 0.4, 0.1, thread=2),
                          stage("device_execution", 0.1, 0.5, device={
                              "cores": 1, "begin": 0.5, "end": 0.6,
                              "task_fields": ["kernel", "core", "start", "end", "waited_on"],
                              "tasks": [[HOSTILE, 0, 0.5, 0.55, -1]]})]}
    for text in (render_profile(profile, format="html"), ProfileView(profile, title=HOSTILE).html()):
        found = parse(text)
        assert "script" not in {tag for tag, _ in found.tags}
        assert found.comments == []
        assert "<!--" not in text and "<script" not in text.lower()
        assert "&lt;!--&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert HOSTILE in "".join(found.text)  # shown as text


def test_repeated_siblings_are_one_row_with_their_spread():
    calls = [stage("call", 0.001 * (i + 1), float(i), [stage("specialize", 0.0001, float(i))])
             for i in range(50)]
    view = ProfileView({"total_seconds": 60.0, "stages": calls})
    found = parse(view.html().split("<svg")[0])  # the tree (the timeline has a bar per call)
    text = "".join(found.text)
    assert text.count("call") == 1 and "50×" in text
    assert "min 1.00ms · median 25.5ms · max 50.0ms" in text
    assert text.count("specialize") == 1


def test_a_huge_profile_gives_a_bounded_page():
    profile = {"total_seconds": 20.0, "stages": [
        stage(f"stage{i}", 0.0009, i * 0.001, [stage(f"child{i}", 0.0001, i * 0.001)])
        for i in range(20000)]}
    page = ProfileView(profile).html()
    assert len(page) < 800_000
    assert "more rows: render_profile(profile) has every stage" in page
    assert "short stages or tasks" in page  # the timeline's coalesced bars


def test_profiles_without_start_times_are_laid_out_in_order():
    old = {"total_seconds": 0.3, "stages": [
        {"name": "a", "seconds": 0.1, "children": []},
        {"name": "b", "seconds": 0.2, "children": [{"name": "c", "seconds": 0.1, "children": []}]}]}
    assert "<svg" in ProfileView(old).html()
    assert "  b " in render_profile(old)


# ------------------------------------------------------------------------------ views and input


def test_profile_view_repr_is_short_and_str_is_the_summary(run_profile):
    view = ProfileView(run_profile)
    text = repr(view)
    assert text.startswith("ProfileView: total ") and len(text.splitlines()) <= 20
    assert "device_execution" in text and "children" not in text
    assert str(view) == render_profile(run_profile)
    assert view.total_seconds == run_profile["total_seconds"]
    assert view._repr_html_() == view.html()
    assert ProfileView(view).profile is view.profile


def test_save_picks_the_format_from_the_suffix(run_profile, tmp_path):
    view = ProfileView(run_profile)
    view.save(tmp_path / "p.html")
    view.save(tmp_path / "p.txt")
    assert (tmp_path / "p.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "p.txt").read_text(encoding="utf-8") == view.text()


def test_a_live_profiler_displays_itself():
    prof = CompileProfiler()
    prof.add_stage_record(StageRecord("parse", 1.0, 1.5, [StageRecord("inner", 1.1, 1.2)]))
    assert "parse" in prof._repr_html_() and "inner" in prof._repr_html_()
    assert repr(prof).startswith("<CompileProfiler total=")


@pytest.mark.parametrize("content, message", [
    ("not json at all", "is not a JSON object (it does not start with '{')"),
    ("[1, 2]", "is not a JSON object"),
    ("{\"total_seconds\": 1", "is not valid JSON (line 1"),
    ("{\"stages\": []}", "'total_seconds' is missing"),
    ("{\"total_seconds\": 1, \"stages\": [{\"name\": \"a\", \"children\": []}]}",
     "stages[0]: 'seconds' is missing"),
    ("{\"total_seconds\": 1, \"stages\": [{\"name\": \"a\", \"seconds\": 1, \"children\": [{}]}]}",
     "stages[0].children[0]: 'name' is missing or not a string"),
    ("{\"total_seconds\": 1e400, \"stages\": []}", "out of the range of a double"),
    ("{\"total_seconds\": 1, \"stages\": [" + "{\"name\": \"a\", \"seconds\": 1, \"children\": ["
     * 300 + "]}" * 300 + "]}", "levels"),
])
def test_a_file_that_is_not_a_profile_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "notes.json"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        render_profile(path)
    text = str(info.value)
    assert str(path) in text and message in text
    assert "Expected a compile profile" in text or "Pass" in text


def test_other_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        render_profile(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is a folder"):
        render_profile(tmp_path)
    with pytest.raises(TypeError, match="got int"):
        render_profile(3)
    with pytest.raises(ValueError, match="takes 'text' or 'html'"):
        render_profile({"total_seconds": 0.0, "stages": []}, format="pdf")
    with pytest.raises(ValueError, match=r"profile: stages\[0\]: 'seconds' is negative"):
        ProfileView({"total_seconds": 0.0, "stages": [stage("a", -1.0, 0.0)]})

def test_a_sweeps_merged_profile_renders_like_any_other():
    job = {"total_seconds": 0.05, "stages": [stage("compile", 0.01, 0.0)]}
    slow = {"total_seconds": 0.07, "stages": [stage("compile", 0.03, 0.0)]}
    text = ProfileView(aggregate_profiles([job, slow])).text()
    assert "sweep: 2 jobs merged" in text
    line = next(line for line in text.splitlines() if "compile" in line)
    assert "min 10.0ms median 20.0ms max 30.0ms" in line


# ------------------------------------------------------------------------------------- results


def test_benchmark_and_jit_reprs_are_one_short_line(isolated):
    result = benchmark(Doubler, specs(), golden, rounds=5, config=RunConfig(isolate=False))
    assert result.passed, result.error
    text = repr(result)
    assert text.startswith("BenchmarkResult(passed=True, rounds=5, median=")
    assert "\n" not in text and len(text) < 300 and "round_times" not in text, text
    page = result._repr_html_()
    assert "median" in page and "device_execution" in page and "<svg" in page

    x, y = np.ones((32, 32), np.float32), np.zeros((32, 32), np.float32)
    double(x, y, config=RunConfig(compile_profiling=True))
    text = repr(double.last_call)
    assert text.startswith("JitCallInfo(cache_hit=False, execution_time=")
    assert "\n" not in text and len(text) < 400 and "children" not in text, text
    assert "specialize" in double.last_call._repr_html_()
    double(x, y)  # not profiled: the view says how to get a profile
    assert "compile_profiling=True" in double.last_call._repr_html_()


def test_a_failed_run_shows_its_error_escaped(isolated):
    def bad_golden(tensors, params=None):
        raise ValueError(HOSTILE + "\nmore")

    result = run(Doubler, specs(), bad_golden, RunConfig(isolate=False))
    page = result._repr_html_()
    assert "failed" in page and "<script" not in page and "&lt;script&gt;" in page
    assert "compile_profiling=True" in page  # no profile: how to get one


def test_sweep_result_repr_and_html(tmp_path):
    def row(job, block, passed, seconds):
        return {"job": job, "file": "blocked_add.py", "BLOCK": block, "passed": passed,
                "parse_s": 0.001, "compile_s": 0.01, "golden_write_s": None,
                "device_execution_s": 0.02, "device_median_s": seconds if passed else None,
                "device_p95_s": seconds if passed else None, "cache_hit": False,
                "error": "" if passed else HOSTILE,
                "profile": {"total_seconds": 0.05, "stages": [stage("compile", 0.01, 0.0)]}}

    rows = [row(i, 32 * (i + 1), i != 2, 0.001 * (40 - i)) for i in range(30)]
    result = SweepResult(rows, ["BLOCK"], str(tmp_path))
    text = repr(result)
    assert text.startswith("SweepResult(30 jobs, 29 passed, best=job 29 (BLOCK=960)")
    assert len(text.splitlines()) == 1
    page = result._repr_html_()
    assert "Profile over 30 jobs" in page and "compile" in page
    assert "10 more jobs" in page and "<script" not in page
