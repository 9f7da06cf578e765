// Shared by the pass tests: parsing DSL text, running a prefix of the pipeline, printing.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/pass.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::passes::testing {

inline ir::ProgramPtr parse(const std::string& text) {
  return frontend::parse_module(text, "<test>").at(0);
}

// Runs the listed passes in order (with verification).
inline ir::ProgramPtr run_passes(ir::ProgramPtr program, const std::vector<std::string>& names) {
  return PassManager(names).run(std::move(program));
}

// Runs the Default pipeline up to and including `last`.
inline ir::ProgramPtr run_pipeline_through(ir::ProgramPtr program, const std::string& last) {
  std::vector<std::string> names;
  for (const auto& p : registered_passes()) {
    names.push_back(p.name);
    if (p.name == last) break;
  }
  return run_passes(std::move(program), names);
}

inline std::string print(const ir::ProgramPtr& p) { return ir::print_program(*p); }

// The acceptance examples: the repository's examples/ when present, else the shared ones.
inline std::filesystem::path examples_dir() {
  std::filesystem::path repo = PYPTO_EXAMPLES_DIR;
  if (std::filesystem::exists(repo / "softmax.py")) return repo;
  return "/work/shared/examples";
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The one program of an example file.
inline ir::ProgramPtr load_example(const std::string& file) {
  auto path = examples_dir() / file;
  auto programs = frontend::parse_module(read_text(path), file);
  return programs.at(0);
}

// Every example file that defines a program, sorted by file name.
inline std::vector<std::pair<std::string, ir::ProgramPtr>> example_programs() {
  std::vector<std::pair<std::string, ir::ProgramPtr>> out;
  for (const auto& e : std::filesystem::directory_iterator(examples_dir())) {
    if (e.path().extension() != ".py") continue;
    auto file = e.path().filename().string();
    for (auto& p : frontend::parse_module(read_text(e.path()), file)) out.emplace_back(file, p);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace pypto::passes::testing

#include <gtest/gtest.h>

#include "pypto/ir/structural_equal.h"

namespace pypto::passes::testing {

inline const std::string kProgramHeader =
    "import pypto.language as pl\n\n\n@pl.program\nclass P:\n";

// An orchestration `main(x, y)` calling kernel `k(x, y)` on 64x64 FP32 tensors.
inline const std::string kCallK = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y = self.k(x, y)
        return y
)";

// kCallK after ConvertToSSA: the call result is a new variable.
inline const std::string kCallKSsa = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        y_1: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y)
        return y_1
)";

// The signature line of kernel `k(x, y)` matching kCallK.
inline const std::string kKernelK = R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
)";

// Kernel `k(x, y)` copying x into y, and the signature line of an orchestration `main(x, y, n)`
// with a scalar trip count n.
inline const std::string kCopyKernel = kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)";
inline const std::string kScalarMain = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[64, 64], pl.FP32]:
)";

inline ir::ProgramPtr parse_body(const std::string& functions) {
  return parse(kProgramHeader + functions);
}

// Structural equality with the program the expected text parses to.
inline ::testing::AssertionResult same_program(const ir::ProgramPtr& actual,
                                               const std::string& expected_functions) {
  auto expected = parse_body(expected_functions);
  if (ir::structural_equal(*actual, *expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual:\n"
                                       << print(actual) << "\nexpected:\n"
                                       << print(expected);
}

// The message of the CompileError `fn` throws ("" when it throws none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const ir::CompileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace pypto::passes::testing
