// Recording side of the compile profiler: stages, scopes, activation and the snapshot tree.
#include "pypto/profiling/profiler.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <cxxabi.h>
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "pypto/profiling/device_timeline.h"
#include "pypto/profiling/report.h"

namespace pypto::profiling {

namespace {

// std::uncaught_exceptions() is two out-of-line calls plus a __tls_get_addr inside libstdc++,
// about a third of the enabled-stage overhead, and a scope needs it twice. The Itanium C++ ABI
// fixes the layout of the per-thread __cxa_eh_globals (caught-exception stack, then the
// uncaught count) and its address never changes for a thread, so it is looked up once per thread.
#if defined(__GLIBCXX__) || defined(_LIBCPP_ABI_VERSION)
struct EhGlobalsLayout {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

thread_local const EhGlobalsLayout* t_eh_globals = nullptr;

int uncaught_exception_count() noexcept {
  const EhGlobalsLayout* globals = t_eh_globals;
  if (__builtin_expect(globals == nullptr, 0)) {
    globals = reinterpret_cast<const EhGlobalsLayout*>(abi::__cxa_get_globals());
    t_eh_globals = globals;
  }
  return static_cast<int>(globals->uncaught_exceptions);
}
#else
int uncaught_exception_count() noexcept { return std::uncaught_exceptions(); }
#endif

struct AttachedRecord {
  std::int32_t parent;  // record index the owner had open when it was added; -1: root
  StageRecord record;
};

// Names given by name_this_thread(), by thread id.
std::mutex g_thread_names_mutex;
std::unordered_map<std::uint64_t, std::string>& thread_names() {
  static auto* names = new std::unordered_map<std::uint64_t, std::string>();  // never destroyed
  return *names;
}

std::uint64_t this_thread_id() noexcept { return static_cast<std::uint64_t>(::gettid()); }

ThreadIdentity identity_of(std::uint64_t id) {
  {
    std::lock_guard lock(g_thread_names_mutex);
    auto it = thread_names().find(id);
    if (it != thread_names().end()) return {id, it->second};
  }
  if (id == static_cast<std::uint64_t>(::getpid())) return {id, "main"};
  return {id, "thread " + std::to_string(id)};
}

void give_error(StageRecord& record, const std::string& message) {
  if (record.failed && record.error.empty()) record.error = message;
  for (StageRecord& child : record.children) give_error(child, message);
}

// Records attached without a thread ran on the thread of their parent.
void inherit_threads(std::vector<ReportStage>& stages, std::uint64_t parent_thread) {
  for (ReportStage& stage : stages) {
    if (stage.thread == 0) stage.thread = parent_thread;
    inherit_threads(stage.children, stage.thread);
  }
}

void note_thread(std::vector<ThreadIdentity>& threads, const StageRecord& record) {
  if (record.thread.id != 0 &&
      std::none_of(threads.begin(), threads.end(),
                   [&](const ThreadIdentity& t) { return t.id == record.thread.id; })) {
    threads.push_back(record.thread.name.empty() ? identity_of(record.thread.id) : record.thread);
  }
  for (const StageRecord& child : record.children) note_thread(threads, child);
}

}  // namespace

ThreadIdentity this_thread_identity() { return identity_of(this_thread_id()); }

void name_this_thread(std::string name) {
  std::lock_guard lock(g_thread_names_mutex);
  if (name.empty()) {
    thread_names().erase(this_thread_id());
  } else {
    thread_names()[this_thread_id()] = std::move(name);
  }
}

std::int64_t resident_memory_bytes() noexcept {
  // Kept open for the life of the process: opening /proc costs more than reading it.
  static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  static const long page = ::sysconf(_SC_PAGESIZE);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return -1;
  text[n] = '\0';
  // "size resident shared text lib data dt", in pages: the second field.
  const char* p = text;
  while (*p != '\0' && *p != ' ') ++p;
  std::int64_t pages = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + (*p - '0');
  return pages * page;
}

struct CompileProfiler::Shared {
  std::mutex mutex;
  std::vector<AttachedRecord> attached;
  // Device timelines with the record index of the stage they belong to.
  std::vector<std::pair<std::int32_t, std::shared_ptr<const DeviceTimeline>>> timelines;
  // Stages open on threads other than the owner, innermost last, keyed by thread tag.
  std::unordered_map<const void*, std::vector<StageRecord>> foreign_open;
  // (thread tag, profiler current before enter()) for each enter() not yet exited.
  std::vector<std::pair<const void*, CompileProfiler*>> saved;
  // Session: enter()s and activations not yet undone, on all threads; when the current session
  // began; the [begin, end) of the finished ones, in nanoseconds on the now_ns() clock.
  int session_depth = 0;
  std::int64_t session_begin_ns = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> sessions;
  // Dynamic names live here so records can hold views; repeated names are stored once. Only the
  // owner thread touches it, so it needs no lock.
  std::unordered_set<std::string> names;
  // Owner thread only, like `names`: error messages and pass statistics by record index.
  std::unordered_map<std::int32_t, std::string> errors;
  std::vector<std::pair<std::int32_t, PassStats>> pass_stats;
  // The owner's thread id, set when a thread claims the buffer.
  std::atomic<std::uint64_t> owner_thread{0};
};

ProfilerError::ProfilerError(const std::string& message, std::filesystem::path path,
                             int error_number)
    : std::runtime_error(message), path_(std::move(path)), error_number_(error_number) {}

CompileProfiler::CompileProfiler() : shared_(std::make_unique<Shared>()) {}

CompileProfiler::CompileProfiler(bool memory) : CompileProfiler() { memory_ = memory; }

CompileProfiler::~CompileProfiler() {
  // A profiler destroyed while current would leave a dangling thread-local pointer behind.
  if (t_current_ == this) {
    CompileProfiler* previous = nullptr;
    for (const auto& [tag, saved] : shared_->saved) {
      if (tag == &t_thread_tag_) {
        previous = saved;  // the outermost enter() on this thread
        break;
      }
    }
    t_current_ = previous == this ? nullptr : previous;
  }
}

void CompileProfiler::bind_to_this_thread() noexcept {
  t_current_ = this;
  const void* expected = nullptr;
  if (owner_.compare_exchange_strong(expected, &t_thread_tag_, std::memory_order_relaxed)) {
    shared_->owner_thread.store(this_thread_id(), std::memory_order_relaxed);
  }
}

void CompileProfiler::begin_session_locked(std::int64_t now) noexcept {
  if (shared_->session_depth++ == 0) shared_->session_begin_ns = now;
}

void CompileProfiler::begin_lasting_session(std::int64_t since) noexcept {
  std::lock_guard lock(shared_->mutex);
  begin_session_locked(since);
}

void CompileProfiler::end_session_locked(std::int64_t now) noexcept {
  if (shared_->session_depth == 0) return;
  if (--shared_->session_depth == 0) shared_->sessions.emplace_back(shared_->session_begin_ns, now);
}

void CompileProfiler::enter() {
  const std::int64_t now = now_ns();
  {
    std::lock_guard lock(shared_->mutex);
    shared_->saved.emplace_back(&t_thread_tag_, t_current_);
    begin_session_locked(now);
  }
  bind_to_this_thread();
}

bool CompileProfiler::exit() {
  std::lock_guard lock(shared_->mutex);
  auto& saved = shared_->saved;
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->first == &t_thread_tag_) {
      t_current_ = it->second;
      saved.erase(std::next(it).base());
      end_session_locked(now_ns());
      return true;
    }
  }
  return false;
}

bool CompileProfiler::claim_ownership() noexcept {
  // The first thread to record claims the lock-free buffer.
  const void* owner = nullptr;
  if (owner_.compare_exchange_strong(owner, &t_thread_tag_, std::memory_order_relaxed)) {
    shared_->owner_thread.store(this_thread_id(), std::memory_order_relaxed);
    return true;
  }
  return owner == &t_thread_tag_;
}

CompileProfiler::Token CompileProfiler::open_stage(std::string_view name) {
  if (!owned_by_this_thread()) return open_foreign_stage(std::string(name));
  const auto index = static_cast<std::int32_t>(records_.size());
  // Fields are written in place: building a temporary Record and copying it made GCC reload it
  // with one wide load over narrower stores, a store-forwarding stall on every stage.
  Record& record = records_.emplace_back();
  record.name = name.data();
  record.name_size = static_cast<std::uint32_t>(name.size());
  record.parent = open_top_.load(std::memory_order_relaxed);
  record.end_ns = kOpen;
  open_top_.store(index, std::memory_order_relaxed);
  // Before the clock read: the /proc read is not billed to the stage.
  if (__builtin_expect(memory_, 0)) rss_.push_back({resident_memory_bytes(), -1});
  // Read the clock last so that a buffer reallocation is not billed to the stage.
  record.start_ns = now_ns();
  return Token{index, generation_};
}

CompileProfiler::Token CompileProfiler::open_owned_stage(std::string name) {
  if (!owned_by_this_thread()) return open_foreign_stage(std::move(name));
  return open_stage(*shared_->names.insert(std::move(name)).first);
}

void CompileProfiler::close_stage(Token token, bool failed) noexcept {
  const std::int64_t end = now_ns();
  if (token.index == kForeignStage) {
    close_foreign_stage(failed);
    return;
  }
  if (token.generation != generation_ || token.index < 0 ||
      static_cast<std::size_t>(token.index) >= records_.size()) {
    return;  // cleared since it was opened
  }
  Record& record = records_[token.index];
  if (record.end_ns != kOpen) return;  // already closed by end_stage() or an enclosing scope
  // Open records always form the chain from open_top_ to the root, so everything above this one
  // was opened inside it with begin_stage() and never ended: it ends here too.
  for (std::int32_t i = open_top_.load(std::memory_order_relaxed); i != token.index;
       i = records_[i].parent) {
    records_[i].end_ns = end;
    if (failed) failed_.push_back(i);
    if (__builtin_expect(memory_, 0)) sample_close_memory(i);
  }
  record.end_ns = end;
  if (failed) failed_.push_back(token.index);
  if (__builtin_expect(memory_, 0)) sample_close_memory(token.index);
  open_top_.store(record.parent, std::memory_order_relaxed);
}

void CompileProfiler::sample_close_memory(std::int32_t index) noexcept {
  if (static_cast<std::size_t>(index) < rss_.size()) rss_[index].end = resident_memory_bytes();
}

void CompileProfiler::set_pass_stats(Token token, const PassStats& stats) noexcept {
  if (token.generation != generation_ || token.index < 0 ||
      static_cast<std::size_t>(token.index) >= records_.size() || !owned_by_this_thread()) {
    return;
  }
  try {
    shared_->pass_stats.emplace_back(token.index, stats);
  } catch (...) {
    // Out of memory: the statistics are dropped, the compile goes on.
  }
}

CompileProfiler::Token CompileProfiler::open_foreign_stage(std::string name) {
  StageRecord record;
  record.name = std::move(name);
  record.thread = this_thread_identity();
  record.start = now_seconds();
  std::lock_guard lock(shared_->mutex);
  shared_->foreign_open[&t_thread_tag_].push_back(std::move(record));
  return Token{kForeignStage, 0};
}

void CompileProfiler::close_foreign_stage(bool failed) noexcept {
  const double end = now_seconds();
  std::lock_guard lock(shared_->mutex);
  auto it = shared_->foreign_open.find(&t_thread_tag_);
  if (it == shared_->foreign_open.end()) return;
  std::vector<StageRecord>& stack = it->second;
  if (stack.empty()) return;
  StageRecord record = std::move(stack.back());
  stack.pop_back();
  record.end = end;
  record.failed = record.failed || failed;
  if (!stack.empty()) {
    stack.back().children.push_back(std::move(record));
    return;
  }
  shared_->foreign_open.erase(it);
  shared_->attached.push_back({open_top_.load(std::memory_order_relaxed), std::move(record)});
}

void CompileProfiler::begin_stage(std::string name) { open_owned_stage(std::move(name)); }

void CompileProfiler::end_stage(bool failed, std::string error) {
  if (!owned_by_this_thread()) {
    if (!error.empty()) {
      std::lock_guard lock(shared_->mutex);
      auto it = shared_->foreign_open.find(&t_thread_tag_);
      if (it != shared_->foreign_open.end() && !it->second.empty()) {
        it->second.back().error = std::move(error);
      }
    }
    close_foreign_stage(failed);
    return;
  }
  const std::int32_t top = open_top_.load(std::memory_order_relaxed);
  if (top < 0) return;
  close_stage(Token{top, generation_}, failed);
  if (failed && !error.empty()) shared_->errors[top] = std::move(error);
}

void CompileProfiler::record_error(const std::string& message) {
  if (owned_by_this_thread()) {
    for (std::int32_t index : failed_) shared_->errors.try_emplace(index, message);
  }
  std::lock_guard lock(shared_->mutex);
  for (AttachedRecord& attached : shared_->attached) give_error(attached.record, message);
}

void CompileProfiler::add_stage_record(StageRecord record) {
  std::lock_guard lock(shared_->mutex);
  shared_->attached.push_back({open_top_.load(std::memory_order_relaxed), std::move(record)});
}

void CompileProfiler::attach_device_timeline(DeviceTimeline timeline) {
  auto shared = std::make_shared<const DeviceTimeline>(std::move(timeline));
  std::lock_guard lock(shared_->mutex);
  const std::int32_t stage = open_top_.load(std::memory_order_relaxed);
  if (stage >= 0) shared_->timelines.emplace_back(stage, std::move(shared));
}

void CompileProfiler::reserve(std::size_t stages) {
  records_.reserve(stages);
  if (memory_) rss_.reserve(stages);
}

void CompileProfiler::clear() {
  records_.clear();
  failed_.clear();
  rss_.clear();
  open_top_.store(-1, std::memory_order_relaxed);
  ++generation_;
  std::lock_guard lock(shared_->mutex);
  shared_->attached.clear();
  shared_->timelines.clear();
  shared_->foreign_open.clear();
  shared_->names.clear();
  shared_->errors.clear();
  shared_->pass_stats.clear();
  shared_->sessions.clear();
  if (shared_->session_depth > 0) shared_->session_begin_ns = now_ns();
}

CompileProfiler::Mark CompileProfiler::mark() const {
  Mark mark;
  mark.records = records_.size();
  mark.generation = generation_;
  std::lock_guard lock(shared_->mutex);
  mark.attached = shared_->attached.size();
  mark.timelines = shared_->timelines.size();
  return mark;
}

Report CompileProfiler::report() const { return build_report(Mark{0, 0, 0, generation_}, false); }

Report CompileProfiler::report_since(const Mark& mark) const { return build_report(mark, true); }

Report CompileProfiler::build_report(const Mark& requested, bool partial) const {
  const std::int64_t now = now_ns();
  const double now_s = static_cast<double>(now) / 1e9;
  // A clear() since the mark dropped everything before it: all that is left is newer.
  const Mark mark = requested.generation == generation_ ? requested : Mark{};
  std::vector<AttachedRecord> attached;
  std::vector<std::pair<std::int32_t, std::shared_ptr<const DeviceTimeline>>> timelines;
  std::vector<Interval> sessions;
  {
    std::lock_guard lock(shared_->mutex);
    const auto tail = [](const auto& all, std::size_t from) {
      return std::vector(all.begin() + static_cast<std::ptrdiff_t>(std::min(from, all.size())),
                         all.end());
    };
    attached = tail(shared_->attached, mark.attached);
    timelines = tail(shared_->timelines, mark.timelines);
    if (!partial) {
      sessions.reserve(shared_->sessions.size() + 1);
      for (const auto& [begin, end] : shared_->sessions) {
        sessions.push_back({static_cast<double>(begin) / 1e9, static_cast<double>(end) / 1e9});
      }
      if (shared_->session_depth > 0) {
        sessions.push_back({static_cast<double>(shared_->session_begin_ns) / 1e9, now_s});
      }
    }
  }

  // Records [first, count) are reported; a parent before `first` counts as no parent.
  const std::size_t count = records_.size();
  const std::size_t first = std::min(mark.records, count);
  const auto local = [first](std::int32_t index) {
    return static_cast<std::size_t>(index) - first;
  };
  const auto reported = [first, count](std::int32_t index) {
    return index >= 0 && static_cast<std::size_t>(index) >= first &&
           static_cast<std::size_t>(index) < count;
  };
  std::vector<std::int32_t> failed;
  for (std::int32_t index : failed_) {
    if (reported(index)) failed.push_back(index);
  }
  std::sort(failed.begin(), failed.end());
  const std::uint64_t owner_thread = shared_->owner_thread.load(std::memory_order_relaxed);
  std::unordered_map<std::int32_t, const PassStats*> pass_stats;
  for (const auto& [index, stats] : shared_->pass_stats) {
    if (reported(index)) pass_stats[index] = &stats;
  }
  std::vector<std::vector<std::int32_t>> children(count - first);
  std::vector<std::int32_t> roots;
  for (std::size_t i = first; i < count; ++i) {
    const std::int32_t parent = records_[i].parent;
    (reported(parent) ? children[local(parent)] : roots).push_back(static_cast<std::int32_t>(i));
  }
  std::vector<std::vector<const StageRecord*>> attached_children(count - first);
  std::vector<const StageRecord*> attached_roots;
  for (const AttachedRecord& a : attached) {
    (reported(a.parent) ? attached_children[local(a.parent)] : attached_roots).push_back(&a.record);
  }

  std::vector<std::shared_ptr<const DeviceTimeline>> device(count - first);
  for (auto& [index, timeline] : timelines) {
    if (reported(index)) device[local(index)] = std::move(timeline);
  }

  auto build = [&](auto& self, std::int32_t index) -> ReportStage {
    const Record& record = records_[index];
    ReportStage stage;
    stage.name = std::string(record.name, record.name_size);
    stage.open = record.end_ns == kOpen;
    stage.start = static_cast<double>(record.start_ns) / 1e9;
    // Dividing integral nanoseconds keeps durations exact to the nanosecond.
    stage.seconds = static_cast<double>((stage.open ? now : record.end_ns) - record.start_ns) / 1e9;
    stage.failed = std::binary_search(failed.begin(), failed.end(), index);
    stage.device = device[local(index)];
    stage.thread = owner_thread;
    if (stage.failed) {
      auto error = shared_->errors.find(index);
      if (error != shared_->errors.end()) stage.error = error->second;
    }
    if (memory_ && static_cast<std::size_t>(index) < rss_.size() && rss_[index].start >= 0) {
      const RssSample& rss = rss_[index];
      const std::int64_t end = stage.open ? resident_memory_bytes() : rss.end;
      if (end >= 0) stage.memory = StageMemory{end, end - rss.start};
    }
    if (auto stats = pass_stats.find(index); stats != pass_stats.end()) {
      stage.pass = *stats->second;
    }
    for (std::int32_t child : children[local(index)]) stage.children.push_back(self(self, child));
    for (const StageRecord* child : attached_children[local(index)]) {
      stage.children.push_back(to_report_stage(*child, now_s));
    }
    return stage;
  };
  std::vector<ReportStage> stages;
  stages.reserve(roots.size() + attached_roots.size());
  for (std::int32_t root : roots) stages.push_back(build(build, root));
  for (const StageRecord* root : attached_roots) stages.push_back(to_report_stage(*root, now_s));
  const std::uint64_t main_thread = owner_thread != 0 ? owner_thread : this_thread_id();
  inherit_threads(stages, main_thread);
  Report report = finalize_report(std::move(stages), std::move(sessions));
  report.threads.push_back(identity_of(main_thread));
  for (const AttachedRecord& a : attached) note_thread(report.threads, a.record);
  return report;
}

double CompileProfiler::total_seconds() const { return report().total_seconds; }

nlohmann::json CompileProfiler::to_dict() const { return report_to_json(report()); }

std::string CompileProfiler::to_json(int indent) const {
  return dump_json(report_to_ordered_json(report()), indent);
}

std::string CompileProfiler::summary() const { return format_summary(report()); }

void ScopedStage::start(CompileProfiler* profiler, std::string_view name) noexcept {
  profiler_ = profiler;
  uncaught_ = uncaught_exception_count();
  try {
    token_ = profiler->open_stage(name);
  } catch (...) {
    profiler_ = nullptr;  // out of memory: drop the stage rather than fail the compile
  }
}

void ScopedStage::start_owned(CompileProfiler* profiler, std::string name) {
  profiler_ = profiler;
  uncaught_ = uncaught_exception_count();
  try {
    token_ = profiler->open_owned_stage(std::move(name));
  } catch (...) {
    profiler_ = nullptr;
  }
}

void ScopedStage::finish() noexcept {
  profiler_->close_stage(token_, uncaught_exception_count() > uncaught_);
}

void ScopedStage::end(bool failed) noexcept {
  if (profiler_ == nullptr) return;
  profiler_->close_stage(token_, failed);
  recorded_in_ = profiler_;
  profiler_ = nullptr;
}

void ScopedStage::set_pass_stats(const PassStats& stats) noexcept {
  CompileProfiler* profiler = profiler_ != nullptr ? profiler_ : recorded_in_;
  if (profiler != nullptr) profiler->set_pass_stats(token_, stats);
}

// The session lock is uncontended in practice (entry points, not stage boundaries, take it); a
// std::mutex that cannot be locked here would be a broken process, so noexcept stays.
ProfilerActivation::ProfilerActivation(CompileProfiler* profiler) noexcept
    : previous_(CompileProfiler::t_current_), profiler_(profiler) {
  if (profiler_ == nullptr) return;
  const std::int64_t now = now_ns();
  {
    std::lock_guard lock(profiler_->shared_->mutex);
    profiler_->begin_session_locked(now);
  }
  profiler_->bind_to_this_thread();
}

ProfilerActivation::~ProfilerActivation() {
  if (profiler_ == nullptr) return;
  CompileProfiler::t_current_ = previous_;
  const std::int64_t now = now_ns();
  std::lock_guard lock(profiler_->shared_->mutex);
  profiler_->end_session_locked(now);
}

}  // namespace pypto::profiling
