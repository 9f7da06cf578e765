"""``pypto.passes``: the pipeline's passes one at a time, by PyPTO's names, and the IR printing
and comparison functions of ``pypto.ir`` that tests of passes use."""

import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.compile_profiling import CompileProfiler
from pypto.errors import CompileError
from pypto.pypto_core import passes as core_passes

PIPELINE = (passes.lower_split_aiv, passes.unroll_loops, passes.convert_to_ssa, passes.simplify,
            passes.flatten_call_expr, passes.outline_incore_scopes,
            passes.convert_tensor_to_tile_ops, passes.auto_tile_matmul_l0,
            passes.infer_tile_memory_space, passes.init_mem_ref, passes.memory_reuse,
            passes.allocate_memory_addr, passes.derive_call_directions)


@pl.program
class Reassigned:
    @pl.function
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result = pl.add(x, 1.0)
        result = pl.add(result, 2.0)
        return result


@pl.program
class ReassignedInSSA:
    @pl.function(strict_ssa=True)
    def main(self, x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        result_0 = pl.add(x, 1.0)
        result_1 = pl.add(result_0, 2.0)
        return result_1


@pl.program
class Scaled:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: pl.Tensor[[32, 32], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32])
        for i in pl.range(3):
            t = pl.mul(t, 2.0)
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        out = self.scale(x, out)
        return out


def test_convert_to_ssa_gives_the_program_written_in_ssa():
    after = passes.convert_to_ssa()(Reassigned)
    # Program names and strict_ssa (a check the parser made) do not make IR differ.
    ir.assert_structural_equal(after, ReassignedInSSA)
    assert ir.structural_equal(after, ReassignedInSSA)
    assert not ir.structural_equal(Reassigned, ReassignedInSSA)
    assert "result_1" in ir.python_print(after)


def test_assert_structural_equal_shows_the_difference():
    with pytest.raises(ValueError, match=r"(?s)IR differs structurally.*\+.*result_0"):
        ir.assert_structural_equal(Reassigned, ReassignedInSSA)


def test_the_passes_one_by_one_give_what_the_pipeline_gives(tmp_path):
    program = Scaled
    seen = []
    instrument = passes.CallbackInstrument(
        before_pass=lambda p, prog: seen.append(("before", p.get_name())),
        after_pass=lambda p, prog: seen.append(("after", p.get_name())))
    with passes.PassContext([instrument], memory_planner=core_passes.MemoryPlanner.PTOAS) as ctx:
        assert passes.PassContext.current() is ctx
        for make in PIPELINE:
            program = make()(program)
    assert passes.PassContext.current() is None
    names = [p().get_name() for p in PIPELINE]
    assert seen == [(w, n) for n in names for w in ("before", "after")]
    compiled = ir.compile(Scaled, output_dir=tmp_path / "out", dump_passes=False)
    ir.assert_structural_equal(program, compiled.program)
    assert "pl.MemRef(" in ir.python_print(program)


def test_a_pass_pipeline_runs_its_passes_in_order():
    pipeline = passes.PassPipeline()
    for make in (passes.convert_to_ssa, passes.simplify):
        pipeline.add_pass(make())
    assert pipeline.get_pass_names() == ["ConvertToSSA", "Simplify"]
    ir.assert_structural_equal(pipeline.run(Reassigned), ReassignedInSSA)


def test_a_pass_says_which_pass_to_run_first():
    with pytest.raises(CompileError) as info:
        passes.init_mem_ref()(Reassigned)
    text = str(info.value)
    assert "InitMemRef runs on a program with the property SSA" in text
    assert "variable 'result' assigned more than once" in text
    assert "run ConvertToSSA on it first" in text
    assert "test_passes_api.py:23:9" in text  # the second assignment, with the source line
    assert "^" in text
    # Turning verification off does not let a pass meet IR it was not written for.
    with passes.PassContext([], verification_level=passes.VerificationLevel.NONE):
        with pytest.raises(CompileError, match="run ConvertToSSA on it first"):
            passes.init_mem_ref()(Reassigned)


def test_properties_of_a_pass():
    ssa = passes.convert_to_ssa()
    assert ssa.get_produced_properties() == {passes.IRProperty.SSA}
    assert passes.IRProperty.SSA in passes.simplify().get_required_properties()
    assert passes.IRProperty.MemRefsSet in passes.init_mem_ref().get_produced_properties()
    assert passes.property_violations(Reassigned, [passes.IRProperty.SSA]) == [
        "23:9: variable 'result' assigned more than once"]
    assert passes.property_violations(ReassignedInSSA, [passes.IRProperty.SSA]) == []
    passes.verify_properties({passes.IRProperty.SSA}, ReassignedInSSA, "ConvertToSSA")
    with pytest.raises(CompileError, match=r"test_passes_api.py:23:9: error: after ConvertToSSA: "
                                           r"variable 'result' assigned more than once"):
        passes.verify_properties({passes.IRProperty.SSA}, Reassigned, "ConvertToSSA")


def test_pypto_passes_this_compiler_does_not_have_say_so():
    with pytest.raises(AttributeError,
                       match=r"pypto.passes has no inline_functions: it is a pass of PyPTO's "
                             r"pipeline that this compiler does not have \(the parser expands"):
        passes.inline_functions()
    with pytest.raises(AttributeError, match=r"pypto.passes has no ctrl_flow_transform"):
        passes.ctrl_flow_transform()
    with pytest.raises(AttributeError, match=r"has no attribute 'no_such_pass'"):
        passes.no_such_pass()


def test_a_pass_is_profiled_as_its_own_stage():
    with CompileProfiler() as prof:
        passes.convert_to_ssa()(Reassigned)
    names = [s["name"] for s in prof.to_dict()["stages"]]
    assert names == ["passes"]
    children = [c["name"] for c in prof.to_dict()["stages"][0]["children"]]
    assert "ConvertToSSA" in children


def test_a_pass_takes_only_programs():
    with pytest.raises(TypeError, match="ConvertToSSA runs on a program"):
        passes.convert_to_ssa()("not a program")


def test_l0_tile_chooser_takes_the_buffer_sizes_it_is_given():
    chooser = core_passes.l0_tile_chooser
    cfg = chooser.L0TileConfig()
    cfg.M, cfg.N, cfg.K = 64, 64, 64
    cfg.bytes_a = cfg.bytes_b = cfg.bytes_c = 4
    whole = chooser.choose_l0_tile(cfg)
    assert (whole.m, whole.n, whole.k) == (64, 64, 64)
    assert whole.stationarity is chooser.Stationarity.OutputStationary
    assert not whole.double_buffer_c
    # An L0C of 16 KiB holds a 64 x 64 FP32 product, not a 128 x 128 one: blocks of half of it.
    cfg.M, cfg.N = 128, 128
    cfg.l0c_bytes = 16 * 1024
    split = chooser.choose_l0_tile(cfg)
    assert split.m * split.n * 4 <= 8 * 1024
    assert split.m % 16 == 0 and split.n % 16 == 0
    assert split.estimated_cost_cycles == (128 // split.m) * (128 // split.n)
    cfg.l0a_bytes = 16  # not even one 16 x 16 block of A
    with pytest.raises(ValueError, match="no L0 blocks fit"):
        chooser.choose_l0_tile(cfg)
