"""Fixtures shared by the end-to-end test files (a file may still define its own)."""

import os

import pytest

_PROFILING_ENV = "PYPTO_COMPILE_PROFILING"


@pytest.fixture(autouse=True)
def no_profiler_left_bound():
    """Every test leaves no compile profiler bound to the thread (the process-wide one of
    PYPTO_COMPILE_PROFILING included) and does not leave that variable set: the tests after it
    would record into the profiler, and the run would end by printing its report. A test of the
    environment's profiler runs a process of its own.

    After the test, CompileProfiler.current() is read before get_active_profiler(): it only reads
    the thread's binding, so a process-wide profiler the test bound is seen even when the test's
    monkeypatch has already removed the variable (get_active_profiler() would then unbind it and
    answer None)."""
    from pypto._core import profiling as core_profiling
    from pypto.compile_profiling import CompileProfiler, get_active_profiler

    env_before = os.environ.get(_PROFILING_ENV)
    # A run profiled as a whole (PYPTO_COMPILE_PROFILING=1 pytest ...) has its profiler bound
    # before every test: only a profiler that was not there before is the test's doing.
    bound_before = CompileProfiler.current()
    active_before = get_active_profiler() if env_before else None
    # The process-wide profiler, once it has been handed to Python (the module keeps it): made
    # during the test, it prints the whole run's profile when pytest exits.
    process_before = getattr(core_profiling, "_process_profiler", None)
    yield
    problems = []
    if process_before is None and getattr(core_profiling, "_process_profiler", None) is not None:
        problems.append(f"created the process-wide {_PROFILING_ENV} profiler (it lives until "
                        f"the process exits and then prints its report)")
    if os.environ.get(_PROFILING_ENV) != env_before:
        problems.append(f"left {_PROFILING_ENV}={os.environ.get(_PROFILING_ENV)!r} in the "
                        f"environment (use monkeypatch.setenv, or a child process)")
        if env_before is None:
            del os.environ[_PROFILING_ENV]
        else:
            os.environ[_PROFILING_ENV] = env_before
    bound_after = CompileProfiler.current()
    if bound_after is not None and bound_after is not bound_before:
        kind = "the process-wide" if bound_after.is_process_wide else "a"
        problems.append(f"left {kind} compile profiler bound to the thread ({bound_after!r})")
        if not bound_after.is_process_wide:
            bound_after.__exit__(None, None, None)  # entered and never left: unbound now
    if active_before is None and not os.environ.get(_PROFILING_ENV):
        # With the variable off, this also unbinds a process-wide profiler the test bound, so
        # that one offending test does not fail all the tests after it.
        active_after = get_active_profiler()
        if active_after is not None and active_after is not bound_after:
            problems.append(f"left a compile profiler active ({active_after!r})")
    assert not problems, "the test " + "; ".join(problems)


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A private folder for a test's runs: its own binary cache, profiling as the test sets it."""
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
