// DeriveCallDirections: checks how each InCore function really uses its tensor parameters (an
// In parameter written with pl.store becomes Out, or InOut when its contents are also read, as
// when pl.write sets one element; an Out parameter read before it is written becomes InOut) and
// then annotates every orchestration call of an InCore function with `arg_directions`
// (ir::ArgDirection), which the runtime uses to order tasks. A call whose program wrote its
// directions keeps them once they are checked.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// For each tensor version in a kernel, the parameter it is a version of; records the parameters
// written by pl.store and those whose original contents are read.
class ParamAccess : public IRVisitor {
 public:
  explicit ParamAccess(const Function& f) {
    for (const auto& p : f.params)
      if (detail::is_tensor(p.var->type())) root_[p.var.get()] = p.var.get();
    visit(f.body);
  }
  ir::NodeMap<const Var*, Span> first_store;  // parameter -> span of the first store
  ir::NodeSet<const Var*> read_original;      // parameters read before being written
  // Window parameters stored into through a peer view (pld remote stores, put): the kernel
  // writes them on another rank, not here, so they keep their direction; its callers pass
  // them InOut, so that this rank's later readers of the window wait for the kernel (what its
  // peers store arrives while it meets them).
  ir::NodeSet<const Var*> remote_store;

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (const auto* store = detail::as_op_call(s.value, "store")) {
      if (const Var* p = note_store(*store, s.span())) root_[s.var.get()] = p;
      return;
    }
    // `t2 = pl.write(t, indices, v)` of a parameter version sets one element and keeps the
    // others: the parameter is written and what the caller put there is read (InOut).
    if (const auto* write = detail::as_op_call(s.value, "write")) {
      if (const Var* p = note_write(*write, s.span())) root_[s.var.get()] = p;
      if (is_tensor_write(*write)) return;
    }
    // A window as another rank sees it: stores through it are remote_store.
    if (const auto* view = detail::as_op_call(s.value, "comm_peer_view")) {
      if (const Var* p = view->args.empty() ? nullptr : param_of(view->args[0])) {
        peer_views_[s.var.get()] = p;
        for (size_t i = 1; i < view->args.size(); ++i) visit(view->args[i]);
        return;
      }
    }
    if (const Var* p = param_of(s.value); p && s.value->as<Var>()) {
      root_[s.var.get()] = p;  // a copy of a parameter version is a version too
      return;
    }
    IRVisitor::visit_assign(s);
  }
  void visit_for(const ForStmt& s) override {
    visit(s.start);
    visit(s.stop);
    visit(s.step);
    for (size_t i = 0; i < s.init_values.size(); ++i) {
      const Var* p = param_of(s.init_values[i]);
      if (!p) {
        visit(s.init_values[i]);
        continue;
      }
      if (i < s.iter_args.size()) root_[s.iter_args[i].get()] = p;
      if (i < s.return_vars.size()) root_[s.return_vars[i].get()] = p;
    }
    visit(s.body);
  }
  void visit_while(const WhileStmt& s) override {
    for (size_t i = 0; i < s.init_values.size(); ++i) {
      const Var* p = param_of(s.init_values[i]);
      if (!p) {
        visit(s.init_values[i]);
        continue;
      }
      if (i < s.iter_args.size()) root_[s.iter_args[i].get()] = p;
      if (i < s.return_vars.size()) root_[s.return_vars[i].get()] = p;
    }
    visit(s.cond);
    visit(s.body);
  }
  void visit_eval(const EvalStmt& s) override {
    if (const auto* store = detail::as_op_call(s.expr, "store")) {
      note_store(*store, s.span());
      return;
    }
    if (const auto* write = detail::as_op_call(s.expr, "write"); write && is_tensor_write(*write)) {
      note_write(*write, s.span());
      return;
    }
    IRVisitor::visit_eval(s);
  }
  void visit_yield(const YieldStmt&) override {}
  void visit_return(const ReturnStmt&) override {}
  void visit_var(const Var& v) override {
    auto it = root_.find(&v);
    // Reading the parameter itself (not a version a store produced) before any store means
    // the caller's data is an input.
    if (it != root_.end() && it->second == &v && !first_store.count(&v)) read_original.insert(&v);
  }

 private:
  // A store's operands are read; its destination, when a parameter version, is written.
  const Var* note_store(const Call& store, Span span) {
    for (size_t i = 0; i + 1 < store.args.size(); ++i) visit(store.args[i]);
    if (store.args.size() < 3) return nullptr;
    if (const auto* v = store.args[2]->as<Var>()) {
      if (auto it = peer_views_.find(v); it != peer_views_.end()) {
        remote_store.insert(it->second);
        return nullptr;
      }
    }
    const Var* p = param_of(store.args[2]);
    if (p) first_store.emplace(p, span);
    return p;
  }

  static bool is_tensor_write(const Call& write) {
    return write.args.size() == 3 && detail::is_tensor(write.args[0]->type());
  }
  // A write's index and value are read; its tensor, when a parameter version, is written, and
  // the elements it keeps are the caller's (read).
  const Var* note_write(const Call& write, Span span) {
    if (!is_tensor_write(write)) return nullptr;
    visit(write.args[1]);
    visit(write.args[2]);
    const Var* p = param_of(write.args[0]);
    if (!p) return nullptr;
    if (!first_store.count(p)) read_original.insert(p);
    first_store.emplace(p, span);
    return p;
  }

  const Var* param_of(const ExprPtr& e) const {
    const auto* v = e ? e->as<Var>() : nullptr;
    if (!v) return nullptr;
    auto it = root_.find(v);
    return it == root_.end() ? nullptr : it->second;
  }
  ir::NodeMap<const Var*, const Var*> root_;
  ir::NodeMap<const Var*, const Var*> peer_views_;  // comm_peer_view result -> its parameter
};

class DirectionAnnotator : public IRMutator {
 public:
  DirectionAnnotator(const std::unordered_map<std::string, FunctionPtr>& kernels,
                     const std::unordered_map<std::string, std::vector<bool>>& remote_written)
      : kernels_(kernels), remote_written_(remote_written) {}

 protected:
  ExprPtr mutate_call(const std::shared_ptr<const Call>& e) override {
    ExprPtr base = IRMutator::mutate_call(e);
    const auto* c = base->as<Call>();
    if (c->call_kind != CallKind::Function) return base;
    auto it = kernels_.find(c->callee);
    if (it == kernels_.end()) return base;
    const Function& callee = *it->second;
    if (callee.params.size() != c->args.size()) {
      throw CompileError(c->span(), "call of '" + callee.name + "' passes " +
                                        std::to_string(c->args.size()) + " arguments, expected " +
                                        std::to_string(callee.params.size()));
    }
    auto remote = remote_written_.find(callee.name);
    if (const auto* written = find_attr(c->attrs, "arg_directions")) {
      // The program's own (attrs={"arg_directions": [...]}), or this pass's from an earlier
      // run: kept, if it lets the task do what the kernel does.
      check_written_directions(*c, callee, std::get<std::vector<int64_t>>(*written),
                               remote != remote_written_.end() ? &remote->second : nullptr);
      return base;
    }
    std::vector<int64_t> directions = derive(*c, callee, remote);
    Attrs attrs;
    for (const auto& a : c->attrs)
      if (a.first != "arg_directions") attrs.push_back(a);
    attrs.emplace_back("arg_directions", directions);
    return detail::rebuild_call(*c, c->args, std::move(attrs), c->type());
  }

 private:
  using RemoteWritten = std::unordered_map<std::string, std::vector<bool>>;

  // From the callee's parameters; the arguments written pl.no_dep(x) (arg_direction_overrides)
  // are no_dep.
  std::vector<int64_t> derive(const Call& c, const Function& callee,
                              RemoteWritten::const_iterator remote) const {
    std::vector<int64_t> directions;
    for (size_t i = 0; i < callee.params.size(); ++i) {
      const Param& p = callee.params[i];
      ArgDirection d = ArgDirection::Scalar;
      if (!detail::is_scalar(p.var->type())) {
        d = p.direction == ParamDirection::Out     ? ArgDirection::Out
            : p.direction == ParamDirection::InOut ? ArgDirection::InOut
                                                   : ArgDirection::In;
        if (d == ArgDirection::In && remote != remote_written_.end() && remote->second[i]) {
          d = ArgDirection::InOut;
        }
      }
      directions.push_back(static_cast<int64_t>(d));
    }
    if (const auto* overrides = find_attr(c.attrs, "arg_direction_overrides")) {
      for (int64_t i : std::get<std::vector<int64_t>>(*overrides)) {
        const auto slot = static_cast<size_t>(i);
        if (slot >= directions.size()) continue;  // the parser checked the range
        if (directions[slot] == static_cast<int64_t>(ArgDirection::Scalar)) {
          throw CompileError(c.span(), "pl.no_dep marks argument " + std::to_string(i) +
                                           " of the call of '" + callee.name +
                                           "', a scalar: it marks tensors");
        }
        directions[slot] = static_cast<int64_t>(ArgDirection::NoDep);
      }
    }
    return directions;
  }

  // A direction the program wrote must pass a scalar as a scalar and a tensor as a tensor, and
  // must let the task write every tensor the kernel writes (here or, through a window, on a
  // peer): an `input` there would let later readers run before the kernel's write.
  static void check_written_directions(const Call& c, const Function& callee,
                                       const std::vector<int64_t>& directions,
                                       const std::vector<bool>* remote_written) {
    for (size_t i = 0; i < callee.params.size() && i < directions.size(); ++i) {
      const Param& p = callee.params[i];
      const auto d = static_cast<ArgDirection>(directions[i]);
      const std::string what = "arg_directions[" + std::to_string(i) + "] of the call of '" +
                               callee.name + "' is pl.adir." +
                               std::string(arg_direction_marker(d)) + ", but parameter '" +
                               p.var->name + "'";
      const bool scalar = detail::is_scalar(p.var->type());
      if (scalar != (d == ArgDirection::Scalar)) {
        throw CompileError(c.span(), what + (scalar ? " is a scalar (use pl.adir.scalar)"
                                                    : " is a tensor (pl.adir.scalar is for "
                                                      "scalars)"));
      }
      const bool written = p.direction != ParamDirection::In ||
                           (remote_written && i < remote_written->size() && (*remote_written)[i]);
      if (written && !arg_direction_writes(d)) {
        throw CompileError(c.span(), what + " is written by the kernel (" +
                                         std::string(param_direction_name(p.direction)) +
                                         "): pass it as pl.adir.output_existing, pl.adir.inout, "
                                         "pl.adir.output or pl.adir.no_dep");
      }
    }
  }

  const std::unordered_map<std::string, FunctionPtr>& kernels_;
  const RemoteWritten& remote_written_;
};

FunctionPtr check_kernel(const FunctionPtr& f) {
  ParamAccess access(*f);
  std::vector<Param> params = f->params;
  bool changed = false;
  for (auto& p : params) {
    auto store = access.first_store.find(p.var.get());
    if (p.direction == ParamDirection::In && store != access.first_store.end()) {
      // As in PyPTO, a parameter the kernel writes is an output whatever it was declared:
      // InOut when the kernel also reads what the caller put there, else Out.
      p.direction =
          access.read_original.count(p.var.get()) ? ParamDirection::InOut : ParamDirection::Out;
      changed = true;
      continue;
    }
    if (p.direction == ParamDirection::Out && access.read_original.count(p.var.get())) {
      p.direction = ParamDirection::InOut;
      changed = true;
    }
  }
  if (!changed) return f;
  return ir::make_node<Function>(f->name, f->type, std::move(params), f->return_types, f->body,
                                 f->span, f->attrs);
}

}  // namespace

ProgramPtr derive_call_directions(const ProgramPtr& program) {
  ProgramPtr checked = detail::map_incore_functions(program, check_kernel);
  std::unordered_map<std::string, FunctionPtr> kernels;
  std::unordered_map<std::string, std::vector<bool>> remote_written;
  for (const auto& f : checked->functions) {
    if (!is_kernel(f->type)) continue;
    kernels[f->name] = f;
    ParamAccess access(*f);
    if (access.remote_store.empty()) continue;
    std::vector<bool>& written = remote_written[f->name];
    for (const auto& p : f->params) written.push_back(access.remote_store.count(p.var.get()) > 0);
  }
  return detail::map_functions(checked, [&](const FunctionPtr& f) {
    if (!submits_tasks(f->type)) return f;
    DirectionAnnotator annotator(kernels, remote_written);
    return annotator.mutate_function(f);
  });
}

}  // namespace pypto::passes
