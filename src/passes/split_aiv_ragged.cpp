#include "split_aiv_ragged.h"

#include <algorithm>
#include <string>
#include <utility>

#include "pass_utils.h"
#include "pypto/ir/visitor.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

const std::vector<int64_t>* shape_of(const Expr& e) {
  if (const auto* t = e.type()->as<TileType>()) return &t->shape;
  if (const auto* t = e.type()->as<TensorType>()) return &t->shape;
  return nullptr;
}

// The constants of a tuple argument, or nullopt when one is not a constant.
std::optional<std::vector<int64_t>> constant_tuple(const ExprPtr& e) {
  const auto* tuple = e->as<MakeTuple>();
  if (!tuple) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& element : tuple->elements) {
    const auto value = as_const_int(element);
    if (!value) return std::nullopt;
    out.push_back(*value);
  }
  return out;
}

bool bool_attr(const Call& c, std::string_view key) {
  const AttrValue* v = find_attr(c.attrs, key);
  const auto* b = v ? std::get_if<bool>(v) : nullptr;
  return b && *b;
}

// Ops after which the whole box holds data, whatever was valid before.
bool defines_whole_box(const std::string& op) {
  return op == "fillpad" || op == "fillpad_expand" || op == "create_tile" ||
         op == "create_tensor" || op == "full";
}

std::string describe(int64_t valid, int64_t extent) {
  return std::to_string(valid) + " of " + std::to_string(extent);
}

// The value's name as a program would write it ("x" for a value without one).
std::string bare_name(const Expr& e) {
  if (const auto* v = e.as<Var>()) return v->name;
  return "x";
}

}  // namespace

// Records the extent of each assignment's value, in statement order; a variable given two
// different extents (or one known and one not) keeps none.
class ValidExtentScan : public IRVisitor {
 public:
  explicit ValidExtentScan(StaticValidExtents& out) : out_(out) {}

 protected:
  void visit_assign(const AssignStmt& s) override {
    IRVisitor::visit_assign(s);
    auto extent = out_.of(s.value);
    auto [it, inserted] = out_.extents_.emplace(s.var.get(), extent);
    if (!inserted && it->second != extent) it->second = std::nullopt;
  }

 private:
  StaticValidExtents& out_;
};

StaticValidExtents::StaticValidExtents(const Function& f) {
  ValidExtentScan scan(*this);
  scan.visit_function(f);
}

std::optional<std::vector<int64_t>> StaticValidExtents::of(const ExprPtr& e) const {
  const std::vector<int64_t>* shape = shape_of(*e);
  if (!shape || shape->size() != 2) return std::nullopt;
  std::optional<std::vector<int64_t>> valid;
  if (const auto* v = e->as<Var>()) {
    auto it = extents_.find(v);
    if (it != extents_.end()) valid = it->second;
  } else if (const auto* c = e->as<Call>(); c && c->call_kind == CallKind::Op) {
    if ((c->callee == "slice" || c->callee == "load") && c->args.size() >= 4) {
      valid = constant_tuple(c->args[3]);
    } else if ((c->callee == "matmul" || c->callee == "matmul_bias") && c->args.size() >= 2) {
      // Rows come from the left operand, columns from the right (each as stored when
      // transposed).
      const auto* sa = shape_of(*c->args[0]);
      const auto* sb = shape_of(*c->args[1]);
      if (sa && sb && sa->size() == 2 && sb->size() == 2) {
        const std::vector<int64_t> va = of(c->args[0]).value_or(*sa);
        const std::vector<int64_t> vb = of(c->args[1]).value_or(*sb);
        valid = std::vector<int64_t>{bool_attr(*c, "a_trans") ? va[1] : va[0],
                                     bool_attr(*c, "b_trans") ? vb[0] : vb[1]};
      }
    } else if (!defines_whole_box(c->callee)) {
      // An op of one shaped operand that keeps its shape keeps its valid region too (exp,
      // cast, a scalar multiple, ...).
      const Expr* only = nullptr;
      size_t shaped = 0;
      for (const auto& a : c->args) {
        if (shape_of(*a)) {
          ++shaped;
          only = a.get();
        }
      }
      if (shaped == 1 && *shape_of(*only) == *shape) {
        for (const auto& a : c->args) {
          if (a.get() == only) valid = of(a);
        }
      }
    }
  }
  if (!valid || valid->size() != 2) return std::nullopt;
  for (size_t i = 0; i < 2; ++i) (*valid)[i] = std::min((*valid)[i], (*shape)[i]);
  if (*valid == *shape) return std::nullopt;
  return valid;
}

void check_ragged_boundary(const Call& call, std::optional<size_t> axis,
                           const StaticValidExtents& extents) {
  if (!axis || call.args.empty()) return;
  const ExprPtr& x = call.args[0];
  const auto valid = extents.of(x);
  if (!valid) return;
  const std::vector<int64_t>& shape = *shape_of(*x);
  const std::string bare = bare_name(*x);
  const std::string name = "'" + bare + "'";
  if (call.callee == "aic_gather") {
    if ((*valid)[*axis] >= shape[*axis]) return;
    const std::string axis_name = *axis == 0 ? "row" : "column";
    const int64_t v = (*valid)[*axis], half = shape[*axis];
    throw CompileError(
        call.span(),
        "pl.aic_gather(" + bare + "): tile.aic_gather re-joins the two lanes positionally, but " +
            name + " has the valid " + axis_name + " extent (" + describe(v, half) +
            ") on both lanes, so their data lies in the bands [0, " + std::to_string(v) +
            ") and [" + std::to_string(half) + ", " + std::to_string(half + v) +
            ") of the joined value with a hole between them. Make each lane's part whole "
            "before the gather: pl.fillpad(" +
            bare + ") fills the rest with a pad value, or " + "pl.set_validshape declares all " +
            std::to_string(half) + " " + axis_name + "s data");
  }
  if (call.callee != "aiv_shard") return;
  if (*axis == 1) {
    throw CompileError(
        call.span(),
        "pl.aiv_shard(" + bare +
            ", mode=pl.SplitMode.LEFT_RIGHT): LEFT_RIGHT splits the column axis, and " + name +
            " has the valid column extent (" + describe((*valid)[1], shape[1]) +
            "), so the two AIV lanes would each need a column extent of their own. The "
            "boundary between the cube and the vector lanes carries a lane's row extent but "
            "always moves the full column box. Split the rows instead "
            "(mode=pl.SplitMode.UP_DOWN), or make the columns whole before the region, e.g. "
            "pl.set_validshape(" +
            bare + ", " + std::to_string((*valid)[0]) + ", " + std::to_string(shape[1]) +
            ") (the extra columns are then data the store writes)");
  }
  if ((*valid)[0] < shape[0] && (*valid)[1] < shape[1]) {
    throw CompileError(
        call.span(),
        "pl.aiv_shard(" + bare + ", mode=pl.SplitMode.UP_DOWN): " + name +
            " is valid to fewer rows and fewer columns than its box (" +
            describe((*valid)[0], shape[0]) + " rows, " + describe((*valid)[1], shape[1]) +
            " columns). Splitting the rows gives each lane a per-lane row extent, which the "
            "boundary between the cube and the vector lanes carries, but only with the full "
            "column box. Widen the columns before the region, e.g. pl.set_validshape(" +
            bare + ", " + std::to_string((*valid)[0]) + ", " + std::to_string(shape[1]) +
            "), and store all " + std::to_string(shape[1]) + " columns");
  }
}

}  // namespace pypto::passes::detail
