"""The run options are declared once, in the driver's option table
(include/pypto/driver/run_config.def): RunConfig's fields (Python and C++), the flags of
`pypto run`/`compile`/`sweep`, the sweep's keyword arguments and docs/run-options.md all follow
it, the generated files are current, and the environment gives defaults only."""

import dataclasses
import importlib.util
import inspect
import os
import pathlib
import re
import subprocess
import sys
import warnings

import cli_tool
import pytest
from cli_tool import cli

from pypto import _core
from pypto.runtime import RunConfig
from pypto.runtime._options import OPTIONS
from pypto.runtime._pypto_fields import _HOST_SIDE_FIELDS
from pypto.sweep import RUN_OPTIONS, jobs, sweep

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TABLE = _core.driver.run_options()


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_options", ROOT / "scripts/gen_options.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_match_the_table():
    # A row added to run_config.def makes this fail until scripts/gen_options.py is re-run.
    variables = _core.driver.environment_variables()
    for path, fresh in load_generator().render(TABLE, variables).items():
        assert path.read_text() == fresh, f"run: python3 scripts/gen_options.py ({path.name})"


def test_run_config_fields_are_the_table_then_pypto_fields():
    fields = dataclasses.fields(RunConfig)
    names = [f.name for f in fields]
    assert names[:len(TABLE)] == [row["name"] for row in TABLE]
    assert set(names[len(TABLE):]) == set(_HOST_SIDE_FIELDS)
    config = RunConfig()
    for row in TABLE:
        assert getattr(config, row["name"]) == row["default"], row["name"]
        assert row["doc"], row["name"]


def test_the_drivers_struct_has_each_option_with_its_default():
    driver = _core.driver.RunConfig()
    for row in TABLE:
        value = getattr(driver, row["name"])
        if row["type"] == "strategy":
            value = value.name
        assert value == row["unset_value"], row["name"]
        assert row["doc"] in (getattr(type(driver), row["name"]).__doc__ or ""), row["name"]


def flags_in_help(command):
    text = cli(command, "--help", cwd=ROOT).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text)), text


@pytest.mark.parametrize("command", ["run", "compile", "sweep"])
def test_each_commands_flags_are_the_tables(command):
    flags, text = flags_in_help(command)
    for row in TABLE:
        names = {row["flag"]} | {a for a in row["aliases"].split(",") if a.startswith("--")}
        if row["type"] == "bool":
            names.add("--no-" + row["flag"][2:])
        if command in row["commands"]:
            assert names <= flags, (command, row["name"], names - flags)
        else:
            # The aliases are spellings of other commands' own options too (sweep's -o).
            assert row["flag"] not in flags, (command, row["name"])


def test_docs_have_a_row_per_option_with_its_flag_and_variable():
    doc, variables = (ROOT / "docs/run-options.md").read_text().split("## Environment variables")
    rows = {line.split("|")[1].strip(" `"): line for line in doc.splitlines()
            if line.startswith("| `")}
    assert [line.split("|")[1].strip(" `") for line in variables.splitlines()
            if line.startswith("| `")] == [v["name"] for v in _core.driver.environment_variables()]
    assert list(rows) == [row["name"] for row in TABLE]
    for row in TABLE:
        if row["commands"]:
            assert f"`{row['flag']}`" in rows[row["name"]]
        if row["environment"]:
            assert f"`{row['environment']}`" in rows[row["name"]]


def test_run_and_pypto_run_share_the_default_tolerance():
    _, text = flags_in_help("run")
    for name in ("rtol", "atol"):
        default = OPTIONS[name]["default"]
        assert getattr(RunConfig(), name) == default == 1e-5
        assert re.search(rf"--{name} .*default {default:g}\]", text.replace("\n", " "))


def test_the_sweeps_options_are_the_tables_sweep_options():
    assert list(RUN_OPTIONS) == [r["name"] for r in TABLE if "sweep" in r["commands"]]
    with pytest.raises(TypeError, match="unexpected keyword arguments device_count"):
        sweep(EXAMPLES / "add.py", device_count=2)
    with pytest.raises(ValueError, match=r"RunConfig.timeout=0 is out of range: give 0.001 to "
                                         r"86400 s"):
        sweep(EXAMPLES / "add.py", timeout=0)
    with pytest.warns(DeprecationWarning, match="the simulated cores are `workers`"):
        with pytest.raises(ValueError, match=r"RunConfig.workers=999 is out of range"):
            sweep(EXAMPLES / "add.py", device_cores=999)


def test_sweep_workers_are_simulated_cores_and_the_old_meaning_is_named(tmp_path):
    # workers= once meant the worker processes: without processes= the sweep says what it
    # means now (before any job starts: the bad value fails the option check after it).
    with pytest.warns(FutureWarning, match=r"sweep\(workers=999\) sets each job's simulated "
                                           r"cores .* is processes= \(default 2\)"):
        with pytest.raises(ValueError, match=r"RunConfig.workers=999 is out of range"):
            sweep(EXAMPLES / "add.py", workers=999)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"RunConfig.workers=999 is out of range"):
            sweep(EXAMPLES / "add.py", workers=999, processes=1)
    env = dict(os.environ, PYPTO_PYTHON=sys.executable)
    proc = cli("sweep", EXAMPLES / "add.py", "--workers", 1, "--backend", "serial",
               "--rounds", 1, "--warmup", 0, "--no-progress", "-o", tmp_path / "a",
               cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert ("note: --workers 1 sets each job's simulated cores (as for pypto run); the worker "
            "processes, which --workers used to set, are --processes (default 2)") in proc.stderr
    quiet = cli("sweep", EXAMPLES / "add.py", "--workers", 1, "--processes", 1, "--backend",
                "serial", "--rounds", 1, "--warmup", 0, "--no-progress", "-o", tmp_path / "b",
                cwd=tmp_path, env=env)
    assert quiet.returncode == 0 and "note:" not in quiet.stderr


def test_a_value_out_of_range_fails_the_run_naming_the_field_and_range():
    error = _core.driver.config_error(_core.driver.RunConfig())
    assert error == ""
    config = _core.driver.RunConfig()
    config.rounds = 0
    assert _core.driver.config_error(config) == ("RunConfig.rounds=0 is out of range: give 1 to "
                                                 "1000000 launches")
    config = _core.driver.RunConfig()
    config.workers = 300
    assert _core.driver.config_error(config) == (
        "RunConfig.workers=300 is out of range: give 1 to 256 cores, or leave it unset for the "
        "default")


def test_cli_range_errors_are_usage_errors(tmp_path):
    proc = cli("run", EXAMPLES / "add.py", "--workers", "0", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--workers: must be an integer from 1 to 256 cores, got '0'" in proc.stderr
    proc = cli("run", EXAMPLES / "add.py", "--platform", "tpu", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("pypto: unknown platform 'tpu'")
    assert len(proc.stderr.splitlines()) == 1
    proc = cli("compile", EXAMPLES / "add.py", "-o", "-", cwd=tmp_path)
    assert proc.returncode == 2 and "'-' (standard output)" in proc.stderr
    assert not (tmp_path / "-").exists()


def test_bool_options_have_a_negative_flag(tmp_path):
    # isolate is on by default: --no-isolate is how the command line turns it off.
    proc = cli("run", EXAMPLES / "add.py", "--no-isolate", "--workers", 2, "-o", tmp_path / "o",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # pypto compile dumps the passes unless told not to, and its help says so.
    _, text = flags_in_help("compile")
    assert re.search(r"--dump-passes,.*default true", text.replace("\n", " "))


def test_environment_gives_defaults_only(tmp_path):
    env = dict(os.environ, PYPTO_KEEP_OUTPUTS="lots")
    proc = cli("run", EXAMPLES / "add.py", "--workers", 2, cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert "PYPTO_KEEP_OUTPUTS='lots' is not valid for keep_outputs: give an integer, 0 to " \
           "1000000 folders" in proc.stdout
    # An option given is not read from the environment at all.
    proc = cli("run", EXAMPLES / "add.py", "--workers", 2, "--keep-outputs", 0, cwd=tmp_path,
               env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sweep_is_a_command_of_the_one_parser(tmp_path):
    usage = cli("--help", cwd=tmp_path).stdout
    assert re.search(r"^\s+sweep\s", usage, re.M), usage
    sweep_help = cli("sweep", "--help", cwd=tmp_path)
    assert sweep_help.returncode == 0 and sweep_help.stdout.startswith("Run programs over a grid")
    assert "Exit codes: 0 every job passed; 1 some job failed" in sweep_help.stdout
    # Usage errors: one line, exit 2, before any job (no output folder is made).
    env = dict(os.environ, PYPTO_PYTHON=sys.executable)
    for args, message in [
        (["missing.py", "--param", "N=1"], "File does not exist: missing.py"),
        ([EXAMPLES / "add.py", "--param", "BLOCK=1,2"],
         "--param BLOCK: " + str(EXAMPLES / "add.py") + " assigns no module constant 'BLOCK'"),
        ([EXAMPLES / "blocked_add.py", "--param", "BLOCK=1", "--param", "BLOCK=2"],
         "--param BLOCK is given twice"),
        ([EXAMPLES / "blocked_add.py", "--rounds", "0"], "--rounds: must be an integer from 1"),
    ]:
        proc = cli("sweep", *args, "-o", tmp_path / "out", cwd=tmp_path, env=env)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert not (tmp_path / "out").exists()


def test_profile_help_states_its_own_exit_codes(tmp_path):
    text = cli("profile", "--help", cwd=tmp_path).stdout
    assert "1 a profile file could not be read or written, or a stage regressed" in text
    assert "compile, build, run" not in text


def test_cache_dir_is_an_option_and_its_variable_a_default(tmp_path):
    env = dict(os.environ, PYPTO_CACHE_DIR=str(tmp_path / "from-env"))
    given = tmp_path / "given"
    proc = cli("run", EXAMPLES / "add.py", "--workers", 2, "--cache-dir", given, "-o",
               tmp_path / "o1", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(given.glob("*.so")) and not (tmp_path / "from-env").exists()
    proc = cli("run", EXAMPLES / "add.py", "--workers", 2, "-o", tmp_path / "o2", cwd=tmp_path,
               env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list((tmp_path / "from-env").glob("*.so"))


def test_a_sweep_passes_its_cache_as_an_option_not_through_the_environment(tmp_path,
                                                                          monkeypatch):
    monkeypatch.delenv("PYPTO_CACHE_DIR", raising=False)
    seen = []
    result = sweep(EXAMPLES / "blocked_add.py", {"BLOCK": [64]}, backend="serial",
                   progress=False, out_dir=str(tmp_path / "out"), cache_dir=tmp_path / "cache",
                   on_row=lambda row: seen.append(os.environ.get("PYPTO_CACHE_DIR")))
    assert [r["passed"] for r in result.rows] == [True], result.rows[0]["error"]
    assert seen == [None] and "PYPTO_CACHE_DIR" not in os.environ
    assert "environ" not in inspect.getsource(jobs)
    assert list((tmp_path / "cache").glob("*.so"))


def test_python_m_pypto_sweep_is_pypto_sweep(tmp_path):
    env = dict(os.environ, PYPTO_CLI=cli_tool.PYPTO)
    via_module = subprocess.run([sys.executable, "-m", "pypto.sweep", "--help"], cwd=tmp_path,
                                env=env, capture_output=True, text=True, timeout=300)
    direct = cli("sweep", "--help", cwd=tmp_path)
    assert via_module.returncode == direct.returncode == 0
    assert via_module.stdout == direct.stdout


def test_the_environment_has_one_reader():
    # Every read goes through support::read_environment (environment.def lists the variables).
    allowed = {ROOT / "src/support/environment.cpp"}
    readers = []
    for folder, suffixes in (("src", (".cpp", ".h")), ("tools", (".cpp", ".h")),
                             ("include", (".h",)), ("python/pypto", (".py",)),
                             ("python/bindings", (".cpp", ".h"))):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in suffixes or path in allowed:
                continue
            text = path.read_text(errors="replace")
            if re.search(r"\bgetenv\s*\(|os\.environ|os\.getenv", text):
                readers.append(str(path.relative_to(ROOT)))
    assert readers == []
    listed = {v["name"] for v in _core.driver.environment_variables()}
    assert {row["environment"] for row in TABLE if row["environment"]} <= listed
    with pytest.raises(Exception, match="not listed in pypto/support/environment.def"):
        _core.driver.read_environment("PYPTO_NOT_A_VARIABLE")
