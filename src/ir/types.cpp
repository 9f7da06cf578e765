#include "pypto/ir/types.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "pto_abi.h"
#include "pypto/ir/dtype_table.h"
#include "pypto/ir/tensor_strides.h"
#include "pypto/support/checked_int.h"

namespace pypto::ir {

namespace {

enum DTypeKind { kFloat, kSigned, kUnsigned, kBool };

struct DTypeInfo {
  DataType type;
  std::string_view name;
  int64_t bytes;
  DTypeKind kind;
  std::string_view numpy_name;
  std::string_view doc;
};
constexpr std::array<DTypeInfo, kNumDataTypes> kDTypes = {{
#define PYPTO_DTYPE(name, value, bytes, kind, numpy, doc) \
  {DataType::name, #name, bytes, kind, numpy, doc},
#include "pypto/ir/dtypes.def"
#undef PYPTO_DTYPE
}};

// The table is the one definition of the values: DataType and the device ABI's PtoDType must
// give each type the value of its row, and kDTypes[i] must be the type of value i.
#define PYPTO_DTYPE(name, value, bytes, kind, numpy, doc)                             \
  static_assert(static_cast<int>(DataType::name) == (value) && PTO_##name == (value), \
                #name " differs from include/pypto/ir/dtypes.def");                   \
  static_assert(kDTypes[value].type == DataType::name, "dtypes.def is not in value order");
#include "pypto/ir/dtypes.def"
#undef PYPTO_DTYPE
static_assert(PTO_NUM_DTYPES == kNumDataTypes, "device/pto_abi.h counts other dtypes");

// PyPTO's dtypes that have no element type here, and why.
struct UnsupportedDType {
  std::string_view name;
  const char* reason;
};
constexpr std::array<UnsupportedDType, 4> kUnsupportedDTypes = {{
    {"HF4",
     "the HiFloat4 encoding has no element conversions on this device; use FP4 (E2M1), INT4 or "
     "UINT4"},
    {"HF8",
     "the HiFloat8 encoding has no element conversions on this device; use FP8E4M3FN or "
     "FP8E5M2"},
    {"FP64", "PyPTO reserves FP64 but its language has no FP64 element type; use FP32"},
    {"TASK_ID",
     "it is only the element type of TaskId arrays, pl.array.create(n, pl.TASK_ID); a TaskId "
     "itself comes from pl.submit, 'with pl.at(...) as tid' or pl.system.task_dummy"},
}};

struct SpaceInfo {
  MemorySpace space;
  std::string_view name;
  int64_t capacity;
};
// The capacities of a2a3's cube and vector cores (PyPTO's 910B SoC); the scale buffers, which
// only a5 has, take its 4 KiB each.
constexpr std::array<SpaceInfo, 9> kSpaces = {{
    {MemorySpace::DDR, "DDR", 0},
    {MemorySpace::Vec, "Vec", 192 * 1024},
    {MemorySpace::Mat, "Mat", 512 * 1024},
    {MemorySpace::Left, "Left", 64 * 1024},
    {MemorySpace::Right, "Right", 64 * 1024},
    {MemorySpace::Acc, "Acc", 128 * 1024},
    {MemorySpace::Bias, "Bias", 1024},
    {MemorySpace::LeftScale, "LeftScale", 4 * 1024},
    {MemorySpace::RightScale, "RightScale", 4 * 1024},
}};

// The entry of a name table (kDTypes, kSpaces) with the given name, or null.
template <typename Table>
const typename Table::value_type* find_named(const Table& table, std::string_view name) {
  for (const auto& info : table) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view dtype_name(DataType t) { return kDTypes[static_cast<size_t>(t)].name; }

std::optional<DataType> dtype_from_name(std::string_view name) {
  if (const auto* info = find_named(kDTypes, name)) return info->type;
  if (name == "INDEX") return DataType::INT64;
  return std::nullopt;
}

const char* unsupported_dtype_reason(std::string_view name) {
  for (const auto& u : kUnsupportedDTypes) {
    if (u.name == name) return u.reason;
  }
  return nullptr;
}

int64_t dtype_bytes(DataType t) { return kDTypes[static_cast<size_t>(t)].bytes; }

bool is_float(DataType t) { return kDTypes[static_cast<size_t>(t)].kind == kFloat; }

bool is_integer(DataType t) {
  const DTypeKind kind = kDTypes[static_cast<size_t>(t)].kind;
  return kind == kSigned || kind == kUnsigned;
}

bool is_unsigned(DataType t) { return kDTypes[static_cast<size_t>(t)].kind == kUnsigned; }

std::vector<DTypeRow> dtype_table() {
  std::vector<DTypeRow> rows;
  for (const DTypeInfo& info : kDTypes) {
    static constexpr const char* kKinds[] = {"float", "signed", "unsigned", "bool"};
    rows.push_back({std::string(info.name), static_cast<int>(info.type), info.bytes,
                    kKinds[info.kind], std::string(info.numpy_name), std::string(info.doc)});
  }
  return rows;
}

std::string_view memory_space_name(MemorySpace s) { return kSpaces[static_cast<size_t>(s)].name; }

std::optional<MemorySpace> memory_space_from_name(std::string_view name) {
  if (const auto* info = find_named(kSpaces, name)) return info->space;
  return std::nullopt;
}

int64_t memory_space_capacity(MemorySpace s) { return kSpaces[static_cast<size_t>(s)].capacity; }

bool is_legal_transfer(MemorySpace from, MemorySpace to, Target target) {
  using M = MemorySpace;
  switch (from) {
    case M::DDR:
      return to == M::Vec || to == M::Mat;
    case M::Mat:
      // Mat to DDR: a store of an L1 tile, which PyPTO takes on both targets. Mat feeds the
      // bias table on both, the MX scale buffers on a5, which alone has them.
      return to == M::Left || to == M::Right || to == M::DDR || to == M::Bias ||
             (target == Target::A5 && (to == M::Vec || to == M::LeftScale || to == M::RightScale));
    case M::Acc:
      // Acc to Vec: a5's fix-pipe writes it directly; on a2a3 the cube core hands the tile to
      // the vector core through a GM pipe buffer (PyPTO splits such a mixed kernel into an AIC
      // and an AIV part). The device moves the values either way.
      return to == M::Mat || to == M::DDR || to == M::Vec;
    case M::Vec:
      // Vec to Vec copies a tile within the vector buffer (PyPTO's pl.tile.move to Vec).
      return to == M::DDR || to == M::Vec || (target == Target::A5 && to == M::Mat);
    case M::Left:
    case M::Right:
    case M::Bias:
    case M::LeftScale:
    case M::RightScale:
      return false;
  }
  return false;
}

bool is_legal_transfer(MemorySpace from, MemorySpace to) {
  return is_legal_transfer(from, to, Target::A5);
}

std::string legal_moves_text(Target target) {
  std::string s;
  for (const auto& from : kSpaces) {
    for (const auto& to : kSpaces) {
      if (!is_legal_transfer(from.space, to.space, target)) continue;
      if (!s.empty()) s += ", ";
      s += std::string(from.name) + "->" + std::string(to.name);
    }
  }
  return s;
}

namespace {
struct PlatformInfo {
  std::string_view name;
  Target target;
};
constexpr std::array<PlatformInfo, 5> kPlatforms = {{
    {"a2a3", Target::A2A3},
    {"a2a3sim", Target::A2A3},
    {"cpu_sim", Target::A2A3},
    {"a5", Target::A5},
    {"a5sim", Target::A5},
}};
constexpr std::array<std::string_view, 3> kPadValues = {"zero", "min", "max"};
}  // namespace

std::string_view target_name(Target t) { return t == Target::A5 ? "a5" : "a2a3"; }

std::optional<Target> target_from_platform(std::string_view platform) {
  if (const auto* info = find_named(kPlatforms, platform)) return info->target;
  return std::nullopt;
}

std::string platform_names() {
  std::string s;
  for (const auto& p : kPlatforms) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::string_view pad_value_name(PadValue p) { return kPadValues[static_cast<size_t>(p)]; }

std::optional<PadValue> pad_value_from_name(std::string_view name) {
  for (size_t i = 0; i < kPadValues.size(); ++i)
    if (kPadValues[i] == name) return static_cast<PadValue>(i);
  return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 5> kTensorLayouts = {"ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN"};
constexpr std::array<std::string_view, 3> kTileLayouts = {"none_box", "row_major", "col_major"};
constexpr std::array<std::string_view, 2> kCompactModes = {"null", "normal"};

// The index of `name` in a table of names, as the enum whose values are those indices.
template <typename Enum, size_t N>
std::optional<Enum> enum_from_name(const std::array<std::string_view, N>& names,
                                   std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<Enum>(i);
  return std::nullopt;
}
// Indexed by FunctionType.
constexpr std::array<std::string_view, 6> kFunctionTypeNames = {"Orchestration", "InCore", "Opaque",
                                                                "AIC",           "AIV",    "Group"};
}  // namespace

std::string_view tensor_layout_name(TensorLayout l) {
  return kTensorLayouts[static_cast<size_t>(l)];
}
std::optional<TensorLayout> tensor_layout_from_name(std::string_view name) {
  return enum_from_name<TensorLayout>(kTensorLayouts, name);
}
std::string_view tile_layout_name(TileLayout l) { return kTileLayouts[static_cast<size_t>(l)]; }
std::optional<TileLayout> tile_layout_from_name(std::string_view name) {
  return enum_from_name<TileLayout>(kTileLayouts, name);
}
std::string_view compact_mode_name(CompactMode c) { return kCompactModes[static_cast<size_t>(c)]; }
std::optional<CompactMode> compact_mode_from_name(std::string_view name) {
  return enum_from_name<CompactMode>(kCompactModes, name);
}

TileView implicit_tile_view(const std::vector<int64_t>& shape, std::optional<MemorySpace> space) {
  TileView v;
  const bool column = shape.size() == 2 && shape[1] == 1 && shape[0] > 1;
  v.blayout = column ? TileLayout::col_major : TileLayout::row_major;
  if (space == MemorySpace::Mat || space == MemorySpace::Left || space == MemorySpace::Acc) {
    v.blayout = TileLayout::col_major;
    v.slayout = TileLayout::row_major;
  } else if (space == MemorySpace::Right) {
    v.slayout = TileLayout::col_major;
  }
  if (space == MemorySpace::Acc) v.fractal = 1024;
  return v;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = support::saturated(support::checked_mul(strides[i], shape[i]));
  }
  return strides;
}

std::optional<TensorView> canonical_tensor_view(const std::vector<int64_t>& shape,
                                                TensorView view) {
  if (view.valid_shape == shape) view.valid_shape.clear();
  // Packed strides of the layout say no more than the layout: pl.TensorView(stride=[1, 4],
  // layout=DN) of a [4, 8] tensor is pl.TensorView(layout=DN).
  if ((view.layout == TensorLayout::ND && view.stride == row_major_strides(shape)) ||
      (view.layout == TensorLayout::DN && view.stride == column_major_strides(shape))) {
    view.stride.clear();
  }
  if (view == TensorView{}) return std::nullopt;
  return view;
}

std::optional<TileView> canonical_tile_view(const std::vector<int64_t>& shape,
                                            std::optional<MemorySpace> space, TileView view) {
  if (view.valid_shape == shape) view.valid_shape.clear();
  if (view.stride == row_major_strides(shape)) view.stride.clear();
  if (view == implicit_tile_view(shape, space)) return std::nullopt;
  return view;
}

namespace {
std::string pad_text(PadValue p) { return "pl.PadValue." + std::string(pad_value_name(p)); }
}  // namespace

std::string tile_view_to_string(const TileView& view, const std::vector<int64_t>& shape,
                                std::optional<MemorySpace> space) {
  const TileView implicit = implicit_tile_view(shape, space);
  std::vector<std::string> fields;
  auto layout = [](TileLayout l) { return "pl.TileLayout." + std::string(tile_layout_name(l)); };
  if (!view.valid_shape.empty() && view.valid_shape != shape) {
    fields.push_back("valid_shape=" + shape_to_string(view.valid_shape));
  }
  if (!view.stride.empty() && view.stride != row_major_strides(shape)) {
    fields.push_back("stride=" + shape_to_string(view.stride));
  }
  if (view.start_offset != 0) fields.push_back("start_offset=" + std::to_string(view.start_offset));
  if (view.blayout != implicit.blayout) fields.push_back("blayout=" + layout(view.blayout));
  if (view.slayout != implicit.slayout) fields.push_back("slayout=" + layout(view.slayout));
  if (view.fractal != implicit.fractal) fields.push_back("fractal=" + std::to_string(view.fractal));
  if (view.pad) fields.push_back("pad=" + pad_text(*view.pad));
  if (view.compact != CompactMode::null) {
    fields.push_back("compact=pl.CompactMode." + std::string(compact_mode_name(view.compact)));
  }
  if (fields.empty()) return "";
  std::string s = "pl.TileView(";
  for (size_t i = 0; i < fields.size(); ++i) s += (i ? ", " : "") + fields[i];
  return s + ")";
}

std::string tensor_view_to_string(const TensorView& view) {
  // A view that is only a layout prints as the layout (pl.NZ), as PyPTO writes it; DN has no
  // such shorthand in an annotation.
  if (view.valid_shape.empty() && view.stride.empty() && !view.pad &&
      view.layout != TensorLayout::DN) {
    return "pl." + std::string(tensor_layout_name(view.layout));
  }
  std::string s = "pl.TensorView(";
  std::string sep;
  if (!view.valid_shape.empty()) {
    s += "valid_shape=" + shape_to_string(view.valid_shape);
    sep = ", ";
  }
  if (!view.stride.empty()) {
    s += sep + "stride=" + shape_to_string(view.stride);
    sep = ", ";
  }
  s += sep + "layout=pl.TensorLayout." + std::string(tensor_layout_name(view.layout));
  if (view.pad) s += ", pad=" + pad_text(*view.pad);
  return s + ")";
}

std::string_view function_type_name(FunctionType t) {
  return kFunctionTypeNames[static_cast<size_t>(t)];
}

std::optional<FunctionType> function_type_from_name(std::string_view name) {
  for (size_t i = 0; i < kFunctionTypeNames.size(); ++i)
    if (kFunctionTypeNames[i] == name) return static_cast<FunctionType>(i);
  return std::nullopt;
}

bool is_kernel(FunctionType t) {
  return t == FunctionType::InCore || t == FunctionType::AIC || t == FunctionType::AIV;
}

bool submits_tasks(FunctionType t) {
  return t == FunctionType::Orchestration || t == FunctionType::Group;
}

namespace {
constexpr std::pair<ArgDirection, std::string_view> kArgDirectionMarkers[] = {
    {ArgDirection::In, "input"},     {ArgDirection::Out, "output_existing"},
    {ArgDirection::InOut, "inout"},  {ArgDirection::Scalar, "scalar"},
    {ArgDirection::NoDep, "no_dep"}, {ArgDirection::Output, "output"},
};
}  // namespace

std::string_view arg_direction_marker(ArgDirection d) {
  for (const auto& [direction, marker] : kArgDirectionMarkers)
    if (direction == d) return marker;
  return "input";
}

std::optional<ArgDirection> arg_direction_from_marker(std::string_view marker) {
  for (const auto& [direction, name] : kArgDirectionMarkers)
    if (name == marker) return direction;
  return std::nullopt;
}

bool arg_direction_writes(ArgDirection d) {
  return d == ArgDirection::Out || d == ArgDirection::InOut || d == ArgDirection::Output ||
         d == ArgDirection::NoDep;
}

std::string_view param_direction_name(ParamDirection d) {
  switch (d) {
    case ParamDirection::In:
      return "In";
    case ParamDirection::Out:
      return "Out";
    case ParamDirection::InOut:
      return "InOut";
  }
  return "In";
}

// Shapes that reach the IR have byte counts that fit in int64 (the parser and the type rules
// check that); a type built otherwise saturates, which reads as "larger than any memory space".
int64_t TileType::num_elements() const {
  return support::saturated(support::checked_product(shape));
}

int64_t TileType::size_bytes() const {
  return support::saturated(support::checked_mul(num_elements(), dtype_bytes(dtype)));
}

std::optional<int64_t> shape_bytes(const std::vector<int64_t>& shape, DataType dtype) {
  return support::checked_mul(support::checked_product(shape), dtype_bytes(dtype));
}

TypePtr scalar_type(DataType dtype) {
  // One shared node per dtype.
  static const std::array<TypePtr, kNumDataTypes> kScalars = [] {
    std::array<TypePtr, kNumDataTypes> scalars;
    for (int i = 0; i < kNumDataTypes; ++i) {
      scalars[static_cast<size_t>(i)] = ir::make_node<ScalarType>(static_cast<DataType>(i));
    }
    return scalars;
  }();
  return kScalars[static_cast<size_t>(dtype)];
}

TypePtr tensor_type(std::vector<int64_t> shape, DataType dtype, std::optional<TensorView> view,
                    std::optional<MemRef> memref) {
  return ir::make_node<TensorType>(std::move(shape), dtype, std::move(view), memref);
}

TypePtr tile_type(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space,
                  std::optional<MemRef> memref, std::optional<TileView> view) {
  return ir::make_node<TileType>(std::move(shape), dtype, space, memref, std::move(view));
}

TypePtr tuple_type(std::vector<TypePtr> elements) {
  return ir::make_node<TupleType>(std::move(elements));
}

bool types_equal(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind() != b->kind()) return false;
  switch (a->kind()) {
    case TypeKind::Scalar:
      return a->as<ScalarType>()->dtype == b->as<ScalarType>()->dtype;
    case TypeKind::Tensor: {
      const auto *x = a->as<TensorType>(), *y = b->as<TensorType>();
      return x->dtype == y->dtype && x->shape == y->shape && x->view == y->view &&
             x->memref == y->memref;
    }
    case TypeKind::Tile: {
      const auto *x = a->as<TileType>(), *y = b->as<TileType>();
      if (!(x->dtype == y->dtype && x->shape == y->shape && x->space == y->space &&
            x->memref == y->memref)) {
        return false;
      }
      // An unset view means the implicit one; compare what is in force.
      return (!x->view && !y->view) || x->effective_view() == y->effective_view();
    }
    case TypeKind::Tuple: {
      const auto &x = a->as<TupleType>()->elements, &y = b->as<TupleType>()->elements;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!types_equal(x[i], y[i])) return false;
      }
      return true;
    }
  }
  return false;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] == kDynamicExtent ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

bool has_dynamic_extent(const std::vector<int64_t>& shape) {
  return std::find(shape.begin(), shape.end(), kDynamicExtent) != shape.end();
}

std::string memref_to_string(const MemRef& m) {
  return "pl.MemRef(" + std::to_string(m.addr) + ", " + std::to_string(m.size) + ", " +
         std::to_string(m.buffer_id) + ")";
}

std::string type_to_string(const TypePtr& t) {
  if (!t) return "<none>";
  auto dt = [](DataType d) { return "pl." + std::string(dtype_name(d)); };
  switch (t->kind()) {
    case TypeKind::Scalar:
      return "pl.Scalar[" + dt(t->as<ScalarType>()->dtype) + "]";
    case TypeKind::Tensor: {
      const auto* x = t->as<TensorType>();
      std::string s = "pl.Tensor[" + shape_to_string(x->shape) + ", " + dt(x->dtype);
      if (x->view) s += ", " + tensor_view_to_string(*x->view);
      if (x->memref) {
        s += ", " + memref_to_string(*x->memref);
      }
      return s + "]";
    }
    case TypeKind::Tile: {
      const auto* x = t->as<TileType>();
      std::string s = "pl.Tile[" + shape_to_string(x->shape) + ", " + dt(x->dtype);
      if (x->space) s += ", pl.MemorySpace." + std::string(memory_space_name(*x->space));
      if (x->memref) {
        s += ", " + memref_to_string(*x->memref);
      }
      if (x->view) {
        std::string view = tile_view_to_string(*x->view, x->shape, x->space);
        if (!view.empty()) s += ", " + view;
      }
      return s + "]";
    }
    case TypeKind::Tuple: {
      std::string s = "tuple[";
      const auto& els = t->as<TupleType>()->elements;
      for (size_t i = 0; i < els.size(); ++i) {
        if (i) s += ", ";
        s += type_to_string(els[i]);
      }
      return s + "]";
    }
  }
  return "<?>";
}

}  // namespace pypto::ir
