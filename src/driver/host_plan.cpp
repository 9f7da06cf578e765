// plan_host_orchestrator: runs a host orchestrator (a function of level pl.Level.HOST) for a
// world size, on symbols rather than data. Its tensors are views of its parameters, its window
// buffers offsets in every rank's window, each call with device=r a Dispatch to rank r and each
// built-in collective (pld.tensor.allreduce, ...) a HostCollective of every rank.
// This is the control plane of a multi-rank program; the data plane is the ranks' devices.
#include <map>
#include <optional>
#include <set>

#include "pypto/driver/distributed.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/ir/stmt.h"
#include "pypto/ir/types.h"
#include "pypto/ir/visitor.h"

namespace pypto::driver {
namespace {

using ir::CompileError;

// Window buffers start on a cache line of every rank's window.
constexpr int64_t kWindowAlignment = 64;

// The built-in collectives a host orchestrator runs (comm_ops.h), by PtoCollectiveKind.
const std::map<std::string, int32_t, std::less<>> kCollectiveKinds = {
    {"comm_allreduce", 0}, {"comm_allgather", 1},  {"comm_reduce_scatter", 2},
    {"comm_broadcast", 3}, {"comm_all_to_all", 4}, {"comm_all_to_all_v", 5},
    {"comm_barrier", 6}};  // comm_isa::kHostBarrier

struct HostValue {
  enum class Kind { None, Scalar, Tensor, WindowBuffer, Window };
  Kind kind = Kind::None;
  ir::Scalar scalar;
  // Tensor (a view of parameter `param`) and Window (a view of window buffer `buffer`).
  size_t param = 0;
  size_t buffer = 0;
  int64_t byte_offset = 0;
  std::vector<int64_t> shape, strides;  // strides in elements
  ir::DataType dtype = ir::DataType::FP32;
};

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// Whether a view's elements are one row-major run (dimensions of extent 1 do not matter).
bool contiguous(const HostValue& v) {
  int64_t expected = 1;
  for (size_t i = v.shape.size(); i-- > 0;) {
    if (v.shape[i] == 1) continue;
    if (v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

class HostEvaluator {
 public:
  HostEvaluator(const ir::Program& program, const ir::Function& host, int world_size)
      : program_(program), host_(host), world_size_(world_size) {
    plan_.host = host.name;
    plan_.params = host.params;
    for (size_t i = 0; i < host.params.size(); ++i) {
      const ir::Param& p = host.params[i];
      const auto* t = p.var->type()->as<ir::TensorType>();
      if (!t) {
        throw CompileError(p.var->span(), "parameter '" + p.var->name + "' of host orchestrator '" +
                                              host.name + "' must be a tensor");
      }
      HostValue v;
      v.kind = HostValue::Kind::Tensor;
      v.param = i;
      v.shape = t->shape;
      v.strides = row_major_strides(t->shape);
      v.dtype = t->dtype;
      values_[p.var.get()] = v;
    }
  }

  HostPlan run() {
    if (host_.body) stmt(host_.body);
    plan_.window_bytes = window_end_;
    return std::move(plan_);
  }

 private:
  [[noreturn]] void fail(ir::Span span, const std::string& message) const {
    throw CompileError(span.valid() ? span : host_.span,
                       "host orchestrator '" + host_.name + "': " + message);
  }

  void stmt(const ir::StmtPtr& s) {
    if (const auto* seq = s->as<ir::SeqStmts>()) {
      for (const auto& child : seq->stmts) stmt(child);
    } else if (const auto* a = s->as<ir::AssignStmt>()) {
      values_[a->var.get()] = expr(a->value);
    } else if (const auto* e = s->as<ir::EvalStmt>()) {
      (void)expr(e->expr);
    } else if (const auto* f = s->as<ir::ForStmt>()) {
      if (!f->iter_args.empty()) fail(f->span(), "a loop that carries values is not supported");
      const int64_t start = integer(f->start), stop = integer(f->stop);
      const int64_t step = f->step ? integer(f->step) : 1;
      if (step <= 0) fail(f->span(), "a loop needs a positive step");
      for (int64_t i = start; i < stop; i += step) {
        HostValue index;
        index.kind = HostValue::Kind::Scalar;
        index.scalar = ir::Scalar::of_int(i);
        values_[f->loop_var.get()] = index;
        stmt(f->body);
      }
    } else if (const auto* c = s->as<ir::IfStmt>()) {
      if (!c->return_vars.empty()) fail(c->span(), "an if that yields values is not supported");
      const HostValue cond = expr(c->cond);
      const bool taken =
          cond.scalar.kind == ir::Scalar::Kind::Bool ? cond.scalar.b : cond.scalar.i != 0;
      if (taken) {
        stmt(c->then_body);
      } else if (c->else_body) {
        stmt(c->else_body);
      }
    } else if (const auto* r = s->as<ir::ReturnStmt>()) {
      // The host returns its Out tensors, which the ranks wrote in place; a dispatch written in
      // the return statement (`return chip(x, out)`) still runs.
      for (const auto& v : r->values) (void)expr(v);
    } else {
      fail(s->span(),
           "this statement is not supported in a host orchestrator (assignments, pl.range loops, "
           "ifs, window buffers and dispatches with device= are)");
    }
  }

  int64_t integer(const ir::ExprPtr& e) {
    const HostValue v = expr(e);
    if (v.kind != HostValue::Kind::Scalar || v.scalar.kind != ir::Scalar::Kind::Int) {
      fail(e->span(), "expected an integer");
    }
    return v.scalar.i;
  }

  std::vector<int64_t> integers(const ir::ExprPtr& e) {
    const auto* tuple = e->as<ir::MakeTuple>();
    if (!tuple) fail(e->span(), "expected a list of integers");
    std::vector<int64_t> out;
    for (const auto& item : tuple->elements) out.push_back(integer(item));
    return out;
  }

  HostValue scalar(ir::Scalar s) {
    HostValue v;
    v.kind = HostValue::Kind::Scalar;
    v.scalar = s;
    return v;
  }

  HostValue expr(const ir::ExprPtr& e) {
    if (const auto* i = e->as<ir::IntImm>()) return scalar(ir::Scalar::of_int(i->value));
    if (const auto* f = e->as<ir::FloatImm>()) return scalar(ir::Scalar::of_float(f->value));
    if (const auto* b = e->as<ir::BoolImm>()) return scalar(ir::Scalar::of_bool(b->value));
    if (const auto* v = e->as<ir::Var>()) {
      auto it = values_.find(v);
      if (it == values_.end()) fail(e->span(), "'" + v->name + "' has no value here");
      return it->second;
    }
    if (const auto* b = e->as<ir::Binary>()) {
      const HostValue x = expr(b->a), y = expr(b->b);
      if (x.kind != HostValue::Kind::Scalar || y.kind != HostValue::Kind::Scalar) {
        fail(e->span(), "arithmetic needs scalars");
      }
      const auto* type = e->type()->as<ir::ScalarType>();
      ir::ScalarFold r =
          ir::fold_binary(b->op, x.scalar, y.scalar, type ? type->dtype : ir::DataType::INT64);
      if (!r.value) fail(e->span(), "this arithmetic has no value (a division by zero?)");
      return scalar(*r.value);
    }
    if (const auto* u = e->as<ir::Unary>()) {
      const HostValue x = expr(u->a);
      const auto* type = e->type()->as<ir::ScalarType>();
      ir::ScalarFold r = ir::fold_unary(u->op, x.scalar, type ? type->dtype : ir::DataType::INT64);
      if (!r.value) fail(e->span(), "this arithmetic has no value");
      return scalar(*r.value);
    }
    if (const auto* c = e->as<ir::Call>()) return call(*c);
    if (const auto* g = e->as<ir::TupleGetItem>()) {
      // An element of what a dispatch returns: the ranks write their results in place, so the
      // host has no value for it (it may only pass it on to its own return).
      if (expr(g->tuple).kind == HostValue::Kind::None) return {};
    }
    fail(e->span(), "this expression is not supported in a host orchestrator");
  }

  HostValue call(const ir::Call& c) {
    if (c.call_kind == ir::CallKind::Function) {
      const ir::FunctionPtr callee = program_.find_function(c.callee);
      if (callee && callee->attrs.host_python) {
        host_call(c, *callee);
        return {};
      }
      return dispatch(c);
    }
    const std::string& op = c.callee;
    if (op == "comm_world_size") return scalar(ir::Scalar::of_int(world_size_));
    if (op == "create_tensor") {
      // A tensor of the host's own, between its dispatches and sub-workers (an intermediate
      // that one chip writes and another reads): host memory that every call allocates.
      const auto* type = c.type()->as<ir::TensorType>();
      if (!type || !ir::shape_bytes(type->shape, type->dtype)) {
        fail(c.span(), "pl.create_tensor in a host orchestrator needs a static shape");
      }
      HostValue v;
      v.kind = HostValue::Kind::Tensor;
      v.param = plan_.params.size() + plan_.locals.size();
      v.shape = type->shape;
      v.strides = row_major_strides(type->shape);
      v.dtype = type->dtype;
      plan_.locals.push_back({type->shape, type->dtype});
      return v;
    }
    if (op == "comm_alloc_window") {
      const int64_t bytes = integer(c.args.at(0));
      if (bytes < 0) fail(c.span(), "a window buffer cannot have a negative size");
      HostValue v;
      v.kind = HostValue::Kind::WindowBuffer;
      v.buffer = plan_.window_offsets.size();
      plan_.window_offsets.push_back(window_end_);
      buffer_bytes_.push_back(bytes);
      window_end_ += (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;
      return v;
    }
    if (op == "comm_window") {
      const HostValue buffer = expr(c.args.at(0));
      if (buffer.kind != HostValue::Kind::WindowBuffer) {
        fail(c.span(), "pld.window needs a buffer of pld.alloc_window_buffer");
      }
      const auto* type = c.type()->as<ir::TensorType>();
      HostValue v;
      v.kind = HostValue::Kind::Window;
      v.buffer = buffer.buffer;
      v.byte_offset = plan_.window_offsets[buffer.buffer];
      v.shape = type->shape;
      v.strides = row_major_strides(type->shape);
      v.dtype = type->dtype;
      const int64_t bytes = ir::shape_bytes(type->shape, type->dtype).value_or(INT64_MAX);
      if (bytes > buffer_bytes_[buffer.buffer]) {
        fail(c.span(), "the window view of " + std::to_string(bytes) +
                           " bytes does not fit its buffer of " +
                           std::to_string(buffer_bytes_[buffer.buffer]) + " bytes");
      }
      return v;
    }
    if (op == "slice") {
      HostValue v = view_operand(c, 0);
      const std::vector<int64_t> shape = integers(c.args.at(1));
      const std::vector<int64_t> offsets = integers(c.args.at(2));
      if (shape.size() != v.shape.size() || offsets.size() != v.shape.size()) {
        fail(c.span(), "a slice needs a shape and offsets per dimension");
      }
      int64_t element = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (offsets[d] < 0 || shape[d] < 0 || offsets[d] > v.shape[d] - shape[d]) {
          fail(c.span(), "the slice at " + ir::shape_to_string(offsets) + " of shape " +
                             ir::shape_to_string(shape) + " exceeds the tensor of shape " +
                             ir::shape_to_string(v.shape));
        }
        element += offsets[d] * v.strides[d];
      }
      v.byte_offset += element * ir::dtype_bytes(v.dtype);
      v.shape = shape;
      return v;
    }
    if (op == "reshape" || op == "view") {  // pl.tensor.view is reshape's view
      HostValue v = view_operand(c, 0);
      if (c.args.size() < 2) return v;
      if (!contiguous(v)) fail(c.span(), "only a contiguous view can be reshaped");
      v.shape = integers(c.args.at(1));
      v.strides = row_major_strides(v.shape);
      return v;
    }
    if (op.rfind("comm_", 0) == 0 && kCollectiveKinds.count(op)) return collective(c);
    fail(c.span(), "pl." + op + " is not supported in a host orchestrator");
  }

  HostValue view_operand(const ir::Call& c, size_t i) {
    HostValue v = expr(c.args.at(i));
    if (v.kind != HostValue::Kind::Tensor && v.kind != HostValue::Kind::Window) {
      fail(c.span(), "pl." + c.callee + " needs a tensor");
    }
    return v;
  }

  // A dispatch's value: the tensor it writes, when its callee writes one tensor parameter and
  // returns one tensor (PyPTO's Out-parameter convention); the host may pass it on.
  HostValue dispatch(const ir::Call& c) {
    // Without device= a call runs on rank 0 (the one device of a single-rank program).
    const bool has_device = ir::find_attr(c.attrs, "device") != nullptr;
    const size_t nargs = c.args.size() - (has_device ? 1 : 0);
    const ir::FunctionPtr callee = program_.find_function(c.callee);
    if (!callee) fail(c.span(), "no function '" + c.callee + "'");
    if (ir::resolved_kind(*callee) != ir::FunctionType::Orchestration) {
      fail(c.span(),
           "device= dispatches an orchestration function (a @pl.jit or "
           "FunctionType.Orchestration function that calls the kernels); '" +
               c.callee + "' is a kernel");
    }
    Dispatch d;
    d.callee = c.callee;
    const int64_t rank = has_device ? integer(c.args.back()) : 0;
    if (rank < 0 || rank >= world_size_) {
      fail(c.span(), "device=" + std::to_string(rank) + " is outside the world of " +
                         std::to_string(world_size_) + " rank(s)");
    }
    d.rank = static_cast<int>(rank);
    HostValue written;
    size_t writes = 0;
    for (size_t i = 0; i < nargs; ++i) {
      const HostValue v = expr(c.args[i]);
      if (i < callee->params.size() && callee->params[i].direction != ir::ParamDirection::In &&
          v.kind == HostValue::Kind::Tensor) {
        written = v;
        ++writes;
      }
      const bool view = v.kind == HostValue::Kind::Tensor || v.kind == HostValue::Kind::Window;
      if (view && !contiguous(v)) {
        fail(c.args[i]->span(), "argument " + std::to_string(i + 1) + " of '" + c.callee +
                                    "' is not a contiguous view");
      }
      if (!view && v.kind != HostValue::Kind::Scalar) {
        fail(c.args[i]->span(), "argument " + std::to_string(i + 1) + " of '" + c.callee +
                                    "' cannot be passed to a rank");
      }
      d.args.push_back(dispatch_arg(v));
    }
    // A rank dispatched again since the ranks last met (a later loop of the host's) starts
    // after every rank's earlier dispatches: the host's order, as PyPTO's host runs its
    // dispatches phase by phase (a consume may read what every rank published).
    if (dispatched_since_sync_.count(d.rank)) sync_all_ranks(c);
    dispatched_since_sync_.insert(d.rank);
    plan_.steps.push_back({false, plan_.dispatches.size()});
    plan_.dispatches.push_back(std::move(d));
    if (writes == 1 && callee->return_types.size() == 1) return written;
    return {};
  }

  // A dispatch or host call argument from a view (a host tensor's or a window's) or a scalar.
  static DispatchArg dispatch_arg(const HostValue& v) {
    DispatchArg a;
    if (v.kind == HostValue::Kind::Scalar) {
      a.kind = DispatchArg::Kind::Scalar;
      if (v.scalar.kind == ir::Scalar::Kind::Int) a.scalar = v.scalar.i;
      if (v.scalar.kind == ir::Scalar::Kind::Float) a.scalar = v.scalar.f;
      if (v.scalar.kind == ir::Scalar::Kind::Bool) a.scalar = v.scalar.b;
      return a;
    }
    a.kind = v.kind == HostValue::Kind::Tensor ? DispatchArg::Kind::HostTensor
                                               : DispatchArg::Kind::Window;
    a.param = v.param;
    a.byte_offset = v.byte_offset;
    a.shape = v.shape;
    a.dtype = v.dtype;
    return a;
  }

  // A call of a host sub-worker: run by the host once every rank has done the work dispatched
  // so far (the ranks meet there), on views of the host's tensors.
  void host_call(const ir::Call& c, const ir::Function& callee) {
    if (ir::find_attr(c.attrs, "device")) {
      fail(c.span(), "'" + c.callee +
                         "' is a host sub-worker: the host runs it, not a rank "
                         "(drop device=)");
    }
    HostCall h;
    h.callee = c.callee;
    for (const ir::Param& p : callee.params) h.directions.push_back(p.direction);
    for (size_t i = 0; i < c.args.size(); ++i) {
      const HostValue v = expr(c.args[i]);
      if (!(v.kind == HostValue::Kind::Tensor && contiguous(v)) &&
          v.kind != HostValue::Kind::Scalar) {
        fail(c.span(), "argument " + std::to_string(i + 1) + " of host sub-worker '" + c.callee +
                           "' must be a contiguous view of a host tensor or a scalar (a "
                           "window lives on the ranks)");
      }
      h.args.push_back(dispatch_arg(v));
    }
    dispatched_since_sync_.clear();  // the ranks have met: every one finished before the call
    plan_.steps.push_back({false, plan_.host_calls.size(), true});
    plan_.host_calls.push_back(std::move(h));
  }

  // A barrier of every rank (on a private signal window) between two phases of dispatches.
  void sync_all_ranks(const ir::Call& c) {
    if (phase_signal_ < 0) {
      const int64_t bytes = int64_t{world_size_} * 4;
      phase_signal_ = window_end_;
      plan_.window_offsets.push_back(window_end_);
      buffer_bytes_.push_back(bytes);
      window_end_ += (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;
    }
    DispatchArg signal;
    signal.kind = DispatchArg::Kind::Window;
    signal.byte_offset = phase_signal_;
    signal.shape = {world_size_, 1};
    signal.dtype = ir::DataType::INT32;
    HostCollective h;
    h.kind = kCollectiveKinds.at("comm_barrier");
    h.label = host_.name + ": the ranks meeting before the dispatch of '" + c.callee + "'" +
              (c.span().valid() ? " at line " + std::to_string(c.span().line) : "");
    h.tensors.assign(5, DispatchArg{});
    h.tensors[0] = h.tensors[1] = signal;
    plan_.steps.push_back({true, plan_.collectives.size()});
    plan_.collectives.push_back(std::move(h));
    dispatched_since_sync_.clear();
  }

  // A tensor argument of a collective or of a dispatch: a contiguous view of a host tensor or
  // of a window buffer.
  DispatchArg view_arg(const ir::ExprPtr& e, const std::string& what, bool window_only) {
    const HostValue v = expr(e);
    const bool window = v.kind == HostValue::Kind::Window;
    if (!window && (window_only || v.kind != HostValue::Kind::Tensor)) {
      fail(e->span(), what + (window_only ? " must be a window (pld.window of a window buffer)"
                                          : " must be a tensor or a window"));
    }
    if (!contiguous(v)) fail(e->span(), what + " is not a contiguous view");
    DispatchArg a;
    a.kind = window ? DispatchArg::Kind::Window : DispatchArg::Kind::HostTensor;
    a.param = v.param;
    a.byte_offset = v.byte_offset;
    a.shape = v.shape;
    a.dtype = v.dtype;
    return a;
  }

  // pld.tensor.allreduce, ... in the host: every rank runs it after its earlier dispatches.
  // Its value is the target window, rebound.
  HostValue collective(const ir::Call& c) {
    const std::string& op = c.callee;
    const std::string label = "pld.tensor." + op.substr(5);
    HostCollective h;
    h.kind = kCollectiveKinds.at(op);
    h.label = host_.name + ": " + label +
              (c.span().valid() ? " at line " + std::to_string(c.span().line) : "");
    auto attr = [&](const char* key) {
      const ir::AttrValue* v = ir::find_attr(c.attrs, key);
      const auto* i = v ? std::get_if<int64_t>(v) : nullptr;
      return i ? *i : int64_t{0};
    };
    h.reduce_op = static_cast<int32_t>(attr("op"));
    h.signal_dim = attr("mode") == 1 ? 1 : 0;
    h.root = attr("root");
    if (op == "comm_broadcast" && h.root >= world_size_) {
      fail(c.span(), label + ": root=" + std::to_string(h.root) + " is not a rank of the " +
                         std::to_string(world_size_) + "-rank run");
    }
    // Argument positions: (input,) target, signal, (send_counts, recv_counts).
    const bool has_input =
        op == "comm_allgather" || op == "comm_all_to_all" || op == "comm_all_to_all_v";
    const size_t target = has_input ? 1 : 0;
    // pld.tensor.barrier(signal): the signal is its target as well.
    const size_t signal = op == "comm_barrier" ? 0 : target + 1;
    DispatchArg absent;
    h.tensors.assign(5, absent);
    h.tensors[0] = view_arg(c.args.at(target), "the target of " + label, true);
    if (c.args.size() > signal) {
      h.tensors[1] = view_arg(c.args[signal], "the signal of " + label, true);
    } else {
      h.tensors[1] = synthesized_signal(c);
    }
    if (has_input) h.tensors[2] = view_arg(c.args.at(0), "the input of " + label, false);
    if (op == "comm_all_to_all_v") {
      h.tensors[3] = view_arg(c.args.at(3), "send_counts of " + label, false);
      h.tensors[4] = view_arg(c.args.at(4), "recv_counts of " + label, true);
    }
    plan_.steps.push_back({true, plan_.collectives.size()});
    plan_.collectives.push_back(std::move(h));
    dispatched_since_sync_.clear();  // every rank's earlier dispatches are done
    return expr(c.args.at(target));
  }

  // A host allreduce without a signal: a private INT32 window [world_size, 1] for that call,
  // zero, and zero again after every call (so a loop reuses it).
  DispatchArg synthesized_signal(const ir::Call& c) {
    auto it = synthesized_.find(&c);
    if (it == synthesized_.end()) {
      const int64_t bytes = int64_t{world_size_} * 4;
      it = synthesized_.emplace(&c, window_end_).first;
      plan_.window_offsets.push_back(window_end_);
      buffer_bytes_.push_back(bytes);
      window_end_ += (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment;
    }
    DispatchArg a;
    a.kind = DispatchArg::Kind::Window;
    a.byte_offset = it->second;
    a.shape = {world_size_, 1};
    a.dtype = ir::DataType::INT32;
    return a;
  }

  const ir::Program& program_;
  const ir::Function& host_;
  int world_size_;
  HostPlan plan_;
  std::map<const ir::Var*, HostValue> values_;
  std::vector<int64_t> buffer_bytes_;
  int64_t window_end_ = 0;
  std::map<const ir::Call*, int64_t> synthesized_;  // the signal windows of host allreduces
  std::set<int> dispatched_since_sync_;             // ranks dispatched since the ranks last met
  int64_t phase_signal_ = -1;  // the window offset of the phases' barrier signal
};

}  // namespace

namespace {

class RankWorkFinder : public ir::IRVisitor {
 public:
  explicit RankWorkFinder(const ir::Program* program) : program_(program) {}
  bool found = false;

 protected:
  void visit_call(const ir::Call& c) override {
    if (ir::find_attr(c.attrs, "device") || c.callee.rfind("comm_", 0) == 0) found = true;
    if (program_ && c.call_kind == ir::CallKind::Function) {
      const ir::FunctionPtr callee = program_->find_function(c.callee);
      if (callee && callee->attrs.host_python) found = true;  // a host sub-worker
    }
    ir::IRVisitor::visit_call(c);
  }

 private:
  const ir::Program* program_;
};

bool is_host_level(const ir::Function& f) {
  return f.attrs.level == "HOST" || f.attrs.level == "NODE";
}

}  // namespace

bool works_on_ranks(const ir::Program* program, const ir::Function& f) {
  RankWorkFinder finder(program);
  finder.visit_function(f);
  return finder.found;
}

ir::FunctionPtr host_orchestrator(const ir::Program& program) {
  ir::FunctionPtr first;
  for (const auto& f : program.functions) {
    if (!is_host_level(*f)) continue;
    if (works_on_ranks(&program, *f)) return f;
    if (!first) first = f;
  }
  return first;
}

HostPlan plan_host_orchestrator(const ir::Program& program, const ir::Function& host,
                                int world_size) {
  return HostEvaluator(program, host, world_size).run();
}

}  // namespace pypto::driver
