"""PyPTO's Python API surface over this runtime (docs/pypto-compat.md): RunConfig's PyPTO fields
and what each does here, pypto.backend, pypto.pypto_core, ir.pass_manager, compile_program, the
golden.py writer, the positional run of a golden.py, and scripts/run_pypto_st.py.

Tests that need torch (golden.py files hold torch code) ask for it themselves and are skipped
where it is not installed; the rest run everywhere."""

import dataclasses
import importlib.util
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import backend, pypto_core
from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel, PassManager
from pypto.pypto_core.passes import MemoryPlanner
from pypto.runtime import RunConfig, TensorSpec, run
from pypto.runtime import runner
from pypto.runtime.device_runner import DeviceRunError, compile_and_assemble

ROOT = Path(__file__).resolve().parents[2]


@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_kernel(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
                     out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        tx = pl.load(x, [0, 0], [16, 32])
        ty = pl.load(y, [0, 0], [16, 32])
        out = pl.store(pl.add(pl.mul(tx, 2.0), ty), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.scale_kernel(x, y, out)
        return out


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)
    return tmp_path


# ---- RunConfig -------------------------------------------------------------------------------

PYPTO_DEFAULTS = {
    "platform": "a2a3sim", "device_id": 0, "rtol": 1e-5, "atol": 1e-5,
    "backend_type": backend.BackendType.Ascend910B, "dump_passes": False, "save_kernels": False,
    "save_kernels_dir": None, "codegen_only": False, "enable_chip_swimlane": 0,
    "enable_dump_args": 0, "enable_pmu": 0, "enable_dep_gen": False, "enable_scope_stats": False,
    "compile_profiling": False, "diagnostic_phase": None, "disabled_diagnostics": None,
    "golden_data_dir": None, "aicpu_thread_num": None, "ring_task_window": None,
    "ring_heap": None, "ring_dep_pool": None, "distributed_config": None,
    "analyze_auto_scopes_for_deps": False, "memory_planner": None, "dump_ptoas_passes": False,
}


def test_runconfig_has_every_pypto_field_with_its_default():
    config = RunConfig()
    names = {f.name for f in dataclasses.fields(RunConfig)}
    assert set(PYPTO_DEFAULTS) <= names
    for name, default in PYPTO_DEFAULTS.items():
        assert getattr(config, name) == default, name
    assert config.strategy in ("Default", OptimizationStrategy.Default)


def test_runconfig_follows_the_platform_and_normalizes_the_swimlane_level():
    assert RunConfig(platform="a5sim").backend_type is backend.BackendType.Ascend950
    assert RunConfig(platform="a2a3").backend_type is backend.BackendType.Ascend910B
    assert RunConfig(enable_chip_swimlane=True).enable_chip_swimlane == 4
    assert RunConfig(enable_chip_swimlane=False).enable_chip_swimlane == 0
    # A replaced config keeps the PyPTO fields.
    replaced = dataclasses.replace(RunConfig(device_id=3, memory_planner=MemoryPlanner.PTOAS),
                                   rtol=1e-3)
    assert (replaced.device_id, replaced.memory_planner, replaced.rtol) == (3, MemoryPlanner.PTOAS,
                                                                            1e-3)


def test_ring_sizes_are_checked_as_in_pypto():
    assert RunConfig(ring_task_window=(0, 8, 16, 0)).ring_task_window == [0, 8, 16, 0]
    with pytest.raises(ValueError, match="ring_task_window must be a power of 2 >= 4"):
        RunConfig(ring_task_window=6)
    with pytest.raises(ValueError, match="ring_heap needs 4 entries"):
        RunConfig(ring_heap=[1024, 2048])
    with pytest.raises(ValueError, match="ring_dep_pool entries"):
        RunConfig(ring_dep_pool=[4, True, 0, 0])


def run_scale(work, **fields):
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=1.5),
             TensorSpec("y", [16, 32], pl.FP32, init_value=0.25),
             TensorSpec("out", [16, 32], pl.FP32, is_output=True)]

    def golden(t, params=None):
        t["out"][:] = t["x"] * 2 + t["y"]

    fields.setdefault("work_dir", str(work / "out"))
    return run(Scale, specs, golden, RunConfig(**fields))


def test_pypto_dfx_levels_and_hardware_fields_run(work):
    result = run_scale(work, enable_chip_swimlane=2, enable_dump_args=0, enable_pmu=0,
                       device_id=5, aicpu_thread_num=4, ring_heap=4096,
                       memory_planner=MemoryPlanner.DSA_RP, enable_scope_stats=True)
    assert result.passed, result.error
    assert {p.name for p in (work / "out" / "dfx_outputs").iterdir()} == {"swimlane.json"}
    np.testing.assert_array_equal(result.outputs["out"], np.full((16, 32), 3.25, np.float32))


def test_save_kernels_dir_is_the_output_folder(work):
    result = run_scale(work, work_dir=None, save_kernels=True,
                       save_kernels_dir=str(work / "kept"))
    assert result.passed and result.work_dir == str(work / "kept")
    assert (work / "kept" / "program.cpp").is_file()


def test_codegen_only_compiles_and_runs_nothing(work):
    result = run_scale(work, codegen_only=True)
    assert result.passed and result.work_dir == str(work / "out")
    assert list((work / "out" / "orchestration").glob("*.cpp"))
    assert result.outputs == {} and result.execution_time == 0.0


def test_distributed_config_is_refused_with_a_reason(work):
    # A single-chip run(): multi-rank programs are compiled with ir.compile(distributed_config=).
    result = run_scale(work, distributed_config=object())
    assert not result.passed
    assert "distributed_config is for multi-rank programs" in result.error
    assert "ir.compile(program, distributed_config=...)" in result.error


def test_a_bad_swimlane_level_is_a_failed_run(work):
    result = run_scale(work, enable_chip_swimlane=9)
    assert not result.passed and "enable_chip_swimlane=9 is not valid" in result.error


def test_swimlane_constants_and_dfx_options():
    assert runner._SWIMLANE_MAX_LEVEL == runner._SWIMLANE_FULL_LEVEL == 4
    assert "0-4" in runner._SWIMLANE_CLI_HELP
    dfx = runner._DfxOpts.from_run_config(RunConfig(enable_l2_swimlane=True))
    assert dfx.enable_chip_swimlane == 4 and dfx.any()
    assert not runner._DfxOpts().any()


# ---- backend, pypto_core, pass_manager -------------------------------------------------------

def test_backend_type_is_process_wide_and_resettable():
    backend.reset_for_testing()
    assert not backend.is_backend_configured()
    assert backend.get_backend_type() is backend.BackendType.Ascend910B
    backend.set_backend_type(backend.BackendType.Ascend950)
    assert backend.is_backend_configured()
    assert backend.get_backend_type() is backend.BackendType.Ascend950
    with pytest.raises(TypeError, match="BackendType"):
        backend.set_backend_type("a5")
    backend.reset_for_testing()
    assert backend.get_backend_type() is backend.BackendType.Ascend910B


def test_log_level_thread_override():
    assert pypto.LogLevel is pypto_core.LogLevel
    saved = pypto_core.get_log_level()
    pypto_core._set_thread_log_level(pypto.LogLevel.DEBUG)
    try:
        assert pypto_core.effective_log_level() is pypto.LogLevel.DEBUG
        assert pypto_core.get_log_level() is saved
        seen = []
        other = threading.Thread(target=lambda: seen.append(pypto_core.effective_log_level()))
        other.start()
        other.join()
        assert seen == [saved]
    finally:
        pypto_core._clear_thread_log_level()
    assert pypto_core.effective_log_level() is saved
    with pytest.raises(ValueError, match="unknown log level"):
        pypto_core.set_log_level(42)


# ---- run(program, *tensors) and the program's functions ----------------------------------------

def test_run_with_arrays_compiles_calls_and_returns_the_compiled_program(work):
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((16, 32)).astype(np.float32) for _ in range(2))
    out = np.zeros((16, 32), np.float32)
    compiled = run(Scale, x, y, out, config=RunConfig(save_kernels_dir=str(work / "out")))
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
    assert str(compiled) == str(work / "out")
    again = np.zeros_like(out)
    compiled(y, x, again)  # called again, on other arrays
    np.testing.assert_allclose(again, 2 * y + x, rtol=1e-6)


def test_run_with_nothing_but_the_program_only_compiles(work):
    compiled = run(Scale, config=RunConfig(save_kernels_dir=str(work / "only")))
    assert (work / "only" / "program.cpp").is_file()
    assert compiled.param_names == ["x", "y", "out"]


def test_run_with_specs_keeps_its_own_form_and_refuses_a_value_given_twice(work):
    specs = [TensorSpec("x", [16, 32], pl.FP32, init_value=1.0),
             TensorSpec("y", [16, 32], pl.FP32, init_value=2.0),
             TensorSpec("out", [16, 32], pl.FP32, is_output=True)]
    config = RunConfig(work_dir=str(work / "specs"))
    assert run(Scale, specs, None, config).passed
    assert run(program=Scale, tensor_specs=specs, config=config).passed
    with pytest.raises(TypeError, match="multiple values for argument 'config'"):
        run(Scale, specs, None, config, config=config)


def test_program_functions_read_as_pyptos_mapping():
    functions = Scale.functions
    assert [f.name for f in functions] == ["scale_kernel", "main"]  # a list, in program order
    assert functions.keys() == ["scale_kernel", "main"]
    assert [f.name for f in functions.values()] == ["scale_kernel", "main"]
    assert functions["main"].func_type == pypto.ir.FunctionType.Orchestration
    assert dict(functions.items())["scale_kernel"].type == pypto.ir.FunctionType.InCore
    assert "main" in functions and "nothing" not in functions
    with pytest.raises(KeyError):
        functions["nothing"]


def test_pass_manager_runs_the_pipeline():
    lowered = PassManager.get_strategy(OptimizationStrategy.Default).run_passes(Scale)
    assert isinstance(lowered, pypto.ir.Program)
    assert {f.name for f in lowered.functions} >= {"scale_kernel", "main"}
    assert lowered != Scale  # the passes changed it
    assert PassDumpLevel.NONE.value == 0


# ---- compile_program and the positional run of a golden.py ------------------------------------

def test_compile_program_writes_the_folder_compile_and_assemble_reads(work):
    runner.compile_program(Scale, work / "c", strategy=OptimizationStrategy.Default,
                           backend_type=backend.BackendType.Ascend950, dump_passes=True,
                           memory_planner=MemoryPlanner.PYPTO)
    assert list((work / "c" / "kernels").rglob("*.cpp"))
    assert list((work / "c" / "orchestration").glob("*.cpp"))
    assert any((work / "c" / "passes_dump").iterdir())
    artifact, runtime_name, runtime_config = compile_and_assemble(work / "c", "a5sim")
    assert artifact.program == Scale and artifact.platform == "a5sim"
    assert runtime_config == {} and runtime_name


def torch_or_skip():
    return pytest.importorskip("torch")


class ScaleCase:
    """A test case in the style of PyPTO's harness: the golden is a method reading self."""

    factor = 2.0

    def compute_expected(self, tensors, params=None):
        tensors["c"][:] = tensors["a"] * self.factor + tensors["b"]


def write_case(work, golden):
    """golden.py for Scale with TensorSpecs named unlike its parameters (a, b, c vs x, y, out):
    they bind by position."""
    torch = torch_or_skip()
    from pypto.runtime.golden_writer import write_golden

    specs = [TensorSpec("a", [16, 32], torch.float32, init_value=torch.randn),
             TensorSpec("b", [16, 32], torch.float32, init_value=0.5),
             TensorSpec("c", [16, 32], torch.float32, is_output=True)]
    runner.compile_program(Scale, work / "case", strategy=OptimizationStrategy.Default,
                           backend_type=backend.BackendType.Ascend910B)
    return write_golden(specs, golden, work / "case" / "golden.py", rtol=1e-6, atol=1e-6)


def test_golden_writer_writes_data_files_and_a_standalone_script(work):
    torch = torch_or_skip()
    golden_path = write_case(work, ScaleCase().compute_expected)
    data = work / "case" / "data"
    assert sorted(p.name for p in (data / "in").iterdir()) == ["a.pt", "b.pt"]
    assert sorted(p.name for p in (data / "out").iterdir()) == ["c.pt"]
    a, b = torch.load(data / "in" / "a.pt"), torch.load(data / "in" / "b.pt")
    torch.testing.assert_close(torch.load(data / "out" / "c.pt"), a * 2 + b)

    text = golden_path.read_text()
    assert "def compute_golden(tensors, params=None):" in text
    assert "self" not in text.split("def compute_golden")[1]  # self.factor became 2.0
    spec = importlib.util.spec_from_file_location("written_golden", golden_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.__outputs__ == ["c"] and module.RTOL == 1e-6
    inputs = module.generate_inputs({})
    assert [name for name, _ in inputs] == ["a", "b", "c"]
    tensors = dict(inputs)
    module.compute_golden(tensors, None)
    torch.testing.assert_close(tensors["c"], a * 2 + b)


def test_golden_writer_refuses_a_self_attribute_it_cannot_spell(work):
    torch_or_skip()
    from pypto.runtime.golden_writer import _extract_compute_golden

    case = ScaleCase()
    case.factor = object()
    with pytest.raises(RuntimeError, match="cannot spell as a literal"):
        _extract_compute_golden(case.compute_expected)


def test_a_golden_py_runs_with_its_tensors_bound_by_position(work):
    torch = torch_or_skip()
    golden_path = write_case(work, ScaleCase().compute_expected)
    artifact, name, config = compile_and_assemble(work / "case", "a2a3sim")
    actual = work / "case" / "data" / "actual"
    runner._execute_on_device(work / "case", golden_path, artifact, name, "a2a3sim", 0,
                              actual_out_dir=actual)
    a = torch.load(work / "case" / "data" / "in" / "a.pt")
    torch.testing.assert_close(torch.load(actual / "c.pt"), a * 2 + 0.5)
    runner.validate_persisted_outputs(work / "case", rtol=1e-6, atol=1e-6)


def test_a_wrong_golden_fails_the_positional_run(work):
    torch_or_skip()

    class WrongCase(ScaleCase):
        factor = 3.0

    golden_path = write_case(work, WrongCase().compute_expected)
    artifact, name, _ = compile_and_assemble(work / "case", "a2a3sim")
    with pytest.raises(DeviceRunError) as raised:
        runner._execute_on_device(work / "case", golden_path, artifact, name, "a2a3sim", 0)
    assert "out" in str(raised.value)  # the parameter the mismatching output is bound to


def test_a_tensor_count_that_does_not_match_the_parameters_says_so(work):
    torch = torch_or_skip()
    from pypto.runtime.golden_writer import write_golden

    runner.compile_program(Scale, work / "case", strategy=OptimizationStrategy.Default,
                           backend_type=backend.BackendType.Ascend910B)
    specs = [TensorSpec("a", [16, 32], torch.float32, init_value=1.0),
             TensorSpec("c", [16, 32], torch.float32, is_output=True)]

    def golden(tensors, params):
        tensors["c"][:] = tensors["a"]

    golden_path = write_golden(specs, golden, work / "case" / "golden.py")
    with pytest.raises(DeviceRunError, match=r"main takes 3 tensor parameter\(s\) \(x, y, out\) "
                                             r"but the run gives 2"):
        runner._execute_on_device(work / "case", golden_path, None, "", "a2a3sim", 0)


def test_create_tensor_follows_pyptos_init_values():
    torch = torch_or_skip()
    assert torch.equal(TensorSpec("t", [2, 3], torch.int32, init_value=7).create_tensor(),
                       torch.full((2, 3), 7, dtype=torch.int32))
    made = TensorSpec("t", [4], pl.FP16, init_value=torch.ones).create_tensor()
    assert made.dtype == torch.float16 and made.shape == (4,)
    # A callable that takes the shape gets it; one that takes nothing is called bare.
    assert TensorSpec("t", [2], torch.float32, init_value=np.ones).create_tensor().sum() == 2
    assert TensorSpec("t", [2], torch.float32,
                      init_value=lambda: torch.tensor([1.0, 2.0])).create_tensor()[1] == 2
    with pytest.raises(ValueError, match="init_value has shape"):
        TensorSpec("t", [3], torch.float32, init_value=torch.zeros(4)).create_tensor()


# ---- scripts/run_pypto_st.py -----------------------------------------------------------------

def load_script():
    spec = importlib.util.spec_from_file_location("run_pypto_st_under_test",
                                                  ROOT / "scripts" / "run_pypto_st.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_failure_causes_group_alike_errors():
    script = load_script()
    one = script.cause_of("AssertionError: Test failed for 64x64: DeviceRunError: "
                          "/tmp/x/test_a.py:12:5: error: unknown op 'pl.foo'\n  line\n  ^")
    two = script.cause_of("AssertionError: Test failed for 128x128: DeviceRunError: "
                          "/other/test_b.py:40:9: error: unknown op 'pl.foo'")
    assert one == two == "unknown op 'pl.foo'"
    assert script.cause_of("AssertionError: Test failed: ValueError: shape 128 too big") == \
        "ValueError: shape N too big"


def test_the_script_runs_a_checkout_and_counts(tmp_path):
    """A miniature checkout with tests/st: two passes (one sees the eight simulated devices the
    script asks for), one failure, one skip, one hang cut by the
    per-test timeout, one file that does not import, and one test the --platform filter
    deselects."""
    st = tmp_path / "ckout" / "tests" / "st"
    st.mkdir(parents=True)
    (st / "conftest.py").write_text(textwrap.dedent("""
        import pytest
        def pytest_addoption(parser):
            parser.addoption("--platform", default="a2a3")
            parser.addoption("--device", default="0")
        def pytest_collection_modifyitems(config, items):
            wanted = config.getoption("--platform").split(",")
            items[:] = [i for i in items if "a2a3" not in i.name or "a2a3sim" in wanted]
    """))
    (st / "test_mixed.py").write_text(textwrap.dedent("""
        import time, pytest
        def test_pass(): pass
        def test_eight_devices(request): assert request.config.getoption("--device") == "0-7"
        def test_fail(): raise ValueError("shape 64 is wrong")
        def test_skip(): pytest.skip("not here")
        def test_hang(): time.sleep(60)
        def test_only_on_a2a3(): pass
    """))
    (st / "test_broken.py").write_text("import no_such_module_here\n")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_pypto_st.py"),
                           str(tmp_path / "ckout"), "--platform", "a5sim", "--timeout", "3",
                           "--json", str(report)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "2 passed, 2 failed, 1 errors, 1 skipped"
    assert "ValueError: shape N is wrong" in done.stdout
    assert "test timed out after N s" in done.stdout
    assert "ModuleNotFoundError" in done.stdout
    tests = json.loads(report.read_text())["tests"]
    assert tests["tests/st/test_mixed.py::test_hang"]["outcome"] == "failed"
    assert "tests/st/test_mixed.py::test_only_on_a2a3" not in tests


def test_the_script_says_what_to_give_it(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_pypto_st.py"),
                           str(tmp_path)], capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "give the path of a PyPTO checkout" in done.stderr
