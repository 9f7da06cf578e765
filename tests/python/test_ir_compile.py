"""ir.compile: output directory, lowered program, profiling report and errors."""

import json
import os

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import CompileError

N = 64

SOFTMAX = """
import pypto.language as pl

@pl.program
class SoftmaxProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def softmax_kernel(self, x: pl.Tensor[[64, 64], pl.FP32],
                       y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        scratch = pl.create_tile([64, 1], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        peak: pl.Tile[[64, 1], pl.FP32] = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, peak))
        total = pl.row_sum(e)
        y = pl.store(pl.row_expand_div(e, total), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, y: pl.Tensor[[64, 64], pl.FP32],
              z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        z = pl.store(pl.mul(pl.load(y, [0, 0], [64, 64]), 2.0), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32],
             z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = pl.create_tensor([64, 64], dtype=pl.FP32)
        y = self.softmax_kernel(x, y)
        z = self.scale(y, z)
        return z
"""

PASSES = [
    "LowerSplitAiv",
    "UnrollLoops",
    "ConvertToSSA",
    "Simplify",
    "FlattenCallExpr",
    "OutlineHierarchyScopes",
    "OutlineIncoreScopes",
    "ConvertTensorToTileOps",
    "AutoTileMatmulL0",
    "InferTileMemorySpace",
    "InitMemRef",
    "MemoryReuse",
    "AllocateMemoryAddr",
    "DeriveCallDirections",
]


@pytest.fixture(autouse=True)
def no_env_profiler(monkeypatch):
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING", raising=False)


def test_compile_writes_sources_and_returns_a_path(tmp_path):
    program = pl.parse(SOFTMAX)
    out = ir.compile(program, output_dir=tmp_path / "out")
    assert isinstance(out, ir.CompiledProgram)
    assert os.fspath(out) == str(out) == out.output_dir == str(tmp_path / "out")
    assert out.name == "SoftmaxProgram"
    assert out.kernel_names == ["softmax_kernel", "scale"]
    assert isinstance(out.program, ir.Program)
    assert "pl.MemRef(" in out.program.as_python()
    for rel in ["program.cpp", "kernels/softmax_kernel.cpp", "kernels/scale.cpp",
                "orchestration/main.cpp", "kernel_config.json"]:
        assert (tmp_path / "out" / rel).is_file(), rel
    assert (tmp_path / "out" / "program.cpp").read_text() == out.translation_unit
    assert "extern \"C\" int32_t pto_orchestrate(" in out.translation_unit
    assert any((tmp_path / "out" / "passes_dump").iterdir())
    assert not (tmp_path / "out" / "report").exists()
    manifest = json.loads((tmp_path / "out" / "kernel_config.json").read_text())
    assert manifest == out.manifest
    assert manifest["program"] == "SoftmaxProgram"
    assert manifest["entry"] == "main"
    assert [k["name"] for k in manifest["kernels"]] == ["softmax_kernel", "scale"]
    assert [p["direction"] for p in manifest["kernels"][0]["params"]] == ["In", "Out"]


def test_compile_with_profiling_writes_the_compile_report(tmp_path):
    out = ir.compile(pl.parse(SOFTMAX), output_dir=tmp_path, profiling=True)
    report = tmp_path / "report"
    assert (report / "pipeline_profile.txt").is_file()
    profile = json.loads((report / "pipeline_profile.json").read_text())
    # The seed's shape: ir.compile records passes and codegen; the sources' writing is codegen's.
    assert [s["name"] for s in profile["stages"]] == ["passes", "codegen"]
    passes, codegen = profile["stages"]
    ran = [c["name"] for c in passes["children"] if c["name"] in PASSES]
    assert ran == PASSES
    assert sorted(c["name"] for c in codegen["children"]) == [
        "kernel_codegen:scale",
        "kernel_codegen:softmax_kernel",
        "orchestration_codegen",
        "write_sources",
    ]
    assert profile["total_seconds"] > 0
    text = (report / "pipeline_profile.txt").read_text()
    assert "kernel_codegen:softmax_kernel" in text and "AllocateMemoryAddr" in text
    assert str(out) == str(tmp_path)


def test_env_profiler_also_writes_a_report(tmp_path):
    # The environment's profiler is process-wide: in a process of its own, so that this test
    # leaves none bound to the test run (its report would end the run).
    import subprocess
    import sys
    script = (f"import pypto.language as pl\nfrom pypto import ir\nSOFTMAX = {SOFTMAX!r}\n"
              f"ir.compile(pl.parse(SOFTMAX), output_dir={str(tmp_path)!r}, dump_passes=False)\n")
    env = dict(os.environ, PYPTO_COMPILE_PROFILING="1",
               PYPTO_COMPILE_PROFILING_DIR=str(tmp_path / "exit"))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "report" / "pipeline_profile.json").is_file()
    assert not (tmp_path / "passes_dump").exists()


def test_default_output_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    out = ir.compile(pl.parse(SOFTMAX), dump_passes=False)
    assert os.path.dirname(str(out)) == str(tmp_path)
    assert os.path.basename(str(out)).startswith("SoftmaxProgram_")
    assert (tmp_path / os.path.basename(str(out)) / "program.cpp").is_file()


def test_unwritable_output_dir_raises_compile_error(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(SOFTMAX), output_dir=blocker / "out")
    message = str(info.value)
    assert str(blocker / "out") in message
    assert "output directory" in message
    assert "std::" not in message


def test_program_errors_are_rendered_against_the_source(tmp_path):
    text = """
import pypto.language as pl

@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[512, 512], pl.FP32],
          c: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
        t = pl.load(a, [0, 0], [512, 512])
        c = pl.store(t, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[512, 512], pl.FP32],
             c: pl.Out[pl.Tensor[[512, 512], pl.FP32]]) -> pl.Tensor[[512, 512], pl.FP32]:
        c = self.k(a, c)
        return c
"""
    with pytest.raises(CompileError) as info:
        ir.compile(pl.parse(text, file_name="big.py"), output_dir=tmp_path)
    message = str(info.value)
    assert "big.py:" in message
    assert "Vec" in message
    assert not (tmp_path / "program.cpp").exists()


def test_compile_rejects_non_programs_with_type_error(tmp_path):
    with pytest.raises(TypeError, match="expects a program.*got str"):
        ir.compile("not a program", output_dir=tmp_path)


def test_compiled_program_is_the_output_dir_as_a_string(tmp_path):
    # The seed's snippet concatenates: output_dir + "/report/pipeline_profile.txt".
    output_dir = ir.compile(pl.parse(SOFTMAX), output_dir=str(tmp_path / "out"), profiling=True)
    assert isinstance(output_dir, str) and output_dir == str(tmp_path / "out")
    with open(output_dir + "/report/pipeline_profile.txt") as f:
        assert f.read().startswith("PyPTO Compile Profile")
    assert os.fspath(output_dir) == str(tmp_path / "out")
    assert output_dir.kernel_names and output_dir.name == "SoftmaxProgram"
