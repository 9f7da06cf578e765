#include "tensor_window_valid.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "pass_utils.h"
#include "pypto/ir/valid_extent.h"

namespace pypto::passes::detail {

namespace {

using ir::AssignStmt;
using ir::Call;
using ir::CallKind;
using ir::ExprPtr;
using ir::FunctionPtr;
using ir::IRMutator;
using ir::IRVisitor;
using ir::MakeTuple;
using ir::NodeMap;
using ir::StmtPtr;
using ir::Var;

// The slices with a valid_shape, and how often each window is the tensor of a load.
struct WindowFinder : IRVisitor {
  NodeMap<const Var*, const Call*> windows;
  NodeMap<const Var*, int64_t> load_uses;

 protected:
  void visit_assign(const AssignStmt& s) override {
    const Call* slice = as_op_call(s.value, "slice");
    if (slice && slice->args.size() > 3 && slice->args[3] && slice->args[3]->as<MakeTuple>() &&
        is_tensor(s.var->type())) {
      windows[s.var.get()] = slice;
    }
    IRVisitor::visit_assign(s);
  }
  void visit_call(const Call& c) override {
    if (c.call_kind == CallKind::Op && c.callee == "load" && !c.args.empty()) {
      if (const auto* v = c.args[0]->as<Var>()) ++load_uses[v];
    }
    IRVisitor::visit_call(c);
  }
};

class Folder : public IRMutator {
 public:
  explicit Folder(NodeMap<const Var*, const Call*> windows) : windows_(std::move(windows)) {}

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    auto it = windows_.find(s->var.get());
    if (it == windows_.end()) return IRMutator::mutate_assign(s);
    // The window's region now lives in its loads: the slice is a plain view.
    const Call& slice = *it->second;
    std::vector<ExprPtr> args(slice.args.begin(), slice.args.begin() + 3);
    ExprPtr view = rebuild_call(slice, std::move(args), slice.attrs, slice.type());
    return ir::make_node<AssignStmt>(s->var, view, s->span());
  }

  ExprPtr mutate_call(const std::shared_ptr<const Call>& c) override {
    ExprPtr mutated = IRMutator::mutate_call(c);
    const auto* load = mutated->as<Call>();
    if (!load || load->call_kind != CallKind::Op || load->callee != "load" || load->args.size() < 3)
      return mutated;
    const auto* tensor = load->args[0]->as<Var>();
    auto it = tensor ? windows_.find(tensor) : windows_.end();
    if (it == windows_.end()) return mutated;
    const auto& window_valid = it->second->args[3]->as<MakeTuple>()->elements;
    const auto* offsets = load->args[1]->as<MakeTuple>();
    const auto* extents = load->args[2]->as<MakeTuple>();
    if (!offsets || !extents || offsets->elements.size() != window_valid.size() ||
        extents->elements.size() != window_valid.size())
      return mutated;  // a load of another rank reads across dimensions: as written
    std::vector<ExprPtr> requested = extents->elements;
    if (load->args.size() > 3 && load->args[3]) {
      const auto* given = load->args[3]->as<MakeTuple>();
      if (!given || given->elements.size() != requested.size()) return mutated;
      requested = given->elements;
    }
    const ir::Span span = load->span();
    for (size_t d = 0; d < requested.size(); ++d) {
      requested[d] = ir::extent_within(requested[d], window_valid[d], offsets->elements[d], span);
    }
    std::vector<ExprPtr> args = load->args;
    args.resize(4);
    args[3] = ir::make_tuple(std::move(requested), span);
    return rebuild_call(*load, std::move(args), load->attrs, load->type());
  }

 private:
  NodeMap<const Var*, const Call*> windows_;
};

}  // namespace

FunctionPtr fold_window_valid_shapes(const FunctionPtr& f) {
  WindowFinder finder;
  finder.visit_function(*f);
  if (finder.windows.empty()) return f;
  NodeMap<const Var*, int64_t> occurrences;
  count_var_occurrences(f->body, &occurrences);
  NodeMap<const Var*, const Call*> foldable;
  for (const auto& [window, slice] : finder.windows) {
    auto loads = finder.load_uses.find(window);
    auto seen = occurrences.find(window);
    const int64_t load_count = loads == finder.load_uses.end() ? 0 : loads->second;
    // Its definition and its loads, nothing else (a store into it, a read, a return).
    if (seen != occurrences.end() && seen->second == 1 + load_count) foldable[window] = slice;
  }
  if (foldable.empty()) return f;
  Folder folder(std::move(foldable));
  return folder.mutate_function(f);
}

}  // namespace pypto::passes::detail
