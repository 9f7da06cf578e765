// The type rule of pl.tensor.view: a tensor's elements seen in another shape over the same
// memory. It is reshape's rule for a tensor (a view, never a copy), with PyPTO's optional shape
// and valid_shape. A layout change between ND and DN is the transpose view the parser makes of it
// (view_with_layout, parser_calls.cpp); a layout that changes nothing is dropped there.
#include <string>

#include "op_type_rules.h"

namespace pypto::ir::op_rules {

TypePtr infer_view(const OpContext& c) {
  expect_tensor(c, 0);
  // view(t, layout=pl.TensorLayout.ND): the layout tensors have here, so t itself.
  if (c.args.size() < 2) return c.args[0]->type();
  TypePtr viewed = infer_reshape(c);
  const auto& shape = viewed->as<TensorType>()->shape;
  if (shape.empty()) c.fail(1, c.op_name() + " needs a shape of rank 1 or more" + c.where(1));
  if (c.args.size() > 2) {
    // A tensor is valid whole here (a partly valid window is a tile's, from pl.load's
    // valid_shapes), so the valid region a view names is its whole shape.
    auto valid = expect_offsets(c, 2, "valid_shape");
    expect_rank(c, 2, "valid_shape dimensions", valid.size(), shape.size());
    for (size_t d = 0; d < valid.size(); ++d) {
      if (valid[d] && *valid[d] == shape[d]) continue;
      c.fail(2, c.op_name() + ": valid_shape " +
                    (valid[d] ? std::to_string(*valid[d]) : std::string("(computed at run time)")) +
                    " of dimension " + std::to_string(d) + " is not the view's extent " +
                    std::to_string(shape[d]) + "; tensors are valid whole here (load a window " +
                    "with pl.load(..., valid_shapes=) for a partly valid tile)" + c.where(2));
    }
  }
  return tensor_type(shape, viewed->as<TensorType>()->dtype);
}

}  // namespace pypto::ir::op_rules
