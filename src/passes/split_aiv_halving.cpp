// Halving full-width vector code for one AIV lane of a pl.split_aiv region (split_aiv_halving.h).
#include "split_aiv_halving.h"

#include <string>
#include <utility>
#include <vector>

#include "pass_utils.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

const char* axis_name(size_t axis) { return axis == 0 ? "rows" : "columns"; }

class LaneHalving : public IRMutator {
 public:
  LaneHalving(VarPtr lane, size_t axis) : lane_(std::move(lane)), axis_(axis) {}

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    ExprPtr value = mutate(s->value);
    VarPtr var = remap(s->var);
    const auto* now = value->type() ? value->type()->as<TileType>() : nullptr;
    const auto* was = var->type() ? var->type()->as<TileType>() : nullptr;
    if (now && was && now->shape != was->shape) {
      // The value is the lane's half: so is the variable, from here on.
      var = make_var(s->var->name, value->type(), s->var->span());
      var_map[s->var.get()] = var;
    }
    if (value == s->value && var == s->var) return s;
    return make_node<AssignStmt>(std::move(var), std::move(value), s->span());
  }

  ExprPtr mutate_call(const std::shared_ptr<const Call>& e) override {
    if (e->call_kind != CallKind::Op) return IRMutator::mutate_call(e);
    bool changed = false;
    std::vector<ExprPtr> args = mutate_all(e->args, &changed);
    const OpDef* def = OpRegistry::global().find(e->callee);
    const std::string op = "pl." + e->callee;
    if (e->callee == "load") return halve_load(*e, std::move(args));
    if (e->callee == "create_tile") return halve_created(*e, std::move(args));
    if (e->callee == "store") {
      const auto* tile = args[0]->type()->as<TileType>();
      const auto* old_tile = e->args[0]->type()->as<TileType>();
      if (tile && old_tile && tile->shape[axis_] != old_tile->shape[axis_]) {
        args[1] = moved(args[1], tile->shape[axis_], e->span());
        changed = true;
      }
    }
    bool halved_operand = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const auto* now = args[i]->type() ? args[i]->type()->as<TileType>() : nullptr;
      const auto* was = e->args[i]->type() ? e->args[i]->type()->as<TileType>() : nullptr;
      if (now && was && now->shape != was->shape) halved_operand = true;
    }
    if (def && halved_operand) refuse_if_unhalvable(*def, op, e->span());
    if (!changed) return e;
    return make_op_call(e->callee, std::move(args), e->attrs.get(), e->span());
  }

 private:
  [[noreturn]] void refuse(Span span, const std::string& why) const {
    throw CompileError(span, why + " in a pl.split_aiv region that halves its full-width code (" +
                                 axis_name(axis_) +
                                 "); take each lane's part with pl.aiv_shard, or use "
                                 "mode=pl.SplitMode.NONE and address each lane's data by its "
                                 "lane");
  }

  void refuse_if_unhalvable(const OpDef& def, const std::string& op, Span span) const {
    const bool along_axis = (def.category == OpCategory::ColReduce && axis_ == 0) ||
                            (def.category == OpCategory::RowReduce && axis_ == 1);
    if (along_axis) refuse(span, op + " reduces along the split axis");
    if (def.category == OpCategory::Matmul) refuse(span, op + " is cube work");
    if (def.category == OpCategory::Slice || def.category == OpCategory::Reshape ||
        def.category == OpCategory::Concat || def.category == OpCategory::Transpose) {
      refuse(span, op + " of a halved tile is not supported");
    }
  }

  // offsets with lane * half added on the split axis.
  ExprPtr moved(const ExprPtr& offsets, int64_t half, Span span) const {
    const auto* tuple = offsets->as<MakeTuple>();
    if (!tuple || tuple->elements.size() != 2) refuse(span, "offsets that are not a list");
    std::vector<ExprPtr> elements = tuple->elements;
    elements[axis_] =
        make_binary(BinaryOp::Add, elements[axis_],
                    make_binary(BinaryOp::Mul, lane_, make_int(half, span), span), span);
    return make_tuple(std::move(elements), span);
  }

  // The shape argument with its split-axis extent halved; null when it stays whole.
  std::optional<std::vector<int64_t>> halved_shape(const Type& result) const {
    const auto* tile = result.as<TileType>();
    if (!tile || tile->shape.size() != 2 || tile->shape[axis_] <= 1) return std::nullopt;
    if (tile->space && *tile->space != MemorySpace::Vec) return std::nullopt;
    std::vector<int64_t> shape = tile->shape;
    shape[axis_] = (shape[axis_] + 1) / 2;
    return shape;
  }

  ExprPtr halve_load(const Call& e, std::vector<ExprPtr> args) {
    auto shape = halved_shape(*e.type());
    if (shape && args.size() > 3) refuse(e.span(), "pl.load with valid_shapes");
    if (shape) {
      args[1] = moved(args[1], (*shape)[axis_], e.span());
      args[2] = int_tuple(*shape);
    }
    return make_op_call("load", std::move(args), e.attrs.get(), e.span());
  }

  ExprPtr halve_created(const Call& e, std::vector<ExprPtr> args) {
    if (auto shape = halved_shape(*e.type())) args[0] = int_tuple(*shape);
    return make_op_call("create_tile", std::move(args), e.attrs.get(), e.span());
  }

  VarPtr lane_;
  size_t axis_;
};

}  // namespace

StmtPtr halve_for_lane(const StmtPtr& body, const VarPtr& lane, size_t axis) {
  LaneHalving halving(lane, axis);
  return halving.mutate(body);
}

}  // namespace pypto::passes::detail
