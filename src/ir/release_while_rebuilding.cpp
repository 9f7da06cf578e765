// ReleaseWhileRebuilding and rebuild_body (mutator.h): how a pass frees the old version of a
// function while it builds the new one.
#include "pypto/ir/mutator.h"
#include "pypto/ir/visitor.h"

namespace pypto::ir {

namespace {

// The function the innermost live ReleaseWhileRebuilding armed, until a rebuild claims it. One
// per thread: a pass runs on one thread, and compiles on other threads arm their own.
thread_local const Function* armed_function = nullptr;

// The body of `f`, if `f` is the armed function, nobody claimed it before and the body is a
// statement list nothing else holds; null otherwise.
const SeqStmts* claim(const Function& f) {
  if (armed_function != &f) return nullptr;
  armed_function = nullptr;
  if (!f.body || f.body.use_count() != 1) return nullptr;
  return f.body->as<SeqStmts>();
}

}  // namespace

ReleaseWhileRebuilding::ReleaseWhileRebuilding(const ProgramPtr& program, const FunctionPtr& f)
    : previous_(armed_function) {
  const bool owned = program.use_count() == 1 && f.use_count() == 1;
  armed_function = owned ? f.get() : nullptr;
}

ReleaseWhileRebuilding::~ReleaseWhileRebuilding() { armed_function = previous_; }

StmtPtr rebuild_body(const Function& f, const std::function<StmtPtr(const StmtPtr&)>& rebuild) {
  const SeqStmts* seq = claim(f);
  if (!seq) return rebuild(f.body);
  // Nothing but `f` holds the list (claim() checked), and its statements are not const objects:
  // the list may be emptied in place.
  auto& old = const_cast<std::vector<StmtPtr>&>(seq->stmts);
  std::vector<StmtPtr> out;
  out.reserve(old.size());
  std::vector<VarPtr> keep_alive;
  bool changed = false;
  for (auto& slot : old) {
    StmtPtr taken = std::move(slot);
    out.push_back(rebuild(taken));
    changed |= out.back() != taken;
    if (taken.use_count() == 1) {
      // The statement dies now; the variables it defined must outlive the walk.
      if (const auto* assign = taken->as<AssignStmt>()) {
        keep_alive.push_back(assign->var);
      } else {
        for (auto& v : defined_vars(taken)) keep_alive.push_back(std::move(v));
      }
    }
  }
  if (!changed) {
    old = std::move(out);
    return f.body;
  }
  return make_seq(std::move(out), seq->span());
}

}  // namespace pypto::ir
