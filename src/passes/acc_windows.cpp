// Windows of an accumulator written in place (part of ConvertToSSA, see pass_utils.h).
//
// In PyPTO a pl.tile.slice of an Acc tile is a view of its storage, and pl.matmul_acc writes
// its accumulator in place, so accumulating into a window updates the parent:
//
//     acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.Mem.Acc)
//     win = pl.tile.slice(acc, [M, NT], [0, t * NT])
//     win = pl.matmul_acc(win, a, b)        # the columns [t*NT, t*NT + NT) of acc change
//
// Tiles are values in this IR, so the write-through is made explicit: after every matmul_acc
// (or gemv_acc) whose accumulator is such a window, `acc = pl.assemble(acc, win, offsets)` is
// inserted. It runs before SSA conversion, where the frontend still uses one Var per name, so
// the parent then becomes a loop-carried value like any other rebound name. A window is known
// from its slice to the end of the statement list that holds the slice (nested blocks included)
// or until its name or the parent's is bound to something else.
#include <iterator>
#include <optional>
#include <unordered_map>

#include "pass_utils.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

struct Window {
  VarPtr parent;
  ExprPtr offsets;
};

bool is_acc_tile(const TypePtr& t) {
  const auto* tile = t ? t->as<TileType>() : nullptr;
  return tile && tile->space == MemorySpace::Acc;
}

class AccWindowWriteBack : public IRMutator {
 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    const auto outer = windows_;  // windows defined in this list end with it
    bool changed = false;
    std::vector<StmtPtr> stmts;
    stmts.reserve(s->stmts.size());
    for (const auto& st : s->stmts) {
      StmtPtr out = mutate(st);
      changed = changed || out != st;
      stmts.push_back(out);
      if (const auto* assign = st->as<AssignStmt>()) {
        if (StmtPtr write_back = track(*assign)) {
          stmts.push_back(write_back);
          changed = true;
        }
      }
    }
    windows_ = outer;
    if (!changed) return s;
    return make_seq(std::move(stmts), s->span());
  }

 private:
  // Updates the known windows for one assignment; returns the write-back it needs, if any.
  StmtPtr track(const AssignStmt& s) {
    const Var* target = s.var.get();
    const Call* call = as_op_call(s.value);
    StmtPtr write_back;
    std::optional<Window> window;
    if (call && call->callee == "slice" && call->args.size() == 3) {
      const auto* parent = call->args[0]->as<Var>();
      if (parent && is_acc_tile(parent->type())) {
        window = Window{std::static_pointer_cast<const Var>(call->args[0]), call->args[2]};
      }
    } else if (call && (call->callee == "matmul_acc" || call->callee == "gemv_acc") &&
               !call->args.empty()) {
      const auto* acc = call->args[0]->as<Var>();
      auto it = acc ? windows_.find(acc) : windows_.end();
      if (it != windows_.end()) {
        window = it->second;
        const Window& w = it->second;
        write_back = make_node<AssignStmt>(
            w.parent, make_op_call("assemble", {w.parent, s.var, w.offsets}, {}, s.span()),
            s.span());
      }
    }
    // A name bound anew is no window any more, nor a parent of one.
    for (auto it = windows_.begin(); it != windows_.end();) {
      const bool parent_rebound = it->second.parent.get() == target && !write_back;
      it = (it->first == target || parent_rebound) ? windows_.erase(it) : std::next(it);
    }
    if (window) windows_[target] = *window;
    return write_back;
  }

  std::unordered_map<const Var*, Window> windows_;
};

}  // namespace

FunctionPtr write_back_acc_windows(const FunctionPtr& f) {
  AccWindowWriteBack pass;
  return pass.mutate_function(f);
}

}  // namespace pypto::passes::detail
