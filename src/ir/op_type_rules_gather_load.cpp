// The type rules of the loads by index and the L1 accumulators: pl.tile.gatherb (32-byte blocks
// of a tile by byte offset), pl.tile.mgather (rows or elements of a tensor by an index tile),
// pl.create_l1 (a Mat accumulator) and pl.gather_row (a tensor window into a region of a tile).
// Index and offset values are checked at run time, by the interpreter and by the device.
#include <string>
#include <vector>

#include "op_type_rules.h"
#include "pypto/ir/scalar_arith.h"

namespace pypto::ir::op_rules {

namespace {

// The element types whose bytes gatherb moves and mgather reads: 8-, 16- and 32-bit integers
// and the floats of those widths (mgather also the 8-bit floats).
bool is_block_dtype(DataType d, bool fp8) {
  switch (d) {
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::INT16:
    case DataType::UINT16:
    case DataType::INT32:
    case DataType::UINT32:
    case DataType::FP16:
    case DataType::BF16:
    case DataType::FP32:
      return true;
    case DataType::FP8E4M3FN:
    case DataType::FP8E5M2:
      return fp8;
    default:
      return false;
  }
}

const char* const kBlockDtypes = "INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16 or FP32";

// A keyword that takes one of `names` (or its position in it, as printed IR writes it).
int32_t named_code(const OpContext& c, const char* key, const std::vector<std::string>& names) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return 0;
  if (const auto* s = std::get_if<std::string>(v)) {
    for (size_t k = 0; k < names.size(); ++k)
      if (*s == names[k]) return static_cast<int32_t>(k);
  } else if (const auto* i = std::get_if<int64_t>(v)) {
    if (*i >= 0 && *i < static_cast<int64_t>(names.size())) return static_cast<int32_t>(*i);
  }
  std::string choices;
  for (size_t k = 0; k < names.size(); ++k)
    choices += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + ("\"" + names[k] + "\"");
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be " + choices + " (or 0 to " +
              std::to_string(names.size() - 1) + ")");
}

bool flag(const OpContext& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return false;
  if (const auto* b = std::get_if<bool>(v)) return *b;
  if (const auto* i = std::get_if<int64_t>(v)) return *i != 0;
  c.fail_call(std::string(key) + " of " + c.op_name() + " must be True or False");
}

// Argument i: a list of two integer scalars (a [row, column] position or extent).
std::vector<std::optional<int64_t>> expect_pair(const OpContext& c, size_t i, const char* what) {
  auto v = expect_offsets(c, i, what);
  expect_rank(c, i, what, v.size(), 2);
  return v;
}

}  // namespace

int32_t mgather_coalesce(const OpContext& c) { return named_code(c, "coalesce", {"row", "elem"}); }

int32_t mgather_gather_oob(const OpContext& c) {
  return named_code(c, "gather_oob", {"undefined", "clamp", "wrap", "zero"});
}

TypePtr infer_gatherb(const OpContext& c) {
  const TileType* src = expect_tile(c, 0);
  expect_2d(c, 0, src->shape);
  if (!is_block_dtype(src->dtype, false)) {
    c.fail(0, c.op_name() + " moves the bytes of " + kBlockDtypes + " elements, got " +
                  std::string(dtype_name(src->dtype)) + c.where(0));
  }
  const TileType* offset = expect_tile(c, 1);
  expect_2d(c, 1, offset->shape);
  if (offset->dtype != DataType::UINT32) {
    c.fail(1, c.op_name() + " takes UINT32 byte offsets, got " +
                  std::string(dtype_name(offset->dtype)) + c.where(1));
  }
  // A row of offsets is whole 32-byte blocks of UINT32: eight of them.
  if (offset->shape[1] % 8 != 0) {
    c.fail(1, c.op_name() + ": the offsets' " + std::to_string(offset->shape[1]) +
                  " columns must be a multiple of 8 (a row of UINT32 offsets fills 32-byte "
                  "blocks)" +
                  c.where(1));
  }
  const DataType out = dtype_attr(c, "output_dtype").value_or(src->dtype);
  if (!is_block_dtype(out, false)) {
    c.fail_call("output_dtype of " + c.op_name() + " must be " + kBlockDtypes + ", got " +
                std::string(dtype_name(out)));
  }
  std::vector<int64_t> shape = {offset->shape[0], offset->shape[1] * (32 / dtype_bytes(out))};
  expect_shape_fits(c, 1, shape, out);
  return tile_type(std::move(shape), out, src->space);
}

namespace {

// mgather into Mat (PyPTO's NZ operand of a matmul; a row-major tile here): the index is a GM
// tensor, [1, n] for rows, [m, n] for elements, which also stage through a GM `scratch` tensor
// of the source's dtype. The result is whole blocks of the cube: rows a multiple of 16, columns
// of 32 bytes.
TypePtr infer_mgather_mat(const OpContext& c, const TensorType* mem, bool rows) {
  const TensorType* idx = expect_tensor(c, 1);
  expect_2d(c, 1, idx->shape);
  if (idx->dtype != DataType::INT32) {
    c.fail(1, c.op_name() + " takes INT32 indices, got " + std::string(dtype_name(idx->dtype)) +
                  c.where(1));
  }
  std::vector<int64_t> shape;
  if (rows) {
    if (c.args.size() > 2) {
      c.fail(2, c.op_name() + " takes scratch= only in its Mat element form (coalesce=\"elem\")" +
                    c.where(2));
    }
    if (mem->shape.size() < 2 || idx->shape[0] != 1) {
      c.fail(1, c.op_name() +
                    " into Mat with coalesce=\"row\" takes a [1, n] GM index and a "
                    "tensor of rank 2 or more, got " +
                    shape_to_string(idx->shape) + " and " + shape_to_string(mem->shape) +
                    c.where(1));
    }
    shape = {idx->shape[1], mem->shape.back()};
  } else {
    if (c.args.size() < 3) {
      c.fail_call(c.op_name() +
                  " into Mat with coalesce=\"elem\" needs scratch=, a GM tensor "
                  "of the source's dtype");
    }
    const TensorType* scratch = expect_tensor(c, 2);
    expect_same_dtype(c, 2, mem->dtype, scratch->dtype);
    if (c.args[2].get() == c.args[0].get() || c.args[2].get() == c.args[1].get()) {
      c.fail(2, c.op_name() + ": scratch must be a tensor of its own, not mem or idx" + c.where(2));
    }
    int64_t needed = idx->shape[0] * idx->shape[1], have = 1;
    for (int64_t d : scratch->shape) have = d == kDynamicExtent ? -1 : have * d;
    if (have >= 0 && have < needed) {
      c.fail(2, c.op_name() + ": scratch holds " + std::to_string(have) + " elements, the " +
                    shape_to_string(idx->shape) + " gather needs " + std::to_string(needed) +
                    c.where(2));
    }
    shape = idx->shape;
  }
  const int64_t c0 = 32 / dtype_bytes(mem->dtype);
  if (shape[0] % 16 != 0 || shape[1] == kDynamicExtent || shape[1] % c0 != 0) {
    c.fail(1, c.op_name() + " into Mat makes whole cube blocks: the result " +
                  shape_to_string(shape) +
                  " needs rows a multiple of 16 and columns a multiple "
                  "of " +
                  std::to_string(c0) + c.where(1));
  }
  if (const AttrValue* v = find_attr(c.attrs, "valid_shape")) {
    const auto* valid = std::get_if<std::vector<int64_t>>(v);
    if (!valid || *valid != shape) {
      c.fail_call(c.op_name() + ": a valid_shape smaller than the result " +
                  shape_to_string(shape) +
                  " is not supported yet (the result is written whole here)");
    }
  }
  expect_shape_fits(c, 1, shape, mem->dtype);
  return tile_type(std::move(shape), mem->dtype, MemorySpace::Mat);
}

}  // namespace

TypePtr infer_mgather(const OpContext& c) {
  const TensorType* mem = expect_tensor(c, 0);
  if (!is_block_dtype(mem->dtype, true)) {
    c.fail(0, c.op_name() + " reads " + kBlockDtypes + ", FP8E4M3FN or FP8E5M2 tensors, got " +
                  std::string(dtype_name(mem->dtype)) + c.where(0));
  }
  if (mem->shape.empty()) c.fail(0, c.op_name() + " needs a tensor of rank 1 or more" + c.where(0));
  const int32_t coalesce = mgather_coalesce(c);
  mgather_gather_oob(c);
  const auto target = memory_attr(c, "target_memory").value_or(MemorySpace::Vec);
  if (target == MemorySpace::Mat) return infer_mgather_mat(c, mem, coalesce == 0);
  if (target != MemorySpace::Vec) {
    c.fail_call("target_memory of " + c.op_name() +
                " must be pl.MemorySpace.Vec or "
                "pl.MemorySpace.Mat");
  }
  if (c.args.size() > 2) {
    c.fail(2, c.op_name() + " takes scratch= only in its Mat element form" + c.where(2));
  }
  if (find_attr(c.attrs, "valid_shape")) {
    c.fail_call(c.op_name() +
                " into Vec takes its valid region from the index tile: valid_shape= "
                "belongs to the Mat form");
  }
  const TileType* idx = expect_tile(c, 1);
  expect_2d(c, 1, idx->shape);
  if (idx->dtype != DataType::INT32) {
    c.fail(1, c.op_name() + " takes INT32 indices, got " + std::string(dtype_name(idx->dtype)) +
                  c.where(1));
  }
  if (coalesce == 1) return tile_type(idx->shape, mem->dtype, MemorySpace::Vec);
  if (mem->shape.size() < 2) {
    c.fail(0, c.op_name() +
                  " with coalesce=\"row\" gathers rows: it needs a tensor of rank 2 or "
                  "more, got " +
                  shape_to_string(mem->shape) + c.where(0));
  }
  if (idx->shape[0] != 1 && idx->shape[1] != 1) {
    c.fail(1, c.op_name() + " with coalesce=\"row\" takes a [1, n] or [n, 1] index, got " +
                  shape_to_string(idx->shape) + c.where(1));
  }
  const int64_t cols = mem->shape.back();
  if (cols == kDynamicExtent) {
    c.fail(0, c.op_name() +
                  " with coalesce=\"row\" needs the tensor's last extent to be a "
                  "constant" +
                  c.where(0));
  }
  std::vector<int64_t> shape = {idx->shape[0] == 1 ? idx->shape[1] : idx->shape[0], cols};
  expect_shape_fits(c, 0, shape, mem->dtype);
  return tile_type(std::move(shape), mem->dtype, MemorySpace::Vec);
}

TypePtr infer_create_l1(const OpContext& c) {
  auto shape = expect_const_shape(c, 0);
  expect_2d(c, 0, shape);
  const DataType dtype = required_dtype_attr(c, "dtype");
  expect_shape_fits(c, 0, shape, dtype);
  flag(c, "transpose");  // the NPU's ZN layout for a transposed fill; tiles here are row-major
  return tile_type(std::move(shape), dtype, MemorySpace::Mat);
}

TypePtr infer_gather_row(const OpContext& c) {
  const TileType* dst = expect_tile(c, 0);
  expect_2d(c, 0, dst->shape);
  if (dst->space && *dst->space != MemorySpace::Mat && *dst->space != MemorySpace::Vec) {
    c.fail(0, c.op_name() + " fills a Mat or Vec tile, got one in " +
                  std::string(memory_space_name(*dst->space)) + c.where(0));
  }
  const TensorType* src = expect_tensor(c, 1);
  expect_2d(c, 1, src->shape);
  expect_same_dtype(c, 1, dst->dtype, src->dtype);
  auto dst_offset = expect_pair(c, 2, "dst_offset");
  auto src_offset = expect_pair(c, 3, "src_offset");
  auto window = expect_const_shape(c, 4);
  expect_rank(c, 4, "shapes dimensions", window.size(), 2);
  for (int64_t e : window) {
    if (e <= 0) c.fail(4, "the extents of shapes must be positive" + c.where(4));
  }
  const bool transpose = flag(c, "transpose");
  if (transpose && dst->space && *dst->space != MemorySpace::Mat) {
    c.fail(0, c.op_name() + "(transpose=True) fills a Mat tile (a matmul operand), got one in " +
                  std::string(memory_space_name(*dst->space)) + c.where(0));
  }
  // What moves: the window, or its valid part (extents computed at run time are checked there).
  std::vector<int64_t> moved = window;
  if (c.args.size() > 5) {
    if (transpose) {
      c.fail(5, c.op_name() + ": valid_shape is not supported together with transpose=True" +
                    c.where(5));
    }
    auto valid = expect_valid_shape(c, 5, window);
    for (size_t d = 0; d < 2; ++d) moved[d] = valid[d].value_or(0);
  }
  check_region(c, 3, src_offset, moved, src->shape);
  const std::vector<int64_t> placed = transpose ? std::vector<int64_t>{moved[1], moved[0]} : moved;
  check_region(c, 2, dst_offset, placed, dst->shape);
  return c.args[0]->type();
}

}  // namespace pypto::ir::op_rules
