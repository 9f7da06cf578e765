// compile_distributed and call_distributed (distributed.h): the device programs of a host
// orchestrator's dispatches, and a call that runs every rank in a process of its own.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

#include "collective_variants.h"
#include "pypto/driver/distributed.h"
#include "pypto/passes/pass.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/multi_rank.h"
#include "pypto/runtime/shared_memory.h"
#include "run_options.h"

namespace pypto::driver {
namespace {

using profiling::ScopedStage;

// A view of the thread a rank's records are drawn on: one timeline track per rank.
profiling::ThreadIdentity rank_track(int rank) {
  return {(uint64_t{1} << 40) + static_cast<uint64_t>(rank), "rank " + std::to_string(rank)};
}

}  // namespace

std::shared_ptr<DistributedProgram> compile_distributed(Session& session,
                                                        const ir::ProgramPtr& parsed,
                                                        int world_size, const RunConfig& given) {
  ScopedStage stage("compile");
  if (world_size < 1) throw std::runtime_error("a multi-rank program needs at least one rank");
  // The host's hierarchy scopes (`with pl.at(level=pl.Level.CHIP, ...)`) become the chip
  // functions it dispatches, before the host is planned. Outlining reads a block's free
  // variables and versions in SSA form, which the planner does not need otherwise (its loops
  // rebind names in place rather than carry values).
  ir::ProgramPtr program = parsed;
  if (passes::has_hierarchy_scopes(*parsed)) {
    ScopedStage outline("OutlineHierarchyScopes");
    program = passes::outline_hierarchy_scopes(passes::convert_to_ssa(parsed));
  }
  ir::FunctionPtr host = host_orchestrator(*program);
  if (!host) {
    throw std::runtime_error("program '" + program->name +
                             "' has no host orchestrator (a function of level pl.Level.HOST, "
                             "or @pl.jit.host) to dispatch its ranks");
  }
  const RunConfig config = detail::checked_config(given);
  auto result = std::make_shared<DistributedProgram>();
  result->name = program->name;
  result->world_size = world_size;
  result->plan = plan_host_orchestrator(*program, *host, world_size);
  session.set_keep_outputs(config.keep_outputs);
  // The program's output directory: next_levels/<function> holds the device program of each
  // dispatched function, next_levels/builtin.tensor.<variant> each built-in collective's record.
  const CompileOptions base_options = detail::compile_options(config);
  result->output_dir = session.open_output_dir(base_options.output_dir, program->name).string();
  for (const Dispatch& d : result->plan.dispatches) {
    if (result->devices.count(d.callee)) continue;
    ir::ProgramPtr device = function_program(*program, d.callee);
    CompileOptions options = base_options;
    options.sub_dir = "next_levels/" + d.callee;
    CompileResult compiled = compile(session, device, options);
    result->devices.emplace(
        d.callee, std::make_shared<CompiledProgram>(device, std::move(compiled), config.cache_dir));
  }
  detail::write_collective_variants(result->output_dir, result->plan);
  return result;
}

DistributedCallResult call_distributed(Session& session, DistributedProgram& program,
                                       std::vector<ir::HostTensor> args, const RunConfig& given,
                                       const DistributedCallOptions& call_options) {
  const HostPlan& plan = program.plan;
  if (args.size() != plan.params.size()) {
    throw std::runtime_error(plan.host + " takes " + std::to_string(plan.params.size()) +
                             " tensor(s), got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* type = plan.params[i].var->type()->as<ir::TensorType>();
    if (args[i].dtype != type->dtype || args[i].shape != type->shape) {
      throw std::runtime_error("argument '" + plan.params[i].var->name + "' is " +
                               std::string(ir::dtype_name(args[i].dtype)) + " " +
                               ir::shape_to_string(args[i].shape) + " but " + plan.host +
                               " takes " + ir::type_to_string(plan.params[i].var->type()));
    }
  }
  const RunConfig config = detail::checked_config(given);
  DistributedCallResult result;
  ScopedStage stage("device_execution");
  // The library of every dispatched function, built once.
  std::map<std::string, std::shared_ptr<const runtime::ProgramLibrary>> libraries;
  for (const Dispatch& d : plan.dispatches) {
    if (libraries.count(d.callee)) continue;
    bool built = false, hit = false;
    std::vector<std::string> notes;
    libraries.emplace(d.callee, program.devices.at(d.callee)->library(built, hit, notes));
  }
  ScopedStage execute_stage("execute");
  // The host tensors in memory the ranks' processes share with this one.
  std::vector<std::unique_ptr<runtime::SharedBuffer>> staged;
  for (const ir::HostTensor& t : args) {
    const auto bytes = static_cast<size_t>(t.size_bytes());
    staged.push_back(runtime::SharedBuffer::allocate(std::max<size_t>(bytes, 1)));
    if (bytes) std::memcpy(staged.back()->data(), t.data, bytes);
  }
  // The host's own tensors, after its parameters (zeroed, as shared mappings are).
  for (const HostLocal& local : plan.locals) {
    const auto bytes = static_cast<size_t>(ir::shape_bytes(local.shape, local.dtype).value_or(0));
    staged.push_back(runtime::SharedBuffer::allocate(std::max<size_t>(bytes, 1)));
  }
  runtime::SharedMemoryWorld world(program.world_size,
                                   static_cast<size_t>(std::max<int64_t>(plan.window_bytes, 1)));
  // A view of the plan as rank `rank` sees it: in a staged host tensor or in its window.
  auto host_tensor = [&](const DispatchArg& a, int rank, std::string name) {
    ir::HostTensor t;
    t.name = std::move(name);
    t.dtype = a.dtype;
    t.shape = a.shape;
    uint8_t* base =
        a.kind == DispatchArg::Kind::HostTensor ? staged[a.param]->data() : world.window(rank);
    t.data = base + a.byte_offset;
    return t;
  };
  const double timeout = config.timeout;  // in range: checked_config
  runtime::MultiRankOptions options;
  options.device =
      detail::execute_options(config, program.name, program.output_dir,
                              std::chrono::milliseconds(static_cast<int64_t>(timeout * 1e3)));
  options.signal_timeout = call_options.signal_timeout;
  // What every rank does, in the host's order: its dispatches and every collective, run up to
  // each call of a host sub-worker (a segment); the host runs the call once every rank is done.
  std::vector<std::vector<runtime::RankStep>> rank_steps(program.world_size);
  std::vector<std::vector<runtime::RankRun>> segments;
  auto run_segment = [&] {
    bool any = false;
    for (const auto& steps : rank_steps) any = any || !steps.empty();
    if (!any) return;
    try {
      segments.push_back(runtime::execute_rank_steps(rank_steps, world, options));
    } catch (const std::exception& e) {
      throw std::runtime_error(e.what());
    }
    for (auto& steps : rank_steps) steps.clear();
  };
  for (const PlanStep& s : plan.steps) {
    if (s.host_call) {
      run_segment();
      const HostCall& h = plan.host_calls[s.index];
      if (!call_options.run_host_call) {
        throw std::runtime_error("host sub-worker '" + h.callee +
                                 "' is Python: call the program from the pypto package");
      }
      std::vector<ir::HostTensor> tensors;
      for (const DispatchArg& a : h.args) {
        if (a.kind == DispatchArg::Kind::HostTensor) tensors.push_back(host_tensor(a, 0, ""));
      }
      ScopedStage host_stage([&] { return "host_call:" + h.callee; });
      call_options.run_host_call(h, tensors);
      continue;
    }
    if (s.collective) {
      const HostCollective& h = plan.collectives[s.index];
      for (int r = 0; r < program.world_size; ++r) {
        runtime::RankStep step;
        step.collective = true;
        step.kind = h.kind;
        step.reduce_op = h.reduce_op;
        step.signal_dim = h.signal_dim;
        step.root = h.root;
        step.label = h.label;
        for (const DispatchArg& a : h.tensors) {
          if (a.kind == DispatchArg::Kind::Scalar) {
            step.args.emplace_back(int64_t{0});
          } else {
            step.args.emplace_back(host_tensor(a, r, ""));
          }
        }
        rank_steps[r].push_back(std::move(step));
      }
      continue;
    }
    const Dispatch& d = plan.dispatches[s.index];
    const ir::FunctionPtr entry = program.devices.at(d.callee)->program()->entry();
    runtime::RankStep step;
    step.program = libraries.at(d.callee).get();
    for (size_t i = 0; i < d.args.size(); ++i) {
      const DispatchArg& a = d.args[i];
      if (a.kind == DispatchArg::Kind::Scalar) {
        std::visit([&](auto v) { step.args.emplace_back(v); }, a.scalar);
        continue;
      }
      step.args.emplace_back(host_tensor(
          a, d.rank, entry && i < entry->params.size() ? entry->params[i].var->name : ""));
    }
    rank_steps[d.rank].push_back(std::move(step));
  }
  run_segment();
  // The results: Out and InOut tensors back into the caller's buffers.
  for (size_t i = 0; i < args.size(); ++i) {
    if (plan.params[i].direction == ir::ParamDirection::In) continue;
    const auto bytes = static_cast<size_t>(args[i].size_bytes());
    if (bytes) std::memcpy(args[i].data, staged[i]->data(), bytes);
  }
  double first = 0, last = 0;
  bool ran = false;
  result.rank_seconds.assign(static_cast<size_t>(program.world_size), 0.0);
  result.rank_wait_seconds.assign(static_cast<size_t>(program.world_size), 0.0);
  for (const auto& runs : segments) {
    for (size_t r = 0; r < runs.size() && r < result.rank_seconds.size(); ++r) {
      const runtime::RankRun& run = runs[r];
      double waited = 0;
      for (const auto& w : run.waits) waited += w.end - w.start;
      result.rank_seconds[r] += run.stats.wall_seconds;
      result.rank_wait_seconds[r] += waited;
      first = ran ? std::min(first, run.started) : run.started;
      last = std::max(last, run.finished);
      ran = true;
    }
  }
  result.execution_time = last - first;
  if (profiling::CompileProfiler* profiler = session.profiler()) {
    for (const auto& runs : segments)
      for (size_t r = 0; r < runs.size(); ++r) {
        const runtime::RankRun& run = runs[r];
        profiling::StageRecord rank;
        rank.name = "rank " + std::to_string(r);
        rank.start = run.started;
        rank.end = run.finished;
        rank.thread = rank_track(static_cast<int>(r));
        profiling::StageRecord fork;  // fork() until the rank's process runs: the cost of a process
        fork.name = "device_process_start";
        fork.start = run.started;
        fork.end = run.entered;
        fork.thread = rank.thread;
        rank.children.push_back(std::move(fork));
        for (const runtime::RunPhase& phase : run.stats.phases) {
          profiling::StageRecord child;
          child.name = phase.name;
          child.start = phase.start;
          child.end = phase.end;
          child.thread = rank.thread;
          rank.children.push_back(std::move(child));
        }
        // Each wait on a signal under the phase it happened in (the launch, "run").
        for (const runtime::SignalWaitSpan& w : run.waits) {
          profiling::StageRecord child;
          child.name = "signal_wait:" + w.label.substr(w.label.find(' ') + 1);
          child.start = w.start;
          child.end = w.end;
          child.thread = rank.thread;
          profiling::StageRecord* parent = &rank;
          for (profiling::StageRecord& phase : rank.children) {
            if (phase.start <= w.start && w.end <= phase.end) parent = &phase;
          }
          parent->children.push_back(std::move(child));
        }
        profiler->add_stage_record(std::move(rank));
      }
  }
  return result;
}

}  // namespace pypto::driver
