// compile_distributed and call_distributed (distributed.h): the device programs of a host
// orchestrator's dispatches, and a call that runs every rank in a process of its own.
#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
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

// A rank's report to the others when the ranks are processes of a launcher: its runs (one per
// segment), its failure, the first abort it saw and its clock at the barrier that opened the
// windows (the ranks' clocks are lined up on that moment: across machines they differ).
nlohmann::json rank_report(const std::vector<runtime::RankRun>& runs, const std::string& error,
                           int aborted_by, double opened) {
  nlohmann::json report = {{"error", error}, {"aborted_by", aborted_by}, {"opened", opened}};
  nlohmann::json& list = report["runs"] = nlohmann::json::array();
  for (const runtime::RankRun& run : runs) {
    nlohmann::json waits = nlohmann::json::array();
    for (const auto& w : run.waits) waits.push_back({w.label, w.start, w.end});
    list.push_back({{"stats", run.stats},
                    {"waits", std::move(waits)},
                    {"started", run.started},
                    {"entered", run.entered},
                    {"finished", run.finished}});
  }
  return report;
}

// Rank `rank`'s runs from its report, on this process's clock.
std::vector<runtime::RankRun> runs_of(const nlohmann::json& report, double shift) {
  std::vector<runtime::RankRun> runs;
  for (const nlohmann::json& r : report["runs"]) {
    runtime::RankRun run;
    run.stats = r["stats"].get<runtime::RunStats>();
    for (runtime::RunPhase& phase : run.stats.phases) {
      phase.start += shift;
      phase.end += shift;
    }
    for (const auto& w : r["waits"]) {
      run.waits.push_back(
          {w[0].get<std::string>(), w[1].get<double>() + shift, w[2].get<double>() + shift});
    }
    run.started = r["started"].get<double>() + shift;
    run.entered = r["entered"].get<double>() + shift;
    run.finished = r["finished"].get<double>() + shift;
    runs.push_back(std::move(run));
  }
  return runs;
}

// The error of a run whose ranks are processes of a launcher, the same on every rank: the rank
// that failed first (by the first abort rank 0 saw) and those that stopped because of it.
std::string launched_failure(const std::vector<nlohmann::json>& reports,
                             const std::string& program) {
  int first = reports[0]["aborted_by"].get<int>();
  const int n = static_cast<int>(reports.size());
  if (first < 0 || first >= n || reports[first]["error"].get<std::string>().empty()) {
    first = -1;
    for (int r = 0; r < n && first < 0; ++r) {
      if (!reports[r]["error"].get<std::string>().empty()) first = r;
    }
  }
  std::string message = program.empty() ? "" : "program '" + program + "': ";
  message += "rank " + std::to_string(first) + " of " + std::to_string(n) +
             " failed: " + reports[first]["error"].get<std::string>();
  std::string stopped;
  for (int r = 0; r < n; ++r) {
    if (r != first && !reports[r]["error"].get<std::string>().empty()) {
      stopped += (stopped.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  if (!stopped.empty()) message += " (rank(s) " + stopped + " stopped because of it)";
  return message;
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
  runtime::RankWorld* launched = call_options.world.get();
  if (launched && launched->nranks() != program.world_size) {
    throw std::runtime_error(
        "program '" + program.name + "' is compiled for " + std::to_string(program.world_size) +
        " rank(s) (DistributedConfig.device_ids), but the launcher started " +
        std::to_string(launched->nranks()) + " process(es): run it with mpirun -n " +
        std::to_string(program.world_size));
  }
  if (launched && !plan.locals.empty()) {
    throw std::runtime_error("program '" + program.name +
                             "' makes host tensors (pl.create_tensor in its host orchestrator), "
                             "which pass between the ranks' dispatches in one process: run it "
                             "with the forked ranks (DistributedConfig(transport=\"shm\"))");
  }
  if (launched && !plan.host_calls.empty()) {
    throw std::runtime_error("program '" + program.name + "' calls the host sub-worker '" +
                             plan.host_calls[0].callee +
                             "', which needs every rank's results in one process: run it with "
                             "the forked ranks (DistributedConfig(transport=\"shm\"))");
  }
  const int me = launched ? launched->rank() : -1;
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
  const auto window_bytes = static_cast<size_t>(std::max<int64_t>(plan.window_bytes, 1));
  // The windows: of every rank in this process's shared memory, or (launched) this rank's of an
  // MPI window. Opening them is collective; the clock after it lines the ranks' records up.
  std::optional<runtime::SharedMemoryWorld> world;
  std::unique_ptr<runtime::CommTransport> transport;
  std::optional<runtime::TerminationNotice> notice;
  double opened = 0;
  if (launched) {
    notice.emplace("pypto: rank " + std::to_string(me) + " of " +
                   std::to_string(program.world_size) + " (program '" + program.name +
                   "') was ended by SIGTERM during its run: mpirun ends every rank once one "
                   "rank fails or dies, and names that rank");
    transport = launched->open_windows(window_bytes);
    opened = profiling::now_seconds();
  } else {
    world.emplace(program.world_size, window_bytes);
  }
  // A view of the plan as rank `rank` sees it: in a staged host tensor or in its window.
  auto host_tensor = [&](const DispatchArg& a, int rank, std::string name) {
    ir::HostTensor t;
    t.name = std::move(name);
    t.dtype = a.dtype;
    t.shape = a.shape;
    uint8_t* base = a.kind == DispatchArg::Kind::HostTensor ? staged[a.param]->data()
                    : launched                              ? transport->local_window()
                                                            : world->window(rank);
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
  // (Launched: only this rank's steps; a failure is kept, to be agreed on with the others.)
  std::vector<std::vector<runtime::RankStep>> rank_steps(program.world_size);
  std::vector<std::vector<runtime::RankRun>> segments;
  std::vector<runtime::RankRun> own_runs;
  std::string own_error;
  auto run_segment = [&] {
    if (launched) {
      try {
        own_runs.push_back(runtime::execute_own_rank(rank_steps[me], *transport, options));
      } catch (const std::exception& e) {
        own_error = e.what();
      }
      rank_steps[me].clear();
      return;
    }
    bool any = false;
    for (const auto& steps : rank_steps) any = any || !steps.empty();
    if (!any) return;
    try {
      segments.push_back(runtime::execute_rank_steps(rank_steps, *world, options));
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
        if (launched && r != me) continue;
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
    if (launched && d.rank != me) continue;
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
  if (launched) {
    // Every rank learns every rank's outcome and runs; a failure fails the call on every rank.
    const std::vector<std::string> gathered = launched->all_gather(
        rank_report(own_runs, own_error, transport->aborted_by(), opened).dump());
    std::vector<nlohmann::json> reports;
    for (const std::string& r : gathered) reports.push_back(nlohmann::json::parse(r));
    bool failed = false;
    for (const nlohmann::json& r : reports)
      failed = failed || !r["error"].get<std::string>().empty();
    if (failed) throw std::runtime_error(launched_failure(reports, options.device.program_name));
    segments.assign(own_runs.size(), std::vector<runtime::RankRun>(reports.size()));
    for (size_t r = 0; r < reports.size(); ++r) {
      std::vector<runtime::RankRun> runs =
          runs_of(reports[r], opened - reports[r]["opened"].get<double>());
      for (size_t k = 0; k < runs.size() && k < segments.size(); ++k) {
        segments[k][r] = std::move(runs[k]);
      }
    }
    // What each dispatch wrote into the host tensors, from the rank that ran it to every rank.
    for (const Dispatch& d : plan.dispatches) {
      const ir::FunctionPtr entry = program.devices.at(d.callee)->program()->entry();
      for (size_t i = 0; i < d.args.size(); ++i) {
        const DispatchArg& a = d.args[i];
        if (a.kind != DispatchArg::Kind::HostTensor || !entry || i >= entry->params.size() ||
            entry->params[i].direction == ir::ParamDirection::In) {
          continue;
        }
        int64_t count = 1;
        for (int64_t extent : a.shape) count *= extent;
        launched->broadcast(staged[a.param]->data() + a.byte_offset,
                            static_cast<size_t>(count * ir::dtype_bytes(a.dtype)), d.rank);
      }
    }
  }
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
        if (!launched) {  // fork() until the rank's process runs: the cost of a process
          profiling::StageRecord fork;
          fork.name = "device_process_start";
          fork.start = run.started;
          fork.end = run.entered;
          fork.thread = rank.thread;
          rank.children.push_back(std::move(fork));
        }
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
