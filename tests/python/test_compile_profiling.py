"""pypto.compile_profiling: the Python API over the C++ compile profiler."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from pypto import compile_profiling as cp
from pypto.compile_profiling import CompileProfiler, StageRecord, get_active_profiler

ENV = "PYPTO_COMPILE_PROFILING"


@pytest.fixture(autouse=True)
def no_env_profiling(monkeypatch):
    """Every test starts and ends with the variable unset and no profiler bound."""
    monkeypatch.delenv(ENV, raising=False)
    get_active_profiler()  # unbinds the process-wide profiler if a test left it bound
    yield
    monkeypatch.delenv(ENV, raising=False)
    get_active_profiler()
    assert CompileProfiler.current() is None


def names(stages):
    return [stage["name"] for stage in stages]


def spin(seconds):
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def test_seed_quick_start_snippet_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with CompileProfiler() as prof:
        with prof.stage("my_custom_stage"):
            pass
        data = prof.to_dict()
        text = prof.summary()
        json_str = prof.to_json()
        prof.to_json("out.json")
        prof.write_report("dir/")
    assert names(data["stages"]) == ["my_custom_stage"]
    assert text.startswith("PyPTO Compile Profile\n")
    assert json.loads(json_str)["stages"][0]["name"] == "my_custom_stage"
    assert json.loads((tmp_path / "out.json").read_text())["stages"][0]["name"] == "my_custom_stage"
    assert (tmp_path / "dir" / "pipeline_profile.txt").is_file()
    assert (tmp_path / "dir" / "pipeline_profile.json").is_file()


def test_current_is_the_entered_object_and_profilers_nest():
    assert CompileProfiler.current() is None
    outer = CompileProfiler()
    with outer as entered:
        assert entered is outer
        assert CompileProfiler.current() is outer
        with CompileProfiler() as inner:
            assert CompileProfiler.current() is inner
            assert get_active_profiler() is inner
        assert CompileProfiler.current() is outer
    assert CompileProfiler.current() is None


def test_entered_profiler_stays_alive_without_other_references():
    CompileProfiler().__enter__()
    current = CompileProfiler.current()
    assert isinstance(current, CompileProfiler)
    with current.stage("kept"):
        pass
    current.__exit__(None, None, None)
    assert CompileProfiler.current() is None
    assert names(current.to_dict()["stages"]) == ["kept"]


def test_current_is_per_thread():
    seen = []
    with CompileProfiler():
        worker = threading.Thread(target=lambda: seen.append(CompileProfiler.current()))
        worker.start()
        worker.join()
    assert seen == [None]


def test_stage_order_root_and_nested():
    with CompileProfiler() as prof:
        with prof.stage("parse"):
            pass
        with prof.stage("passes"):
            with prof.stage("UnrollLoops"):
                pass
            with prof.stage("ConvertToSSA"):
                pass
        with cp.stage("codegen"):  # module-level: the current profiler
            with cp.stage("kernel_codegen:my_kernel"):
                pass
    data = prof.to_dict()
    # The seed's keys come first; the session's own time between the stages may add
    # "untracked_seconds", and the threads that recorded stages follow in "threads".
    keys = list(data)
    assert keys[0] == "total_seconds" and "stages" in keys
    assert set(data) <= {"total_seconds", "untracked_seconds", "stages", "threads"}
    assert keys.index("total_seconds") < keys.index("stages")
    # Every stage ran on this thread: one entry, with the OS thread id and the name "main".
    assert data["threads"] == [{"id": data["threads"][0]["id"], "name": "main"}]
    assert isinstance(data["threads"][0]["id"], int) and data["threads"][0]["id"] > 0
    assert names(data["stages"]) == ["parse", "passes", "codegen"]
    assert names(data["stages"][1]["children"]) == ["UnrollLoops", "ConvertToSSA"]
    assert names(data["stages"][2]["children"]) == ["kernel_codegen:my_kernel"]
    for stage in data["stages"]:
        assert {"name", "seconds", "children"} <= set(stage)
        assert isinstance(stage["seconds"], float)


def test_module_stage_without_profiler_is_a_no_op():
    with cp.stage("nothing"):
        pass
    assert CompileProfiler.current() is None


def test_stage_goes_to_its_profiler_even_when_not_current():
    target = CompileProfiler()
    with CompileProfiler() as current:
        with target.stage("golden_write"):
            pass
    assert names(target.to_dict()["stages"]) == ["golden_write"]
    assert current.to_dict()["stages"] == []


def test_split_begin_end_and_extra_end_is_harmless():
    prof = CompileProfiler()
    prof._end_stage()
    prof._begin_stage("compile")
    prof._begin_stage("passes")
    prof._end_stage()
    prof._end_stage()
    prof._end_stage()
    data = prof.to_dict()
    assert names(data["stages"]) == ["compile"]
    assert names(data["stages"][0]["children"]) == ["passes"]
    assert "open" not in data["stages"][0]


def test_open_stage_measures_up_to_now_and_grows():
    prof = CompileProfiler()
    prof._begin_stage("device_execution")
    spin(0.001)
    first = prof.to_dict()["stages"][0]
    spin(0.001)
    second = prof.to_dict()["stages"][0]
    assert first["seconds"] > 0
    assert second["seconds"] > first["seconds"]
    assert first["open"] is True
    assert prof.total_seconds >= second["seconds"]


def test_exception_in_stage_closes_and_marks_it_failed():
    prof = CompileProfiler()
    with pytest.raises(ValueError):
        with prof:
            with prof.stage("passes"):
                with prof.stage("AllocateMemoryAddr"):
                    raise ValueError("tile too large")
    assert CompileProfiler.current() is None
    passes = prof.to_dict()["stages"][0]
    assert passes["failed"] is True
    assert passes["children"][0]["failed"] is True
    assert "open" not in passes
    # Both stages the exception left are marked with its type and message.
    summary = prof.summary()
    assert summary.count("[failed: ValueError: tile too large]") == 2, summary
    assert "[failed]" not in summary
    assert passes["error"] == "ValueError: tile too large"
    assert passes["children"][0]["error"] == "ValueError: tile too large"


def test_stage_records_python_seconds_on_the_cpp_clock():
    before = time.perf_counter()
    now = cp._core.now_seconds()
    after = time.perf_counter()
    assert before <= now <= after


def test_stage_record_duration_open_and_closed():
    closed = StageRecord("r", start=2.0, end=3.5)
    assert closed.duration == 1.5
    assert closed.children == []
    assert StageRecord("a", 0.0).children is not StageRecord("b", 0.0).children
    running = StageRecord("running", start=time.perf_counter() - 0.25)
    assert running.duration >= 0.25
    first = running.duration
    spin(0.001)
    assert running.duration > first
    data = closed.to_dict()
    assert data["name"] == "r"
    assert data["seconds"] == 1.5
    assert data["children"] == []


def test_add_stage_record_at_root_is_exact():
    prof = CompileProfiler()
    prof.add_stage_record(StageRecord("imported", start=0.0, end=1.0))
    assert prof.total_seconds == 1.0
    data = prof.to_dict()
    assert data["stages"][0]["seconds"] == 1.0
    assert data["total_seconds"] == 1.0


def test_add_stage_record_nested_under_open_stage_with_children():
    with CompileProfiler() as prof:
        with prof.stage("codegen"):
            t = time.perf_counter()
            record = StageRecord("kernel_codegen:k", t, t + 0.5)
            record.children.append(StageRecord("ptoas", t + 0.1, t + 0.2, failed=True))
            prof.add_stage_record(record)
    codegen = prof.to_dict()["stages"][0]
    kernel = codegen["children"][0]
    assert kernel["name"] == "kernel_codegen:k"
    assert kernel["seconds"] == pytest.approx(0.5, abs=1e-9)
    assert kernel["children"][0]["name"] == "ptoas"
    assert kernel["children"][0]["failed"] is True


def test_add_stage_record_rejects_other_objects():
    prof = CompileProfiler()
    with pytest.raises(TypeError, match="StageRecord"):
        prof.add_stage_record(StageRecord("bad", start="soon"))
    with pytest.raises(AttributeError):
        prof.add_stage_record(object())


def test_parallel_records_from_threads_are_flagged():
    prof = CompileProfiler()
    # Both records start before either ends (the barrier), so they overlap however the threads
    # are scheduled.
    both_started = threading.Barrier(2)

    def kernel(name):
        start = time.perf_counter()
        both_started.wait()
        spin(0.001)
        prof.add_stage_record(StageRecord(name, start, time.perf_counter()))

    with prof:
        with prof.stage("codegen"):
            workers = [
                threading.Thread(target=kernel, args=(f"kernel_codegen:f{i}",)) for i in range(2)
            ]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
    children = prof.to_dict()["stages"][0]["children"]
    assert sorted(names(children)) == ["kernel_codegen:f0", "kernel_codegen:f1"]
    assert all(child["parallel"] for child in children)
    assert "[parallel]" in prof.summary()


def test_summary_layout_and_units():
    prof = CompileProfiler()
    prof.add_stage_record(StageRecord("parse", 9.0, 10.0))
    passes = StageRecord("passes", 10.0, 11.0)
    passes.children.append(StageRecord("UnrollLoops", 10.0, 10.000812))
    passes.children.append(StageRecord("ConvertToSSA", 10.1, 10.1246))
    prof.add_stage_record(passes)
    lines = prof.summary().splitlines()
    assert lines[:4] == ["PyPTO Compile Profile", "======================", "Total: 2.00s", ""]
    assert lines[4].startswith("  parse ") and lines[4].endswith("1.00s  (50.0%)")
    assert lines[6].startswith("    UnrollLoops ") and lines[6].endswith("812\u00b5s  ( 0.0%)")
    assert lines[7].startswith("    ConvertToSSA ") and lines[7].endswith("24.6ms  ( 1.2%)")
    # What the two passes leave of `passes` is shown, aligned like the stages.
    assert lines[8].startswith("    (untracked) ") and lines[8].endswith("975ms  (48.7%)")
    assert len({line.rindex("  (") for line in lines[4:]}) == 1  # aligned


def test_to_json_returns_text_and_writes_file_creating_folders(tmp_path):
    prof = CompileProfiler()
    prof.add_stage_record(StageRecord("parse", 0.0, 0.5))
    path = tmp_path / "a" / "b" / "profile.json"
    text = prof.to_json(str(path))
    assert json.loads(path.read_text()) == json.loads(text) == prof.to_dict()
    assert "\n  " in text
    assert "\n" not in prof.to_json(indent=-1)
    prof.to_json(tmp_path / "pathlike.json")
    assert (tmp_path / "pathlike.json").is_file()


def test_write_report_writes_both_files(tmp_path):
    with CompileProfiler() as prof:
        with prof.stage("parse"):
            pass
    report = tmp_path / "out" / "report"
    prof.write_report(report)
    files = sorted(p.name for p in report.iterdir())
    assert files == ["pipeline_profile.json", "pipeline_profile.txt"]
    text = (report / "pipeline_profile.txt").read_text(encoding="utf-8")
    assert text.startswith("PyPTO Compile Profile\n======================\nTotal: ")
    assert "  parse " in text
    data = json.loads((report / "pipeline_profile.json").read_text())
    assert names(data["stages"]) == ["parse"]
    # Entered: the total is the session's wall time, which contains the stage.
    assert data["total_seconds"] >= data["stages"][0]["seconds"]


def test_unwritable_location_raises_a_clear_error_naming_the_path():
    prof = CompileProfiler()
    prof.add_stage_record(StageRecord("parse", 0.0, 1.0))
    with pytest.raises(OSError) as excinfo:
        prof.write_report("/etc/passwd/report")
    error = excinfo.value
    assert isinstance(error, cp.ProfilerError)
    assert "/etc/passwd/report" in str(error)
    assert "Not a directory" in str(error)
    assert error.path == "/etc/passwd/report"
    assert error.errno == 20
    with pytest.raises(cp.ProfilerError, match="/etc/passwd/x/profile.json"):
        prof.to_json("/etc/passwd/x/profile.json")


ENV_PROFILER_SCRIPT = """
import os, threading
import pypto.compile_profiling as cp
from pypto.compile_profiling import CompileProfiler, get_active_profiler
assert get_active_profiler() is None
os.environ["PYPTO_COMPILE_PROFILING"] = " True "
first = get_active_profiler()
assert isinstance(first, CompileProfiler)
assert first.is_process_wide
assert get_active_profiler() is first
assert CompileProfiler.current() is first
first_id = id(first)
del first
assert id(get_active_profiler()) == first_id  # the same object, not a new wrapper
seen = []
worker = threading.Thread(
    target=lambda: seen.append((get_active_profiler(), CompileProfiler.current())))
worker.start()
worker.join()
assert seen[0][0] is get_active_profiler()
assert seen[0][1] is seen[0][0]
with cp.stage("env_stage_marker"):
    pass
assert "env_stage_marker" in get_active_profiler().to_json()
os.environ["PYPTO_COMPILE_PROFILING"] = "maybe"
assert get_active_profiler() is None
assert CompileProfiler.current() is None
os.environ["PYPTO_COMPILE_PROFILING"] = "1"  # the exit report still prints the stage
"""


def test_env_var_gives_one_process_wide_profiler(tmp_path):
    # The process-wide profiler lives as long as its process: in one of its own, so that the
    # test run is left without one (its exit report would end the run).
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYPTO_COMPILE_PROFILING_DIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", ENV_PROFILER_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "env_stage_marker" in proc.stderr  # the exit report of that process


@pytest.mark.parametrize("value", ["", "0", "no", "false", "on", "2", "yes!"])
def test_env_var_other_values_mean_off(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    assert get_active_profiler() is None


def test_entered_profiler_wins_over_env(monkeypatch):
    monkeypatch.setenv(ENV, "1")
    with CompileProfiler() as prof:
        assert get_active_profiler() is prof


def test_use_profiler_makes_it_current_and_accepts_none():
    prof = CompileProfiler()
    with cp.use_profiler(prof):
        assert CompileProfiler.current() is prof
        with cp.use_profiler(None):
            assert CompileProfiler.current() is prof
    assert CompileProfiler.current() is None


def test_total_of_an_entered_profiler_is_its_wall_time():
    with CompileProfiler() as p:
        time.sleep(0.01)
    assert p.total_seconds > 0
    assert 0.01 <= p.total_seconds < 1.0
    assert p.to_dict()["untracked_seconds"] == p.to_dict()["total_seconds"]
    assert "(untracked)" in p.summary()


def test_total_grows_while_entered_and_stops_at_exit():
    with CompileProfiler() as p:
        spin(0.002)
        first = p.total_seconds
        spin(0.002)
        assert p.total_seconds > first
    after = p.total_seconds
    spin(0.002)
    assert p.total_seconds == after


def test_total_of_a_never_entered_profiler_is_its_root_stages():
    prof = CompileProfiler()
    with prof.stage("golden_write"):
        pass
    spin(0.005)  # outside every stage and session: not part of the profile
    with prof.stage("golden_write"):
        pass
    data = prof.to_dict()
    assert prof.total_seconds == pytest.approx(sum(s["seconds"] for s in data["stages"]))
    assert prof.total_seconds < 0.005
    assert "untracked_seconds" not in data
    assert "(untracked)" not in prof.summary()


def test_sleep_between_two_stages_is_shown_as_untracked():
    with CompileProfiler() as prof:
        with prof.stage("parse"):
            spin(0.002)
        time.sleep(0.01)
        with prof.stage("compile"):
            spin(0.002)
    data = prof.to_dict()
    assert data["untracked_seconds"] >= 0.01
    covered = sum(s["seconds"] for s in data["stages"])
    assert covered + data["untracked_seconds"] == pytest.approx(data["total_seconds"])
    lines = prof.summary().splitlines()
    assert lines[-1].startswith("  (untracked) ")


def test_stages_covering_everything_show_no_untracked_time():
    prof = CompileProfiler()
    passes = StageRecord("passes", 10.0, 12.0)
    passes.children.append(StageRecord("UnrollLoops", 10.0, 11.0))
    passes.children.append(StageRecord("ConvertToSSA", 11.0, 12.0))
    prof.add_stage_record(passes)
    data = prof.to_dict()
    assert "untracked_seconds" not in data
    assert "untracked_seconds" not in data["stages"][0]
    assert "(untracked)" not in prof.summary()


def test_untracked_time_inside_a_stage_is_shown_under_it():
    prof = CompileProfiler()
    passes = StageRecord("passes", 10.0, 12.0)
    passes.children.append(StageRecord("UnrollLoops", 10.0, 11.0))
    prof.add_stage_record(passes)
    assert prof.to_dict()["stages"][0]["untracked_seconds"] == 1.0
    lines = prof.summary().splitlines()
    assert lines[-1].startswith("    (untracked) ") and lines[-1].endswith("1.00s  (50.0%)")


def test_clear_inside_a_session_restarts_it():
    with CompileProfiler() as prof:
        spin(0.02)
        prof.clear()
        assert prof.total_seconds < 0.02
    prof.clear()
    assert prof.total_seconds == 0.0
