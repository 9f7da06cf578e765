"""Results and profiles in a real notebook: a notebook built with nbformat runs on an ipykernel
kernel (started by nbclient, as Jupyter does) and each result cell must show HTML with its
stages and a plain-text form short enough to read (at most 20 lines, no profile dump).

The kernel is this interpreter's, from a kernel spec written into a temporary folder, and every
Jupyter and IPython folder points into that folder too: the test depends on no user-level
Jupyter configuration or installed kernel."""

import json
import os
import pathlib
import sys
import textwrap

import pytest

import pypto

try:  # requirements-dev.txt
    import nbclient
    import nbformat
except ImportError as e:  # pragma: no cover - a missing test dependency
    pytest.fail(f"the notebook test needs nbclient, nbformat and ipykernel "
                f"(pip install -r requirements-dev.txt): {e}", pytrace=False)

KERNEL = "pypto-notebook-test"
MAX_TEXT_LINES = 20

SETUP = textwrap.dedent('''
    import numpy as np
    import pypto.language as pl
    from pypto.compile_profiling import CompileProfiler, ProfileView, render_profile
    from pypto.runtime import RunConfig, TensorSpec, benchmark, run

    N = 32

    @pl.program
    class NotebookAdd:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            c = pl.store(pl.add(pl.load(a, [0, 0], [N, N]), 1.0), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
            c = self.k(a, c)
            return c

    SPECS = [TensorSpec("a", [N, N], pl.FP32, init_value=np.random.standard_normal),
             TensorSpec("c", [N, N], pl.FP32, is_output=True)]

    def golden(tensors, params=None):
        tensors["c"][:] = tensors["a"] + 1
''')

JIT = textwrap.dedent('''
    @pl.jit
    def add_one(a: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.store(pl.add(pl.load(a, [0, 0], [a.shape[0], a.shape[1]]), 1.0), [0, 0], c)
        return c

    x = np.full((N, N), 2.0, np.float32)
    y = np.zeros_like(x)
    add_one(x, y, config=RunConfig(compile_profiling=True))
    assert np.allclose(y, x + 1)
    add_one.last_call
''')

# (cell source, stage names its HTML must show); None: a cell whose output is not checked.
CELLS = [
    (SETUP, None),
    ("result = run(NotebookAdd, SPECS, golden, RunConfig(compile_profiling=True))\n"
     "assert result.passed, result.error\nresult",
     ["compile", "passes", "golden_write", "device_execution"]),
    (JIT, ["specialize", "parse", "compile", "device_execution"]),
    ("bench = benchmark(NotebookAdd, SPECS, golden, rounds=5)\nassert bench.passed\nbench",
     ["compile", "device_execution"]),
    ("ProfileView(result.profile)", ["compile", "golden_write", "device_execution"]),
    ("with CompileProfiler() as prof:\n    assert run(NotebookAdd, SPECS, golden).passed\nprof",
     ["compile", "device_execution"]),
    ("render_profile(result.profile, format='html', path='profile.html')\n"
     "print(result)\nprint(bench)\nprint(render_profile(result.profile))", None),
]


@pytest.fixture
def jupyter_home(tmp_path, monkeypatch):
    """Jupyter's and IPython's folders inside tmp_path, with a kernel spec for this interpreter;
    the kernel imports this pypto and keeps its caches and outputs in tmp_path."""
    for variable, folder in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                             ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")]:
        (tmp_path / folder).mkdir()
        monkeypatch.setenv(variable, str(tmp_path / folder))
    spec = tmp_path / "data" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "PyPTO test (this interpreter)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "data"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(pathlib.Path(pypto.__file__).resolve().parents[1])] +
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    return tmp_path


def execute(cells, cwd):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": KERNEL, "display_name": KERNEL,
                                       "language": "python"}
    nbformat.validate(notebook)
    client = nbclient.NotebookClient(notebook, kernel_name=KERNEL, timeout=300,
                                     startup_timeout=120,
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return notebook


def test_results_and_profiles_display_in_a_notebook(jupyter_home):
    notebook = execute([source for source, _ in CELLS], jupyter_home)
    for cell, (source, stages) in zip(notebook.cells, CELLS):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, "\n".join("\n".join(o.traceback) for o in errors)
        if stages is None:
            continue
        results = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert len(results) == 1, (source, cell.outputs)
        data = results[0].data
        assert "text/html" in data, (source, list(data))
        page = data["text/html"]
        for name in stages:
            assert f">{name}<" in page or f">{name} " in page, (source, name)
        assert "<script" not in page.lower()
        text = data["text/plain"]
        assert len(text.splitlines()) <= MAX_TEXT_LINES, (source, text)
        assert "'children'" not in text and "'stages'" not in text, (source, text)

    # print() of the results is as short as their repr; the profile's text is the summary.
    printed = "".join(o.text for o in notebook.cells[-1].outputs
                      if o.output_type == "stream" and o.name == "stdout")
    run_line, bench_line, *summary = printed.splitlines()
    assert run_line.startswith("RunResult(passed=True") and len(run_line) < 600
    assert bench_line.startswith("BenchmarkResult(passed=True, rounds=5") and len(bench_line) < 400
    assert summary[0] == "PyPTO Compile Profile" and any("device_execution" in s for s in summary)
    assert (jupyter_home / "profile.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
