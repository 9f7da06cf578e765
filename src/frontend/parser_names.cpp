// Name binding and type checks: the variable scope of a function body, rebinding rules,
// annotation refinement, and the type comparisons the parser applies to assignments, returns,
// loop-carried values and call arguments.
#include "parser_state.h"
#include "pypto/ir/mutator.h"

namespace pypto::frontend::detail {

std::string_view value_kind_description(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Expr:
      return "an expression";
    case Value::Kind::DType:
      return "a dtype";
    case Value::Kind::Space:
      return "a memory space";
    case Value::Kind::Pad:
      return "a pad value";
    case Value::Kind::Level:
      return "a level";
    case Value::Kind::FuncType:
      return "a function type";
    case Value::Kind::TileLayout:
      return "a tile layout (pl.TileLayout is only allowed inside pl.TileView(...) in a pl.Tile "
             "annotation and as pl.move's blayout=/slayout=)";
    case Value::Kind::TensorLayout:
      return "a tensor layout (pl.TensorLayout is only allowed in pl.Tensor[...] annotations "
             "and as pl.tensor.create's layout=)";
  }
  return "a value";
}

bool same_shape_dtype(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind() != b->kind()) return false;
  switch (a->kind()) {
    case ir::TypeKind::Scalar:
      return a->as<ir::ScalarType>()->dtype == b->as<ir::ScalarType>()->dtype;
    case ir::TypeKind::Tensor: {
      // A run-time extent matches any: the device checks the tensor where it is used.
      const auto *x = a->as<ir::TensorType>(), *y = b->as<ir::TensorType>();
      if (x->dtype != y->dtype || x->shape.size() != y->shape.size()) return false;
      for (size_t i = 0; i < x->shape.size(); ++i) {
        if (x->shape[i] != y->shape[i] && x->shape[i] != ir::kDynamicExtent &&
            y->shape[i] != ir::kDynamicExtent)
          return false;
      }
      return true;
    }
    case ir::TypeKind::Tile: {
      const auto *x = a->as<ir::TileType>(), *y = b->as<ir::TileType>();
      return x->shape == y->shape && x->dtype == y->dtype;
    }
    case ir::TypeKind::Tuple: {
      const auto &x = a->as<ir::TupleType>()->elements, &y = b->as<ir::TupleType>()->elements;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!same_shape_dtype(x[i], y[i])) return false;
      }
      return true;
    }
  }
  return false;
}

bool argument_fits(const TypePtr& param, const TypePtr& arg) {
  const auto* ps = param ? param->as<ir::ScalarType>() : nullptr;
  const auto* as = arg ? arg->as<ir::ScalarType>() : nullptr;
  if (ps && as) {
    if (ir::is_float(ps->dtype)) return ir::is_float(as->dtype) || as->dtype != DataType::BOOL;
    // An integer passed for a BOOL parameter is a truth value (non-zero is true), as PyPTO's
    // programs pass flags read from INT64 tensors.
    if (ps->dtype == DataType::BOOL) return !ir::is_float(as->dtype);
    return !ir::is_float(as->dtype);
  }
  return same_shape_dtype(param, arg);
}

VarPtr Parser::lookup_var(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : it->second;
}

VarPtr Parser::bind_var(std::string_view name, const TypePtr& type, Span span) {
  // In an inline body, a name gets its own variable (parser_helpers.cpp).
  if (inline_frame_) return bind_inline_local(name, type, span);
  auto it = vars_.find(name);
  // A rebound name no longer holds the window whose valid_shape was noted for it.
  if (it != vars_.end()) slice_valid_shapes_.erase(it->second.get());
  if (it != vars_.end()) {
    // A value of another shape or dtype makes the name a new variable, as PyPTO's SSA renaming
    // makes it (`t = pl.cast(t, target_type=pl.FP32)`), where no loop or branch has to merge the
    // two: in the function's own block, for a name the current block bound, and for a loop's
    // own index (`for slot in pl.range(R)` after another `slot`).
    if (!same_shape_dtype(it->second->type(), type) &&
        ((ssa_blocks_.size() == 1 && loops_.empty()) || binding_loop_index_ ||
         bound_in_this_block(name))) {
      VarPtr var = ir::make_var(std::string(name), type, span);
      it->second = var;
      return var;
    }
    if (!same_shape_dtype(it->second->type(), type)) {
      fail(span, "cannot rebind '" + std::string(name) + "' of type " +
                     ir::type_to_string(it->second->type()) + " to a value of type " +
                     ir::type_to_string(type) + " (a variable keeps its shape and dtype)");
    }
    return it->second;
  }
  VarPtr var = ir::make_var(std::string(name), type, span);
  vars_.emplace(var->name, var);
  if (!ssa_blocks_.empty()) ssa_blocks_.back().emplace_back(var->name, span.line);
  return var;
}

bool Parser::bound_in_this_block(std::string_view name) const {
  if (ssa_blocks_.empty()) return false;
  for (const auto& [bound, line] : ssa_blocks_.back())
    if (bound == name) return true;
  return false;
}

namespace {

// An expression with the names bound to local constants replaced by their values, so that
// arithmetic on them (`rows // batch`) folds to a constant too.
class LocalConstantSubstitution : public ir::IRMutator {
 public:
  explicit LocalConstantSubstitution(
      const std::map<std::string, std::pair<VarPtr, ExprPtr>, std::less<>>& constants)
      : constants_(constants) {}

 protected:
  ExprPtr mutate_var(const std::shared_ptr<const ir::Var>& v) override {
    auto it = constants_.find(v->name);
    if (it != constants_.end() && it->second.first.get() == v.get()) return it->second.second;
    return v;
  }

 private:
  const std::map<std::string, std::pair<VarPtr, ExprPtr>, std::less<>>& constants_;
};

}  // namespace

void Parser::note_local_constant(const Token& name, const VarPtr& var, const ExprPtr& value) {
  if (inline_frame_ || assigned_later(name.text)) return;
  const auto* scalar = var->type()->as<ir::ScalarType>();
  if (!scalar || !ir::is_integer(scalar->dtype)) return;
  ExprPtr constant = value;
  if (!value->as<ir::IntImm>()) {
    LocalConstantSubstitution substitution(local_constants_);
    const ir::ScalarFold fold = fold_constant(substitution.mutate(value));
    if (!fold.exact() || fold.value->kind != ir::Scalar::Kind::Int) return;
    constant = ir::make_node<ir::IntImm>(fold.value->i, scalar->dtype, value->span());
  }
  local_constants_[std::string(name.text)] = {var, constant};
}

// Whether a statement after the current position (up to the next `def`) assigns `name`: as a
// target before a top-level `=` or augmented assignment, a `for` target, or an `as` name.
bool Parser::assigned_later(std::string_view name) const {
  bool line_start = true;
  bool in_for_targets = false;
  bool name_before_assign = false;
  int depth = 0;
  for (size_t i = pos_; i < tokens_.size(); ++i) {
    const Token& t = tokens_[i];
    if (t.kind == TK::EndOfFile || t.kind == TK::KwDef) return false;
    if (t.kind == TK::Newline || t.kind == TK::Indent || t.kind == TK::Dedent) {
      line_start = true;
      in_for_targets = false;
      name_before_assign = false;
      depth = 0;
      continue;
    }
    if (line_start && t.kind == TK::KwFor) in_for_targets = true;
    line_start = false;
    if (t.kind == TK::KwIn) in_for_targets = false;
    if (t.kind == TK::LParen || t.kind == TK::LBracket || t.kind == TK::LBrace) ++depth;
    if (t.kind == TK::RParen || t.kind == TK::RBracket || t.kind == TK::RBrace) --depth;
    if (t.kind == TK::Name && t.text == name) {
      if (in_for_targets || (i > 0 && tokens_[i - 1].kind == TK::KwAs)) return true;
      if (depth == 0 || (depth == 1 && tokens_[i - 1].kind != TK::Dot)) name_before_assign = true;
    }
    if ((t.kind == TK::Assign && depth == 0) || t.kind == TK::AugAssign || t.kind == TK::Walrus) {
      if (name_before_assign) return true;
      name_before_assign = false;
      // What follows the first `=` is the value: a later `=` on the line is a keyword argument.
      while (i + 1 < tokens_.size() && tokens_[i + 1].kind != TK::Newline &&
             tokens_[i + 1].kind != TK::EndOfFile)
        ++i;
    }
  }
  return false;
}

void Parser::check_assignable(const Token& t) {
  if (t.text == "pl" || t.text == "self") {
    fail(span_of(t), "cannot assign to '" + std::string(t.text) + "'");
  }
}

ExprPtr Parser::load_with_valid_shape(const ExprPtr& value, const std::vector<int64_t>& valid,
                                      Span span) {
  const auto* call = value->as<ir::Call>();
  if (!call || call->call_kind != ir::CallKind::Op || call->callee != "load") {
    fail(span, "a partial pl.TileView valid_shape " + ir::shape_to_string(valid) +
                   " is only supported on the result of pl.load: the valid region of a tile "
                   "comes from the load that reads it, and ops keep their operand's");
  }
  if (call->args.size() > 3 && call->args[3]) {
    const auto* given = call->args[3]->as<ir::MakeTuple>();
    bool same = given && given->elements.size() == valid.size();
    for (size_t d = 0; same && d < valid.size(); ++d) {
      same = ir::as_const_int(given->elements[d]) == valid[d];
    }
    if (!same) {
      fail(span, "pl.TileView valid_shape " + ir::shape_to_string(valid) +
                     " does not match the valid_shapes of its pl.load");
    }
    return value;
  }
  // The annotation gives the load its valid region: only that box is read, and the tile is
  // partly valid at run time as if the load had said valid_shapes=[...].
  std::vector<ExprPtr> dims;
  dims.reserve(valid.size());
  for (int64_t d : valid) dims.push_back(ir::make_int(d, span));
  std::vector<ExprPtr> args = call->args;
  args.resize(4);
  args[3] = ir::make_tuple(std::move(dims), span);
  return ir::make_op_call("load", std::move(args), call->attrs.get(), call->span());
}

ExprPtr Parser::refine(const ExprPtr& given_value, const TypePtr& annotated, Span span,
                       TypePtr& var_type) {
  ExprPtr value = given_value;
  const TypePtr& inferred = value->type();
  auto mismatch = [&] {
    fail(span, "annotation " + ir::type_to_string(annotated) + " does not match the value's type " +
                   ir::type_to_string(inferred));
  };
  if (!inferred || inferred->kind() != annotated->kind()) mismatch();
  if (annotated->kind() == ir::TypeKind::Scalar) {
    var_type = annotated;  // a scalar variable may hold a converted value
    return value;
  }
  if (!same_shape_dtype(annotated, inferred)) mismatch();
  if (annotated->kind() == ir::TypeKind::Tile) {
    const auto* a = annotated->as<ir::TileType>();
    const auto* i = inferred->as<ir::TileType>();
    const auto space = a->space ? a->space : i->space;
    // The annotation's view, read against its own memory space, now meets the value's.
    std::optional<ir::TileView> view;
    if (a->view) view = ir::canonical_tile_view(a->shape, space, *a->view);
    var_type = ir::tile_type(a->shape, a->dtype, space,
                             a->memref ? a->memref : (a->space ? std::nullopt : i->memref), view);
    // A popped tile's valid region is the one its producer pushed, a narrowed tile's the one
    // pl.tile.set_validshape gives: both known at run time, so the annotation only describes it.
    const auto* call = value->as<ir::Call>();
    const bool popped = call && call->call_kind == ir::CallKind::Op &&
                        (call->callee == "tpop_from_aic" || call->callee == "tpop_from_aiv" ||
                         call->callee == "set_validshape");
    if (a->view && !a->view->valid_shape.empty() && !popped) {
      value = load_with_valid_shape(value, a->view->valid_shape, span);
    }
  } else {
    var_type = annotated;
  }
  if (ir::types_equal(var_type, inferred)) return value;
  if (const auto* call = value->as<ir::Call>()) {
    return ir::make_node<ir::Call>(call->call_kind, call->callee, call->args, call->attrs, var_type,
                                   call->span());
  }
  return value;
}

Span Parser::use_site(Span span, size_t mark) const {
  for (size_t i = mark; i < var_uses_.size(); ++i) {
    if (same_span(var_uses_[i].first->span(), span)) return var_uses_[i].second;
  }
  return span;
}

}  // namespace pypto::frontend::detail
