#include "pypto/ir/interpreter.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "interpreter_values.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/ir/visitor.h"
#include "pypto/support/checked_int.h"
#include "pypto/support/interrupt.h"
#include "interpreter_blocks.h"
#include "task_ops.h"

namespace pypto::ir {

namespace {

using interp::RunError;
using interp::TensorView;
using interp::Value;

constexpr int kMaxCallDepth = 256;

std::string describe_args(const Function& f) {
  return std::to_string(f.params.size()) + " argument" + (f.params.size() == 1 ? "" : "s");
}

Scalar to_scalar(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Int:
      return Scalar::of_int(v.i);
    case Value::Kind::Float:
      return Scalar::of_float(v.f);
    case Value::Kind::Bool:
      return Scalar::of_bool(v.b);
    default:
      throw RunError("scalar arithmetic on a non-scalar value");
  }
}

bool truthy(const Value& v) {
  if (!v.is_scalar()) throw RunError("a condition must be a scalar");
  return to_scalar(v).truthy();
}

Value from_scalar(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Int:
      return Value::of_int(s.i);
    case Scalar::Kind::Float:
      return Value::of_float(s.f);
    case Scalar::Kind::Bool:
      break;
  }
  return Value::of_bool(s.b);
}

// Scalar arithmetic wraps around at the result dtype's width (pypto/ir/scalar_arith.h).
Value scalar_binary(BinaryOp op, const Value& a, const Value& b, DataType result) {
  const Scalar x = to_scalar(a), y = to_scalar(b);
  const ScalarFold r = fold_binary(op, x, y, result);
  if (r.value) return from_scalar(*r.value);
  if (r.zero_divisor) {
    const bool integer = !x.is_float() && !y.is_float() && !is_float(result);
    if (op == BinaryOp::Mod) throw RunError(integer ? "integer modulo by zero" : "modulo by zero");
    throw RunError(integer && op == BinaryOp::FloorDiv ? "integer division by zero"
                                                       : "division by zero");
  }
  if ((op == BinaryOp::Shl || op == BinaryOp::Shr) && y.as_int() < 0) {
    throw RunError("negative shift count (" + std::string(binary_op_symbol(op)) + ")");
  }
  throw RunError("unsupported scalar operator " + std::string(binary_op_symbol(op)));
}

class Interpreter {
 public:
  Interpreter(const Program& program, const InterpretLimits& limits) : limits_(limits) {
    for (const auto& f : program.functions) functions_.emplace(f->name, f.get());
    if (limits.time_limit.count() > 0) deadline_ = Clock::now() + limits.time_limit;
  }

  // Binds arguments to parameters (tensors by reference), runs the body, and applies the
  // Out/InOut contract: return value i belongs to the i-th Out/InOut parameter; a returned
  // tensor that is not that parameter's own window is copied into it.
  Value call(const Function& f, std::vector<Value> args, Span span) {
    if (args.size() != f.params.size()) {
      throw CompileError(
          span, f.name + " takes " + describe_args(f) + ", got " + std::to_string(args.size()));
    }
    if (++depth_ > kMaxCallDepth) {
      throw CompileError(span, "call depth exceeds " + std::to_string(kMaxCallDepth) +
                                   " (recursive call of " + f.name + "?)");
    }
    Frame frame;
    std::vector<size_t> out_params;
    for (size_t i = 0; i < f.params.size(); ++i) {
      frame.env[f.params[i].var.get()] = args[i];
      if (f.params[i].direction != ParamDirection::In) out_params.push_back(i);
    }
    exec(f.body, frame);
    --depth_;
    if (!frame.returned && !f.return_types.empty()) {
      throw CompileError(f.span, "function " + f.name + " ended without a return statement");
    }
    std::vector<Value>& results = frame.return_values;
    for (size_t k = 0; k < results.size() && k < out_params.size(); ++k) {
      const Value& param = args[out_params[k]];
      Value& result = results[k];
      if (param.kind != Value::Kind::Tensor || result.kind != Value::Kind::Tensor) continue;
      if (!result.tensor.same_window(param.tensor)) {
        try {
          interp::copy_tensor(result.tensor, param.tensor);
        } catch (const RunError& e) {
          throw CompileError(f.span, "return value " + std::to_string(k + 1) + " of " + f.name +
                                         " does not fit its output parameter " +
                                         f.params[out_params[k]].var->name + ": " + e.what());
        }
      }
      result = param;
    }
    if (results.empty()) return Value{};
    if (results.size() == 1) return results[0];
    return Value::of_tuple(std::move(results));
  }

 private:
  struct Frame {
    std::unordered_map<const Var*, Value> env;
    bool returned = false;
    std::vector<Value> return_values;
    bool yielded = false;
    std::vector<Value> yield_values;
  };

  // Runs `fn` and gives a run-time failure the statement's position.
  template <typename Fn>
  void guarded(const Stmt& s, Fn fn) {
    try {
      fn();
    } catch (const RunError& e) {
      throw CompileError(s.span(), e.what());
    }
  }

  // Every kCheckEvery statements: has the time run out, or was Ctrl-C pressed?
  void check_limits() {
    if (++steps_ % kCheckEvery != 0) return;
    support::throw_if_interrupted();
    if (Clock::now() > deadline_) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g s",
                    std::chrono::duration<double>(limits_.time_limit).count());
      throw support::Interrupted(std::string("the reference interpreter did not finish within ") +
                                 limit + " (raise the time limit, e.g. RunConfig.timeout)");
    }
  }

  void exec(const StmtPtr& s, Frame& frame) {
    if (!s) return;
    check_limits();
    switch (s->kind()) {
      case StmtKind::Assign: {
        const auto& a = *s->as<AssignStmt>();
        guarded(a, [&] { frame.env[a.var.get()] = eval(a.value, frame); });
        return;
      }
      case StmtKind::Eval:
        guarded(*s, [&] { eval(s->as<EvalStmt>()->expr, frame); });
        return;
      case StmtKind::Return:
        guarded(*s, [&] {
          frame.return_values = eval_all(s->as<ReturnStmt>()->values, frame);
          frame.returned = true;
        });
        return;
      case StmtKind::Seq:
        for (const auto& st : s->as<SeqStmts>()->stmts) {
          exec(st, frame);
          if (frame.returned) return;
        }
        return;
      case StmtKind::For:
        return exec_for(*s->as<ForStmt>(), frame);
      case StmtKind::If:
        return exec_if(*s->as<IfStmt>(), frame);
      case StmtKind::While:
        return exec_while(*s->as<WhileStmt>(), frame);
      case StmtKind::Yield:
        guarded(*s, [&] {
          frame.yield_values = eval_all(s->as<YieldStmt>()->values, frame);
          frame.yielded = true;
        });
        return;
      case StmtKind::Scope:
        // A scope runs where it stands; outlining it into a kernel does not change its meaning.
        // A predicate that does not hold skips it, as it skips the kernel it becomes; an SPMD
        // launch (task_blocks) runs it once per block.
        {
          const int64_t blocks = std::exchange(next_task_blocks_, 1);
          if (std::exchange(skip_next_task_, false)) return;
          for (int64_t b = 0; b < blocks; ++b) {
            const interp::LaunchBlockScope block(b, blocks);
            exec(s->as<ScopeStmt>()->body, frame);
          }
          return;
        }
    }
  }

  int64_t eval_int(const ExprPtr& e, Frame& frame, const char* what) {
    Value v = eval(e, frame);
    if (!v.is_integral()) throw RunError(std::string("loop ") + what + " must be an integer");
    return v.as_int();
  }

  void exec_for(const ForStmt& s, Frame& frame) {
    int64_t start = 0, stop = 0, step = 1;
    std::vector<Value> carried;
    guarded(s, [&] {
      start = eval_int(s.start, frame, "start");
      stop = eval_int(s.stop, frame, "stop");
      step = eval_int(s.step, frame, "step");
      if (step == 0) throw RunError("loop step must not be zero");
      carried = eval_all(s.init_values, frame);
      if (carried.size() != s.iter_args.size()) {
        throw RunError("loop has " + std::to_string(s.iter_args.size()) + " iter_args but " +
                       std::to_string(carried.size()) + " init values");
      }
    });
    // Counted, not `i += step` until past stop: a step near 2^63 would overflow the index and
    // never reach the bound. The trip count is exact for any bounds.
    const uint64_t trips = support::trip_count(start, stop, step);
    for (uint64_t k = 0; k < trips; ++k) {
      const auto i =
          static_cast<int64_t>(static_cast<uint64_t>(start) + k * static_cast<uint64_t>(step));
      frame.env[s.loop_var.get()] = Value::of_int(i);
      for (size_t k = 0; k < carried.size(); ++k) frame.env[s.iter_args[k].get()] = carried[k];
      frame.yielded = false;
      exec(s.body, frame);
      if (frame.returned) return;
      if (!s.iter_args.empty()) {
        if (!frame.yielded || frame.yield_values.size() != carried.size()) {
          throw CompileError(s.span(), "loop body must end with pl.yield_ of " +
                                           std::to_string(carried.size()) + " values");
        }
        carried = std::move(frame.yield_values);
      }
      frame.yielded = false;
    }
    for (size_t k = 0; k < s.return_vars.size() && k < carried.size(); ++k) {
      frame.env[s.return_vars[k].get()] = carried[k];
    }
  }

  void exec_while(const WhileStmt& s, Frame& frame) {
    std::vector<Value> carried;
    guarded(s, [&] {
      carried = eval_all(s.init_values, frame);
      if (carried.size() != s.iter_args.size()) {
        throw RunError("while loop has " + std::to_string(s.iter_args.size()) + " iter_args but " +
                       std::to_string(carried.size()) + " init values");
      }
    });
    while (true) {
      // Each trip polls the time limit and the interrupt flag: a condition that never turns
      // false ends with the run's time limit, not with a hung process.
      check_limits();
      for (size_t k = 0; k < carried.size(); ++k) frame.env[s.iter_args[k].get()] = carried[k];
      bool cond = false;
      guarded(s, [&] { cond = truthy(eval(s.cond, frame)); });
      if (!cond) break;
      frame.yielded = false;
      exec(s.body, frame);
      if (frame.returned) return;
      if (!s.iter_args.empty()) {
        if (!frame.yielded || frame.yield_values.size() != carried.size()) {
          throw CompileError(s.span(), "while loop body must end with pl.yield_ of " +
                                           std::to_string(carried.size()) + " values");
        }
        carried = std::move(frame.yield_values);
      }
      frame.yielded = false;
    }
    for (size_t k = 0; k < s.return_vars.size() && k < carried.size(); ++k) {
      frame.env[s.return_vars[k].get()] = carried[k];
    }
  }

  void exec_if(const IfStmt& s, Frame& frame) {
    bool cond = false;
    guarded(s, [&] { cond = truthy(eval(s.cond, frame)); });
    const StmtPtr& branch = cond ? s.then_body : s.else_body;
    frame.yielded = false;
    exec(branch, frame);
    if (frame.returned || s.return_vars.empty()) return;
    if (!frame.yielded || frame.yield_values.size() != s.return_vars.size()) {
      throw CompileError(s.span(), std::string("the ") + (cond ? "then" : "else") +
                                       " branch must end with pl.yield_ of " +
                                       std::to_string(s.return_vars.size()) + " values");
    }
    for (size_t k = 0; k < s.return_vars.size(); ++k) {
      frame.env[s.return_vars[k].get()] = std::move(frame.yield_values[k]);
    }
    frame.yielded = false;
  }

  std::vector<Value> eval_all(const std::vector<ExprPtr>& es, Frame& frame) {
    std::vector<Value> out;
    out.reserve(es.size());
    for (const auto& e : es) out.push_back(eval(e, frame));
    return out;
  }

  Value eval(const ExprPtr& e, Frame& frame) {
    switch (e->kind()) {
      case ExprKind::IntImm:
        return Value::of_int(e->as<IntImm>()->value);
      case ExprKind::FloatImm:
        return Value::of_float(e->as<FloatImm>()->value);
      case ExprKind::BoolImm:
        return Value::of_bool(e->as<BoolImm>()->value);
      case ExprKind::Var: {
        const auto* v = e->as<Var>();
        auto it = frame.env.find(v);
        if (it == frame.env.end()) {
          throw RunError("variable '" + v->name + "' is used before it is assigned");
        }
        return it->second;
      }
      case ExprKind::Binary: {
        const auto& b = *e->as<Binary>();
        const auto* st = b.type() ? b.type()->as<ScalarType>() : nullptr;
        return scalar_binary(b.op, eval(b.a, frame), eval(b.b, frame),
                             st ? st->dtype : DataType::INT64);
      }
      case ExprKind::Unary: {
        const auto& u = *e->as<Unary>();
        Value a = eval(u.a, frame);
        if (u.op == UnaryOp::Not) return Value::of_bool(!truthy(a));
        if (!a.is_scalar()) throw RunError("unary minus on a non-scalar value");
        const auto* st = u.type() ? u.type()->as<ScalarType>() : nullptr;
        return from_scalar(*fold_unary(u.op, to_scalar(a), st ? st->dtype : DataType::INT64).value);
      }
      case ExprKind::Call:
        return eval_call(*e->as<Call>(), frame);
      case ExprKind::MakeTuple:
        return Value::of_tuple(eval_all(e->as<MakeTuple>()->elements, frame));
      case ExprKind::TupleGetItem: {
        const auto& g = *e->as<TupleGetItem>();
        Value t = eval(g.tuple, frame);
        if (t.kind != Value::Kind::Tuple || g.index < 0 ||
            g.index >= static_cast<int64_t>(t.tuple->size())) {
          throw RunError("tuple index " + std::to_string(g.index) + " out of range");
        }
        return (*t.tuple)[static_cast<size_t>(g.index)];
      }
    }
    throw RunError("unknown expression");
  }

  Value eval_call(const Call& c, Frame& frame) {
    std::vector<Value> args = eval_all(c.args, frame);
    if (c.call_kind == CallKind::Op) {
      // The submission after a task_options with a false predicate is retired without running.
      if (c.callee == "task_options") skip_next_task_ = !interp::task_predicate_holds(c, args);
      if (c.callee == "task_blocks") next_task_blocks_ = launch_blocks(args);
      return interp::apply_op(c, args);
    }
    auto it = functions_.find(c.callee);
    if (it == functions_.end()) throw RunError("call of unknown function " + c.callee);
    const int64_t blocks = std::exchange(next_task_blocks_, 1);
    if (std::exchange(skip_next_task_, false)) return skipped_call(*it->second, args);
    if (blocks == 1) return call(*it->second, std::move(args), c.span());
    if (uses_syncall(*it->second)) {
      // Blocks that meet at pl.system.syncall run side by side, each with an interpreter of its
      // own (call depth, step count); the last block's result stands for the launch.
      std::vector<Value> results(static_cast<size_t>(blocks));
      interp::run_blocks_side_by_side(blocks, [&](int64_t b) {
        Interpreter block = *this;
        results[static_cast<size_t>(b)] = block.call(*it->second, args, c.span());
      });
      return results.back();
    }
    // An SPMD launch: the kernel once per block, in order (the blocks are independent).
    Value result;
    for (int64_t b = 0; b < blocks; ++b) {
      const interp::LaunchBlockScope block(b, blocks);
      result = call(*it->second, args, c.span());
    }
    return result;
  }

  // Whether `f`, or a function it calls, calls pl.system.syncall.
  bool uses_syncall(const Function& f) {
    auto known = syncall_users_.find(&f);
    if (known != syncall_users_.end()) return known->second;
    syncall_users_[&f] = false;  // a recursive call adds nothing
    struct Finder : IRVisitor {
      std::vector<std::string> callees;
      bool found = false;
      void visit_call(const Call& c) override {
        if (c.call_kind == CallKind::Op && c.callee == "system.syncall") found = true;
        if (c.call_kind == CallKind::Function) callees.push_back(c.callee);
        IRVisitor::visit_call(c);
      }
    } finder;
    finder.visit_function(f);
    bool uses = finder.found;
    for (const std::string& name : finder.callees) {
      auto it = functions_.find(name);
      if (!uses && it != functions_.end()) uses = uses_syncall(*it->second);
    }
    syncall_users_[&f] = uses;
    return uses;
  }

  // The block count of a task_blocks call: at least one.
  static int64_t launch_blocks(const std::vector<Value>& args) {
    const int64_t blocks = args.size() == 1 && args[0].is_integral() ? args[0].as_int() : 0;
    if (blocks < 1) {
      throw RunError("an SPMD launch needs at least one block; its core_num is " +
                     std::to_string(blocks));
    }
    return blocks;
  }

  // What a call that does not run gives back: its Out and InOut arguments, untouched.
  static Value skipped_call(const Function& f, const std::vector<Value>& args) {
    std::vector<Value> results;
    for (size_t i = 0; i < f.params.size() && i < args.size(); ++i)
      if (f.params[i].direction != ParamDirection::In) results.push_back(args[i]);
    if (results.empty()) return Value{};
    if (results.size() == 1) return results[0];
    return Value::of_tuple(std::move(results));
  }

  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kCheckEvery = 256;

  std::unordered_map<std::string, const Function*> functions_;
  bool skip_next_task_ = false;   // a task_options predicate was false
  int64_t next_task_blocks_ = 1;  // of the next submission (task_blocks)
  std::unordered_map<const Function*, bool> syncall_users_;  // uses_syncall's answers
  int depth_ = 0;
  InterpretLimits limits_;
  Clock::time_point deadline_ = Clock::time_point::max();
  uint64_t steps_ = 0;
};

Value entry_arg(const Param& param, const InterpreterArg& arg) {
  const std::string& name = param.var->name;
  const TypePtr& type = param.var->type();
  if (const auto* host = std::get_if<HostTensor>(&arg)) {
    const auto* tt = type ? type->as<TensorType>() : nullptr;
    if (!tt) throw CompileError({}, "parameter " + name + " is not a tensor, got a tensor");
    if (tt->shape != host->shape || tt->dtype != host->dtype) {
      throw CompileError({}, "argument for " + name + " is " + shape_to_string(host->shape) + " " +
                                 std::string(dtype_name(host->dtype)) + ", expected " +
                                 type_to_string(type));
    }
    if (!host->data) throw CompileError({}, "argument for " + name + " has no data");
    return Value::of_tensor(interp::borrow_tensor(host->data, host->dtype, host->shape));
  }
  if (type && type->as<TensorType>()) {
    throw CompileError({}, "parameter " + name + " expects a tensor, got a scalar");
  }
  if (const auto* i = std::get_if<int64_t>(&arg)) return Value::of_int(*i);
  if (const auto* d = std::get_if<double>(&arg)) return Value::of_float(*d);
  return Value::of_bool(std::get<bool>(arg));
}

}  // namespace

void interpret_function(const Program& program, std::string_view function,
                        const std::vector<InterpreterArg>& args, const InterpretLimits& limits) {
  FunctionPtr f = program.find_function(function);
  if (!f)
    throw CompileError({}, "program " + program.name + " has no function " + std::string(function));
  if (args.size() != f->params.size()) {
    throw CompileError(
        f->span, f->name + " takes " + describe_args(*f) + ", got " + std::to_string(args.size()));
  }
  std::vector<Value> values;
  values.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) values.push_back(entry_arg(f->params[i], args[i]));
  Interpreter(program, limits).call(*f, std::move(values), f->span);
}

void interpret(const Program& program, const std::vector<InterpreterArg>& args,
               const InterpretLimits& limits) {
  FunctionPtr entry = program.entry();
  if (!entry) {
    throw CompileError(
        {}, "program " + program.name + " has no entry: name one orchestration function main");
  }
  interpret_function(program, entry->name, args, limits);
}

}  // namespace pypto::ir
