#include "pypto/driver/session.h"

#include <utility>
#include <vector>

#include "pypto/driver/output_dir.h"
#include "pypto/support/diagnostics.h"

namespace pypto::driver {

namespace fs = std::filesystem;

namespace {

profiling::CompileProfiler* choose_profiler(bool requested,
                                            std::unique_ptr<profiling::CompileProfiler>& own) {
  if (profiling::CompileProfiler* active = profiling::get_active_profiler()) return active;
  if (!requested) return nullptr;
  own = std::make_unique<profiling::CompileProfiler>(profiling::memory_tracking_enabled_by_env());
  return own.get();
}

}  // namespace

Session::Session(bool profiling_requested)
    : profiler_(choose_profiler(profiling_requested, own_profiler_)),
      activation_(profiler_),
      start_mark_(profiler_ != nullptr ? profiler_->mark() : profiling::CompileProfiler::Mark{}),
      metadata_{{"pypto", PYPTO_VERSION}} {}

Session::~Session() = default;

bool Session::process_wide_profiling() const noexcept {
  return profiler_ != nullptr && profiler_->is_process_wide();
}

const fs::path& Session::open_output_dir(const std::string& requested,
                                         const std::string& program_name) {
  if (output_dir_.empty()) {
    fs::path dir = requested.empty() ? default_output_dir(program_name) : fs::path(requested);
    int keep = requested.empty() ? keep_outputs(keep_outputs_) : 0;
    // A folder retention could remove (a default name, also when a compiled program's folder
    // is named again for its run) is leased before it is created, for the whole session.
    if (is_default_output_dir_name(dir.filename().string())) {
      output_dir_lease_ = OutputDirLease::acquire(dir);
    }
    prepare_output_dir(dir);
    // Only default directories are pruned: a folder the caller named is theirs.
    if (keep > 0) remove_old_output_dirs(dir, program_name, keep);
    output_dir_ = std::move(dir);
  }
  return output_dir_;
}

profiling::Report Session::report() const {
  if (profiler_ == nullptr) return {};
  profiling::Report report =
      own_profiler_ ? profiler_->report() : profiler_->report_since(start_mark_);
  report.metadata = metadata_;
  return report;
}

void Session::set_metadata(const std::string& key, std::string value) {
  for (auto& entry : metadata_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void Session::record_error(const std::string& message) {
  if (profiler_ != nullptr) profiler_->record_error(message);
}

void Session::write_report() {
  if (report_written_ || profiler_ == nullptr || output_dir_.empty()) return;
  report_written_ = true;
  profiling::write_report(report(), output_dir_ / "report");
}

std::string describe_current_exception(const ir::Program* program) {
  try {
    throw;
  } catch (const support::ParseError& e) {
    return e.rendered();
  } catch (const support::CompileError& e) {
    if (program != nullptr && program->source) {
      return support::render_diagnostic(*program->source, e);
    }
    return e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace pypto::driver
