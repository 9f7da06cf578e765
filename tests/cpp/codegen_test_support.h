// Test support for codegen tests: builds a generated translation unit with the host compiler and
// runs its orchestration with a minimal inline runtime (every task runs at submit time).
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pto_abi.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/types.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/runtime/device_headers.h"
#include "pypto/runtime/process.h"
#include "pypto/runtime/task_runtime.h"
#include "pypto/runtime/tile_isa.h"

namespace pypto::codegen::testing {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of one of the project's example programs (examples/<name>).
inline std::string read_example(const std::string& name) {
  std::string text = read_file(std::filesystem::path(PYPTO_EXAMPLES_DIR) / name);
  if (text.empty()) ADD_FAILURE() << "cannot read example " << name;
  return text;
}

// The one program in `text` (DSL source named `file` in diagnostics) after the default pass
// pipeline: what codegen receives.
inline ir::ProgramPtr lower_program(const std::string& text, const std::string& file = "test.py") {
  auto programs = frontend::parse_module(text, file);
  EXPECT_EQ(programs.size(), 1u);
  return passes::PassManager::for_strategy(passes::OptimizationStrategy::Default)
      .run(programs.at(0));
}

inline std::filesystem::path make_temp_dir(const std::string& tag) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("pypto_codegen_" + tag + "_XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  char* made = ::mkdtemp(buf.data());
  if (!made) throw std::runtime_error("mkdtemp failed");
  return made;
}

// A loaded program library.
class Library {
 public:
  // Compiles `source` with `c++ -O2 -shared -fPIC -std=c++17`; ADD_FAILURE with the compiler
  // output when that fails.
  explicit Library(const std::string& source, const std::string& tag = "lib") {
    dir_ = make_temp_dir(tag);
    for (const auto& h : runtime::device_headers()) {
      std::ofstream(dir_ / std::string(h.file_name)) << h.text;
    }
    std::ofstream(dir_ / "program.cpp") << source;
    const char* cxx = std::getenv("CXX");
    auto result = runtime::run_process(
        {cxx && *cxx ? cxx : "c++", "-O2", "-shared", "-fPIC", "-std=c++17", "-Wall", "-Werror",
         "-I", dir_.string(), (dir_ / "program.cpp").string(), "-o",
         (dir_ / "program.so").string()},
        std::chrono::seconds(300));
    compiler_output_ = result.output;
    if (!result.succeeded()) {
      ADD_FAILURE() << "compiling the generated program failed:\n" << result.output;
      return;
    }
    handle_ = ::dlopen((dir_ / "program.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) ADD_FAILURE() << "dlopen: " << ::dlerror();
  }
  ~Library() {
    if (handle_) ::dlclose(handle_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const std::string& compiler_output() const { return compiler_output_; }
  PtoOrchestrateFn orchestrate() const {
    return reinterpret_cast<PtoOrchestrateFn>(::dlsym(handle_, "pto_orchestrate"));
  }
  PtoAbiVersionFn abi_version() const {
    return reinterpret_cast<PtoAbiVersionFn>(::dlsym(handle_, "pto_abi_version"));
  }

 private:
  std::filesystem::path dir_;
  void* handle_ = nullptr;
  std::string compiler_output_;
};

// Runs tasks inline on one simulated core and records failures.
class InlineRuntime {
 public:
  InlineRuntime() {
    for (int s = 0; s < PTO_NUM_SPACES; ++s) {
      int64_t cap = ir::memory_space_capacity(static_cast<ir::MemorySpace>(s));
      arenas_.emplace_back(static_cast<size_t>(cap), 0xCD);  // garbage, not zeros
      memory_.space[s] = cap ? arenas_.back().data() : nullptr;
      memory_.capacity[s] = cap;
    }
    memory_.core_id = 0;
    memory_.ctx = this;
    memory_.fail = &InlineRuntime::on_fail;
    memory_.isa = &runtime::tile_isa();
    memory_.num_cores = 1;
    memory_.syncall = &InlineRuntime::on_syncall;
    api_.ctx = this;
    api_.num_cores = 1;
    api_.create_tensor = &InlineRuntime::on_create_tensor;
    api_.submit = &InlineRuntime::on_submit;
    api_.fail = &InlineRuntime::on_fail;
    api_.isa = &runtime::tile_isa();
    api_.wait_task = &InlineRuntime::on_wait_task;
    // Generated loops poll the run's stop flag; these runs are never stopped.
    memory_.stop = &kNeverStop;
    api_.stop = &kNeverStop;
  }

  const PtoRuntimeApi* api() const { return &api_; }
  const std::vector<std::string>& failures() const { return failures_; }
  const std::vector<std::string>& tasks() const { return tasks_; }
  size_t intermediates() const { return buffers_.size(); }

 private:
  static PtoTensor on_create_tensor(void* ctx, int32_t dtype, int32_t ndim, const int64_t* shape) {
    auto* self = static_cast<InlineRuntime*>(ctx);
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) n *= shape[i];
    self->buffers_.emplace_back(
        static_cast<size_t>(n * ir::dtype_bytes(static_cast<ir::DataType>(dtype))), 0);
    return runtime::contiguous_tensor(self->buffers_.back().data(), dtype, ndim, shape);
  }
  static void on_submit(void* ctx, const char* name, PtoKernelFn fn, const PtoArg* args,
                        int32_t nargs) {
    auto* self = static_cast<InlineRuntime*>(ctx);
    self->tasks_.push_back(name);
    std::vector<PtoArg> copy(args, args + nargs);
    fn(copy.data(), &self->memory_);
  }
  // Tasks run when they are submitted: any task waited for is done.
  static int32_t on_wait_task(void*, PtoTaskHandle) { return 1; }
  // One core runs one block at a time: a syncall of a task meets itself.
  static int32_t on_syncall(void*, int32_t, int32_t, const char*) { return 1; }
  static void on_fail(void* ctx, const char* message) {
    static_cast<InlineRuntime*>(ctx)->failures_.push_back(message);
  }

  static inline const uint8_t kNeverStop = 0;
  PtoRuntimeApi api_{};
  PtoCoreMemory memory_{};
  std::vector<std::vector<uint8_t>> arenas_;
  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<std::string> failures_;
  std::vector<std::string> tasks_;
};

// A dense row-major FP32 host tensor passed as an argument.
struct HostArray {
  std::vector<int64_t> shape;
  std::vector<float> data;

  explicit HostArray(std::vector<int64_t> s, float fill = 0.0f) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
  }
  float& at(int64_t r, int64_t c) { return data[static_cast<size_t>(r * shape[1] + c)]; }

  PtoArg arg(int32_t kind = PTO_ARG_IN) {
    PtoArg a{};
    a.kind = kind;
    a.dtype = PTO_FP32;
    a.tensor.base = data.data();
    a.tensor.dtype = PTO_FP32;
    a.tensor.ndim = static_cast<int32_t>(shape.size());
    int64_t stride = 1;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      a.tensor.shape[i] = shape[static_cast<size_t>(i)];
      a.tensor.strides[i] = stride;
      stride *= shape[static_cast<size_t>(i)];
    }
    return a;
  }
};

// Deterministic pseudo-random values in [-2, 2).
inline void fill_random(HostArray& a, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (auto& v : a.data) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>((s >> 8) & 0xffff) / 16384.0f - 2.0f;
  }
}

}  // namespace pypto::codegen::testing
