#include "pypto/passes/liveness.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "pass_utils.h"

namespace pypto::passes {

namespace {

using namespace ir;

class LivenessBuilder : public IRVisitor {
 public:
  ir::NodeMap<const Var*, LiveInterval> intervals;

  void run(const Function& f) {
    intervals.reserve(detail::expected_variable_count(f));
    for (const auto& p : f.params) define(p.var.get());
    visit(f.body);
  }

 protected:
  void visit_var(const Var& v) override { use(&v); }
  void visit_assign(const AssignStmt& s) override {
    ++now_;
    visit(s.value);
    define(s.var.get());
  }
  void visit_eval(const EvalStmt& s) override {
    ++now_;
    visit(s.expr);
  }
  void visit_return(const ReturnStmt& s) override {
    ++now_;
    for (const auto& v : s.values) visit(v);
  }
  void visit_yield(const YieldStmt& s) override {
    ++now_;
    for (const auto& v : s.values) visit(v);
  }
  void visit_for(const ForStmt& s) override {
    ++now_;
    visit(s.start);
    visit(s.stop);
    visit(s.step);
    for (const auto& v : s.init_values) visit(v);
    loops_.push_back({now_, {}});
    define(s.loop_var.get());
    for (const auto& a : s.iter_args) define(a.get());
    visit(s.body);
    ++now_;
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    for (const Var* v : loop.used_from_outside) extend(v, now_);
    extend(s.loop_var.get(), now_);
    for (const auto& a : s.iter_args) extend(a.get(), now_);
    for (const auto& r : s.return_vars) define(r.get());
  }
  // Like a for loop: what the condition or body reads from outside stays live to the loop's
  // end, since the next trip reads it again.
  void visit_while(const WhileStmt& s) override {
    ++now_;
    for (const auto& v : s.init_values) visit(v);
    loops_.push_back({now_, {}});
    for (const auto& a : s.iter_args) define(a.get());
    visit(s.cond);
    visit(s.body);
    ++now_;
    Loop loop = std::move(loops_.back());
    loops_.pop_back();
    for (const Var* v : loop.used_from_outside) extend(v, now_);
    for (const auto& a : s.iter_args) extend(a.get(), now_);
    for (const auto& r : s.return_vars) define(r.get());
  }
  void visit_if(const IfStmt& s) override {
    ++now_;
    visit(s.cond);
    visit(s.then_body);
    visit(s.else_body);
    ++now_;
    for (const auto& r : s.return_vars) define(r.get());
  }

 private:
  struct Loop {
    int64_t header;
    std::vector<const Var*> used_from_outside;
  };

  void define(const Var* v) {
    auto& iv = intervals[v];
    iv.start = now_;
    iv.end = std::max(iv.end, now_);
  }
  void extend(const Var* v, int64_t at) {
    auto& iv = intervals[v];
    iv.end = std::max(iv.end, at);
  }
  void use(const Var* v) {
    // One look-up per use: the map holds every variable of the function.
    auto [it, inserted] = intervals.try_emplace(v);
    int64_t def = inserted ? 0 : it->second.start;
    it->second.end = std::max(it->second.end, now_);
    // The outermost loop entered after the definition keeps the value live to its end.
    for (auto& loop : loops_) {
      if (loop.header >= def) {
        loop.used_from_outside.push_back(v);
        break;
      }
    }
  }

  int64_t now_ = 0;
  std::vector<Loop> loops_;
};

}  // namespace

ir::NodeMap<const Var*, LiveInterval> compute_live_intervals(const Function& f) {
  LivenessBuilder b;
  b.run(f);
  return std::move(b.intervals);
}

std::map<int64_t, BufferLiveness> collect_buffers(const Function& f) {
  // Gathered in a hash map and sorted once: inserting tile by tile into the ordered map cost a
  // tree search per tile, most of MemoryReuse on kernels with 10^4 buffers.
  auto intervals = compute_live_intervals(f);
  std::unordered_map<int64_t, BufferLiveness> by_id;
  by_id.reserve(intervals.size());
  for (const auto& [var, iv] : intervals) {
    const auto* t = detail::as_tile(var->type());
    if (!t || !t->memref) continue;
    auto& b = by_id[t->memref->buffer_id];
    b.space = t->memref->space;
    b.size = std::max(b.size, t->memref->size);
    b.addr = t->memref->addr;
    if (iv.start < b.live.start ||
        (iv.start == b.live.start && b.first_tile && var->name < b.first_tile->name)) {
      b.first_tile = var;
    }
    b.live.start = std::min(b.live.start, iv.start);
    b.live.end = std::max(b.live.end, iv.end);
  }
  std::vector<std::pair<int64_t, BufferLiveness>> sorted(by_id.begin(), by_id.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<int64_t, BufferLiveness> buffers;
  for (const auto& [id, b] : sorted) buffers.emplace_hint(buffers.end(), id, b);
  return buffers;
}

MemoryUsage measure_memory_usage(const Function& f, MemorySpace space) {
  MemoryUsage usage;
  for (const auto& [var, iv] : compute_live_intervals(f)) {
    const auto* t = detail::as_tile(var->type());
    if (t && t->memref && t->memref->space == space) usage.tile_bytes += t->size_bytes();
  }
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +size at start / -size after end)
  for (const auto& [id, b] : collect_buffers(f)) {
    if (b.space != space) continue;
    usage.buffer_bytes += b.size;
    events.emplace_back(b.live.start, b.size);
    events.emplace_back(b.live.end + 1, -b.size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (const auto& [time, delta] : events) {
    live += delta;
    usage.peak_live_bytes = std::max(usage.peak_live_bytes, live);
  }
  return usage;
}

}  // namespace pypto::passes
