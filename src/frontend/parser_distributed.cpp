// Multi-rank programs: PyPTO's `pld` namespace (import pypto.language.distributed as pld).
//
//   pld.DistributedTensor[[shape], dtype]     a tensor in a window buffer (a pl.Tensor here: the
//                                             device checks that remote accesses reach a window)
//   pld.get_comm_ctx(t), pld.rank(ctx), pld.nranks(ctx), pld.world_size()   (also pld.system.*)
//   pld.system.notify(signal, peer=, offsets=, value=, op=pld.NotifyOp.X)
//   pld.system.wait(signal, offsets=, expected=, cmp=pld.WaitCmp.X)
//   pld.tile.remote_load(target, peer=, offsets=, shape=[, valid_shape=])
//                                                       -> pl.load of the peer's view
//   pld.tile.remote_store(tile, target, peer=, offsets=[, atomic=])
//                                                       -> pl.store into the peer's view
//   pld.tensor.put(dst, peer=, src=[, dst_offsets=, src_offsets=, shape=, atomic=])
//                                                       src (local) -> dst on the peer
//   pld.tensor.get(dst, peer=, src=[, dst_offsets=, src_offsets=, shape=])
//                                                       src on the peer -> dst (local)
//   pld.tensor.barrier(signal)                          every rank meets every other once
//   pld.alloc_window_buffer(size) / ([shape], dtype=), pld.window(buf, shape, dtype=)   (host)
//   f(..., device=r)                                    a host orchestrator's dispatch to rank r
//
// The ops are those of src/ir/comm_ops.h; remote loads and stores, put and get are ordinary
// loads and stores through comm_peer_view, so the passes and kernel codegen treat them as such.
#include "parser_state.h"
#include "pypto/ir/atomic_mode.h"

namespace pypto::frontend::detail {

namespace {

// Arguments of a pld call by parameter name, positional or keyword.
struct BoundArgs {
  std::vector<std::string> names;
  std::vector<std::optional<Value>> values;

  const Value* get(std::string_view name) const {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name && values[i]) return &*values[i];
    return nullptr;
  }
};

int64_t notify_op_of(std::string_view name) {
  if (name == "AtomicAdd") return 0;
  if (name == "Set") return 1;
  return -1;
}

int64_t reduce_op_of(std::string_view name) {
  if (name == "Sum") return 0;
  if (name == "Max") return 1;
  if (name == "Min") return 2;
  if (name == "Prod") return 3;
  return -1;
}

int64_t wait_cmp_of(std::string_view name) {
  if (name == "Eq") return 0;
  if (name == "Ge") return 1;
  return -1;
}

}  // namespace

std::optional<int64_t> Parser::known_world_size() const {
  auto it = constants_.find(kWorldSizeConstant);
  if (it == constants_.end()) return std::nullopt;
  if (const auto* n = std::get_if<int64_t>(&it->second)) return *n;
  return std::nullopt;
}

TypePtr Parser::parse_distributed_tensor_type() {
  advance();  // pld
  advance();  // .
  advance();  // DistributedTensor
  expect(TK::LBracket, "'[' after pld.DistributedTensor");
  const Span shape_span = here();
  std::vector<int64_t> shape = parse_shape();
  expect(TK::Comma, "',' and a dtype after the shape of pld.DistributedTensor");
  DataType dtype = parse_dtype("pld.DistributedTensor[...]");
  if (!ir::shape_bytes(shape, dtype)) {
    fail(shape_span, "integer overflow in the size of shape " + ir::shape_to_string(shape));
  }
  // A layout, a pl.TensorView or a MemRef, as pl.Tensor[...] takes them.
  TypePtr type = parse_tensor_arguments(std::move(shape), dtype);
  if (at(TK::Comma)) advance();
  expect(TK::RBracket, "']' to close pld.DistributedTensor[...]");
  return type;
}

Value Parser::parse_pld_member() {
  const Span span = here();
  advance();  // pld
  expect(TK::Dot, "'.' after 'pld' (pld.<op>, pld.system.<op>, pld.NotifyOp.<op>)");
  const Token& first = expect_name("a name after 'pld.'");
  std::string_view ns;
  std::string_view name = first.text;
  if (name == "NotifyOp" || name == "WaitCmp" || name == "AtomicType" || name == "ReduceOp") {
    expect(TK::Dot, [&] { return "'.' after pld." + std::string(name); });
    const Token& item = expect_name([&] { return "a member of pld." + std::string(name); });
    int64_t value = -1;
    if (name == "NotifyOp") value = notify_op_of(item.text);
    if (name == "WaitCmp") value = wait_cmp_of(item.text);
    if (name == "ReduceOp") value = reduce_op_of(item.text);
    if (name == "AtomicType") {
      if (auto mode = ir::atomic_mode_from_name(item.text)) value = *mode;
    }
    if (value < 0) {
      const char* expected = name == "NotifyOp"   ? "AtomicAdd or Set"
                             : name == "WaitCmp"  ? "Eq or Ge"
                             : name == "ReduceOp" ? "Sum, Max, Min or Prod"
                                                  : "None_ or Add";
      fail(span_of(item), "unknown member 'pld." + std::string(name) + "." +
                              std::string(item.text) + "' (expected " + expected + ")");
    }
    return expr_value(ir::make_node<ir::IntImm>(value, DataType::INT64, span), span);
  }
  if (name == "system" || name == "tile" || name == "tensor") {
    ns = name;
    expect(TK::Dot, [&] { return "'.' after pld." + std::string(ns); });
    name = expect_name([&] { return "an op name after 'pld." + std::string(ns) + ".'"; }).text;
  }
  const std::string label = "pld." + (ns.empty() ? "" : std::string(ns) + ".") + std::string(name);
  if (!at(TK::LParen)) fail(span, label + " must be called");
  return parse_pld_call(ns, name, label, span);
}

Value Parser::parse_pld_call(std::string_view ns, std::string_view name, const std::string& label,
                             Span span) {
  auto params_of = [&]() -> std::vector<std::string> {
    if (name == "get_comm_ctx") return {"tensor"};
    if (name == "rank" || name == "nranks") return {"ctx"};
    if (name == "world_size") return {};
    if (name == "notify") return {"target", "peer", "offsets", "value", "op"};
    if (name == "wait") return {"signal", "offsets", "expected", "cmp"};
    if (name == "remote_load") return {"target", "peer", "offsets", "shape", "valid_shape"};
    if (name == "remote_store") return {"src", "target", "peer", "offsets", "atomic"};
    // chunk_rows, chunk_cols, pipeline: how an NPU stages the copy; accepted, nothing to do.
    if (name == "put") {
      return {"dst",   "peer",   "src",        "dst_offsets", "src_offsets",
              "shape", "atomic", "chunk_rows", "chunk_cols",  "pipeline"};
    }
    if (name == "get") {
      return {"dst",   "peer",       "src",        "dst_offsets", "src_offsets",
              "shape", "chunk_rows", "chunk_cols", "pipeline"};
    }
    if (name == "barrier") return {"signal"};
    if (name == "alloc_window_buffer") return {"size", "dtype", "name"};
    if (name == "window") return {"buf", "shape", "dtype"};
    if (name == "allreduce") return {"target", "signal", "op", "mode", "core_num"};
    if (name == "reduce_scatter") return {"target", "signal", "op"};
    if (name == "broadcast") return {"target", "signal", "root"};
    if (name == "allgather") return {"local_data", "target", "signal"};
    if (name == "all_to_all") return {"input", "target", "signal"};
    if (name == "all_to_all_v") {
      return {"input", "target", "signal", "send_counts", "recv_counts"};
    }
    if (name == "defer_wait") return {"signal", "offsets", "expected", "cmp"};
    fail(span, "unknown op '" + label +
                   "' (pld has get_comm_ctx, rank, nranks, world_size, system.notify, "
                   "system.wait, tile.remote_load, tile.remote_store, tensor.put, tensor.get, "
                   "tensor.barrier, tensor.allreduce, tensor.reduce_scatter, tensor.broadcast, "
                   "tensor.allgather, tensor.all_to_all, tensor.all_to_all_v, "
                   "alloc_window_buffer and window)");
  };
  BoundArgs bound;
  bound.names = params_of();
  bound.values.resize(bound.names.size());
  // PyPTO's keyword spellings of the same parameters.
  auto canonical = [&](std::string_view k) -> std::string_view {
    if (name == "notify" && k == "signal") return "target";
    if (name == "remote_load" && (k == "tensor" || k == "src")) return "target";
    if (name == "remote_load" && k == "valid_shapes") return "valid_shape";
    if (name == "remote_store" && (k == "src_tile" || k == "tile")) return "src";
    if (name == "remote_store" && k == "dst") return "target";
    if (name == "alloc_window_buffer" && k == "shape") return "size";
    return k;
  };
  std::vector<CallArg> call_args = parse_call_args(label, /*allow_strings=*/true);
  bool mode_ring = false;  // allreduce's mode="ring"
  size_t positional = 0;
  for (CallArg& a : call_args) {
    size_t index = bound.names.size();
    if (a.keyword.empty()) {
      index = positional++;
      if (index >= bound.names.size()) {
        fail(a.value.span,
             label + " takes at most " + std::to_string(bound.names.size()) + " arguments");
      }
    } else {
      const std::string_view key = canonical(a.keyword);
      for (size_t i = 0; i < bound.names.size(); ++i)
        if (bound.names[i] == key) index = i;
      if (index == bound.names.size()) {
        fail(a.keyword_span,
             "unknown keyword argument '" + std::string(a.keyword) + "' of " + label);
      }
      if (bound.values[index]) {
        fail(a.keyword_span, label + " got argument '" + std::string(a.keyword) + "' twice");
      }
    }
    if (a.text && bound.names[index] == "mode") {
      if (*a.text != "mesh" && *a.text != "ring") {
        fail(a.value.span, label + ": mode must be \"mesh\" or \"ring\", got \"" + *a.text + "\"");
      }
      mode_ring = *a.text == "ring";
      continue;
    }
    if (a.text || bound.names[index] == "name") {
      if (bound.names[index] != "name") {
        fail(a.value.span, "a string is not a valid argument of " + label);
      }
      // The buffer's name is the assignment's target, as PyPTO's parser gives it.
      fail(a.keyword_span.valid() ? a.keyword_span : a.value.span,
           label +
               ": the 'name' argument cannot be passed explicitly; the buffer is named "
               "after the variable it is bound to");
    }
    bound.values[index] = a.value;
  }
  auto required = [&](const char* param) -> ExprPtr {
    const Value* v = bound.get(param);
    if (!v) fail(span, label + " is missing argument '" + std::string(param) + "'");
    return expect_expr(*v, [&] { return "argument '" + std::string(param) + "' of " + label; });
  };
  auto optional_int = [&](const char* param, int64_t fallback) -> int64_t {
    const Value* v = bound.get(param);
    if (!v) return fallback;
    ir::ScalarFold c;
    if (v->kind == Value::Kind::Expr) c = fold_constant(v->expr);
    if (!c.value || c.value->kind != ir::Scalar::Kind::Int) {
      fail(v->span, "'" + std::string(param) + "' of " + label + " must be a constant");
    }
    return c.value->i;
  };
  auto op = [&](std::string_view op_name, std::vector<ExprPtr> args, ir::Attrs attrs = {}) {
    try {
      return ir::make_op_call(op_name, std::move(args), std::move(attrs), span);
    } catch (const CompileError& e) {
      throw CompileError(e.span().valid() ? e.span() : span, label + ": " + std::string(e.what()));
    }
  };
  auto whole_box = [&](const ExprPtr& tensor, const char* what) {
    const auto* t = tensor->type()->as<ir::TensorType>();
    if (!t) fail(span, "the " + std::string(what) + " of " + label + " must be a tensor");
    std::vector<ExprPtr> zeros, extents;
    for (int64_t d : t->shape) {
      zeros.push_back(ir::make_node<ir::IntImm>(0, DataType::INT64, span));
      extents.push_back(ir::make_node<ir::IntImm>(d, DataType::INT64, span));
    }
    return std::make_pair(ir::make_tuple(std::move(zeros), span),
                          ir::make_tuple(std::move(extents), span));
  };
  auto atomic_attrs = [&] {
    const int64_t atomic = optional_int("atomic", 0);
    return atomic != 0 ? ir::Attrs{{"atomic", atomic}} : ir::Attrs{};
  };
  (void)ns;
  ExprPtr result;
  if (name == "get_comm_ctx") {
    result = op("comm_ctx", {required("tensor")});
  } else if (name == "rank" || name == "nranks") {
    result = op(name == "rank" ? "comm_rank" : "comm_nranks", {required("ctx")});
  } else if (name == "world_size") {
    if (auto n = known_world_size()) {
      result = ir::make_node<ir::IntImm>(*n, DataType::INT64, span);
    } else {
      result = op("comm_world_size", {});
    }
  } else if (name == "notify") {
    result = op("comm_notify",
                {required("target"), required("peer"), required("offsets"), required("value")},
                {{"op", ir::AttrValue(optional_int("op", 0))}});
  } else if (name == "wait" || name == "defer_wait") {
    // defer_wait leaves its task incomplete until the cell reaches the value, freeing the core
    // meanwhile (the device's deferred completions, src/runtime/deferred_completions.h); PyPTO
    // allows it only as the body of a dedicated waiter task.
    const int64_t cmp = optional_int("cmp", 1);
    if (name == "defer_wait" && cmp != 1) {
      fail(span, label + " waits for a counter to reach a value: cmp must be pld.WaitCmp.Ge");
    }
    ir::Attrs attrs{{"cmp", ir::AttrValue(cmp)}};
    if (name == "defer_wait") attrs.emplace_back("deferred", ir::AttrValue(int64_t{1}));
    result = op("comm_wait", {required("signal"), required("offsets"), required("expected")},
                std::move(attrs));
  } else if (name == "remote_load") {
    ExprPtr peer_view = op("comm_peer_view", {required("target"), required("peer")});
    std::vector<ExprPtr> args{peer_view, required("offsets"), required("shape")};
    if (bound.get("valid_shape")) args.push_back(required("valid_shape"));
    result = op("load", std::move(args));
  } else if (name == "remote_store") {
    ExprPtr src = required("src");
    if (src->type()->as<ir::TensorType>()) {  // a tensor value (pld.tensor.remote_store)
      auto [zeros, extents] = whole_box(src, "source");
      src = op("load", {src, zeros, extents});
    }
    ExprPtr peer_view = op("comm_peer_view", {required("target"), required("peer")});
    result = op("store", {src, required("offsets"), peer_view}, atomic_attrs());
  } else if (name == "put" || name == "get") {
    // A box of `shape` (default: the whole source) from src at src_offsets to dst at
    // dst_offsets; the window on the other rank is dst for put and src for get.
    ExprPtr src = required("src"), dst = required("dst");
    auto [zeros, extents] = whole_box(src, "source");
    ExprPtr shape = bound.get("shape") ? required("shape") : extents;
    ExprPtr src_offsets = bound.get("src_offsets") ? required("src_offsets") : zeros;
    ExprPtr dst_offsets = bound.get("dst_offsets") ? required("dst_offsets") : zeros;
    if (name == "put") {
      ExprPtr tile = op("load", {src, src_offsets, shape});
      ExprPtr peer_view = op("comm_peer_view", {dst, required("peer")});
      result = op("store", {tile, dst_offsets, peer_view}, atomic_attrs());
    } else {
      ExprPtr peer_view = op("comm_peer_view", {src, required("peer")});
      ExprPtr tile = op("load", {peer_view, src_offsets, shape});
      result = op("store", {tile, dst_offsets, dst});
    }
  } else if (name == "allreduce" || name == "reduce_scatter" || name == "broadcast" ||
             name == "allgather" || name == "all_to_all" || name == "all_to_all_v") {
    // The result is the target, rebound (target = pld.tensor.allreduce(target, signal)).
    ir::Attrs attrs;
    if (name == "allreduce" || name == "reduce_scatter") {
      attrs.emplace_back("op", ir::AttrValue(optional_int("op", 0)));
    }
    if (name == "allreduce") {
      attrs.emplace_back("mode", ir::AttrValue(int64_t{mode_ring ? 1 : 0}));
      // core_num: how many vector cores an NPU spreads a host allreduce over; one here.
      if (optional_int("core_num", 1) < 1) {
        fail(bound.get("core_num")->span, label + ": core_num must be a positive constant");
      }
      if (!bound.get("signal")) {
        if (mode_ring) {
          fail(span, label +
                         "(mode=\"ring\") needs an explicit signal [2 * (nranks - 1), nranks]; "
                         "only the mesh form may omit it in a host orchestrator");
        }
        result = op("comm_allreduce", {required("target")}, std::move(attrs));
        return expr_value(result, span);
      }
    }
    if (name == "broadcast") {
      if (!bound.get("root")) fail(span, label + " is missing argument 'root' (root=<rank>)");
      attrs.emplace_back("root", ir::AttrValue(optional_int("root", 0)));
    }
    std::vector<ExprPtr> args;
    if (name == "allgather") args.push_back(required("local_data"));
    if (name == "all_to_all" || name == "all_to_all_v") args.push_back(required("input"));
    args.push_back(required("target"));
    args.push_back(required("signal"));
    if (name == "all_to_all_v") {
      args.push_back(required("send_counts"));
      args.push_back(required("recv_counts"));
    }
    result = op("comm_" + std::string(name), std::move(args), std::move(attrs));
  } else if (name == "barrier") {
    result = op("comm_barrier", {required("signal")});
  } else if (name == "alloc_window_buffer") {
    ExprPtr size = required("size");
    if (!size->as<ir::MakeTuple>() && bound.get("dtype")) {
      fail(bound.get("dtype")->span,
           label +
               ": dtype= is only valid when the first argument is a shape ([n, ...]); a "
               "size in bytes has no element type");
    }
    if (const auto* shape = size->as<ir::MakeTuple>()) {
      // ([shape], dtype=): the bytes of that many elements.
      const Value* dtype = bound.get("dtype");
      if (!dtype || dtype->kind != Value::Kind::DType) {
        fail(span, label + " of a shape needs dtype=pl.<dtype>");
      }
      int64_t bytes = ir::dtype_bytes(dtype->dtype);
      for (const ExprPtr& e : shape->elements) {
        ir::ScalarFold c = fold_constant(e);
        if (!c.value || c.value->kind != ir::Scalar::Kind::Int || c.value->i < 0) {
          fail(e->span().valid() ? e->span() : span,
               "the shape of " + label + " must be non-negative constants");
        }
        bytes *= c.value->i;
      }
      size = ir::make_node<ir::IntImm>(bytes, DataType::INT64, span);
    }
    result = op("comm_alloc_window", {size});
  } else if (name == "window") {
    const Value* dtype = bound.get("dtype");
    if (!dtype || dtype->kind != Value::Kind::DType) {
      fail(span, label + " needs dtype=pl.<dtype>");
    }
    ExprPtr shape = required("shape");
    if (const auto* items = shape->as<ir::MakeTuple>()) {
      for (const ExprPtr& e : items->elements) {
        const auto* call = e->as<ir::Call>();
        if (call && call->callee == "comm_world_size") {
          fail(e->span().valid() ? e->span() : span,
               "pld.world_size() in a shape needs the rank count, which is known when the "
               "program is compiled with a DistributedConfig(device_ids=[...])");
        }
      }
    }
    result = op("comm_window", {required("buf"), shape}, {{"dtype", ir::AttrValue(dtype->dtype)}});
  } else {
    fail(span, "unknown op '" + label + "'");
  }
  return expr_value(result, span);
}

ExprPtr Parser::with_device(const ExprPtr& call, const ExprPtr& device, Span span) {
  const auto* c = call->as<ir::Call>();
  if (!c || c->call_kind != ir::CallKind::Function) {
    fail(span, "device= is only allowed on a call of a function of the program");
  }
  // The rank to dispatch to travels as one more argument, marked by the attribute; only a host
  // orchestrator (src/driver/host_plan.cpp) reads such calls.
  std::vector<ExprPtr> args = c->args;
  args.push_back(device);
  ir::Attrs attrs = c->attrs;
  attrs.emplace_back("device", ir::AttrValue(int64_t{1}));
  return ir::make_node<ir::Call>(ir::CallKind::Function, c->callee, std::move(args),
                                 std::move(attrs), c->type(), c->span());
}

}  // namespace pypto::frontend::detail
