// The tensor-level gather and scatter ops of InCore code, lowered to their tile forms (see
// tensor_gather_lowering.h). The tile ops check their indices at run time, so the lowered code
// reports a bad index as the op it was written as.
#include "tensor_gather_lowering.h"

#include <string>

#include "pass_utils.h"

namespace pypto::passes::detail {

using namespace ir;

namespace {

int64_t const_int(const ExprPtr& e) {
  const auto v = fold_literal_expr(e).value;
  return v && v->kind == Scalar::Kind::Int ? v->i : 0;
}

const std::vector<int64_t>& shape_of(const ExprPtr& e) {
  return e->type()->as<TensorType>()->shape;
}

ExprPtr assign_to(const std::string& name, ExprPtr value, Span span, std::vector<StmtPtr>* out) {
  auto v = make_var(name, value->type(), span);
  out->push_back(ir::make_node<AssignStmt>(v, std::move(value), span));
  return v;
}

}  // namespace

ExprPtr load_whole(const ExprPtr& t, const ExprPtr& b, Span span, std::vector<StmtPtr>* out) {
  const auto& shape = shape_of(t);
  std::vector<ExprPtr> at;
  std::vector<int64_t> extent = shape;
  if (shape.size() == 3) {
    at.push_back(shape[0] == 1 || !b ? make_int(0) : b);
    extent = {shape[1], shape[2]};
  }
  for (size_t i = 0; i < extent.size(); ++i) at.push_back(make_int(0));
  const auto* v = t->as<Var>();
  return assign_to(
      (v ? v->name : std::string("operand")) + "_tile",
      make_op_call("load", {t, make_tuple(std::move(at)), int_tuple(extent)}, {}, span), span, out);
}

// For each of the max_indices rows: its logical index, the physical block the table maps it to,
// and one row load of `size` elements assembled into the result. (A result that is stored is
// gathered in Vec whatever its `space`: only a matmul operand needs it in Mat.)
ExprPtr paged_gather_into(const Call& c, MemorySpace space, std::vector<StmtPtr>* out) {
  const Span span = c.span();
  const auto* trans = find_attr(c.attrs, "is_trans");
  if (trans && std::get_if<bool>(trans) && *std::get_if<bool>(trans)) {
    throw CompileError(span,
                       "pl.paged_gather with is_trans=True is not supported yet; gather "
                       "the rows and transpose them (or use b_trans=True)");
  }
  const int64_t block_size = const_int(c.args[3]), size = const_int(c.args[4]);
  const int64_t rows = const_int(c.args[5]);
  int64_t col_off = 0;
  if (const auto* v = find_attr(c.attrs, "col_off"))
    if (const auto* i = std::get_if<int64_t>(v)) col_off = *i;
  const DataType dtype = c.type()->as<TensorType>()->dtype;
  ExprPtr start = assign_to("gathered",
                            make_op_call("create_tile", {int_tuple({rows, size})},
                                         {{"dtype", dtype}, {"target_memory", space}}, span),
                            span, out);
  auto row = make_var("gather_row", scalar_type(DataType::INT64), span);
  auto acc_in = make_var("gathered", start->type(), span);
  std::vector<StmtPtr> body;
  const bool row_of_indices = shape_of(c.args[1]).size() == 2;
  ExprPtr at = row_of_indices ? make_tuple({make_int(0), row}) : make_tuple({row});
  ExprPtr logical =
      assign_to("logical_row", make_op_call("read", {c.args[1], at}, {}, span), span, &body);
  ExprPtr block = assign_to(
      "block",
      make_op_call(
          "read",
          {c.args[2], make_tuple({make_binary(BinaryOp::FloorDiv, logical, make_int(block_size))})},
          {}, span),
      span, &body);
  ExprPtr physical =
      make_binary(BinaryOp::Add, make_binary(BinaryOp::Mul, block, make_int(block_size)),
                  make_binary(BinaryOp::Mod, logical, make_int(block_size)));
  ExprPtr loaded = assign_to(
      "src_row",
      make_op_call("load",
                   {c.args[0], make_tuple({physical, make_int(col_off)}), int_tuple({1, size})},
                   {{"target_memory", space}}, span),
      span, &body);
  ExprPtr next = assign_to(
      "gathered",
      make_op_call("assemble", {acc_in, loaded, make_tuple({row, make_int(0)})}, {}, span), span,
      &body);
  body.push_back(ir::make_node<YieldStmt>(std::vector<ExprPtr>{next}, span));
  auto result = make_var("gathered", start->type(), span);
  out->push_back(ir::make_node<ForStmt>(row, make_int(0), make_int(rows), make_int(1),
                                        ForKind::Sequential, std::vector<VarPtr>{acc_in},
                                        std::vector<ExprPtr>{start}, make_seq(body, span),
                                        std::vector<VarPtr>{result}, span));
  return result;
}

bool is_tensor_gather_op(const Call* c) {
  if (!c || !is_tensor(c->type())) return false;
  const auto cat = op_category(*c);
  return cat == OpCategory::PagedGather ||
         (cat == OpCategory::Gather && c->callee != "gather_compare") ||
         (cat == OpCategory::Scatter && c->callee != "mscatter");
}

int64_t gather_op_batches(const Call& c) {
  const auto& shape = c.type()->as<TensorType>()->shape;
  if (shape.size() == 2) return 0;
  if (shape.size() == 3 && c.callee == "gather") {
    const int64_t dim = const_int(c.args[1]);
    if (dim != 0 && dim != -3) return shape[0];
    // Along the first axis, matrix i of the result is one row gathered from the input seen as
    // [S0, S1 * S2], which needs the index's rows to be as long as the input's.
    if (shape_of(c.args[2])[2] == shape_of(c.args[0])[2]) return shape[0];
    throw CompileError(c.span(),
                       "pl.gather along the first axis of a 3-D tensor in InCore code needs the "
                       "index's last extent to equal the input's (" +
                           std::to_string(shape_of(c.args[0])[2]) + "), got " +
                           shape_to_string(shape_of(c.args[2])));
  }
  throw CompileError(c.span(), "pl." + c.callee + " of tensors in InCore code takes 2-D tensors" +
                                   std::string(c.callee == "gather" ? " (or 3-D ones)" : "") +
                                   ", got " + shape_to_string(shape));
}

ExprPtr gather_op_matrix(const Call& c, const ExprPtr& b, std::vector<StmtPtr>* out,
                         const OperandTile& operand) {
  const Span span = c.span();
  if (c.callee == "paged_gather") return paged_gather_into(c, MemorySpace::Vec, out);
  auto loaded = [&](size_t i) { return operand(c.args[i], b, out); };
  // The axis of the op on the matrices: a 3-D result's axis 1 and 2 are its matrices' 0 and 1.
  auto matrix_axis = [&] {
    const auto rank = static_cast<int64_t>(shape_of(c.args[0]).size());
    int64_t dim = const_int(c.args[1]);
    if (dim < 0) dim += rank;
    return make_int(rank == 3 ? dim - 1 : dim);
  };
  ExprPtr value;
  const auto& x_shape = shape_of(c.args[0]);
  if (c.callee == "gather" && x_shape.size() == 3 && const_int(c.args[1]) % 3 == 0) {
    // Along the first axis (gather_op_batches): the input (a parameter) seen as [S0, S1 * S2],
    // matrix b of the index as one row of it, the gathered row reshaped back into matrix b of
    // the result.
    const int64_t s0 = x_shape[0], row = x_shape[1] * x_shape[2];
    ExprPtr flat =
        assign_to("flat_input",
                  make_op_call("reshape", {c.args[0], int_tuple({s0, row})}, {}, span), span, out);
    ExprPtr index = operand(c.args[2], b, out);
    const auto& matrix = index->type()->as<TileType>()->shape;
    ExprPtr index_row =
        assign_to("index_row",
                  make_op_call("reshape", {index, int_tuple({1, matrix[0] * matrix[1]})}, {}, span),
                  span, out);
    ExprPtr gathered = assign_to(
        "gathered_row",
        make_op_call("gather", {load_whole(flat, nullptr, span, out), make_int(0), index_row}, {},
                     span),
        span, out);
    value = make_op_call("reshape", {gathered, int_tuple(matrix)}, {}, span);
  } else if (c.callee == "gather") {
    ExprPtr x = loaded(0);
    value = make_op_call("gather", {x, matrix_axis(), loaded(2)}, c.attrs, span);
  } else if (c.callee == "gather_mask") {
    value = make_op_call("gather_mask", {loaded(0), c.args[1]}, c.attrs, span);
  } else if (c.callee == "scatter" || c.callee == "scatter_update") {
    ExprPtr x = loaded(0), index = loaded(2);
    value = make_op_call(c.callee, {x, matrix_axis(), index, loaded(3)}, c.attrs, span);
  } else if (c.callee == "scatter_mask") {
    ExprPtr dst = loaded(0);
    value = make_op_call("scatter_mask", {dst, loaded(1), c.args[2]}, c.attrs, span);
  } else {
    throw CompileError(span, "pl." + c.callee + " of tensors has no tile form here");
  }
  return assign_to(c.callee, std::move(value), span, out);
}

}  // namespace pypto::passes::detail
