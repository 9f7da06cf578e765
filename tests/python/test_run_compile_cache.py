"""run()'s in-memory cache of compiled programs: a run of a program that an earlier run() of the
process compiled with the same options skips the passes, code generation, the library build and
its loading; anything that changes what the compile or the build would give misses."""

import pathlib

import numpy as np

import pypto.language as pl
from pypto.runtime import RunConfig, run

from test_runtime import AddProgram, config, work  # noqa: F401 - work is a fixture
from test_runtime import golden as add_golden
from test_runtime import specs as add_specs


def _compile_children(result):
    (compile_stage,) = [s for s in result.profile["stages"] if s["name"] == "compile"]
    return [c["name"] for c in compile_stage["children"]]


def test_a_second_run_reuses_the_first_ones_compile(work):
    first = run(AddProgram, add_specs(), add_golden, config(work, compile_profiling=True))
    assert first.passed, first.error
    assert not first.compile_cache_hit
    assert "passes" in _compile_children(first)
    second = run(AddProgram, add_specs(), add_golden, config(work, compile_profiling=True))
    assert second.passed, second.error
    assert second.compile_cache_hit and second.cache_hit
    assert second.work_dir == first.work_dir
    assert _compile_children(second) == ["cache_hit"]
    assert second.profile["metadata"]["compile_cache"] == "hit"
    device = [s for s in second.profile["stages"] if s["name"] == "device_execution"][0]
    assert "binary_compilation" not in [c["name"] for c in device["children"]]
    np.testing.assert_allclose(second.outputs["c"],
                               second.inputs["a"] + second.inputs["b"], rtol=1e-6)


def test_the_same_program_parsed_again_hits(work):
    assert run(AddProgram, add_specs(), add_golden, config(work)).passed
    again = pl.parse(AddProgram.as_python())  # structurally equal, other source text
    result = run(again, add_specs(), add_golden, config(work))
    assert result.passed and not result.compile_cache_hit
    assert run(again, add_specs(), add_golden, config(work)).compile_cache_hit


def test_other_options_a_lost_folder_or_a_changed_library_miss(work, monkeypatch):
    assert run(AddProgram, add_specs(), add_golden, config(work)).passed
    assert run(AddProgram, add_specs(), add_golden, config(work)).compile_cache_hit
    # Another output folder, another platform: compiled again.
    other = run(AddProgram, add_specs(), add_golden, RunConfig(work_dir=str(work / "other")))
    assert other.passed and not other.compile_cache_hit
    a5 = run(AddProgram, add_specs(), add_golden, config(work, platform="a5sim"))
    assert a5.passed and not a5.compile_cache_hit
    # The output folder lost its sources: compiled again, into it.
    (work / "out" / "program.cpp").unlink()
    result = run(AddProgram, add_specs(), add_golden, config(work))
    assert result.passed and not result.compile_cache_hit
    assert (work / "out" / "program.cpp").is_file()
    # The library file changed under the cache: built again (with the binary cache's note).
    (library,) = (work / "cache").glob("*.so")
    library.write_bytes(library.read_bytes()[:1000])
    result = run(AddProgram, add_specs(), add_golden, config(work))
    assert result.passed and not result.compile_cache_hit and not result.cache_hit
    # Another binary cache: built there.
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(work / "cache2"))
    result = run(AddProgram, add_specs(), add_golden, config(work))
    assert result.passed and not result.compile_cache_hit
    assert list((work / "cache2").glob("*.so"))


def test_a_default_output_folder_is_new_and_complete_for_every_run(work, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(work / "builds"))
    first = run(AddProgram, add_specs(), add_golden, RunConfig())
    second = run(AddProgram, add_specs(), add_golden, RunConfig(compile_profiling=True))
    assert first.passed and second.passed and second.compile_cache_hit
    assert first.work_dir != second.work_dir
    first_files = sorted(p.relative_to(first.work_dir).as_posix()
                         for p in pathlib.Path(first.work_dir).rglob("*.cpp"))
    second_files = sorted(p.relative_to(second.work_dir).as_posix()
                          for p in pathlib.Path(second.work_dir).rglob("*.cpp"))
    assert first_files == second_files and "program.cpp" in second_files
    (compile_stage,) = [s for s in second.profile["stages"] if s["name"] == "compile"]
    (hit,) = compile_stage["children"]
    assert hit["name"] == "cache_hit"
    assert [c["name"] for c in hit["children"]] == ["write_sources"]
    # Pass dumps ask to see the passes: such a run compiles.
    dumped = run(AddProgram, add_specs(), add_golden, RunConfig(dump_passes=True))
    assert dumped.passed and not dumped.compile_cache_hit
