#include "pypto/ir/types.h"

#include <array>
#include <string>

#include "pypto/support/checked_int.h"

namespace pypto::ir {

namespace {

struct DTypeInfo {
  DataType type;
  std::string_view name;
  int64_t bytes;
};
constexpr std::array<DTypeInfo, 6> kDTypes = {{
    {DataType::FP32, "FP32", 4},
    {DataType::FP16, "FP16", 2},
    {DataType::BF16, "BF16", 2},
    {DataType::INT32, "INT32", 4},
    {DataType::INT64, "INT64", 8},
    {DataType::BOOL, "BOOL", 1},
}};

struct SpaceInfo {
  MemorySpace space;
  std::string_view name;
  int64_t capacity;
};
constexpr std::array<SpaceInfo, 6> kSpaces = {{
    {MemorySpace::DDR, "DDR", 0},
    {MemorySpace::Vec, "Vec", 192 * 1024},
    {MemorySpace::Mat, "Mat", 512 * 1024},
    {MemorySpace::Left, "Left", 64 * 1024},
    {MemorySpace::Right, "Right", 64 * 1024},
    {MemorySpace::Acc, "Acc", 128 * 1024},
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

int64_t dtype_bytes(DataType t) { return kDTypes[static_cast<size_t>(t)].bytes; }

bool is_float(DataType t) {
  return t == DataType::FP32 || t == DataType::FP16 || t == DataType::BF16;
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
      return to == M::Left || to == M::Right || (target == Target::A5 && to == M::Vec);
    case M::Acc:
      return to == M::Mat || to == M::DDR;
    case M::Vec:
      return to == M::DDR || (target == Target::A5 && to == M::Mat);
    case M::Left:
    case M::Right:
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
// Indexed by FunctionType.
constexpr std::array<std::string_view, 6> kFunctionTypeNames = {"Orchestration", "InCore", "Opaque",
                                                                "AIC",           "AIV",    "Group"};
}  // namespace

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
  static const std::array<TypePtr, 6> kScalars = {
      ir::make_node<ScalarType>(DataType::FP32),  ir::make_node<ScalarType>(DataType::FP16),
      ir::make_node<ScalarType>(DataType::BF16),  ir::make_node<ScalarType>(DataType::INT32),
      ir::make_node<ScalarType>(DataType::INT64), ir::make_node<ScalarType>(DataType::BOOL),
  };
  return kScalars[static_cast<size_t>(dtype)];
}

TypePtr tensor_type(std::vector<int64_t> shape, DataType dtype) {
  return ir::make_node<TensorType>(std::move(shape), dtype);
}

TypePtr tile_type(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space,
                  std::optional<MemRef> memref) {
  return ir::make_node<TileType>(std::move(shape), dtype, space, memref);
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
      return x->dtype == y->dtype && x->shape == y->shape;
    }
    case TypeKind::Tile: {
      const auto *x = a->as<TileType>(), *y = b->as<TileType>();
      return x->dtype == y->dtype && x->shape == y->shape && x->space == y->space &&
             x->memref == y->memref;
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
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string type_to_string(const TypePtr& t) {
  if (!t) return "<none>";
  auto dt = [](DataType d) { return "pl." + std::string(dtype_name(d)); };
  switch (t->kind()) {
    case TypeKind::Scalar:
      return "pl.Scalar[" + dt(t->as<ScalarType>()->dtype) + "]";
    case TypeKind::Tensor: {
      const auto* x = t->as<TensorType>();
      return "pl.Tensor[" + shape_to_string(x->shape) + ", " + dt(x->dtype) + "]";
    }
    case TypeKind::Tile: {
      const auto* x = t->as<TileType>();
      std::string s = "pl.Tile[" + shape_to_string(x->shape) + ", " + dt(x->dtype);
      if (x->space) s += ", pl.MemorySpace." + std::string(memory_space_name(*x->space));
      if (x->memref) {
        const MemRef& m = *x->memref;
        s += ", pl.MemRef(" + std::to_string(m.buffer_id) + ", " + std::to_string(m.size) + ", " +
             std::to_string(m.addr) + ")";
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
