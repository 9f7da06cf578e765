"""``pypto.passes``: the pipeline's passes one at a time, by PyPTO's names, and the IR printing
and comparison functions of ``pypto.ir`` that tests of passes use."""

import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.compile_profiling import CompileProfiler
from pypto.errors import CompileError
from pypto.pypto_core import passes as core_passes

PIPELINE = (passes.lower_split_aiv, passes.unroll_loops, passes.convert_to_ssa, passes.simplify,
            passes.flatten_call_expr, passes.outline_hierarchy_scopes, passes.outline_incore_scopes,
            passes.convert_tensor_to_tile_ops, passes.auto_tile_matmul_l0,
            passes.infer_tile_memory_space, passes.expand_mixed_kernel, passes.init_mem_ref,
            passes.memory_reuse, passes.allocate_memory_addr, passes.derive_call_directions)


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


def _a2a3_config(M, N, K, operand_bytes=2):
    cfg = core_passes.l0_tile_chooser.L0TileConfig()
    cfg.M, cfg.N, cfg.K = M, N, K
    cfg.l0a_bytes = cfg.l0b_bytes = 64 * 1024
    cfg.l0c_bytes = 128 * 1024
    cfg.bytes_a = cfg.bytes_b = operand_bytes
    return cfg


def test_l0_tile_config_has_pyptos_defaults():
    cfg = core_passes.l0_tile_chooser.L0TileConfig()
    assert (cfg.M, cfg.N, cfg.K, cfg.l0a_bytes, cfg.l0b_bytes, cfg.l0c_bytes) == (0,) * 6
    assert (cfg.bytes_a, cfg.bytes_b, cfg.bytes_c) == (2, 2, 4)
    assert (cfg.min_m, cfg.align_k, cfg.l0c_align_m, cfg.box_align_n) == (16, 16, 16, 1)
    assert not (cfg.allow_a_stationary or cfg.allow_b_stationary or cfg.allow_double_buffer_c
                or cfg.allow_padding or cfg.allow_k_boundary or cfg.c_read or cfg.whole_output)
    assert (cfg.bw_a, cfg.bw_b, cfg.mad_head, cfg.drain_c0_bytes) == (129.7, 85.4, 21, 32)
    with pytest.raises(ValueError, match="L0 buffer sizes"):
        cfg.M = cfg.N = cfg.K = 64
        core_passes.l0_tile_chooser.choose_l0_tile(cfg)


def test_l0_tile_chooser_picks_pyptos_design_points():
    chooser = core_passes.l0_tile_chooser
    skinny = chooser.choose_l0_tile(_a2a3_config(16, 256, 512))
    assert (skinny.m, skinny.n, skinny.k) == (16, 256, 64)
    assert skinny.stationarity is chooser.Stationarity.OutputStationary
    assert skinny.double_buffer_c is False and skinny.perf_hint == ""
    assert repr(skinny) == "L0TileResult(m=16, n=256, k=64)"
    # FP32 160 x 160 with a 64-long K: a 2 x 2 grid whose drains hide behind two accumulators.
    cfg = _a2a3_config(160, 160, 64, operand_bytes=4)
    cfg.allow_a_stationary = cfg.allow_b_stationary = cfg.allow_double_buffer_c = True
    cfg.allow_k_boundary = True
    dbc = chooser.choose_l0_tile(cfg)
    assert (dbc.m, dbc.n, dbc.k) == (80, 128, 64)
    assert dbc.double_buffer_c is True and dbc.os_holds_a is False
    assert dbc.estimated_cost_cycles > 0 and dbc.padded_compute_volume == 160 * 256 * 64
    # BF16 192 x 512 over K = 64: the right operand stays while row blocks stream past it.
    cfg = _a2a3_config(192, 512, 64)
    cfg.allow_a_stationary = cfg.allow_b_stationary = cfg.allow_k_boundary = True
    held = chooser.choose_l0_tile(cfg)
    assert (held.m, held.n, held.k) == (64, 512, 64)
    assert held.stationarity is chooser.Stationarity.BStationary


def test_l0_tile_chooser_refuses_bad_configurations():
    chooser = core_passes.l0_tile_chooser
    with pytest.raises(ValueError, match="M, N, K must all be positive"):
        chooser.choose_l0_tile(_a2a3_config(0, 128, 128))
    with pytest.raises(ValueError, match="allow_padding=false but M=7"):
        chooser.choose_l0_tile(_a2a3_config(7, 128, 128))
    cfg = _a2a3_config(128, 128, 128)
    cfg.l0a_bytes = 16  # not even one 16 x 16 block of A
    with pytest.raises(ValueError, match="no L0 blocks fit: L0A"):
        chooser.choose_l0_tile(cfg)
    cfg = _a2a3_config(256, 256, 128, operand_bytes=4)
    cfg.whole_output = True  # a 256 KiB product has no whole block in a 128 KiB L0C
    with pytest.raises(ValueError, match="whole product"):
        chooser.choose_l0_tile(cfg)
    with pytest.raises(TypeError):
        cfg.M = "big"
