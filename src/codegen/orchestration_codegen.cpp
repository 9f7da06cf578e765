#include "pypto/codegen/orchestration_codegen.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cluster_codegen.h"
#include "entry_staging.h"
#include "pypto/codegen/cpp_emit.h"
#include "pypto/codegen/kernel_codegen.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/task_types.h"
#include "pypto/ir/visitor.h"
#include "read_only_inputs.h"
#include "structured_emitter.h"

namespace pypto::codegen {

std::string orchestration_function_name(std::string_view func) {
  return function_symbol("orchestration", func);
}

namespace {

using ir::ExprPtr;
using ir::Span;

// arg_directions values (DeriveCallDirections), equal to PtoArgKind.
constexpr int64_t kIn = 0, kOut = 1, kInOut = 2, kScalar = 3;

bool ends_with_return(const ir::StmtPtr& s) {
  if (!s) return false;
  if (s->kind() == ir::StmtKind::Return) return true;
  if (const auto* seq = s->as<ir::SeqStmts>())
    return !seq->stmts.empty() && ends_with_return(seq->stmts.back());
  return false;
}

class OrchestrationEmitter : public StructuredEmitter {
 public:
  OrchestrationEmitter(const ir::Program& program, const ir::Function& func)
      : program_(program), func_(func) {}

  std::string run() {
    open_function("Orchestration", func_,
                  "static int32_t " + orchestration_function_name(func_.name) +
                      "(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams)");
    w_.line("const PtoIsa* const isa = rt->isa;");
    w_.line("const pto::FaultScope pto_fault_scope(rt->fail, rt->ctx, " +
            string_literal(func_.name) + ");");
    param_checks();
    for (size_t i = 0; i < func_.params.size(); ++i) param(i);
    if (uses_task_ops(func_)) {
      // The handle of the last task submitted with options, read by task_id.
      w_.line("PtoTaskHandle pto_last_task = PTO_NO_TASK;");
      w_.line("(void)pto_last_task;");
    }
    stmt(func_.body);
    if (!pending_options_.empty())
      codegen_error(func_.span, "task options without a kernel call after them");
    if (!ends_with_return(func_.body)) {
      unstage_params();
      w_.line("return 0;");
    }
    w_.close();
    return w_.take();
  }

 private:
  std::string fail_target() const override { return "rt->fail, rt->ctx"; }
  std::string fail_statement(const std::string& message_expr) const override {
    return "rt->fail(rt->ctx, " + message_expr + ");";
  }
  std::string leave_after_failure() const override { return "return 1;"; }
  std::string stop_flag() const override { return "rt->stop"; }

  std::string where(Span span, std::string_view what) const override {
    std::string s = func_.name + ": pl." + std::string(what);
    if (span.valid()) {
      int32_t offset = program_.source ? program_.source->line_offset : 0;
      s += " at line " + std::to_string(span.line + offset);
    }
    return s;
  }

  // One table describing every parameter, checked by a single call.
  void param_checks() {
    std::string table = names_.fresh(func_.name + "_params");
    w_.line("static const PtoParamSpec " + table + "[] = {");
    w_.indent();
    for (const auto& p : func_.params) {
      const auto& type = p.var->type();
      if (const auto* tt = type->as<ir::TensorType>()) {
        if (tt->shape.size() > 4)
          codegen_error(p.var->span(), "tensors have at most 4 dimensions on the device");
        std::vector<std::string> dims;
        for (int64_t d : tt->shape) dims.push_back(int_literal(d));
        w_.line("{" + string_literal(p.var->name) + ", " + dtype_enum(tt->dtype) + ", " +
                std::to_string(tt->shape.size()) + ", " + brace_list(dims) + "},");
      } else if (const auto* st = type->as<ir::ScalarType>()) {
        w_.line("{" + string_literal(p.var->name) + ", " + dtype_enum(st->dtype) + ", -1, {}},");
      } else {
        codegen_error(p.var->span(), "parameter '" + p.var->name + "' of '" + func_.name +
                                         "' must be a tensor or a scalar");
      }
    }
    if (func_.params.empty()) w_.line("{\"\", 0, -1, {}},");
    w_.dedent();
    w_.line("};");
    w_.line("if (!isa->check_params(params, nparams, " + table + ", " +
            std::to_string(func_.params.size()) + ", " + string_literal(func_.name) + ", " +
            fail_target() + ")) return 1;");
  }

  void param(size_t i) {
    const auto& p = func_.params[i];
    const std::string& name = names_.name(p.var.get());
    std::string index = "params[" + std::to_string(i) + "]";
    if (const auto* tt = p.var->type()->as<ir::TensorType>()) {
      if (staged(i)) {
        stage_param(name, index, *tt, p.var->span());
        return;
      }
      w_.line("const PtoTensor& " + name + " = " + index + ".tensor;");
      return;
    }
    const auto* st = p.var->type()->as<ir::ScalarType>();
    std::string ctype = cpp_scalar_type(st->dtype);
    if (st->dtype == ir::DataType::BOOL) {
      w_.line("const bool " + name + " = " + index + ".i64 != 0;");
    } else {
      w_.line("const " + ctype + " " + name + " = (" + ctype + ")" + index +
              (ir::is_float(st->dtype) ? ".f64;" : ".i64;"));
    }
    w_.line("(void)" + name + ";");
  }

  // The entry's tensors whose view is not packed row-major live on the device as the view
  // says (entry_staging.h).
  bool staged(size_t i) {
    if (!staged_) staged_ = staged_entry_params(program_, func_);
    return (*staged_)[i];
  }

  void stage_param(const std::string& name, const std::string& arg, const ir::TensorType& tt,
                   Span span) {
    for (const std::string& line :
         stage_entry_param(name, names_.fresh(name + "_span"), arg, tt, span))
      w_.line(line);
  }

  void unstage_params() {
    for (size_t i = 0; i < func_.params.size(); ++i) {
      if (!staged(i) || func_.params[i].direction == ir::ParamDirection::In) continue;
      const std::string& name = names_.name(func_.params[i].var.get());
      for (const std::string& line : unstage_entry_param(name, "params[" + std::to_string(i) + "]"))
        w_.line(line);
    }
  }

  void simple_stmt(const ir::StmtPtr& s) override {
    switch (s->kind()) {
      case ir::StmtKind::Assign:
        assign(*s->as<ir::AssignStmt>());
        return;
      case ir::StmtKind::Eval: {
        const auto* call = s->as<ir::EvalStmt>()->expr->as<ir::Call>();
        if (call && call->call_kind == ir::CallKind::Function)
          call_function(*call, s->span());
        else if (call && call->callee == "task_options")
          task_options(*call, s->span());
        else if (call && call->callee == "task_blocks")
          task_blocks(*call, s->span());
        else if (call && call->callee == "manual_scope")
          manual_scope(*call);
        else if (call && call->callee.rfind("system.", 0) == 0)
          system_op(*call, s->span());
        else if (call)
          codegen_error(s->span(), "pl." + call->callee + " without a result");
        return;
      }
      case ir::StmtKind::Return:
        ret(*s->as<ir::ReturnStmt>());
        return;
      default:
        codegen_error(s->span(), "unsupported statement");
    }
  }

  // A pl.system op in the orchestration, which runs on the host thread in program order: the
  // pipe flags, barriers and cache maintenance of the NPU's cores are a memory fence here (the
  // orchestration reads what earlier tasks wrote only through the runtime's dependencies);
  // syncall joins the blocks of a launch, which exist only inside a kernel.
  void system_op(const ir::Call& call, Span span) {
    if (call.callee == "system.syncall") {
      codegen_error(span,
                    "pl.system.syncall holds the blocks of an SPMD launch at a barrier: call it "
                    "inside an InCore function (or a pl.spmd / pl.at scope), not in an "
                    "orchestration");
    }
    w_.line("__atomic_thread_fence(__ATOMIC_SEQ_CST);  // pl." + call.callee);
  }

  // The C++ expression of a tensor-valued argument, emitting what it needs first.
  std::string tensor_value(const ExprPtr& e) {
    if (const auto* v = e->as<ir::Var>()) {
      if (!v->type()->as<ir::TensorType>())
        codegen_error(e->span(), "expected a tensor, got " + ir::type_to_string(v->type()));
      return view_name(e, "a tensor argument");
    }
    if (const auto* g = e->as<ir::TupleGetItem>()) {
      const auto* tv = g->tuple->as<ir::Var>();
      auto it = tv ? tuples_.find(tv) : tuples_.end();
      if (it == tuples_.end() || g->index < 0 || static_cast<size_t>(g->index) >= it->second.size())
        codegen_error(e->span(), "unsupported tuple element");
      return it->second[static_cast<size_t>(g->index)];
    }
    if (const auto* call = e->as<ir::Call>()) {
      if (call->call_kind == ir::CallKind::Op && call->callee == "slice") {
        std::string name = names_.fresh("view");
        tensor_view(name, *call, e->span());
        return name;
      }
      if (call->call_kind == ir::CallKind::Op &&
          (call->callee == "reshape" || call->callee == "view")) {
        std::string name = names_.fresh("view");
        reshape_view(name, *call, e->span());
        return name;
      }
      if (call->call_kind == ir::CallKind::Op && call->callee == "transpose") {
        std::string name = names_.fresh("view");
        transpose_view(name, *call, e->span());
        return name;
      }
      if (call->call_kind == ir::CallKind::Op && call->callee == "create_tensor") {
        std::string name = names_.fresh("tensor");
        create_tensor(name, *call, e->span());
        return name;
      }
      if (call->call_kind == ir::CallKind::Function) {
        auto results = call_function(*call, e->span());
        if (results.size() != 1) codegen_error(e->span(), "expected a call with one result");
        return results[0];
      }
    }
    codegen_error(e->span(),
                  "unsupported tensor expression in orchestration function '" + func_.name + "'");
  }

  // `t2 = pl.assemble(t, src, offsets)` of tensors: a copy task writes src into the box of t at
  // offsets (a source of lower rank fills a box whose leading extents are 1); t2 is t.
  void assemble_tensor(const ir::Var& var, const ir::Call& call, Span span) {
    if (!call.attrs.empty()) {
      codegen_error(span,
                    "pl.assemble of tensors in an orchestration function takes no atomic=; "
                    "assemble in a pl.at scope (or store in a kernel) to add");
    }
    const std::string target = tensor_value(call.args[0]);
    const std::string source = tensor_value(call.args[1]);
    const auto& src_shape = call.args[1]->type()->as<ir::TensorType>()->shape;
    const size_t rank = tensor_rank(call.args[0]);
    auto offsets = emit_int_list(call.args[2], names_, "the offsets of pl.assemble");
    if (offsets.size() != rank || src_shape.size() > rank)
      codegen_error(span, "pl.assemble: offsets need one entry per dimension of the target");
    std::vector<std::string> box(rank - src_shape.size(), "1");
    for (int64_t d : src_shape) box.push_back(int_literal(d));
    const std::string sh = int_array("box_shape", box);
    const std::string off = int_array("box_offsets", offsets);
    check_box(target, off, sh, rank, span, "assemble");
    const std::string box_view = names_.fresh("box");
    w_.line("const PtoTensor " + box_view + " = pto::trailing_dims(pto::view(" + target + ", " +
            off + ", " + sh + "), " + std::to_string(src_shape.size()) + ");");
    w_.open("");
    w_.line("PtoArg copy_args[2] = {pto::tensor_arg(PTO_ARG_IN, " + source +
            "), pto::tensor_arg(PTO_ARG_OUT, " + box_view + ")};");
    w_.line("rt->submit(rt->ctx, \"assemble\", pto::copy_task, copy_args, 2);");
    w_.close();
    alias_view(var, target);
  }

  void create_tensor(const std::string& name, const ir::Call& call, Span span) {
    const auto* tt = call.type()->as<ir::TensorType>();
    if (!tt) codegen_error(span, "pl.create_tensor must produce a tensor");
    // The call's own extents: run-time values where the type has kDynamicExtent.
    std::vector<std::string> dims =
        emit_int_list(call.args[0], names_, "the shape of pl.create_tensor");
    std::string shape = int_array(name + "_shape", dims);
    w_.line("const PtoTensor " + name + " = rt->create_tensor(rt->ctx, " + dtype_enum(tt->dtype) +
            ", " + std::to_string(tt->shape.size()) + ", " + shape + ");");
    // The runtime has already reported why it could not allocate.
    w_.line("if (" + name + ".base == nullptr) return 1;");
  }

  void assign(const ir::AssignStmt& s) {
    const ir::Var& var = *s.var;
    const auto& type = var.type();
    const std::string& name = names_.name(&var);
    const auto* call = s.value->as<ir::Call>();
    if (call && call->call_kind == ir::CallKind::Function) {
      auto results = call_function(*call, s.span());
      const std::string task = std::exchange(last_call_task_, std::string());
      if (type->as<ir::TupleType>()) {
        tuples_[&var] = results;
        tuple_tasks_[&var] = task;
        return;
      }
      if (const auto* st = type->as<ir::ScalarType>()) {
        if (results.empty()) codegen_error(s.span(), "'" + call->callee + "' returns no value");
        returned_scalar(var, *st, results[0], task, s.span());
        return;
      }
      // Return value i is the i-th Out/InOut parameter (ir::output_param_count): one value is
      // the first of them, also when InOut parameters follow it (a window buffer a kernel
      // writes in place).
      if (results.empty()) codegen_error(s.span(), "'" + call->callee + "' returns no tensor");
      alias_view(var, results[0]);
      return;
    }
    if (type->as<ir::TensorType>()) {
      if (call && call->call_kind == ir::CallKind::Op && call->callee == "task_array_set") {
        task_array_set(var, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "create_tensor") {
        create_tensor(name, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "slice") {
        tensor_view(name, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op &&
                 (call->callee == "reshape" || call->callee == "view")) {
        reshape_view(name, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "transpose") {
        transpose_view(name, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "write") {
        write_element(var, *call, s.span());
      } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "assemble" &&
                 call->args.size() == 3 && call->args[1]->type()->as<ir::TensorType>()) {
        assemble_tensor(var, *call, s.span());
      } else if (call) {
        codegen_error(s.span(), "pl." + call->callee +
                                    " in an orchestration function; tile computations belong in "
                                    "InCore functions");
      } else {
        alias_view(var, tensor_value(s.value));
      }
      return;
    }
    if (type->as<ir::TupleType>()) {
      const auto* src = s.value->as<ir::Var>();
      auto it = src ? tuples_.find(src) : tuples_.end();
      if (it == tuples_.end()) codegen_error(s.span(), "unsupported tuple value");
      tuples_[&var] = it->second;
      return;
    }
    if (const auto* st = type->as<ir::ScalarType>()) {
      // A scalar element of a call's results (`t, n = self.kernel(...)`).
      if (const auto* g = s.value->as<ir::TupleGetItem>()) {
        const auto* tv = g->tuple->as<ir::Var>();
        auto it = tv ? tuples_.find(tv) : tuples_.end();
        if (it != tuples_.end() && g->index >= 0 &&
            static_cast<size_t>(g->index) < it->second.size()) {
          returned_scalar(var, *st, it->second[static_cast<size_t>(g->index)], tuple_tasks_[tv],
                          s.span());
          return;
        }
      }
      if (call && call->call_kind == ir::CallKind::Op && call->callee == "read") {
        read_element(var, *st, *call, s.span());
        return;
      }
      if (call && call->call_kind == ir::CallKind::Op && call->callee == "task_id") {
        w_.line(cpp_scalar_type(st->dtype) + " " + name + " = (" + cpp_scalar_type(st->dtype) +
                ")pto_last_task;");
        w_.line("(void)" + name + ";");
        return;
      }
      if (call && call->call_kind == ir::CallKind::Op && call->callee == "task_dummy") {
        const std::string options = submit_options(*call, s.span());
        w_.line(cpp_scalar_type(st->dtype) + " " + name + " = (" + cpp_scalar_type(st->dtype) +
                ")rt->submit_task(rt->ctx, \"task_dummy\", nullptr, nullptr, 0, &" + options +
                ");");
        w_.line("(void)" + name + ";");
        return;
      }
      w_.line(cpp_scalar_type(st->dtype) + " " + name + " = " + emit_scalar_expr(s.value, names_) +
              ";");
      w_.line("(void)" + name + ";");
      return;
    }
    codegen_error(s.span(), "unsupported value for '" + var.name + "' in orchestration function '" +
                                func_.name + "'");
  }

  // The runtime's kind for a tensor passed as `direction`: what orders the task.
  static std::string tensor_arg_kind(int64_t direction, Span span) {
    switch (static_cast<ir::ArgDirection>(direction)) {
      case ir::ArgDirection::In:
        return "PTO_ARG_IN";
      case ir::ArgDirection::Out:
      case ir::ArgDirection::Output:  // the caller's tensor is the fresh allocation
        return "PTO_ARG_OUT";
      case ir::ArgDirection::InOut:
        return "PTO_ARG_INOUT";
      case ir::ArgDirection::NoDep:
        return "PTO_ARG_NODEP";
      case ir::ArgDirection::Scalar:
        break;
    }
    codegen_error(span, "invalid arg_directions entry " + std::to_string(direction));
  }

  // Emits a call of another function of the program; returns the C++ names of its results (the
  // tensors passed for the callee's Out/InOut parameters, in order).
  std::vector<std::string> call_function(const ir::Call& call, Span span) {
    ir::FunctionPtr callee = program_.find_function(call.callee);
    if (!callee) codegen_error(span, "call of unknown function '" + call.callee + "'");
    if (call.args.size() != callee->params.size()) {
      codegen_error(span, "'" + call.callee + "' takes " + std::to_string(callee->params.size()) +
                              " arguments, got " + std::to_string(call.args.size()));
    }
    std::vector<int64_t> directions;
    if (const auto* attr = ir::find_attr(call.attrs, "arg_directions")) {
      if (const auto* list = std::get_if<std::vector<int64_t>>(attr)) directions = *list;
    }
    if (directions.size() != call.args.size()) {
      directions.clear();
      for (const auto& p : callee->params) {
        if (!p.var->type()->as<ir::TensorType>())
          directions.push_back(kScalar);
        else if (p.direction == ir::ParamDirection::Out)
          directions.push_back(kOut);
        else if (p.direction == ir::ParamDirection::InOut)
          directions.push_back(kInOut);
        else
          directions.push_back(kIn);
      }
    }
    std::vector<std::string> values;
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (directions[i] == kScalar) {
        values.push_back(emit_scalar_expr(call.args[i], names_));
      } else {
        values.push_back(tensor_value(call.args[i]));
      }
    }
    std::string n = std::to_string(call.args.size());
    std::string args = names_.fresh(call.callee + "_args");
    // The handle of a kernel that returns scalars: the orchestration waits for it before it
    // reads them (returned_scalar).
    std::string task;
    if (ir::is_kernel(callee->type) && returns_scalar(*callee)) {
      task = names_.fresh("task");
      w_.line("PtoTaskHandle " + task + " = PTO_NO_TASK;");
    }
    last_call_task_ = task;
    w_.open("");
    w_.line("PtoArg " + args + "[" + (call.args.empty() ? "1" : n) + "];");
    for (size_t i = 0; i < call.args.size(); ++i) {
      std::string slot = args + "[" + std::to_string(i) + "] = ";
      if (directions[i] == kScalar) {
        auto dt = scalar_dtype(call.args[i]).value_or(ir::DataType::INT64);
        if (ir::is_float(dt)) {
          w_.line(slot + "pto::float_arg(" + dtype_enum(dt) + ", (double)(" + values[i] + "));");
        } else {
          w_.line(slot + "pto::int_arg(" + dtype_enum(dt) + ", (int64_t)(" + values[i] + "));");
        }
      } else {
        w_.line(slot + "pto::tensor_arg(" + tensor_arg_kind(directions[i], span) + ", " +
                values[i] + ");");
      }
    }
    if (ir::is_kernel(callee->type) && !pending_options_.empty()) {
      w_.line("pto_last_task = rt->submit_task(rt->ctx, " + string_literal(callee->name) + ", " +
              kernel_function_name(callee->name) + ", " + args + ", " + n + ", &" +
              pending_options_ + ");");
      if (!task.empty()) w_.line(task + " = pto_last_task;");
      pending_options_.clear();
    } else if (!task.empty()) {
      w_.line(task + " = rt->submit_task(rt->ctx, " + string_literal(callee->name) + ", " +
              kernel_function_name(callee->name) + ", " + args + ", " + n + ", nullptr);");
    } else if (ir::is_kernel(callee->type)) {
      w_.line("rt->submit(rt->ctx, " + string_literal(callee->name) + ", " +
              kernel_function_name(callee->name) + ", " + args + ", " + n + ");");
    } else {
      if (!pending_options_.empty())
        codegen_error(span, "deps= or predicate= on a call of orchestration function '" +
                                callee->name + "': only kernel submissions take them");
      w_.line("if (" + orchestration_function_name(callee->name) + "(rt, " + args + ", " + n +
              ") != 0) return 1;");
    }
    w_.close();
    // Return value i is in the Out/InOut parameter return_params gives it (what the callee
    // wrote there, else the next one in order); Out parameters past its return values are
    // written but not returned.
    std::vector<std::string> results;
    const ir::ReturnStmt* ret = final_return(*callee);
    // A callee that returns nothing gives its Out/InOut parameters, in order.
    if (ret && !ret->values.empty()) {
      for (size_t p : return_params(&program_, *callee, *ret)) {
        if (p == kNoParam) break;
        results.push_back(values[p]);
      }
    } else {
      for (size_t i = 0; i < callee->params.size(); ++i)
        if (callee->params[i].direction != ir::ParamDirection::In) results.push_back(values[i]);
    }
    if (!callee->return_types.empty() && results.size() > callee->return_types.size())
      results.resize(callee->return_types.size());
    // Return values past the outputs that are the callee's own parameters (`return x` of a
    // tensor it only reads) are the caller's arguments, as in the reference interpreter.
    while (ret && results.size() < callee->return_types.size() &&
           results.size() < ret->values.size()) {
      const auto* v = ret->values[results.size()]->as<ir::Var>();
      size_t p = 0;
      while (v && p < callee->params.size() && callee->params[p].var.get() != v) ++p;
      if (!v || p == callee->params.size()) break;
      results.push_back(values[p]);
    }
    return results;
  }

  static bool returns_scalar(const ir::Function& f) {
    for (const auto& t : f.return_types)
      if (t->as<ir::ScalarType>()) return true;
    return false;
  }

  // `var`, a scalar a kernel returned through the one-element tensor `tensor`
  // (passes/kernel_scalar_returns.h): read once the kernel's task `task` is done. Only a scalar
  // something reads costs the wait; the orchestration goes on submitting otherwise.
  void returned_scalar(const ir::Var& var, const ir::ScalarType& st, const std::string& tensor,
                       const std::string& task, Span span) {
    if (!used_vars().count(&var)) return;
    if (task.empty()) {
      codegen_error(span, "'" + var.name +
                              "' is a scalar returned by a function that is not a "
                              "kernel; only InCore functions return scalars to "
                              "an orchestration");
    }
    const ir::DataType dt = st.dtype;
    const std::string& name = names_.name(&var);
    w_.line(cpp_scalar_type(dt) + " " + name + " = 0;");
    w_.line("if (!rt->wait_task(rt->ctx, " + task + ")) return 1;");
    w_.open("");
    w_.line("const int64_t index[1] = {0};");
    w_.line(name + " = (" + cpp_scalar_type(dt) + ")*(const " + cpp_storage_type(dt) +
            "*)pto::element_at(" + tensor + ", index, " + std::to_string(ir::dtype_bytes(dt)) +
            ");");
    w_.close();
    w_.line("(void)" + name + ";");
  }

  // The variables the function reads (an assignment's target is not a read).
  const std::unordered_set<const ir::Var*>& used_vars() {
    if (!used_vars_) {
      struct Reads : ir::IRVisitor {
        std::unordered_set<const ir::Var*> vars;

       protected:
        void visit_assign(const ir::AssignStmt& s) override { visit(s.value); }
        void visit_var(const ir::Var& v) override { vars.insert(&v); }
      } reads;
      reads.visit(func_.body);
      used_vars_ = std::move(reads.vars);
    }
    return *used_vars_;
  }

  void ret(const ir::ReturnStmt& s) {
    const std::vector<size_t> params = return_params(&program_, func_, s);
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (params[i] == kNoParam || !s.values[i]->type()->as<ir::TensorType>()) continue;
      std::string value = tensor_value(s.values[i]);
      const std::string& out = names_.name(func_.params[params[i]].var.get());
      if (value == out) continue;
      // The returned tensor is another buffer: a copy task writes it into the Out parameter
      // once the tasks producing it are done.
      w_.open("if (!pto::same_buffer(" + value + ", " + out + "))");
      w_.line("PtoArg copy_args[2] = {pto::tensor_arg(PTO_ARG_IN, " + value +
              "), pto::tensor_arg(PTO_ARG_OUT, " + out + ")};");
      w_.line("rt->submit(rt->ctx, \"copy\", pto::copy_task, copy_args, 2);");
      w_.close();
    }
    unstage_params();
    w_.line("return 0;");
  }

  // `name = pl.read(tensor, indices)`, of a tensor no task writes (read_only_inputs.h).
  void read_element(const ir::Var& var, const ir::ScalarType& st, const ir::Call& call, Span span) {
    if (!read_only_) read_only_ = read_only_inputs(program_, func_);
    const auto* tensor = call.args.at(0)->as<ir::Var>();
    // A TaskId array is written by the orchestration alone, in program order.
    const bool task_array = ir::is_task_array_type(call.args.at(0)->type());
    if (!task_array && (!tensor || !read_only_->count(tensor))) {
      // Tasks run while the orchestration goes on: an element of a tensor a task may write
      // could be read before that task has run.
      codegen_error(span,
                    "pl.read in an orchestration function reads only an input tensor of the "
                    "entry function that no call writes (tasks run while the orchestration "
                    "goes on); read the element in the InCore function that uses it");
    }
    const ir::DataType dt = st.dtype;
    const std::string storage = cpp_storage_type(dt);
    const std::string& name = names_.name(&var);
    const std::string view = tensor_value(call.args[0]);
    auto idx = emit_int_list(call.args.at(1), names_, "the indices of pl.read");
    w_.line(cpp_scalar_type(dt) + " " + name + " = 0;");
    w_.open("");
    std::string at = int_array("index", idx);
    std::string ones = int_array("one", std::vector<std::string>(idx.size(), "1"));
    check_box(view, at, ones, idx.size(), span, "read");
    w_.line(name + " = (" + cpp_scalar_type(dt) + ")*(const " + storage + "*)pto::element_at(" +
            view + ", " + at + ", " + std::to_string(ir::dtype_bytes(dt)) + ");");
    w_.close();
    w_.line("(void)" + name + ";");
  }

  // `t2 = pl.write(t, indices, v)` of a tensor: a task sets the element (pto::write_element_task),
  // ordered with the other tasks by the one-element view it writes; t2 is t.
  void write_element(const ir::Var& var, const ir::Call& call, Span span) {
    const std::string view = tensor_value(call.args.at(0));
    const auto* type = call.args[0]->type()->as<ir::TensorType>();
    auto idx = emit_int_list(call.args.at(1), names_, "the indices of pl.write");
    const auto* st = call.args.at(2)->type()->as<ir::ScalarType>();
    const std::string value = emit_scalar_expr(call.args.at(2), names_);
    const std::string value_arg = st && !ir::is_float(st->dtype)
                                      ? "pto::int_arg(PTO_INT64, (int64_t)(" + value + "))"
                                      : "pto::float_arg(PTO_FP32, (double)(" + value + "))";
    w_.open("");
    std::string at = int_array("index", idx);
    std::string ones = int_array("one", std::vector<std::string>(idx.size(), "1"));
    check_box(view, at, ones, idx.size(), span, "write");
    w_.line("PtoArg write_args[3] = {pto::tensor_arg(PTO_ARG_INOUT, pto::view(" + view + ", " + at +
            ", " + ones + ")), " + value_arg + ", pto::int_arg(PTO_INT64, " +
            std::to_string(ir::dtype_bytes(type->dtype)) + ")};");
    w_.line("rt->submit(rt->ctx, \"write\", pto::write_element_task, write_args, 3);");
    w_.close();
    alias_view(var, view);
  }

  // ----- Task scheduling (src/ir/task_ops.h)

  static bool uses_task_ops(const ir::Function& f) {
    struct Finder : ir::IRVisitor {
      bool found = false;

     protected:
      void visit_call(const ir::Call& c) override {
        const ir::OpDef* def =
            c.call_kind == ir::CallKind::Op ? ir::OpRegistry::global().find(c.callee) : nullptr;
        if (def && def->category == ir::OpCategory::Scheduling) found = true;
        ir::IRVisitor::visit_call(c);
      }
    } finder;
    finder.visit(f.body);
    return finder.found;
  }

  // Declares the PtoSubmitOptions of a task_options or task_dummy call (its dependencies, and a
  // task_options' predicate); returns its C++ name.
  std::string submit_options(const ir::Call& call, Span span) {
    const auto* deps = call.args.at(0)->as<ir::MakeTuple>();
    if (!deps) codegen_error(span, "the dependencies of a task must be a list");
    std::vector<std::string> scalars;
    std::vector<std::pair<std::string, int64_t>> arrays;
    int64_t capacity = 0;
    for (const auto& d : deps->elements) {
      if (const auto* tt = d->type()->as<ir::TensorType>()) {
        arrays.emplace_back(tensor_value(d), tt->shape.at(0));
        capacity += tt->shape.at(0);
      } else {
        scalars.push_back(emit_scalar_expr(d, names_));
        ++capacity;
      }
    }
    const std::string list = names_.fresh("deps");
    w_.line("PtoTaskHandle " + list + "[" + std::to_string(std::max<int64_t>(capacity, 1)) + "];");
    w_.line("int32_t " + list + "_count = 0;");
    for (const auto& v : scalars)
      w_.line(list + "[" + list + "_count++] = (PtoTaskHandle)(" + v + ");");
    for (const auto& [array, slots] : arrays) {
      w_.line("for (int64_t slot = 0; slot < " + int_literal(slots) + "; ++slot) " + list + "[" +
              list + "_count++] = *pto::task_slot(" + array + ", slot);");
    }
    std::string predicate = "nullptr";
    if (call.args.size() == 3) {
      const auto* tt = call.args[1]->type()->as<ir::TensorType>();
      const std::string operand = tensor_value(call.args[1]);
      auto idx = emit_int_list(call.args[2], names_, "the indices of the predicate");
      const std::string at = int_array(list + "_at", idx);
      const std::string ones = int_array(list + "_one", std::vector<std::string>(idx.size(), "1"));
      check_box(operand, at, ones, idx.size(), span, "predicate");
      int64_t cmp = 0, target = 0;
      if (const auto* v = ir::find_attr(call.attrs, "predicate_cmp")) cmp = std::get<int64_t>(*v);
      if (const auto* v = ir::find_attr(call.attrs, "predicate_target"))
        target = std::get<int64_t>(*v);
      predicate = list + "_predicate";
      w_.line("const PtoTaskPredicate " + predicate + " = {pto::element_at(" + operand + ", " + at +
              ", " + std::to_string(ir::dtype_bytes(tt->dtype)) + "), " + dtype_enum(tt->dtype) +
              ", " + std::to_string(cmp) + ", " + int_literal(target) + "};");
      predicate = "&" + predicate;
    }
    const std::string options = list + "_options";
    // Not const: a task_blocks call after the options sets block_num.
    w_.line("PtoSubmitOptions " + options + " = {" + list + ", " + list + "_count, " + predicate +
            ", 1};");
    return options;
  }

  // `task_blocks(core_num)` after task_options: the submission is an SPMD launch of core_num
  // blocks (pl.spmd(n), pl.spmd_submit(core_num=n)); a count below 1 fails the run here, one
  // past the runtime's limit there (with its value).
  void task_blocks(const ir::Call& call, Span span) {
    if (pending_options_.empty())
      codegen_error(span, "pl.spmd's block count without the launch's task options before it");
    const std::string count = names_.fresh("blocks");
    w_.line("const int64_t " + count + " = (int64_t)(" + emit_scalar_expr(call.args.at(0), names_) +
            ");");
    w_.line("if (" + count + " < 1) { " +
            fail_statement(string_literal(where(span, "spmd") +
                                          ": the launch's core_num is less than 1; an SPMD "
                                          "launch runs at least one block")) +
            " " + leave_after_failure() + " }");
    w_.line(pending_options_ + ".block_num = " + count + " > INT32_MAX ? INT32_MAX : (int32_t)" +
            count + ";");
  }

  void task_options(const ir::Call& call, Span span) {
    if (!pending_options_.empty())
      codegen_error(span, "task options without a kernel call after them");
    pending_options_ = submit_options(call, span);
  }

  void manual_scope(const ir::Call& call) {
    const auto* v = ir::find_attr(call.attrs, "manual");
    const bool manual = v && std::get_if<bool>(v) && std::get<bool>(*v);
    w_.line(std::string("rt->set_manual_scope(rt->ctx, ") + (manual ? "1" : "0") + ");");
  }

  // `array[index] = tid`: the slot written in place (only the orchestration uses the array).
  void task_array_set(const ir::Var& var, const ir::Call& call, Span span) {
    const std::string array = tensor_value(call.args.at(0));
    const int64_t slots = call.args[0]->type()->as<ir::TensorType>()->shape.at(0);
    const std::string index = emit_scalar_expr(call.args.at(1), names_);
    const std::string tid = emit_scalar_expr(call.args.at(2), names_);
    w_.open("");
    w_.line("const int64_t slot = (int64_t)(" + index + ");");
    w_.open("if (slot < 0 || slot >= " + int_literal(slots) + ")");
    fail_and_return(string_literal(where(span, "array.update_element") +
                                   ": slot outside the TaskId array of " + std::to_string(slots) +
                                   " slots"));
    w_.close();
    w_.line("*pto::task_slot(" + array + ", slot) = (PtoTaskHandle)(" + tid + ");");
    w_.close();
    alias_view(var, array);
  }

  const ir::Program& program_;
  const ir::Function& func_;
  std::string pending_options_;  // the options the next kernel submission takes
  std::unordered_map<const ir::Var*, std::vector<std::string>> tuples_;
  // The task handle of the call behind a tuple of results with scalars (empty: none).
  std::unordered_map<const ir::Var*, std::string> tuple_tasks_;
  std::string last_call_task_;  // the same, of the last call_function
  std::optional<std::unordered_set<const ir::Var*>> used_vars_;
  std::optional<std::unordered_set<const ir::Var*>> read_only_;
  std::optional<std::vector<bool>> staged_;
};

}  // namespace

std::string orchestration_declarations(const ir::Program& program) {
  std::string out;
  for (const auto& f : program.functions)
    if (ir::submits_tasks(f->type))
      out += "static int32_t " + orchestration_function_name(f->name) +
             "(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams);\n";
  return out;
}

std::string generate_orchestration(const ir::Program& program, const ir::Function& func) {
  if (!ir::submits_tasks(func.type))
    codegen_error(func.span, "'" + func.name + "' is not an Orchestration or Group function");
  if (is_pipe_group(program, func)) return generate_pipe_group(program, func);
  return OrchestrationEmitter(program, func).run();
}

}  // namespace pypto::codegen
