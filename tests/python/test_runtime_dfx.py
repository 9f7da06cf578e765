"""The device swimlane in the profile and the runtime DFX switches of RunConfig, on the example
programs: what each switch writes, and the acceptance checks of the swimlane."""

import csv
import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

from pypto.runtime import RunConfig, run

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
DFX_FILES = {"swimlane.json", "args", "pmu.csv", "pmu_unavailable.txt", "dep_graph.json",
             "dep_graph.dot"}


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # @pl.program reads the class's source through its module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def blocked_add():
    return load_example("blocked_add")


@pytest.fixture(scope="module")
def ffn():
    return load_example("ffn")


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.delenv("PYPTO_DFX_NO_PMU", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_blocked_add(example, work_dir, **config):
    result = run(example.BlockedAddProgram, example.SPECS, example.golden,
                 config=RunConfig(work_dir=str(work_dir), **config))
    assert result.passed, result.error
    return result


def run_ffn(example, work_dir, **config):
    result = run(example.FfnProgram, example.SPECS, example.golden,
                 config=RunConfig(work_dir=str(work_dir), rtol=1e-3, atol=1e-3, **config))
    assert result.passed, result.error
    return result


def find_stage(stages, path):
    for stage in stages:
        if stage["name"] == path[0]:
            return stage if len(path) == 1 else find_stage(stage["children"], path[1:])
    raise AssertionError(f"no stage {path[0]} in {[s['name'] for s in stages]}")


def device_tasks(profile):
    device = find_stage(profile["stages"], ["device_execution", "execute"])["device"]
    fields = device["task_fields"]
    return device, [dict(zip(fields, row)) for row in device["tasks"]]


def check_swimlane(tasks, deps_of):
    """No two tasks overlap on one core; every task starts after the tasks it depends on end."""
    by_core = {}
    for task in tasks:
        by_core.setdefault(task["core"], []).append(task)
    for core_tasks in by_core.values():
        core_tasks.sort(key=lambda t: t["start"])
        for before, after in zip(core_tasks, core_tasks[1:]):
            assert after["start"] >= before["end"], (before, after)
    for i, task in enumerate(tasks):
        assert task["end"] >= task["start"]
        for d in deps_of(i):
            assert task["start"] >= tasks[d]["end"], (i, d)
    return set(by_core)


def check_blocked_add_run(work_dir, result):
    device, tasks = device_tasks(result.profile)
    assert device["cores"] == 2
    assert [t["kernel"] for t in tasks] == ["add_block"] * 4
    assert all(t["waited_on"] == -1 for t in tasks)  # four independent blocks
    graph = json.loads((work_dir / "dfx_outputs" / "dep_graph.json").read_text())
    cores = check_swimlane(tasks, lambda i: graph["tasks"][i]["deps"])
    assert cores <= {0, 1}
    assert device["begin"] <= min(t["start"] for t in tasks)
    assert device["end"] == pytest.approx(max(t["end"] for t in tasks))
    return cores


def test_blocked_add_swimlane_with_two_workers(work, blocked_add):
    out = work / "out"
    check_blocked_add_run(out, run_blocked_add(blocked_add, out, workers=2, compile_profiling=True,
                                               enable_dep_gen=True))
    # Which core takes a task is up to the scheduler: a 128x128 add takes about 50 µs, less than
    # a sleeping worker needs to wake on a loaded machine, so the first worker up often runs all
    # four. With their arguments dumped the tasks take milliseconds and the second worker joins;
    # both cores are required from one run in ten.
    cores_seen = []
    for attempt in range(10):
        cores_seen.append(check_blocked_add_run(out, run_blocked_add(
            blocked_add, out, workers=2, compile_profiling=True, enable_dep_gen=True,
            enable_dump_args=True)))
        if cores_seen[-1] == {0, 1}:
            break
    assert cores_seen[-1] == {0, 1}, f"all tasks on one core in {len(cores_seen)} runs"


def test_swimlane_is_inside_the_execute_stage_and_follows_dependencies(work, ffn):
    result = run_ffn(ffn, work / "out", workers=2, compile_profiling=True)
    execute = find_stage(result.profile["stages"], ["device_execution", "execute"])
    device, tasks = device_tasks(result.profile)
    assert [t["kernel"] for t in tasks] == ["mm", "gelu", "mm"]
    assert [t["waited_on"] for t in tasks] == [-1, 0, 1]
    check_swimlane(tasks, lambda i: [tasks[i]["waited_on"]] if tasks[i]["waited_on"] >= 0 else [])
    # Same clock as the stages: the device ran within the execute stage.
    assert execute["start"] <= device["begin"] <= device["end"] <= execute["start"] + execute["seconds"]


@pytest.mark.parametrize("isolate", [True, False])
def test_execute_stage_shows_where_its_time_goes(work, blocked_add, isolate):
    result = run_blocked_add(blocked_add, work / "out", workers=2, compile_profiling=True,
                             isolate=isolate)
    execute = find_stage(result.profile["stages"], ["device_execution", "execute"])
    phases = execute["children"]
    # A run in process keeps its simulated cores for the next one; an isolated run goes to the
    # kept device server (started by the first isolated run of the process), its tensors copied
    # into the server's memory and back.
    names = [p["name"] for p in phases]
    if isolate:
        expected = ["load_library"] + (["device_server_start"] if "device_server_start" in names
                                       else []) + \
            ["copy_in", "load_program", "start_cores", "run", "copy_back"]
    else:
        expected = ["load_library", "map_outputs", "start_cores", "run"]
    assert names == expected
    # In order, one after the other, all inside the execute stage.
    end_of_execute = execute["start"] + execute["seconds"]
    previous_end = execute["start"]
    for phase in phases:
        assert previous_end <= phase["start"] + 1e-6, phases
        previous_end = phase["start"] + phase["seconds"]
    assert previous_end <= end_of_execute + 1e-6
    # The launches, and so every task, are inside "run".
    run_phase = next(p for p in phases if p["name"] == "run")
    device = execute["device"]
    assert run_phase["start"] <= device["begin"] <= device["end"] <= \
        run_phase["start"] + run_phase["seconds"] + 1e-6
    summary = (work / "out" / "report" / "pipeline_profile.txt").read_text()
    assert "      start_cores " in summary and "      run " in summary


def test_summary_has_one_utilisation_line_per_core(work, blocked_add):
    run_blocked_add(blocked_add, work / "out", workers=2, compile_profiling=True)
    summary = (work / "out" / "report" / "pipeline_profile.txt").read_text().splitlines()
    at = next(i for i, line in enumerate(summary) if line.strip().startswith("execute"))
    # After execute's children (its phases), one per core.
    core_lines = [line for line in summary[at + 1:] if line.startswith(" " * 6 + "core ")]
    assert len(core_lines) == 2, summary
    assert summary.index(core_lines[0]) > summary.index(next(
        line for line in summary[at + 1:] if line.strip().startswith("run "))), summary
    for core, line in enumerate(core_lines):
        assert line.startswith(" " * 6 + f"core {core} "), summary
        assert "busy" in line and line.endswith("%)"), line
    tasks = sum(int(line.split()[2]) for line in core_lines)
    assert tasks == 4
    saved = json.loads((work / "out" / "report" / "pipeline_profile.json").read_text())
    assert len(device_tasks(saved)[1]) == 4


def test_no_profiling_no_switch_no_device_data(work, blocked_add):
    result = run_blocked_add(blocked_add, work / "out", workers=2)
    assert result.profile is None
    assert not (work / "out" / "dfx_outputs").exists()


def dfx_dir(work):
    return work / "out" / "dfx_outputs"


def test_l2_swimlane_alone_writes_a_perfetto_trace(work, blocked_add):
    result = run_blocked_add(blocked_add, work / "out", workers=2, enable_l2_swimlane=True)
    assert not result.profile  # independent of compile profiling
    assert {p.name for p in dfx_dir(work).iterdir()} == {"swimlane.json"}
    trace = json.loads((dfx_dir(work) / "swimlane.json").read_text())
    events = trace["traceEvents"]
    for event in events:
        assert {"name", "ph", "pid", "tid"} <= set(event), event
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "core 0", 1: "core 1"}
    slices = [e for e in events if e["ph"] == "X"]
    assert [e["name"] for e in slices] == ["add_block"] * 4
    assert sorted(e["args"]["task"] for e in slices) == [0, 1, 2, 3]
    for e in slices:
        assert e["tid"] in (0, 1) and e["ts"] >= 0 and e["dur"] >= 0
    check_swimlane([{"core": e["tid"], "start": e["ts"], "end": e["ts"] + e["dur"]}
                    for e in slices], lambda i: [])


def test_dump_args_writes_each_tasks_tensors(work, blocked_add):
    run_blocked_add(blocked_add, work / "out", workers=2, enable_dump_args=True)
    assert {p.name for p in dfx_dir(work).iterdir()} == {"args"}
    a = np.load(work / "out" / "data" / "in" / "a.npy")
    b = np.load(work / "out" / "data" / "in" / "b.npy")
    folders = sorted(p.name for p in (dfx_dir(work) / "args").iterdir())
    assert folders == [f"task_000{i}_add_block" for i in range(4)]
    for i, name in enumerate(folders):
        task = dfx_dir(work) / "args" / name
        rows = slice(128 * i, 128 * (i + 1))
        np.testing.assert_array_equal(np.load(task / "arg0_in.npy"), a[rows])
        np.testing.assert_array_equal(np.load(task / "arg1_in.npy"), b[rows])
        np.testing.assert_array_equal(np.load(task / "arg2_out.npy"), a[rows] + b[rows])
        manifest = json.loads((task / "args.json").read_text())
        assert manifest["task"] == i and manifest["kernel"] == "add_block"
        assert [(x["kind"], x["shape"], x["dtype"]) for x in manifest["args"]] == [
            ("in", [128, 128], "FP32"), ("in", [128, 128], "FP32"), ("out", [128, 128], "FP32")]


def read_pmu(work):
    with open(dfx_dir(work) / "pmu.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_pmu_where_counters_are_unavailable_says_why(work, blocked_add, monkeypatch):
    monkeypatch.setenv("PYPTO_DFX_NO_PMU", "1")
    run_blocked_add(blocked_add, work / "out", workers=2, enable_pmu=True)
    rows = read_pmu(work)
    assert [r["task"] for r in rows] == ["0", "1", "2", "3"]
    assert all(r["kernel"] == "add_block" and r["cycles"] == "" and r["instructions"] == ""
               for r in rows)
    assert all(float(r["end_us"]) >= float(r["start_us"]) >= 0 for r in rows)
    note = (dfx_dir(work) / "pmu_unavailable.txt").read_text()
    assert note.startswith("No hardware counters in pmu.csv")
    assert "switched off by PYPTO_DFX_NO_PMU=1" in note


def test_pmu_counts_or_explains_on_this_machine(work, blocked_add):
    run_blocked_add(blocked_add, work / "out", workers=2, enable_pmu=True)
    rows = read_pmu(work)
    assert len(rows) == 4
    note = dfx_dir(work) / "pmu_unavailable.txt"
    if note.exists():
        assert "perf_event_open(" in note.read_text()
        assert all(r["cycles"] == "" for r in rows)
    else:
        # A 128x128 add is thousands of instructions.
        assert all(int(r["instructions"]) > 1000 and int(r["cycles"]) > 0 for r in rows)


def test_dep_gen_writes_the_dependency_graph(work, ffn):
    run_ffn(ffn, work / "out", enable_dep_gen=True)
    assert {p.name for p in dfx_dir(work).iterdir()} == {"dep_graph.json", "dep_graph.dot"}
    graph = json.loads((dfx_dir(work) / "dep_graph.json").read_text())
    assert [t["kernel"] for t in graph["tasks"]] == ["mm", "gelu", "mm"]
    assert graph["edges"] == [{"from": 0, "to": 1, "waited_on": True},
                              {"from": 1, "to": 2, "waited_on": True}]
    dot = (dfx_dir(work) / "dep_graph.dot").read_text()
    assert dot.startswith("digraph tasks {")
    assert "t0 -> t1 [style=bold];" in dot and "t1 -> t2 [style=bold];" in dot
    assert 't1 [label="1: gelu\\ncore ' in dot


def test_all_switches_together_in_process(work, ffn):
    run_ffn(ffn, work / "out", isolate=False, enable_l2_swimlane=True, enable_dump_args=True,
            enable_pmu=True, enable_dep_gen=True)
    names = {p.name for p in dfx_dir(work).iterdir()}
    assert {"swimlane.json", "args", "pmu.csv", "dep_graph.json", "dep_graph.dot"} <= names
    assert names <= DFX_FILES


def test_unwritable_dfx_folder_fails_the_run_with_a_clear_error(work, blocked_add):
    (work / "out").mkdir()
    (work / "out" / "dfx_outputs").write_text("a file in the way")
    result = run(blocked_add.BlockedAddProgram, blocked_add.SPECS, blocked_add.golden,
                 config=RunConfig(work_dir=str(work / "out"), enable_l2_swimlane=True))
    assert not result.passed
    assert "runtime DFX" in result.error and "dfx_outputs" in result.error, result.error
