// The type rules of the layout ops: reinterpret_view, transpose and transpose_view, and the
// slice and assemble of a window of a tensor or a tile (see op_type_rules.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "op_type_rules.h"
#include "pypto/support/checked_int.h"

namespace pypto::ir::op_rules {

// reinterpret_view(data, dtype, shape=): the tile's bytes as elements of another dtype, in
// `shape` or, without it, with the last dimension scaled by the ratio of the element sizes.
TypePtr infer_reinterpret_view(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  const DataType to = required_dtype_attr(c, "dtype");
  if (to == tile->dtype) {
    c.fail_call(c.op_name() + " needs another dtype than the tile's " +
                std::string(dtype_name(to)));
  }
  const int64_t from_size = dtype_bytes(tile->dtype), to_size = dtype_bytes(to);
  std::vector<int64_t> shape = tile->shape;
  if (const AttrValue* v = find_attr(c.attrs, "shape")) {
    const auto* given = std::get_if<std::vector<int64_t>>(v);
    if (!given || given->empty() || given->size() > 2) {
      c.fail_call("shape of " + c.op_name() + " must be a list of one or two integers");
    }
    shape = *given;
  } else if ((shape.back() * from_size) % to_size != 0) {
    c.fail_call(c.op_name() + ": a row of " + std::to_string(shape.back() * from_size) +
                " bytes is no whole number of " + std::string(dtype_name(to)) +
                " elements; give shape=");
  } else {
    shape.back() = shape.back() * from_size / to_size;
  }
  if (shape_bytes(shape, to) != shape_bytes(tile->shape, tile->dtype)) {
    c.fail_call(c.op_name() + ": " + shape_to_string(shape) + " of " + std::string(dtype_name(to)) +
                " is not the " + std::to_string(shape_bytes(tile->shape, tile->dtype).value_or(0)) +
                " bytes of the tile");
  }
  return tile_type(std::move(shape), to, tile->space);
}

// transpose(x, axis1, axis2): x with the two axes swapped (unchanged when they are the same).
// A 2-D tile is copied transposed; a tensor of any rank becomes a view with its strides swapped.
TypePtr infer_transpose(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  const auto rank = static_cast<int64_t>(x.shape->size());
  if (x.is_tile && rank < 2) {
    c.fail(0, "expected a tile of 2 or more dimensions, got shape " + shape_to_string(*x.shape) +
                  c.where(0));
  }
  const int64_t a1 = expect_axis(c, 1, rank), a2 = expect_axis(c, 2, rank);
  const bool last_two = std::min(a1, a2) == rank - 2 && std::max(a1, a2) == rank - 1;
  if (x.is_tile && rank > 2 && a1 != a2 && !last_two) {
    c.fail(1, c.op_name() + " of a " + std::to_string(rank) + "-D tile swaps its last two axes (" +
                  std::to_string(rank - 2) + " and " + std::to_string(rank - 1) + "), got " +
                  std::to_string(a1) + " and " + std::to_string(a2) +
                  " (pl.reshape the tile first)" + c.where(1));
  }
  std::vector<int64_t> shape = *x.shape;
  std::swap(shape[static_cast<size_t>(a1)], shape[static_cast<size_t>(a2)]);
  if (x.is_tile) return tile_type(std::move(shape), x.dtype);
  return tensor_type(std::move(shape), x.dtype);
}

TypePtr infer_transpose_view(const OpContext& c) {
  const auto* tile = expect_tile(c, 0);
  if (tile->shape.size() < 2) {
    c.fail(0, "expected a tile of 2 or more dimensions, got shape " + shape_to_string(tile->shape) +
                  c.where(0));
  }
  std::vector<int64_t> shape = tile->shape;
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return tile_type(std::move(shape), tile->dtype, tile->space);
}

// The part of a tensor slice that is read must start inside the tensor and, where the offsets
// are constant, end inside it: per dimension the constant valid extent when there is one, else
// the window's extent. A run-time offset is left to the device, which clips the view.
static void check_tensor_slice_reach(const OpContext& c,
                                     const std::vector<std::optional<int64_t>>& offsets,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<std::optional<int64_t>>& valid,
                                     const std::vector<int64_t>& bounds) {
  for (size_t d = 0; d < offsets.size(); ++d) {
    if (!offsets[d]) continue;
    const int64_t reach = d < valid.size() && valid[d] ? *valid[d] : shape[d];
    if (*offsets[d] >= 0 && (reach == kDynamicExtent || bounds[d] == kDynamicExtent)) continue;
    if (support::box_fits(*offsets[d], reach, bounds[d])) continue;
    std::string offs = "[";
    for (size_t k = 0; k < offsets.size(); ++k) {
      if (k) offs += ", ";
      offs += offsets[k] ? std::to_string(*offsets[k]) : "?";
    }
    offs += "]";
    c.fail(2, "out of bounds in " + c.op_name() + ": region " + shape_to_string(shape) +
                  " at offsets " + offs + " reads past the tensor of shape " +
                  shape_to_string(bounds) + " in dimension " + std::to_string(d) +
                  " (a window may run past the tensor's end only where its valid_shape stops "
                  "inside it, or where its offset is known at run time only)");
  }
}

TypePtr infer_slice(const OpContext& c) {
  ShapedInfo x = expect_shaped(c, 0);
  // A tensor's slice may have run-time extents (a tile's may not); the device checks its box.
  auto shape = x.is_tile ? expect_const_shape(c, 1) : expect_tensor_shape(c, 1);
  auto offsets = expect_offsets(c, 2);
  expect_rank(c, 1, "shape dimensions", shape.size(), x.shape->size());
  expect_rank(c, 2, "offsets", offsets.size(), x.shape->size());
  // A tile's window must lie inside the tile. A tensor's slice is a view that the device clips
  // to its tensor (PyPTO's rule: a fixed-width window near the end of a tensor, of which only
  // the part inside is addressed), so only what is sure to run off is an error here: a window
  // whose constant offsets put the part it reads (its valid_shape when that is constant, else
  // all of it) past the tensor.
  if (x.is_tile) check_region(c, 2, offsets, shape, *x.shape);
  if (c.args.size() > 3) {
    // valid_shape: the window's valid region, integer scalars (constant or not). It is the
    // view's metadata: the kernels given the window load it with their own valid_shape.
    if (x.is_tile) {
      // The parser gives a 2-D tile's window its region with pl.tile.set_validshape.
      c.fail(3, "valid_shape of " + c.op_name() + " on a tile needs a 2-D tile and its two " +
                    "valid extents written as a list ([rows, cols]); got a " +
                    std::to_string(x.shape->size()) + "-D tile");
    }
    auto valid = expect_offsets(c, 3, "valid_shape");
    expect_rank(c, 3, "valid_shape dimensions", valid.size(), shape.size());
    for (size_t d = 0; d < valid.size(); ++d) {
      if (valid[d] && (*valid[d] < 0 || (shape[d] != kDynamicExtent && *valid[d] > shape[d]))) {
        c.fail(3, "valid_shape " + std::to_string(*valid[d]) + " of dimension " +
                      std::to_string(d) + " is outside [0, " + std::to_string(shape[d]) +
                      "] (the window's shape)" + c.where(3));
      }
    }
    if (!x.is_tile) {
      check_tensor_slice_reach(c, offsets, shape, valid, *x.shape);
      // Constant extents are the view's valid region in its type (pl.set_validshape of a
      // tensor): an assemble of the view writes that region only.
      std::vector<int64_t> region;
      for (const auto& v : valid)
        if (v) region.push_back(*v);
      if (region.size() == valid.size() && region != shape) {
        TensorView view;
        view.valid_shape = std::move(region);
        return tensor_type(std::move(shape), x.dtype, std::move(view));
      }
    }
  } else if (!x.is_tile) {
    check_tensor_slice_reach(c, offsets, shape, {}, *x.shape);
  }
  if (x.is_tile) return tile_type(std::move(shape), x.dtype);
  return tensor_type(std::move(shape), x.dtype);
}

TypePtr infer_assemble(const OpContext& c) {
  ShapedInfo target = expect_shaped(c, 0);
  ShapedInfo source = expect_shaped(c, 1);
  if (target.is_tile && !source.is_tile) {
    c.fail(1, "expected Tile, got Tensor" + c.where(1));
  }
  auto offsets = expect_offsets(c, 2);
  expect_rank(c, 2, "offsets", offsets.size(), target.shape->size());
  // Into a tensor, a source of lower rank fills a box whose leading extents are 1. A tensor
  // view with a valid region (pl.set_validshape) writes that region only.
  std::vector<int64_t> box = *source.shape;
  if (const auto* view_type = c.args[1]->type()->as<TensorType>();
      view_type && view_type->view && !view_type->view->valid_shape.empty()) {
    box = view_type->view->valid_shape;
  }
  if (!target.is_tile && box.size() < target.shape->size())
    box.insert(box.begin(), target.shape->size() - box.size(), 1);
  if (box.size() != target.shape->size()) {
    c.fail(1, "rank mismatch in " + c.op_name() + ": " + shape_to_string(*source.shape) + " into " +
                  shape_to_string(*target.shape));
  }
  // A float tensor assembled into a tensor of another float type is rounded to it on the way
  // (a matmul's FP32 product into a BF16 output, the cube unit's fix-pipe conversion), and so is
  // an FP32 Acc tile assembled into an FP16/BF16 tile (in Mat: the fix-pipe's Acc -> Mat path).
  const bool tensors = !target.is_tile && !source.is_tile;
  const auto* source_tile = source.is_tile ? c.args[1]->type()->as<TileType>() : nullptr;
  const bool fix_pipe = target.is_tile && source_tile && source_tile->space == MemorySpace::Acc &&
                        source.dtype == DataType::FP32 &&
                        (target.dtype == DataType::FP16 || target.dtype == DataType::BF16);
  if (!fix_pipe && (!tensors || !is_float(target.dtype) || !is_float(source.dtype))) {
    expect_same_dtype(c, 1, target.dtype, source.dtype);
  }
  check_atomic_attr(c, target.dtype, !target.is_tile);
  check_region(c, 2, offsets, box, *target.shape);
  if (target.is_tile) return tile_type(*target.shape, target.dtype, target.space);
  return c.args[0]->type();
}

}  // namespace pypto::ir::op_rules
