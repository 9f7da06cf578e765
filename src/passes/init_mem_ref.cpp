// InitMemRef: gives every tile of an InCore function a MemRef {space, buffer_id, size}. Tiles
// that should live in one buffer share it: a loop's iter_arg, its init value, its yielded value
// and its return var; a matmul_acc result and its accumulator input; an assemble result and its
// target. An input joins only when it is not read afterwards, so sharing never clobbers a value
// that is still needed.
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/liveness.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

class BufferGroups : public IRVisitor {
 public:
  explicit BufferGroups(const Function& f) : intervals_(compute_live_intervals(f)) {
    // Every tile has an interval, so this is room for all of them: no rehash while growing.
    parent_.reserve(intervals_.size());
    for (const auto& p : f.params) add(p.var.get());
    visit(f.body);
  }

  // Tiles in definition order.
  std::vector<const Var*> tiles;

  const Var* find(const Var* v) {
    const Var* p = parent_.at(v);
    if (p == v) return v;
    const Var* root = find(p);
    parent_[v] = root;
    return root;
  }

 protected:
  // Only statements matter here (definitions and the calls they assign), so expressions are not
  // walked.
  void visit_eval(const EvalStmt&) override {}
  void visit_return(const ReturnStmt&) override {}
  void visit_yield(const YieldStmt&) override {}
  void visit_assign(const AssignStmt& s) override {
    add(s.var.get());
    if (const auto* c = detail::as_op_call(s.value)) {
      if ((c->callee == "matmul_acc" || c->callee == "gemv_acc" ||
           c->callee == "batch_matmul_acc" || c->callee == "matmul_mx_acc" ||
           c->callee == "assemble") &&
          !c->args.empty()) {
        join_if_dead_after(c->args[0], s.var.get());
      }
    }
  }
  void visit_for(const ForStmt& s) override {
    carried(s.iter_args, s.init_values, s.return_vars, s.body);
  }
  void visit_while(const WhileStmt& s) override {
    carried(s.iter_args, s.init_values, s.return_vars, s.body);
  }
  void visit_if(const IfStmt& s) override {
    for (const auto& r : s.return_vars) add(r.get());
    visit(s.then_body);
    visit(s.else_body);
  }

 private:
  // A loop's carried tiles (for and while alike) share one buffer with their initial value,
  // their result and, when possible, the value yielded for the next trip.
  void carried(const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& init_values,
               const std::vector<VarPtr>& return_vars, const StmtPtr& loop_body) {
    for (const auto& a : iter_args) add(a.get());
    for (const auto& r : return_vars) add(r.get());
    visit(loop_body);
    auto body = detail::stmt_list(loop_body);
    const auto* y = body.empty() ? nullptr : body.back()->as<YieldStmt>();
    for (size_t i = 0; i < iter_args.size(); ++i) {
      const Var* arg = iter_args[i].get();
      if (!detail::as_tile(arg->type())) continue;
      if (i < return_vars.size()) join(arg, return_vars[i].get());
      if (i < init_values.size()) join_if_dead_after(init_values[i], arg);
      if (y && i < y->values.size()) {
        // The yielded value may take the carried buffer when the iter_arg is dead by the time
        // the yielded value is produced.
        const auto* next = y->values[i]->as<Var>();
        if (next && parent_.count(next) && !read_after(arg, next, body)) join(arg, next);
      }
    }
  }
  void add(const Var* v) {
    if (!detail::as_tile(v->type())) return;
    if (parent_.try_emplace(v, v).second) tiles.push_back(v);
  }
  void join(const Var* a, const Var* b) {
    if (!parent_.count(a) || !parent_.count(b)) return;
    const Var* ra = find(a);
    const Var* rb = find(b);
    if (ra != rb) parent_[rb] = ra;
  }
  // `input` (consumed at the current statement) shares `result`'s buffer when nothing reads it
  // later.
  void join_if_dead_after(const ExprPtr& input, const Var* result) {
    const auto* v = input->as<Var>();
    if (!v || !parent_.count(v) || !intervals_.count(v) || !intervals_.count(result)) return;
    if (intervals_.at(v).end <= intervals_.at(result).start) join(v, result);
  }
  // Whether a statement of `body` after the one defining `next` reads `arg` (then `next`
  // cannot overwrite the buffer `arg` is in).
  static bool read_after(const Var* arg, const Var* next, const std::vector<StmtPtr>& body) {
    size_t def = body.size();
    for (size_t k = 0; k + 1 < body.size() && def == body.size(); ++k) {
      for (const auto& d : ir::defined_vars(body[k])) {
        if (d.get() == next && (body[k]->as<AssignStmt>() || body[k]->as<ForStmt>() ||
                                body[k]->as<IfStmt>() || body[k]->as<WhileStmt>())) {
          def = k;
        }
      }
    }
    if (def == body.size()) return true;
    for (size_t k = def + 1; k + 1 < body.size(); ++k) {
      ir::NodeMap<const Var*, int64_t> occurrences;
      detail::count_var_occurrences(body[k], &occurrences);
      if (occurrences.count(arg)) return true;
    }
    return false;
  }

  ir::NodeMap<const Var*, LiveInterval> intervals_;
  ir::NodeMap<const Var*, const Var*> parent_;
};

}  // namespace

ProgramPtr init_mem_ref(const ProgramPtr& program) {
  return detail::map_incore_functions(program, [](const FunctionPtr& f) {
    BufferGroups groups(*f);
    ir::NodeMap<const Var*, MemRef> by_root;
    by_root.reserve(groups.tiles.size());
    std::vector<const Var*> roots;
    roots.reserve(groups.tiles.size());
    int64_t next_id = 0;
    for (const Var* v : groups.tiles) {
      const auto* t = detail::as_tile(v->type());
      if (!t->space) {
        throw CompileError(v->span(), "tile '" + v->name +
                                          "' has no memory space; run InferTileMemorySpace first");
      }
      const Var* root = groups.find(v);
      roots.push_back(root);
      auto [it, inserted] = by_root.try_emplace(root);
      if (inserted) {
        it->second.space = *t->space;
        it->second.buffer_id = next_id++;
      }
      it->second.size = std::max(it->second.size, t->size_bytes());
    }
    ir::NodeMap<const Var*, MemRef> memrefs;
    memrefs.reserve(groups.tiles.size());
    for (size_t i = 0; i < groups.tiles.size(); ++i) {
      memrefs[groups.tiles[i]] = by_root.at(roots[i]);
    }
    return detail::retype_tiles(f, [&](const Var& v) -> std::optional<TypePtr> {
      auto it = memrefs.find(&v);
      if (it == memrefs.end()) return std::nullopt;
      return detail::with_memref(v.type(), it->second);
    });
  });
}

}  // namespace pypto::passes
