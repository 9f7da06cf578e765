"""Fixtures shared by the end-to-end test files (a file may still define its own)."""

import pytest


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A private folder for a test's runs: its own binary cache, profiling as the test sets it."""
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path
