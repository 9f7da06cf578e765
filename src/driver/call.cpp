#include "pypto/driver/call.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "pypto/ir/types.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/device.h"
#include "run_options.h"

namespace pypto::driver {

namespace fs = std::filesystem;
using profiling::ScopedStage;

std::shared_ptr<const runtime::ProgramLibrary> CompiledProgram::library(
    bool& built, bool& cache_hit, std::vector<std::string>& notes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (library_) return library_;
  ScopedStage stage("binary_compilation");
  runtime::BuildOptions options =
      detail::build_options(compiled_.output_dir, program_->name, cache_dir_);
  runtime::BuildResult result = runtime::build_library(compiled_.translation_unit, options);
  library_ = runtime::ProgramLibrary::load(result.library);
  built = true;
  cache_hit = result.cache_hit;
  notes = result.notes;
  return library_;
}

std::string callable_entry_error(const ir::Program& program) {
  ir::FunctionPtr entry = program.entry();
  if (!entry) return "program '" + program.name + "' has no Orchestration entry";
  for (const ir::Param& p : entry->params) {
    if (!p.var->type()->as<ir::TensorType>()) {
      return "parameter '" + p.var->name + "' of " + entry->name +
             " is not a tensor; a compiled program is called with tensors";
    }
  }
  return {};
}

std::shared_ptr<CompiledProgram> compile_for_calls(Session& session, const ir::ProgramPtr& program,
                                                   const RunConfig& given) {
  ScopedStage stage("compile");
  if (std::string error = callable_entry_error(*program); !error.empty()) {
    throw std::runtime_error(error);
  }
  const RunConfig config = detail::checked_config(given);
  session.set_keep_outputs(config.keep_outputs);
  return std::make_shared<CompiledProgram>(
      program, compile(session, program, detail::compile_options(config)), config.cache_dir);
}

CallResult call(Session& session, CompiledProgram& program, std::vector<ir::HostTensor> args,
                const RunConfig& given) {
  const std::vector<ir::Param>& params = program.entry_params();
  if (args.size() != params.size()) {
    throw std::runtime_error(program.program()->name + " takes " + std::to_string(params.size()) +
                             " tensor(s), got " + std::to_string(args.size()));
  }
  std::vector<ir::HostArg> host_args;
  host_args.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* type = params[i].var->type()->as<ir::TensorType>();
    ir::HostTensor& t = args[i];
    if (t.dtype != type->dtype || t.shape != type->shape) {
      throw std::runtime_error("argument '" + params[i].var->name + "' is " +
                               std::string(ir::dtype_name(t.dtype)) + " " +
                               ir::shape_to_string(t.shape) + " but the compiled program takes " +
                               ir::type_to_string(params[i].var->type()));
    }
    t.name = params[i].var->name;
    t.read_only = params[i].direction == ir::ParamDirection::In;
    host_args.emplace_back(std::move(t));
  }
  const RunConfig config = detail::checked_config(given);
  CallResult result;
  ScopedStage stage("device_execution");
  auto library = program.library(result.built, result.library_cache_hit, result.notes);
  ScopedStage execute_stage("execute");
  const double timeout = config.timeout;  // in range: checked_config
  runtime::ExecuteOptions options =
      detail::execute_options(config, program.program()->name, program.compiled().output_dir,
                              std::chrono::milliseconds(static_cast<int64_t>(timeout * 1e3)));
  runtime::RunStats stats = runtime::execute(*library, host_args, options);
  result.execution_time = stats.wall_seconds;
  if (session.profiler()) detail::record_device_run(*session.profiler(), stats);
  return result;
}

}  // namespace pypto::driver
