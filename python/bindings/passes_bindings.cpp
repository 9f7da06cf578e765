// The passes one at a time (`pypto._core.passes`), for `pypto.passes`: each pass of the registry
// runs on a program as the pipeline runs it, with its own profile stage and the verification of
// what it promises. A pass is first checked against what the passes before it in the pipeline
// establish (its preconditions), so a pass never meets IR it was not written for.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "ir_handles.h"
#include "pypto/passes/l0_tile_choice.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/passes/verifier.h"
#include "pypto/support/diagnostics.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

std::vector<std::string> property_names(passes::IRProperties set) {
  std::vector<std::string> names;
  for (passes::IRProperty p : passes::all_properties()) {
    if (passes::has_property(set, p)) names.emplace_back(passes::property_name(p));
  }
  return names;
}

// What the pipeline has established when `target` runs: the properties of the passes before it.
passes::IRProperties required_by(const passes::Pass& target) {
  passes::IRProperties state = 0;
  for (const passes::Pass& p : passes::registered_passes()) {
    if (&p == &target) break;
    state = (state & ~p.invalidates) | p.produces;
  }
  return state;
}

// The first pass of the pipeline that establishes `property`.
const passes::Pass* producer_of(passes::IRProperty property) {
  for (const passes::Pass& p : passes::registered_passes()) {
    if (passes::has_property(p.produces, property)) return &p;
  }
  return nullptr;
}

// A verifier message without its trailing "at line:col", which counts from the program's first
// line; callers give the position in the file instead.
std::string without_position(std::string message) {
  const size_t at = message.rfind(" at ");
  if (at != std::string::npos &&
      message.find_first_not_of("0123456789:", at + 4) == std::string::npos) {
    message.resize(at);
  }
  return message;
}

ProgramHandle run_pass(const ProgramHandle& program, const std::string& name, bool verify) {
  const passes::Pass* pass = passes::find_pass(name);
  if (!pass) throw nb::value_error(("no pass named '" + name + "'").c_str());
  // Preconditions are always checked: a pass meeting IR it was not written for could crash.
  const passes::IRProperties required = required_by(*pass);
  {
    for (passes::IRProperty p : passes::all_properties()) {
      if (!passes::has_property(required, p)) continue;
      std::vector<passes::VerificationProblem> problems =
          passes::check_properties(*program.program, static_cast<passes::IRProperties>(p));
      if (problems.empty()) continue;
      const passes::Pass* producer = producer_of(p);
      const std::string problem = without_position(problems.front().message);
      throw ir::CompileError(problems.front().span,
                             name + " runs on a program with the property " +
                                 std::string(passes::property_name(p)) +
                                 ", which this one lacks (" + problem + "); run " +
                                 (producer ? producer->name : std::string("the passes before it")) +
                                 " on it first, or the whole pipeline with ir.compile");
    }
  }
  passes::PassManager manager({name});
  passes::PassRunOptions options;
  options.verify = verify;  // what the pass establishes, checked after it
  return ProgramHandle{manager.run(program.program, options)};
}

// run_pass, with a program error rendered against the program's source (file:line:col, the
// line and a caret), as ir.compile reports it.
ProgramHandle run_pass_located(const ProgramHandle& program, const std::string& name, bool verify) {
  try {
    return run_pass(program, name, verify);
  } catch (const ir::CompileError& e) {
    if (!program.program->source || !e.span().valid()) throw;
    throw ir::CompileError(ir::Span{}, support::render_diagnostic(*program.program->source, e));
  }
}

}  // namespace

void bind_passes(nb::module_ m) {
  m.def(
      "registered",
      [] {
        std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>,
                               std::vector<std::string>>>
            out;
        for (const passes::Pass& p : passes::registered_passes()) {
          out.emplace_back(p.name, property_names(required_by(p)), property_names(p.produces),
                           property_names(p.invalidates));
        }
        return out;
      },
      "The pipeline's passes in order: (name, required, produced, invalidated properties).");
  m.def("run", &run_pass_located, nb::arg("program"), nb::arg("name"), nb::arg("verify") = true,
        "Runs one pass of the pipeline on a program (profile stages `passes` and the pass's "
        "name); `verify` checks what it establishes; raises CompileError when the program lacks "
        "what the pass needs or the pass "
        "rejects it.");
  m.def(
      "verify",
      [](const ProgramHandle& program, const std::vector<std::string>& names) {
        passes::IRProperties set = 0;
        for (const std::string& n : names) {
          bool found = false;
          for (passes::IRProperty p : passes::all_properties()) {
            if (passes::property_name(p) == n) {
              set |= static_cast<passes::IRProperties>(p);
              found = true;
            }
          }
          if (!found) throw nb::value_error(("no IR property named '" + n + "'").c_str());
        }
        const int offset = program.program->source ? program.program->source->line_offset : 0;
        std::vector<std::tuple<std::string, int, int>> out;
        for (const passes::VerificationProblem& p :
             passes::check_properties(*program.program, set)) {
          out.emplace_back(without_position(p.message), p.span.valid() ? p.span.line + offset : 0,
                           p.span.col);
        }
        return out;
      },
      nb::arg("program"), nb::arg("properties"),
      "The violations of the named properties in a program: (message, line, col) each, the "
      "line counted in the program's file.");
  // PyPTO's chooser API (pypto.passes.l0_tile_chooser re-exports these under its names).
  nb::enum_<passes::Stationarity>(m, "Stationarity",
                                  "Which operand stays in its L0 buffer across the output's "
                                  "blocks.")
      .value("OutputStationary", passes::Stationarity::OutputStationary)
      .value("AStationary", passes::Stationarity::AStationary)
      .value("BStationary", passes::Stationarity::BStationary);
  using Config = passes::L0TileConfig;
  nb::class_<Config>(m, "L0TileConfig",
                     "The inputs of choose_l0_tile: the product's extents, the L0 buffers, the "
                     "element sizes, the block grid, the schedules the caller can emit and the "
                     "cost model's constants (include/pypto/passes/l0_tile_choice.h).")
      .def(nb::init<>())
      .def_rw("M", &Config::M)
      .def_rw("N", &Config::N)
      .def_rw("K", &Config::K)
      .def_rw("l0a_bytes", &Config::l0a_bytes)
      .def_rw("l0b_bytes", &Config::l0b_bytes)
      .def_rw("l0c_bytes", &Config::l0c_bytes)
      .def_rw("bytes_a", &Config::bytes_a)
      .def_rw("bytes_b", &Config::bytes_b)
      .def_rw("bytes_c", &Config::bytes_c)
      .def_rw("min_m", &Config::min_m)
      .def_rw("min_n", &Config::min_n)
      .def_rw("min_k", &Config::min_k)
      .def_rw("align_m", &Config::align_m)
      .def_rw("align_n", &Config::align_n)
      .def_rw("align_k", &Config::align_k)
      .def_rw("l0c_align_m", &Config::l0c_align_m)
      .def_rw("box_align_m", &Config::box_align_m)
      .def_rw("box_align_n", &Config::box_align_n)
      .def_rw("max_n", &Config::max_n)
      .def_rw("max_n_pipelined", &Config::max_n_pipelined)
      .def_rw("max_n_nested_pipelined", &Config::max_n_nested_pipelined)
      .def_rw("allow_a_stationary", &Config::allow_a_stationary)
      .def_rw("allow_b_stationary", &Config::allow_b_stationary)
      .def_rw("allow_double_buffer_c", &Config::allow_double_buffer_c)
      .def_rw("c_read", &Config::c_read)
      .def_rw("bw_a", &Config::bw_a)
      .def_rw("bw_b", &Config::bw_b)
      .def_rw("bw_drain", &Config::bw_drain)
      .def_rw("drain_fixed_cycles", &Config::drain_fixed_cycles)
      .def_rw("drain_row_cycles", &Config::drain_row_cycles)
      .def_rw("drain_penalty_cycles", &Config::drain_penalty_cycles)
      .def_rw("drain_c0_bytes", &Config::drain_c0_bytes)
      .def_rw("mad_head", &Config::mad_head)
      .def_rw("mad_k_fractal_bytes", &Config::mad_k_fractal_bytes)
      .def_rw("mad_fp32_passes", &Config::mad_fp32_passes)
      .def_rw("allow_padding", &Config::allow_padding)
      .def_rw("allow_k_boundary", &Config::allow_k_boundary)
      .def_rw("whole_output", &Config::whole_output);
  using Result = passes::L0TileResult;
  nb::class_<Result>(m, "L0TileResult", "The design point choose_l0_tile picked.")
      .def_ro("m", &Result::m)
      .def_ro("n", &Result::n)
      .def_ro("k", &Result::k)
      .def_ro("estimated_traffic_bytes", &Result::estimated_traffic_bytes)
      .def_ro("estimated_cost_cycles", &Result::estimated_cost_cycles)
      .def_ro("padded_compute_volume", &Result::padded_compute_volume)
      .def_ro("stationarity", &Result::stationarity)
      .def_ro("os_holds_a", &Result::os_holds_a)
      .def_ro("double_buffer_c", &Result::double_buffer_c)
      .def_ro("perf_hint", &Result::perf_hint)
      .def("__repr__", [](const Result& r) {
        return "L0TileResult(m=" + std::to_string(r.m) + ", n=" + std::to_string(r.n) +
               ", k=" + std::to_string(r.k) + ")";
      });
  m.def("choose_l0_tile", &passes::choose_l0_tile, nb::arg("config"),
        "The lowest-wall L0 design point for the configuration; ValueError for an invalid one "
        "or when no block fits.");
  m.def(
      "device_l0_tile_config",
      [](int64_t M, int64_t N, int64_t K, int64_t bytes_a, int64_t bytes_b, int64_t bytes_c) {
        return passes::device_l0_tile_config(M, N, K, bytes_a, bytes_b, bytes_c);
      },
      nb::arg("M"), nb::arg("N"), nb::arg("K"), nb::arg("bytes_a"), nb::arg("bytes_b"),
      nb::arg("bytes_c"),
      "The configuration AutoTileMatmulL0 chooses with for such a product on this device.");
  m.def("choose_device_l0_tile", &passes::choose_device_l0_tile, nb::arg("config"),
        "The block AutoTileMatmulL0 uses for that configuration (choose_l0_tile's, in half of "
        "L0C when it splits the output), or None when it leaves the matmul as it is.");
  m.attr("DEVICE_L0_BYTES") =
      std::make_tuple(passes::L0Capacities::device().left, passes::L0Capacities::device().right,
                      passes::L0Capacities::device().acc);
}

}  // namespace pypto::bindings
