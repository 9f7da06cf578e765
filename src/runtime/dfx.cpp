// Runtime DFX recorder: tensor dumps and hardware counters taken around each task, and the files
// written after the run (dfx.h).
#include "pypto/runtime/dfx.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "pypto/ir/types.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/npy.h"
#include "pypto/support/file_io.h"
#include "tensor_transfer.h"

namespace pypto::runtime {

namespace fs = std::filesystem;

namespace {

using Kind = ExecutionError::Kind;

constexpr const char* kArgsFolder = "args";
constexpr const char* kPmuNoteFile = "pmu_unavailable.txt";

// A folder name part from a kernel name: letters, digits and '_' kept, anything else '_'.
std::string file_safe(const std::string& name) {
  std::string out = name.substr(0, 64);
  for (char& c : out) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!keep) c = '_';
  }
  return out.empty() ? "task" : out;
}

std::string task_folder(TaskId id, const char* kernel) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "task_%04lld_", static_cast<long long>(id));
  return prefix + file_safe(kernel);
}

const char* kind_name(int32_t kind) {
  switch (kind) {
    case PTO_ARG_IN:
      return "in";
    case PTO_ARG_OUT:
      return "out";
    case PTO_ARG_INOUT:
      return "inout";
    case PTO_ARG_NODEP:
      return "no_dep";
    default:
      return "scalar";
  }
}

static_assert(PTO_NUM_DTYPES == ir::kNumDataTypes, "PtoDType and ir::DataType must agree");
bool known_dtype(int32_t dtype) { return dtype >= 0 && dtype < PTO_NUM_DTYPES; }

// Writes the elements of a (possibly strided) tensor view as a C-order .npy file.
void write_view(const fs::path& path, const PtoTensor& view) {
  HostTensor host;
  host.dtype = static_cast<ir::DataType>(view.dtype);
  host.shape.assign(view.shape, view.shape + view.ndim);
  std::vector<unsigned char> bytes(static_cast<size_t>(host.size_bytes()));
  host.data = bytes.data();
  const PtoTensor dense = contiguous_tensor(host.data, view.dtype, view.ndim, view.shape);
  transfer::copy_tensor(&dense, &view);
  write_npy(path.string(), host);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

struct DfxRecorder::Worker {
  bool tried_pmu = false;
  std::unique_ptr<PmuCounters> counters;
  PmuSample at_start;
  bool started = false;  // at_start holds this task's starting counts
};

DfxRecorder::DfxRecorder(DfxOptions options, int num_workers) : options_(std::move(options)) {
  for (int w = 0; w < num_workers; ++w) workers_.push_back(std::make_unique<Worker>());
  if (!options_.pmu_opener) options_.pmu_opener = &open_perf_counters;
  if (!options_.any()) return;
  try {
    support::create_folders(options_.dir);
    if (options_.dump_args) {
      std::error_code ec;
      fs::remove_all(options_.dir / kArgsFolder, ec);
      if (ec) {
        throw support::FileError("remove the tensor dumps of an earlier run in",
                                 options_.dir / kArgsFolder, ec.value());
      }
    }
  } catch (const support::FileError& e) {
    throw ExecutionError(Kind::Setup, std::string("runtime DFX: ") + e.what() +
                                          "; choose a writable RunConfig.work_dir");
  }
}

DfxRecorder::~DfxRecorder() = default;

void DfxRecorder::note_error(std::string message) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.empty()) error_ = std::move(message);
}

void DfxRecorder::task_started(int worker, const TaskView& task) noexcept {
  // Inputs before the kernel can overwrite an inout argument; counters last, so that the dump
  // is not counted as the task's work.
  if (options_.dump_args) dump_arguments(task, /*outputs=*/false);
  if (!options_.pmu) return;
  Worker& w = *workers_[static_cast<size_t>(worker)];
  if (!w.tried_pmu) {
    // Counters belong to a thread: each worker opens its own on its first task.
    w.tried_pmu = true;
    std::string why;
    try {
      w.counters = options_.pmu_opener(why);
    } catch (...) {
      why = "opening the hardware counters failed";
    }
    if (!w.counters) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pmu_note_.empty()) pmu_note_ = why.empty() ? "no hardware counters" : why;
    }
  }
  w.started = w.counters && w.counters->read(w.at_start);
}

void DfxRecorder::task_finished(int worker, const TaskView& task) noexcept {
  if (options_.pmu) {
    Worker& w = *workers_[static_cast<size_t>(worker)];
    PmuSample end;
    if (w.started && w.counters->read(end)) {
      const PmuSample used{end.cycles - w.at_start.cycles,
                           end.instructions - w.at_start.instructions};
      try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (counts_.size() <= static_cast<size_t>(task.id)) {
          counts_.resize(static_cast<size_t>(task.id) + 1);
        }
        counts_[static_cast<size_t>(task.id)] = used;
      } catch (...) {
        // Out of memory: the task's counts stay empty, as for a failed read.
      }
    }
    w.started = false;
  }
  if (options_.dump_args) dump_arguments(task, /*outputs=*/true);
}

void DfxRecorder::dump_arguments(const TaskView& task, bool outputs) noexcept {
  const fs::path folder = options_.dir / kArgsFolder / task_folder(task.id, task.kernel);
  try {
    nlohmann::ordered_json manifest_args = nlohmann::ordered_json::array();
    for (int32_t k = 0; k < task.nargs; ++k) {
      const PtoArg& a = task.args[k];
      nlohmann::ordered_json entry;
      entry["index"] = k;
      entry["kind"] = kind_name(a.kind);
      const int32_t dtype = a.kind == PTO_ARG_SCALAR ? a.dtype : a.tensor.dtype;
      if (known_dtype(dtype)) entry["dtype"] = ir::dtype_name(static_cast<ir::DataType>(dtype));
      if (a.kind == PTO_ARG_SCALAR) {
        const bool floating = known_dtype(dtype) && ir::is_float(static_cast<ir::DataType>(dtype));
        entry["value"] = floating ? nlohmann::ordered_json(a.f64) : nlohmann::ordered_json(a.i64);
        manifest_args.push_back(std::move(entry));
        continue;
      }
      entry["shape"] = std::vector<int64_t>(a.tensor.shape, a.tensor.shape + a.tensor.ndim);
      const bool is_input =
          a.kind == PTO_ARG_IN || a.kind == PTO_ARG_INOUT || a.kind == PTO_ARG_NODEP;
      const bool is_output =
          a.kind == PTO_ARG_OUT || a.kind == PTO_ARG_INOUT || a.kind == PTO_ARG_NODEP;
      const std::string stem = "arg" + std::to_string(k);
      if (is_input) entry["in"] = stem + "_in.npy";
      if (is_output) entry["out"] = stem + "_out.npy";
      if (is_input && !outputs) write_view(folder / (stem + "_in.npy"), a.tensor);
      if (is_output && outputs) write_view(folder / (stem + "_out.npy"), a.tensor);
      manifest_args.push_back(std::move(entry));
    }
    if (!outputs) return;
    nlohmann::ordered_json manifest;
    manifest["task"] = task.id;
    manifest["kernel"] = task.kernel;
    manifest["args"] = std::move(manifest_args);
    support::write_file_atomically(
        folder / "args.json",
        manifest.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  } catch (const std::exception& e) {
    note_error(std::string("dumping the arguments of task ") + std::to_string(task.id) +
               " failed: " + e.what());
  } catch (...) {
    note_error("dumping the arguments of task " + std::to_string(task.id) + " failed");
  }
}

void DfxRecorder::finish(const RunStats& stats) {
  if (!options_.any()) return;
  std::vector<std::optional<PmuSample>> counts;
  std::string pmu_note;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) throw ExecutionError(Kind::Failed, "runtime DFX: " + error_);
    counts = counts_;
    pmu_note = pmu_note_;
  }
  try {
    if (options_.swimlane) {
      support::write_file_atomically(options_.dir / "swimlane.json", swimlane_trace(stats));
    }
    if (options_.dep_gen) {
      support::write_file_atomically(options_.dir / "dep_graph.json", dependency_graph_json(stats));
      support::write_file_atomically(options_.dir / "dep_graph.dot", dependency_graph_dot(stats));
    }
    if (options_.pmu) {
      std::string csv = "task,kernel,core,start_us,end_us,cycles,instructions\n";
      for (size_t i = 0; i < stats.tasks.size(); ++i) {
        const TaskRecord& t = stats.tasks[i];
        char times[64];
        std::snprintf(times, sizeof times, "%.3f,%.3f", t.start * 1e6, t.end * 1e6);
        csv += std::to_string(i) + "," + csv_field(t.kernel) + "," + std::to_string(t.worker) +
               "," + times + ",";
        if (i < counts.size() && counts[i]) {
          csv += std::to_string(counts[i]->cycles) + "," + std::to_string(counts[i]->instructions);
        } else {
          csv += ",";
        }
        csv += "\n";
      }
      support::write_file_atomically(options_.dir / "pmu.csv", csv);
      const fs::path note = options_.dir / kPmuNoteFile;
      if (!pmu_note.empty()) {
        support::write_file_atomically(
            note, "No hardware counters in pmu.csv (its cycles and instructions are empty): " +
                      pmu_note + ".\n");
      } else {
        std::error_code ignored;
        fs::remove(note, ignored);  // from an earlier run on another machine
      }
    }
  } catch (const support::FileError& e) {
    throw ExecutionError(Kind::Failed, std::string("runtime DFX: ") + e.what());
  }
}

}  // namespace pypto::runtime
