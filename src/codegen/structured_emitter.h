// Control flow shared by kernel and orchestration codegen: SSA loops with iter_args, ifs with
// return vars, yields, and loop-carried scalars and tensor views. Subclasses add what their
// values are (tiles in a kernel) and how a run-time check fails.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pypto/codegen/cpp_emit.h"
#include "pypto/codegen/source_writer.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::codegen {

class StructuredEmitter {
 public:
  virtual ~StructuredEmitter() = default;

 protected:
  // Opens the generated C++ function of `func`: a comment naming its role ("InCore",
  // "Orchestration") and the signature line; close it with w_.close().
  void open_function(std::string_view role, const ir::Function& func,
                     const std::string& signature) {
    w_.line("// " + std::string(role) + " function '" + func.name + "'");
    w_.open(signature);
  }

  // The arguments `fail, ctx` that report a failed run-time check, the statement that reports
  // `message_expr` directly, and the statement that then leaves the generated function.
  virtual std::string fail_target() const = 0;
  virtual std::string fail_statement(const std::string& message_expr) const = 0;
  virtual std::string leave_after_failure() const = 0;

  void fail_and_return(const std::string& message_expr) {
    w_.line(fail_statement(message_expr));
    w_.line(leave_after_failure());
  }

  // A statement this class does not handle itself (Assign, Eval, Return).
  virtual void simple_stmt(const ir::StmtPtr& s) = 0;
  // A loop-carried value or if result of a kind the subclass owns (tiles); false otherwise.
  virtual bool declare_own_carried(const ir::Var& var, const ir::ExprPtr& init, ir::Span span) {
    (void)var, (void)init, (void)span;
    return false;
  }
  virtual bool bind_own_result(const ir::Var& result, const ir::Var& from, ir::Span span) {
    (void)result, (void)from, (void)span;
    return false;
  }
  // Hands over the values of the subclass's own kinds, before scalars and views are assigned.
  virtual void assign_own_values(const std::vector<ir::VarPtr>& targets,
                                 const std::vector<ir::ExprPtr>& values, ir::Span span) {
    (void)targets, (void)values, (void)span;
  }
  virtual bool is_own_kind(const ir::TypePtr& type) const {
    (void)type;
    return false;
  }
  // Emits code that may do the whole of loop `s` in one go, and returns the C++ name of a value
  // that is nonzero when it did (the loop is then skipped), or "" when there is no such code.
  virtual std::string loop_shortcut(const ir::ForStmt& s) {
    (void)s;
    return "";
  }
  // The location quoted in run-time error messages.
  virtual std::string where(ir::Span span, std::string_view what) const = 0;
  // The C++ expression of the run's stop flag (PtoCoreMemory::stop, PtoRuntimeApi::stop).
  virtual std::string stop_flag() const = 0;

  // Declares, before a loop, a local copy of the stop flag's address (so that each trip loads
  // the flag only), and returns its name.
  std::string stop_flag_local() {
    std::string name = names_.fresh("stop");
    w_.line("const uint8_t* const " + name + " = " + stop_flag() + ";");
    return name;
  }
  // At the top of a loop's body (its back-edge): leaves the function when the run must stop (its
  // time limit, Ctrl-C, another task's failure). One relaxed load and a branch never taken in a
  // run that goes on; `what` names the loop in the message, which the runtime reports as where
  // a stopped run was.
  void poll_stop(const std::string& flag, ir::Span span, std::string_view what) {
    w_.open("if (__builtin_expect(__atomic_load_n(" + flag + ", __ATOMIC_RELAXED) != 0, 0))");
    fail_and_return(string_literal(where(span, what) + ": stopped"));
    w_.close();
  }

  void stmt(const ir::StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case ir::StmtKind::Seq:
        for (const auto& c : s->as<ir::SeqStmts>()->stmts) stmt(c);
        return;
      case ir::StmtKind::For:
        loop(*s->as<ir::ForStmt>());
        return;
      case ir::StmtKind::If:
        branch(*s->as<ir::IfStmt>());
        return;
      case ir::StmtKind::While:
        while_loop(*s->as<ir::WhileStmt>());
        return;
      case ir::StmtKind::Yield:
        yield(*s->as<ir::YieldStmt>());
        return;
      case ir::StmtKind::Scope:
        // Scopes are outlined before codegen; one left over is just a block.
        stmt(s->as<ir::ScopeStmt>()->body);
        return;
      default:
        simple_stmt(s);
        return;
    }
  }

  // A tensor view held in a variable: the C++ expression of the view (a variable that only
  // renames another view, like the result of a store or a call, is that other view).
  std::string view_name(const ir::ExprPtr& e, std::string_view what) {
    const auto* v = e->as<ir::Var>();
    if (!v || !v->type()->as<ir::TensorType>())
      codegen_error(e->span(), std::string(what) + " must be a tensor variable");
    auto it = view_alias_.find(v);
    return it != view_alias_.end() ? it->second : names_.name(v);
  }

  // Makes `var` another name of the view `expr`.
  void alias_view(const ir::Var& var, const std::string& expr) { view_alias_[&var] = expr; }

  void declare_carried(const ir::Var& var, const ir::ExprPtr& init, ir::Span span) {
    if (declare_own_carried(var, init, span)) return;
    const auto& type = var.type();
    const std::string& name = names_.name(&var);
    if (const auto* st = type->as<ir::ScalarType>()) {
      std::string ctype = cpp_scalar_type(st->dtype);
      w_.line(ctype + " " + name + " = " + (init ? emit_scalar_expr(init, names_) : ctype + "()") +
              ";");
    } else if (type->as<ir::TensorType>()) {
      w_.line("PtoTensor " + name + " = " +
              (init ? view_name(init, "the initial value of a tensor") : "PtoTensor()") + ";");
    } else {
      codegen_error(span, "cannot carry a value of type " + ir::type_to_string(type));
    }
    w_.line("(void)" + name + ";");
  }

  void bind_result(const ir::Var& result, const ir::Var& from, ir::Span span) {
    if (bind_own_result(result, from, span)) return;
    const std::string& name = names_.name(&result);
    if (const auto* st = result.type()->as<ir::ScalarType>()) {
      w_.line("const " + cpp_scalar_type(st->dtype) + " " + name + " = " + names_.name(&from) +
              ";");
    } else {
      w_.line("const PtoTensor " + name + " = " + names_.name(&from) + ";");
    }
    w_.line("(void)" + name + ";");
  }

  // One parallel assignment `targets = values` (a yield).
  void assign_parallel(const std::vector<ir::VarPtr>& targets,
                       const std::vector<ir::ExprPtr>& values, ir::Span span) {
    if (targets.size() != values.size()) {
      codegen_error(span, "pl.yield_ gives " + std::to_string(values.size()) + " values for " +
                              std::to_string(targets.size()) + " variables");
    }
    assign_own_values(targets, values, span);
    // Every value is read before any target is written.
    std::vector<std::pair<std::string, std::string>> moves;
    for (size_t i = 0; i < targets.size(); ++i) {
      const auto& type = targets[i]->type();
      if (is_own_kind(type)) continue;
      std::string tmp = names_.fresh("next_" + targets[i]->name);
      if (const auto* st = type->as<ir::ScalarType>()) {
        w_.line("const " + cpp_scalar_type(st->dtype) + " " + tmp + " = " +
                emit_scalar_expr(values[i], names_) + ";");
      } else if (type->as<ir::TensorType>()) {
        w_.line("const PtoTensor " + tmp + " = " + view_name(values[i], "a yielded tensor") + ";");
      } else {
        codegen_error(span, "cannot carry a value of type " + ir::type_to_string(type));
      }
      moves.emplace_back(names_.name(targets[i].get()), tmp);
    }
    for (const auto& m : moves) w_.line(m.first + " = " + m.second + ";");
  }

  void loop(const ir::ForStmt& s) {
    for (size_t i = 0; i < s.iter_args.size(); ++i)
      declare_carried(*s.iter_args[i], i < s.init_values.size() ? s.init_values[i] : nullptr,
                      s.span());
    const std::string done = loop_shortcut(s);
    if (!done.empty()) w_.open("if (!" + done + ")");
    std::string iv = names_.name(s.loop_var.get());
    std::string start = emit_scalar_expr(s.start, names_);
    std::string stop = names_.fresh(iv + "_stop");
    w_.line("const int64_t " + stop + " = (int64_t)" + emit_scalar_expr(s.stop, names_) + ";");
    std::string cond;
    std::string step;
    if (auto c = ir::as_const_int(s.step)) {
      if (*c == 0) codegen_error(s.span(), "the step of pl.range must not be zero");
      step = int_literal(*c);
      cond = iv + (*c > 0 ? " < " : " > ") + stop;
    } else {
      step = names_.fresh(iv + "_step");
      w_.line("const int64_t " + step + " = (int64_t)" + emit_scalar_expr(s.step, names_) + ";");
      w_.open("if (" + step + " == 0)");
      fail_and_return(string_literal(where(s.span(), "range") + ": the loop step is zero"));
      w_.close();
      cond = "(" + step + " > 0 ? " + iv + " < " + stop + " : " + iv + " > " + stop + ")";
    }
    const std::string flag = stop_flag_local();
    w_.open("for (int64_t " + iv + " = (int64_t)" + start + "; " + cond + "; " + iv +
            " = pto::next_index(" + iv + ", " + step + ", " + stop + "))");
    poll_stop(flag, s.span(), "range");
    yield_targets_.push_back(&s.iter_args);
    stmt(s.body);
    yield_targets_.pop_back();
    w_.close();
    if (!done.empty()) w_.close();
    for (size_t i = 0; i < s.return_vars.size() && i < s.iter_args.size(); ++i)
      bind_result(*s.return_vars[i], *s.iter_args[i], s.span());
  }

  // `while (true) { if (!cond) break; body }`: the condition reads the carried variables, which
  // the body's yield updates at the end of each trip. A loop that never ends is stopped by the
  // run's time limit: each trip polls the stop flag.
  void while_loop(const ir::WhileStmt& s) {
    for (size_t i = 0; i < s.iter_args.size(); ++i)
      declare_carried(*s.iter_args[i], i < s.init_values.size() ? s.init_values[i] : nullptr,
                      s.span());
    const std::string flag = stop_flag_local();
    w_.open("while (true)");
    poll_stop(flag, s.span(), "while");
    w_.line("if (!(" + emit_scalar_expr(s.cond, names_) + ")) break;");
    yield_targets_.push_back(&s.iter_args);
    stmt(s.body);
    yield_targets_.pop_back();
    w_.close();
    for (size_t i = 0; i < s.return_vars.size() && i < s.iter_args.size(); ++i)
      bind_result(*s.return_vars[i], *s.iter_args[i], s.span());
  }

  void branch(const ir::IfStmt& s) {
    for (const auto& rv : s.return_vars) declare_carried(*rv, nullptr, s.span());
    w_.open("if (" + emit_scalar_expr(s.cond, names_) + ")");
    yield_targets_.push_back(&s.return_vars);
    stmt(s.then_body);
    if (s.else_body) {
      w_.dedent();
      w_.line("} else {");
      w_.indent();
      stmt(s.else_body);
    }
    yield_targets_.pop_back();
    w_.close();
  }

  void yield(const ir::YieldStmt& s) {
    if (yield_targets_.empty()) {
      if (s.values.empty()) return;
      codegen_error(s.span(), "pl.yield_ outside of a loop or an if");
    }
    assign_parallel(*yield_targets_.back(), s.values, s.span());
  }

  // `const int64_t <base>[] = {...};` under a fresh name, which is returned.
  std::string int_array(const std::string& base, const std::vector<std::string>& items) {
    std::string name = names_.fresh(base);
    w_.line("const int64_t " + name + "[] = " + brace_list(items) + ";");
    return name;
  }

  // The trailing arguments `where, fail, ctx` of a checked PtoIsa instruction.
  std::string checked_where(ir::Span span, std::string_view op) const {
    return string_literal(where(span, op)) + ", " + fail_target();
  }

  // Fails unless the box [offsets, offsets + shape) lies inside the view `tensor`.
  void check_box(const std::string& tensor, const std::string& offsets, const std::string& shape,
                 size_t ndim, ir::Span span, std::string_view op) {
    w_.line("if (!isa->check_box(&" + tensor + ", " + offsets + ", " + shape + ", " +
            std::to_string(ndim) + ", " + checked_where(span, op) + ")) " + leave_after_failure());
  }

  // `PtoTensor <name>`: the view of pl.slice(tensor, shape, offsets), clipped to the tensor
  // (pto::clipped_view); a negative offset fails.
  void tensor_view(const std::string& name, const ir::Call& call, ir::Span span) {
    if (call.args.size() < 3) codegen_error(span, "pl.slice expects (tensor, shape, offsets)");
    std::string src = view_name(call.args[0], "the first argument of pl.slice");
    auto shape = emit_int_list(call.args[1], names_, "the shape of pl.slice");
    auto offsets = emit_int_list(call.args[2], names_, "the offsets of pl.slice");
    if (shape.size() != tensor_rank(call.args[0]) || offsets.size() != shape.size())
      codegen_error(span, "pl.slice: shape and offsets need one entry per tensor dimension");
    std::string sh = int_array(name + "_shape", shape);
    std::string off = int_array(name + "_offsets", offsets);
    w_.line("PtoTensor " + name + ";");
    w_.line("if (!pto::clipped_view(" + src + ", " + off + ", " + sh + ", &" + name + ")) { " +
            fail_statement(string_literal(where(span, "slice") +
                                          ": an offset or an extent of the window is negative")) +
            " " + leave_after_failure() + " }");
  }

  // `const PtoTensor <name> = <pl.reshape(tensor, shape)>;`: a view of a contiguous tensor.
  // pl.tensor.view is the same view (without a shape: the tensor itself).
  void reshape_view(const std::string& name, const ir::Call& call, ir::Span span) {
    const std::string op = call.callee;
    if (call.args.empty()) codegen_error(span, "pl." + op + " expects (tensor, shape)");
    std::string src = view_name(call.args[0], "the first argument of pl." + op);
    if (call.args.size() < 2) {
      w_.line("const PtoTensor " + name + " = " + src + ";");
      return;
    }
    auto shape = emit_int_list(call.args[1], names_, "the shape of pl." + op);
    std::string sh = int_array(name + "_shape", shape);
    std::string ok = names_.fresh(name + "_contiguous");
    w_.line("int32_t " + ok + " = 0;");
    w_.line("const PtoTensor " + name + " = pto::reshaped(" + src + ", " + sh + ", " +
            std::to_string(shape.size()) + ", &" + ok + ");");
    w_.line("if (!" + ok + ") { " +
            fail_statement(
                string_literal(where(span, op) +
                               ": the tensor is a view that is not contiguous (a slice of some "
                               "columns); " +
                               op + " the whole tensor, or load a tile and reshape that")) +
            " " + leave_after_failure() + " }");
  }

  // `const PtoTensor <name> = <pl.transpose(tensor, axis1, axis2)>;`: the same elements with
  // two axes' extents and strides swapped.
  void transpose_view(const std::string& name, const ir::Call& call, ir::Span span) {
    if (call.args.size() < 3) codegen_error(span, "pl.transpose expects (tensor, axis1, axis2)");
    std::string src = view_name(call.args[0], "the first argument of pl.transpose");
    const auto rank = static_cast<int64_t>(tensor_rank(call.args[0]));
    auto axis = [&](size_t i) {
      const auto v = ir::fold_literal_expr(call.args[i]).value;
      if (!v || v->kind != ir::Scalar::Kind::Int) codegen_error(span, "pl.transpose: axis");
      return std::to_string(v->i < 0 ? v->i + rank : v->i);
    };
    w_.line("const PtoTensor " + name + " = pto::transposed(" + src + ", " + axis(1) + ", " +
            axis(2) + ");");
  }

  SourceWriter w_;
  VarNames names_;
  std::vector<const std::vector<ir::VarPtr>*> yield_targets_;
  std::unordered_map<const ir::Var*, std::string> view_alias_;
};

}  // namespace pypto::codegen
