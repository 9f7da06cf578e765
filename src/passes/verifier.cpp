// The verifier: checks that the IR properties passes promise actually hold, so that a broken
// pass is caught right after it ran instead of as a wrong result at the end of the pipeline.
#include "pypto/passes/verifier.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/liveness.h"

namespace pypto::passes {

namespace {

using namespace ir;

using Problems = std::vector<VerificationProblem>;

std::string at(Span span) { return span.valid() ? " at " + detail::span_text(span) : ""; }

// Single assignment, use after definition, loop and if bodies as scopes.
class SsaChecker : public IRVisitor {
 public:
  SsaChecker(const Function& f, Problems* problems) : problems_(problems) {
    defined_.reserve(detail::expected_variable_count(f));
    open_scope();
    for (const auto& p : f.params) define(p.var, f.span);
    visit(f.body);
  }

 protected:
  void visit_var(const Var& v) override {
    auto it = defined_.find(&v);
    if (it != defined_.end() && in_open_scope(it->second)) return;
    // A Var node is shared by all its uses, so the position reported is the using statement's.
    if (it != defined_.end()) {
      report(stmt_span_, "variable '" + v.name + "' used outside the loop or branch defining it" +
                             at(stmt_span_));
    } else {
      report(stmt_span_, "variable '" + v.name + "' used before definition" + at(stmt_span_));
    }
  }
  void visit_eval(const EvalStmt& s) override {
    stmt_span_ = s.span();
    IRVisitor::visit_eval(s);
  }
  void visit_return(const ReturnStmt& s) override {
    stmt_span_ = s.span();
    IRVisitor::visit_return(s);
  }
  void visit_yield(const YieldStmt& s) override {
    stmt_span_ = s.span();
    IRVisitor::visit_yield(s);
  }
  void visit_assign(const AssignStmt& s) override {
    stmt_span_ = s.span();
    visit(s.value);
    define(s.var, s.span());
  }
  void visit_for(const ForStmt& s) override {
    stmt_span_ = s.span();
    visit(s.start);
    visit(s.stop);
    visit(s.step);
    for (const auto& v : s.init_values) visit(v);
    open_scope();
    define(s.loop_var, s.span());
    for (const auto& a : s.iter_args) define(a, s.span());
    visit(s.body);
    open_scopes_.pop_back();
    for (const auto& r : s.return_vars) define(r, s.span());
  }
  void visit_while(const WhileStmt& s) override {
    stmt_span_ = s.span();
    for (const auto& v : s.init_values) visit(v);
    open_scope();
    for (const auto& a : s.iter_args) define(a, s.span());
    visit(s.cond);
    visit(s.body);
    open_scopes_.pop_back();
    for (const auto& r : s.return_vars) define(r, s.span());
  }
  void visit_if(const IfStmt& s) override {
    stmt_span_ = s.span();
    visit(s.cond);
    open_scope();
    visit(s.then_body);
    open_scopes_.pop_back();
    open_scope();
    visit(s.else_body);
    open_scopes_.pop_back();
    for (const auto& r : s.return_vars) define(r, s.span());
  }

 private:
  // The scope that makes a variable visible: its depth in the stack of open scopes and its
  // serial number. One map of every variable replaces a set per open scope (which cost
  // a second insert per definition and a search of every enclosing scope per use).
  struct Definition {
    size_t depth;
    uint64_t scope;
  };

  void open_scope() { open_scopes_.push_back(next_scope_++); }
  // A variable is visible while the scope that defined it is open: the scope at its depth is
  // still the same one (serial numbers are never reused).
  bool in_open_scope(const Definition& d) const {
    return d.depth < open_scopes_.size() && open_scopes_[d.depth] == d.scope;
  }
  void define(const VarPtr& v, Span span) {
    auto [it, inserted] =
        defined_.try_emplace(v.get(), Definition{open_scopes_.size() - 1, open_scopes_.back()});
    if (!inserted) {
      Span where = v->span().valid() ? v->span() : span;
      report(where, "variable '" + v->name + "' assigned more than once" + at(span));
      // A variable is visible while any scope that defined it is open. Open scopes are nested,
      // so an earlier definition still open outlives this one; a closed one gives way to it.
      if (!in_open_scope(it->second)) {
        it->second = Definition{open_scopes_.size() - 1, open_scopes_.back()};
      }
    }
  }
  void report(Span span, std::string message) { problems_->push_back({span, std::move(message)}); }

  Problems* problems_;
  Span stmt_span_;
  ir::NodeMap<const Var*, Definition> defined_;
  std::vector<uint64_t> open_scopes_;  // serial numbers, outermost first
  uint64_t next_scope_ = 0;
};

class StructureChecker : public IRVisitor {
 public:
  StructureChecker(const Function& f, IRProperties props, Problems* problems)
      : function_(f),
        props_(props),
        problems_(problems),
        check_calls_(has_property(props, IRProperty::TileOpsOnly) && is_kernel(f.type)) {
    visit(f.body);
  }

 protected:
  // Expressions are walked only for the one check made on every call (TileOpsOnly); the other
  // checks look at statements (Flat searches the values it checks itself), and skipping the
  // expressions skips most of the nodes of a kernel.
  void visit_assign(const AssignStmt& s) override {
    check_whole_value(s.value, s.span());
    check_tile_var(*s.var, s.span());
    if (check_calls_) IRVisitor::visit_assign(s);
  }
  void visit_eval(const EvalStmt& s) override {
    check_whole_value(s.expr, s.span());
    if (check_calls_) IRVisitor::visit_eval(s);
  }
  void visit_return(const ReturnStmt& s) override {
    for (const auto& v : s.values) check_no_call(v, s.span());
    if (check_calls_) IRVisitor::visit_return(s);
  }
  void visit_yield(const YieldStmt& s) override {
    for (const auto& v : s.values) check_no_call(v, s.span());
    if (check_calls_) IRVisitor::visit_yield(s);
  }
  void visit_for(const ForStmt& s) override {
    if (has_property(props_, IRProperty::NoUnrollLoops) && s.for_kind == ForKind::Unroll) {
      report(s.span(),
             "pl.unroll loop over '" + s.loop_var->name + "' was not unrolled" + at(s.span()));
    }
    for (const auto& a : s.iter_args) check_tile_var(*a, s.span());
    for (const auto& r : s.return_vars) check_tile_var(*r, s.span());
    if (check_calls_) {
      IRVisitor::visit_for(s);
    } else {
      visit(s.body);
    }
  }
  void visit_while(const WhileStmt& s) override {
    check_no_call(s.cond, s.span());
    for (const auto& a : s.iter_args) check_tile_var(*a, s.span());
    for (const auto& r : s.return_vars) check_tile_var(*r, s.span());
    if (check_calls_) {
      IRVisitor::visit_while(s);
    } else {
      visit(s.body);
    }
  }
  void visit_if(const IfStmt& s) override {
    for (const auto& r : s.return_vars) check_tile_var(*r, s.span());
    if (check_calls_) {
      IRVisitor::visit_if(s);
    } else {
      visit(s.then_body);
      visit(s.else_body);
    }
  }
  void visit_scope(const ScopeStmt& s) override {
    if (has_property(props_, IRProperty::NoScopes)) {
      report(s.span(), "pl.at scope left in function '" + function_.name + "'" + at(s.span()));
    }
    IRVisitor::visit_scope(s);
  }
  void visit_call(const Call& c) override {
    if (has_property(props_, IRProperty::TileOpsOnly) && is_kernel(function_.type)) {
      auto cat = detail::op_category(c);
      bool compute = cat == OpCategory::ElementwiseBinary || cat == OpCategory::ElementwiseUnary ||
                     cat == OpCategory::Cast || cat == OpCategory::RowReduce ||
                     cat == OpCategory::RowExpand || cat == OpCategory::ColReduce ||
                     cat == OpCategory::ArgReduce;
      if (compute && detail::is_tensor(c.type())) {
        report(c.span(), "pl." + c.callee + " on tensors left in InCore function '" +
                             function_.name + "'" + at(c.span()));
      }
    }
    IRVisitor::visit_call(c);
  }

 private:
  bool incore() const { return is_kernel(function_.type); }

  void check_whole_value(const ExprPtr& value, Span span) {
    if (!has_property(props_, IRProperty::Flat)) return;
    if (const auto* c = value->as<Call>()) {
      for (const auto& a : c->args) check_no_call(a, span);
    } else {
      check_no_call(value, span);
    }
  }
  void check_no_call(const ExprPtr& e, Span span) {
    if (!has_property(props_, IRProperty::Flat)) return;
    struct Finder : IRVisitor {
      const Call* found = nullptr;
      void visit_call(const Call& c) override {
        if (!found) found = &c;
      }
    } finder;
    finder.visit(e);
    if (finder.found) {
      report(finder.found->span().valid() ? finder.found->span() : span,
             "call of '" + finder.found->callee + "' nested inside another expression" + at(span));
    }
  }
  void check_tile_var(const Var& v, Span span) {
    if (!incore()) return;
    const auto* t = detail::as_tile(v.type());
    if (!t) return;
    Span where = v.span().valid() ? v.span() : span;
    if (has_property(props_, IRProperty::MemorySpacesSet) && !t->space) {
      report(where, "tile '" + v.name + "' has no memory space" + at(where));
    }
    if (has_property(props_, IRProperty::MemRefsSet)) {
      if (!t->memref) {
        report(where, "tile '" + v.name + "' has no MemRef" + at(where));
      } else if (t->space && t->memref->space != *t->space) {
        report(where, "tile '" + v.name + "' is in " + std::string(memory_space_name(*t->space)) +
                          " but its MemRef is in " +
                          std::string(memory_space_name(t->memref->space)) + at(where));
      } else if (t->memref->size < t->size_bytes()) {
        report(where, "tile '" + v.name + "' of " + std::to_string(t->size_bytes()) +
                          " bytes has a buffer of only " + std::to_string(t->memref->size) +
                          " bytes" + at(where));
      }
    }
  }
  void report(Span span, std::string message) { problems_->push_back({span, std::move(message)}); }

  const Function& function_;
  IRProperties props_;
  Problems* problems_;
  const bool check_calls_;
};

// Addresses inside capacity, aligned, consistent per buffer, and no two buffers live at the same
// time overlapping.
void check_addresses(const Function& f, Problems* problems) {
  auto intervals = compute_live_intervals(f);
  struct Buffer {
    const Var* tile = nullptr;
    MemRef memref;
    LiveInterval live{INT64_MAX, INT64_MIN};
  };
  std::map<int64_t, Buffer> buffers;
  // Only tiles with a MemRef take part: sorting every variable's interval cost more than the
  // rest of the check on large kernels.
  std::vector<std::pair<const Var*, LiveInterval>> ordered;
  for (const auto& [var, iv] : intervals) {
    const auto* t = detail::as_tile(var->type());
    if (t && t->memref) ordered.emplace_back(var, iv);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.second.start < b.second.start; });
  for (const auto& [var, iv] : ordered) {
    const auto* t = detail::as_tile(var->type());
    if (!t || !t->memref) continue;
    const MemRef& m = *t->memref;
    std::string name = "tile '" + var->name + "'";
    int64_t capacity = memory_space_capacity(m.space);
    if (m.addr < 0) {
      problems->push_back({var->span(), name + " has no address" + at(var->span())});
      continue;
    }
    if (m.addr % kMemoryAlignment != 0) {
      problems->push_back({var->span(), name + " at address " + std::to_string(m.addr) +
                                            " is not aligned to " +
                                            std::to_string(kMemoryAlignment) + " bytes"});
    }
    if (capacity > 0 && !support::box_fits(m.addr, m.size, capacity)) {
      const auto end = support::checked_add(m.addr, m.size);
      problems->push_back({var->span(), name + " at [" + std::to_string(m.addr) + ", " +
                                            (end ? std::to_string(*end) : "beyond 2^63") +
                                            ") exceeds " + std::string(memory_space_name(m.space)) +
                                            " capacity of " + std::to_string(capacity) + " bytes"});
    }
    auto [it, inserted] = buffers.try_emplace(m.buffer_id);
    Buffer& b = it->second;
    if (inserted) {
      b.tile = var;
      b.memref = m;
    } else if (b.memref.addr != m.addr || b.memref.space != m.space) {
      problems->push_back({var->span(), name + " and tile '" + b.tile->name + "' share buffer " +
                                            std::to_string(m.buffer_id) +
                                            " but have different addresses or spaces"});
    }
    b.memref.size = std::max(b.memref.size, m.size);
    b.live.start = std::min(b.live.start, iv.start);
    b.live.end = std::max(b.live.end, iv.end);
  }
  std::vector<const Buffer*> order;
  for (const auto& [id, b] : buffers) order.push_back(&b);
  std::sort(order.begin(), order.end(),
            [](const Buffer* a, const Buffer* b) { return a->live.start < b->live.start; });
  std::vector<const Buffer*> live;
  for (const Buffer* b : order) {
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](const Buffer* o) { return o->live.end < b->live.start; }),
               live.end());
    for (const Buffer* o : live) {
      if (o->memref.space != b->memref.space) continue;
      int64_t lo = std::max(o->memref.addr, b->memref.addr);
      int64_t hi =
          std::min(support::saturated(support::checked_add(o->memref.addr, o->memref.size)),
                   support::saturated(support::checked_add(b->memref.addr, b->memref.size)));
      if (lo < hi) {
        problems->push_back(
            {b->tile->span(),
             "tiles '" + o->tile->name + "' and '" + b->tile->name + "' are live at the same " +
                 "time but their " + std::string(memory_space_name(b->memref.space)) +
                 " buffers overlap at [" + std::to_string(lo) + ", " + std::to_string(hi) + ")"});
      }
    }
    live.push_back(b);
  }
}

void check_call_directions(const Program& p, const Function& f, Problems* problems) {
  struct Finder : IRVisitor {
    // The type of each function by name (the first of a name, as Program::find_function), built
    // once: searching the function list per call was quadratic in programs of many kernels.
    std::unordered_map<std::string_view, FunctionType> function_types;
    Problems* problems;
    void visit_call(const Call& c) override {
      IRVisitor::visit_call(c);
      if (c.call_kind != CallKind::Function) return;
      auto callee = function_types.find(c.callee);
      if (callee == function_types.end() || !is_kernel(callee->second)) return;
      const auto* attr = find_attr(c.attrs, "arg_directions");
      const auto* list = attr ? std::get_if<std::vector<int64_t>>(attr) : nullptr;
      if (!list || list->size() != c.args.size()) {
        problems->push_back({c.span(), "call of '" + c.callee + "' has no arg_directions for its " +
                                           std::to_string(c.args.size()) + " arguments" +
                                           at(c.span())});
      }
    }
  } finder;
  finder.function_types.reserve(p.functions.size());
  for (const auto& g : p.functions) finder.function_types.emplace(g->name, g->type);
  finder.problems = problems;
  finder.visit(f.body);
}

// The properties StructureChecker checks in `f`; it does not walk a function without any.
IRProperties structure_properties(const Function& f) {
  IRProperties props = IRProperty::NoUnrollLoops | IRProperty::Flat | IRProperty::NoScopes;
  if (is_kernel(f.type)) {
    props = props | IRProperty::TileOpsOnly | IRProperty::MemorySpacesSet | IRProperty::MemRefsSet;
  }
  return props;
}

}  // namespace

std::vector<VerificationProblem> check_function(const Program& program, const Function& f,
                                                IRProperties props) {
  Problems problems;
  if (has_property(props, IRProperty::SSA)) SsaChecker(f, &problems);
  if (props & structure_properties(f)) StructureChecker(f, props, &problems);
  if (has_property(props, IRProperty::AddressesAssigned) && is_kernel(f.type)) {
    check_addresses(f, &problems);
  }
  if (has_property(props, IRProperty::CallDirectionsSet) && submits_tasks(f.type)) {
    check_call_directions(program, f, &problems);
  }
  return problems;
}

std::vector<VerificationProblem> check_properties(const Program& program, IRProperties props) {
  Problems problems;
  for (const auto& f : program.functions) {
    auto more = check_function(program, *f, props);
    problems.insert(problems.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  return problems;
}

namespace {

// Throws VerificationError for the first of `problems`, if any, naming the pass it followed.
void throw_first(const std::vector<VerificationProblem>& problems, std::string_view pass_name) {
  if (problems.empty()) return;
  throw VerificationError(problems.front().span,
                          "after " + std::string(pass_name) + ": " + problems.front().message);
}

}  // namespace

void verify_program(const Program& program, IRProperties properties, std::string_view pass_name) {
  throw_first(check_properties(program, properties), pass_name);
}

void VerificationMemory::verify(const Program& program, IRProperties properties,
                                std::string_view pass_name) {
  for (const auto& f : program.functions) {
    Entry& entry = checked_[f.get()];
    if (entry.function.lock() != f) entry = Entry{f, 0};
    const IRProperties to_check = properties & ~(entry.properties & kFunctionLocalProperties);
    if (to_check == 0) continue;
    throw_first(check_function(program, *f, to_check), pass_name);
    entry.properties |= to_check;
  }
}

}  // namespace pypto::passes
