"""The output directory as PyPTO's tools read it: kernel_config.py beside kernel_config.json,
debug/run.py that runs the folder again on its own,
CompiledProgram.from_dir and build_call_config, a multi-rank program's next_levels/ (one device
program per dispatched function, one record per built-in collective variant), its compile
ahead of the first call when the rank count fixes its pl.dynamic shapes, and prepare()."""

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir, runtime
from pypto.ir.distributed_compiled_program import DistributedConfig

SIZE = 64
NR = pl.dynamic("NR")


@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
                   c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, SIZE]), pl.load(b, [0, 0], [16, SIZE])),
                        [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
             c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return self.add_kernel(a, b, c)


@pl.program
class HostAllReduce:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_step(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                     data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]
                     ) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, SIZE], pl.FP32],
                data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]
                ) -> pld.DistributedTensor[[1, SIZE], pl.FP32]:
        return self.publish_step(x, data)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_step(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                     y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, data: pld.DistributedTensor[[1, SIZE], pl.FP32],
                y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return self.consume_step(data, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
             y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        data_buf = pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            self.publish(x[r], pld.window(data_buf, [1, SIZE], dtype=pl.FP32), device=r)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [pld.world_size()], dtype=pl.INT32)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max)
        for r in pl.range(pld.world_size()):
            self.consume(data, y[r], device=r)
        return y


def _inputs():
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (16, SIZE)).astype(np.float32)
    b = rng.uniform(-1, 1, (16, SIZE)).astype(np.float32)
    return a, b


# ---------------------------------------------------------------------------- debug/run.py

def run_script(folder):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(ir.__file__).resolve().parents[2])] + sys.path))
    return subprocess.run([sys.executable, str(folder / "debug" / "run.py")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_debug_run_script_runs_the_folder_on_arguments_from_the_signature(tmp_path):
    pytest.importorskip("torch")
    ir.compile(Add, output_dir=str(tmp_path))
    text = (tmp_path / "debug" / "run.py").read_text()
    assert 'torch.randn((16, 64), dtype=torch.float32),  # "a" (In)' in text
    assert 'torch.zeros((16, 64), dtype=torch.float32),  # "c" (Out)' in text
    done = run_script(tmp_path)
    assert done.returncode == 0, done.stderr
    # c = a + b of the script's seeded inputs: its sum is theirs.
    sums = {line.split(":")[0]: float(line.split("sum ")[1].split(",")[0])
            for line in done.stdout.splitlines()}
    assert sums["c"] == pytest.approx(sums["a"] + sums["b"], rel=1e-4, abs=1e-3)


def test_debug_run_script_checks_a_golden_beside_the_folder(tmp_path):
    torch = pytest.importorskip("torch")
    from pypto.runtime.golden_writer import write_golden
    from pypto.runtime.tensor_spec import TensorSpec

    ir.compile(Add, output_dir=str(tmp_path))
    specs = [TensorSpec("a", [16, SIZE], torch.float32, init_value=torch.randn),
             TensorSpec("b", [16, SIZE], torch.float32, init_value=torch.randn),
             TensorSpec("c", [16, SIZE], torch.float32, is_output=True)]

    def golden(t, params=None):
        t["c"][:] = t["a"] + t["b"]

    write_golden(specs, golden, tmp_path / "golden.py", rtol=1e-6, atol=1e-6)
    done = run_script(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the outputs match golden.py" in done.stdout

    def wrong(t, params=None):
        t["c"][:] = t["a"] - t["b"]

    write_golden(specs, wrong, tmp_path / "golden.py", rtol=1e-6, atol=1e-6)
    done = run_script(tmp_path)
    assert done.returncode != 0 and "c" in done.stderr


def test_debug_run_script_of_a_program_without_an_entry_says_so(tmp_path):
    two_kernels = pl.parse(f"""
import pypto.language as pl

@pl.program
class TwoKernels:
    @pl.function(type=pl.FunctionType.InCore)
    def first(self, a: pl.Tensor[[16, {SIZE}], pl.FP32],
              b: pl.Out[pl.Tensor[[16, {SIZE}], pl.FP32]]) -> pl.Tensor[[16, {SIZE}], pl.FP32]:
        return pl.store(pl.load(a, [0, 0], [16, {SIZE}]), [0, 0], b)

    @pl.function(type=pl.FunctionType.InCore)
    def second(self, a: pl.Tensor[[16, {SIZE}], pl.FP32],
               b: pl.Out[pl.Tensor[[16, {SIZE}], pl.FP32]]) -> pl.Tensor[[16, {SIZE}], pl.FP32]:
        return pl.store(pl.load(a, [0, 0], [16, {SIZE}]), [0, 0], b)
""")
    ir.compile(two_kernels, output_dir=str(tmp_path))
    done = run_script(tmp_path)
    assert done.returncode == 1 and "the program has no entry to run" in done.stderr


# ---------------------------------------------------------------------------- kernel_config.py

def test_kernel_config_py_says_what_kernel_config_json_says(tmp_path):
    compiled = ir.compile(Add, output_dir=str(tmp_path))
    manifest = json.loads((tmp_path / "kernel_config.json").read_text())
    config = runpy.run_path(str(tmp_path / "kernel_config.py"))
    assert config["MANIFEST"] == manifest
    assert [k["name"] for k in config["KERNELS"]] == compiled.kernel_names == ["add_kernel"]
    assert [k["func_id"] for k in config["KERNELS"]] == [0]
    for kernel in config["KERNELS"]:
        assert kernel["source"] == str(tmp_path / "kernels" / "add_kernel.cpp")
        assert (tmp_path / "kernels" / "add_kernel.cpp").is_file()
    orchestration = config["ORCHESTRATION"]
    assert orchestration["name"] == "main"
    assert orchestration["source"] == str(tmp_path / "orchestration" / "main.cpp")
    assert [p["name"] for p in orchestration["params"]] == ["a", "b", "c"]
    assert config["RUNTIME_CONFIG"]["library_source"] == str(tmp_path / "program.cpp")
    assert "BUILTIN" not in config


# ---------------------------------------------------------------------------- from_dir

def test_from_dir_reloads_and_runs_without_compiling(tmp_path):
    ir.compile(Add, output_dir=str(tmp_path), platform="a5sim")
    compiled = ir.CompiledProgram.from_dir(tmp_path, platform="a5sim")
    assert compiled.program is None
    assert compiled.platform == "a5sim"
    assert compiled.param_names == ["a", "b", "c"]
    assert compiled.output_indices == [2]
    assert compiled.has_return is True
    a, b = _inputs()
    np.testing.assert_allclose(compiled(a, b), a + b, rtol=1e-6)


def test_from_dir_builds_program_cpp_as_it_is_on_disk(tmp_path):
    ir.compile(Add, output_dir=str(tmp_path))
    source = tmp_path / "program.cpp"
    text = source.read_text()
    # An edit of the generated source is what a reloaded program runs (the tuning workflow):
    # here the sum becomes a difference.
    edited = text.replace("PTO_OP_ADD,", "PTO_OP_SUB,", 1)
    if edited == text:
        pytest.fail("program.cpp has no PTO_OP_ADD to edit; update this test's edit")
    source.write_text(edited)
    a, b = _inputs()
    np.testing.assert_allclose(ir.CompiledProgram.from_dir(tmp_path)(a, b), a - b, rtol=1e-6)


def test_from_dir_of_a_folder_without_a_compile_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="kernel_config.json not found"):
        ir.CompiledProgram.from_dir(tmp_path)
    (tmp_path / "kernel_config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        ir.CompiledProgram.from_dir(tmp_path)


def test_build_call_config_overrides_aicpu_thread_num(tmp_path):
    compiled = ir.compile(Add, output_dir=str(tmp_path))
    base = runtime.RunConfig(aicpu_thread_num=4)
    assert compiled.build_call_config(base, aicpu_thread_num=3).aicpu_thread_num == 3
    assert compiled.build_call_config(base).aicpu_thread_num == 4
    assert compiled.build_call_config().platform == "a2a3sim"
    with pytest.raises(ValueError, match="dfx_outputs"):
        compiled.build_call_config(dfx_dir=tmp_path / "elsewhere")
    a, b = _inputs()
    out = compiled(a, b, config=compiled.build_call_config(base, aicpu_thread_num=3))
    np.testing.assert_allclose(out, a + b, rtol=1e-6)


# ---------------------------------------------------------------------------- multi-rank layout

def test_multi_rank_layout_exists_after_compile(tmp_path):
    compiled = ir.compile(HostAllReduce, output_dir=str(tmp_path),
                          distributed_config=DistributedConfig(device_ids=[0, 1]))
    # NR is the rank count here, so the compile does not wait for the first call.
    assert compiled.output_dir == tmp_path
    for function in ("publish", "consume"):
        folder = tmp_path / "next_levels" / function
        config = runpy.run_path(str(folder / "kernel_config.py"))
        assert config["ORCHESTRATION"]["name"] == function
        assert (folder / "orchestration" / f"{function}.cpp").is_file()
        assert [k["name"] for k in config["KERNELS"]] == [f"{function}_step"]
        assert (folder / "kernels" / f"{function}_step.cpp").is_file()
    variant = tmp_path / "next_levels" / "builtin.tensor.allreduce__max__fp32"
    builtin = runpy.run_path(str(variant / "kernel_config.py"))["BUILTIN"]
    assert builtin["collective"] == "pld.tensor.allreduce"
    assert builtin["reduce_op"] == "max" and builtin["dtype"] == "FP32"
    (use,) = builtin["uses"]
    assert use["target"]["memory"] == "window" and use["target"]["shape"] == [1, SIZE]
    assert use["signal"]["dtype"] == "INT32"
    assert json.loads((variant / "kernel_config.json").read_text())["builtin"] == builtin
    assert sorted(p.name for p in (tmp_path / "next_levels").iterdir()) == [
        "builtin.tensor.allreduce__max__fp32", "consume", "publish"]

    x = np.random.default_rng(1).uniform(-1, 1, (2, 1, SIZE)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, y)
    np.testing.assert_array_equal(y, np.stack([x.max(axis=0)] * 2))
    assert len(compiled._compiled) == 1  # the call reused the compile


def test_multi_rank_call_with_other_shapes_compiles_its_own(tmp_path):
    compiled = ir.compile(HostAllReduce, distributed_config=DistributedConfig(device_ids=[0, 1]),
                          output_dir=str(tmp_path))
    x = np.random.default_rng(2).uniform(-1, 1, (3, 1, SIZE)).astype(np.float32)
    y = np.zeros_like(x)
    compiled(x, y)  # NR = 3 rows for 2 ranks: the third row is left alone
    np.testing.assert_array_equal(y[:2], np.stack([x[:2].max(axis=0)] * 2))
    assert len(compiled._compiled) == 2


# ---------------------------------------------------------------------------- prepare()

def test_prepare_dispatches_many_times_with_resident_tensors():
    compiled = ir.compile(HostAllReduce, distributed_config=DistributedConfig(device_ids=[0, 1]))
    rng = np.random.default_rng(3)
    with compiled.prepare() as rt:
        x = rt.alloc_tensor((2, 1, SIZE), pl.FP32, init=rng.uniform(-1, 1, (2, 1, SIZE)))
        y = np.zeros((2, 1, SIZE), dtype=np.float32)
        for _ in range(2):
            y[...] = 0
            rt(x, y)
            np.testing.assert_array_equal(y, np.stack([x.max(axis=0)] * 2))
        handle = rt.submit(compiled, x, y)
        assert handle.done() and handle.result() is y
        rt.free_tensor(x)
        with pytest.raises(ValueError, match="freed"):
            rt(x, y)
    with pytest.raises(RuntimeError, match="closed"):
        rt(x, y)


def test_prepare_refuses_unknown_sub_worker_callbacks():
    compiled = ir.compile(HostAllReduce, distributed_config=DistributedConfig(device_ids=[0, 1]))
    with pytest.raises(ValueError, match="'sampler' are not sub-workers of HostAllReduce"):
        compiled.prepare(callbacks={"sampler": print})


# ---------------------------------------------------------------------------- several orchestrations

@pl.program
class AddOrSub:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, SIZE]), pl.load(b, [0, 0], [16, SIZE])),
                        [0, 0], c)

    @pl.function(type=pl.FunctionType.InCore)
    def tile_sub(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return pl.store(pl.sub(pl.load(a, [0, 0], [16, SIZE]), pl.load(b, [0, 0], [16, SIZE])),
                        [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch_add(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return self.tile_add(a, b, c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch_sub(self, a: pl.Tensor[[16, SIZE], pl.FP32], b: pl.Tensor[[16, SIZE], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, SIZE], pl.FP32]]) -> pl.Tensor[[16, SIZE], pl.FP32]:
        return self.tile_sub(a, b, c)


def test_each_orchestration_is_compiled_on_its_own(tmp_path):
    compiled = ir.compile(AddOrSub, output_dir=str(tmp_path))
    assert compiled.orchestration_names == ["orch_add", "orch_sub"]
    assert not (tmp_path / "orchestration").exists()
    a, b = _inputs()
    for name, kernel, golden in (("orch_add", "tile_add", a + b), ("orch_sub", "tile_sub", a - b)):
        part = compiled[name]
        assert part is getattr(compiled, name)
        assert part.name == name and part.param_names == ["a", "b", "c"]
        assert part.output_dir == tmp_path / "next_levels" / name
        # Only the kernel this orchestration calls is in its folder.
        assert sorted(p.name for p in (tmp_path / "next_levels" / name / "kernels").iterdir()) \
            == [f"{kernel}.cpp"]
        np.testing.assert_allclose(part(a, b), golden, rtol=1e-6)
    with pytest.raises(TypeError, match="select one explicitly"):
        compiled(a, b)
    with pytest.raises(KeyError, match="orch_add, orch_sub"):
        compiled["orch_mul"]
    with pytest.raises(AttributeError, match="no attribute 'orch_mul'"):
        compiled.orch_mul  # noqa: B018


def test_several_orchestrations_share_the_default_output_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    compiled = ir.compile(AddOrSub)
    (root,) = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert root.name.startswith("AddOrSub_")
    assert compiled == str(root)
    assert sorted(p.name for p in (root / "next_levels").iterdir()) == ["orch_add", "orch_sub"]
