// The tile forms of tensor ops (see tensor_op_tiles.h).
#include "tensor_op_tiles.h"

#include <utility>

#include "pass_utils.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes::detail {

using namespace ir;

namespace {

ExprPtr assign_to(const std::string& name, ExprPtr value, Span span, std::vector<StmtPtr>* out) {
  auto v = make_var(name, value->type(), span);
  out->push_back(make_node<AssignStmt>(v, std::move(value), span));
  return v;
}

}  // namespace

bool is_tensor_generator(const Call& c) {
  return c.callee == "create_tensor" || c.callee == "arange" || c.callee == "random";
}

ExprPtr tile_form(const Call& c, std::vector<ExprPtr> tile_args,
                  const std::vector<int64_t>& block_shape, const std::string& name,
                  std::vector<StmtPtr>* out) {
  const Span span = c.span();
  if (is_tensor_generator(c)) {
    // The same arguments with the block's shape (the last argument) instead of the tensor's.
    tile_args.back() = int_tuple(block_shape);
    const char* tile_op = c.callee == "arange"   ? "ci"
                          : c.callee == "random" ? "tile_random"
                                                 : "create_tile";
    return make_op_call(tile_op, std::move(tile_args), c.attrs, span);
  }
  if (c.callee == "cmp") {
    // 1 where the comparison holds, else 0, in the operand's dtype: the mask selects between
    // tiles of ones and zeros.
    const DataType dtype = c.type()->as<TensorType>()->dtype;
    ExprPtr mask = assign_to(name + "_mask",
                             make_op_call("cmp", std::move(tile_args), c.attrs, span), span, out);
    const Attrs tile_dtype = {{"dtype", dtype}};
    ExprPtr zeros = assign_to(
        name + "_zeros", make_op_call("create_tile", {int_tuple(block_shape)}, tile_dtype, span),
        span, out);
    ExprPtr one = is_float(dtype) ? make_float(1.0, span) : make_int(1);
    ExprPtr ones =
        assign_to(name + "_ones", make_op_call("add", {zeros, one}, {}, span), span, out);
    return make_op_call("sel", {mask, ones, zeros}, {}, span);
  }
  Attrs attrs;
  for (const auto& [key, value] : c.attrs) {
    // rsqrt(high_precision=True) of a tensor: the tile op's precision is the device's.
    if (c.callee == "rsqrt" && key == "high_precision") continue;
    attrs.emplace_back(key, value);
  }
  return make_op_call(c.callee, std::move(tile_args), std::move(attrs), span);
}

}  // namespace pypto::passes::detail
