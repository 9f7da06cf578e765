// Type rules of the AIC/AIV boundary ops of `pl.split_aiv` regions (split_aiv_ops.h).
#include "split_aiv_ops.h"

#include <string>
#include <utility>
#include <vector>

namespace pypto::ir {

std::optional<size_t> split_axis_of_mode(int64_t mode) {
  if (mode == 1) return 0;
  if (mode == 2) return 1;
  return std::nullopt;
}

int64_t split_lane_extent(int64_t extent) { return (extent + 1) / 2; }

namespace op_rules {
namespace {

// The split= attribute: 0, 1 or 2 (the parser always gives it).
int64_t split_attr(const OpContext& c) {
  const AttrValue* v = find_attr(c.attrs, "split");
  const auto* mode = v ? std::get_if<int64_t>(v) : nullptr;
  if (!mode) {
    c.fail_call(c.op_name() +
                " needs the split mode of its pl.split_aiv region: write it inside "
                "`for aiv in pl.split_aiv(2, mode=...)` (or give split=0, 1 or 2)");
  }
  if (*mode < 0 || *mode > 2) {
    c.fail_call("split=" + std::to_string(*mode) + " of " + c.op_name() +
                " is not a split mode (0 NONE, 1 UP_DOWN, 2 LEFT_RIGHT)");
  }
  return *mode;
}

// x with its split axis resized by `resize`; NONE keeps x's shape. The ops of tensors give
// tensors (the tensor-level form, which the kernel's tile conversion places). Of tiles, a shard
// is what a vector lane holds, a tile in Vec, and a gather what the cube reads, a tile in Mat.
template <typename Resize>
TypePtr boundary_type(const OpContext& c, Resize resize, bool shard) {
  const int64_t mode = split_attr(c);
  ShapedInfo x = expect_shaped(c, 0);
  std::vector<int64_t> shape = *x.shape;
  if (auto axis = split_axis_of_mode(mode)) {
    if (shape.size() != 2) {
      c.fail(0, c.op_name() + " splits a 2-D value, got one of rank " +
                    std::to_string(shape.size()) + c.where(0));
    }
    shape[*axis] = resize(shape[*axis]);
  }
  if (!x.is_tile) return tensor_type(std::move(shape), x.dtype);
  return tile_type(std::move(shape), x.dtype, shard ? MemorySpace::Vec : MemorySpace::Mat);
  return tensor_type(std::move(shape), x.dtype);
}

}  // namespace

TypePtr infer_aiv_shard(const OpContext& c) {
  return boundary_type(
      c, [](int64_t extent) { return split_lane_extent(extent); }, true);
}

TypePtr infer_aic_gather(const OpContext& c) {
  return boundary_type(
      c, [](int64_t extent) { return 2 * extent; }, false);
}

}  // namespace op_rules

namespace interp {
Value op_split_aiv_boundary(const OpDef& def, const Call& c, const Args& a) {
  (void)c, (void)a;
  throw RunError("pl." + def.name +
                 " is lowered by the LowerSplitAiv pass; run the program through the pass "
                 "pipeline (ir.compile) rather than interpreting it as parsed");
}
}  // namespace interp

}  // namespace pypto::ir
