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
  m.def(
      "choose_l0_tile",
      [](int64_t M, int64_t N, int64_t K, int64_t operand_bytes, int64_t acc_bytes,
         int64_t left_bytes, int64_t right_bytes, int64_t acc_capacity,
         bool split_product) -> std::optional<std::tuple<int64_t, int64_t, int64_t>> {
        auto tile = passes::choose_l0_tile(M, N, K, operand_bytes, acc_bytes, split_product,
                                           {left_bytes, right_bytes, acc_capacity});
        if (!tile) return std::nullopt;
        return std::make_tuple(tile->m, tile->n, tile->k);
      },
      nb::arg("M"), nb::arg("N"), nb::arg("K"), nb::arg("operand_bytes"), nb::arg("acc_bytes"),
      nb::arg("left_bytes"), nb::arg("right_bytes"), nb::arg("acc_capacity"),
      nb::arg("split_product") = true,
      "AutoTileMatmulL0's block (m, n, k) for an [M, K] @ [K, N] product with L0 buffers of "
      "these sizes, or None when none fits.");
  m.attr("DEVICE_L0_BYTES") =
      std::make_tuple(passes::L0Capacities::device().left, passes::L0Capacities::device().right,
                      passes::L0Capacities::device().acc);
}

}  // namespace pypto::bindings
