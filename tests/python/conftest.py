"""Fixtures shared by the end-to-end test files (a file may still define its own)."""

import os

import pytest


@pytest.fixture(autouse=True)
def no_profiler_left_bound():
    """Every test leaves no compile profiler bound to the thread (the process-wide one of
    PYPTO_COMPILE_PROFILING included): the tests after it would record into it, and the run
    would end by printing its report. A test of the environment's profiler runs a process of its
    own."""
    profiled_run = bool(os.environ.get("PYPTO_COMPILE_PROFILING"))  # profiling the run itself
    yield
    if profiled_run or os.environ.get("PYPTO_COMPILE_PROFILING"):
        return
    from pypto.compile_profiling import get_active_profiler
    assert get_active_profiler() is None, "the test left a compile profiler bound"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A private folder for a test's runs: its own binary cache, profiling as the test sets it."""
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
