#include "pypto/ir/op_dtypes.h"

#include <string>
#include <utility>

namespace pypto::ir {

namespace {

using Forms = std::vector<std::vector<ExprPtr>>;  // argument lists, one per form

ExprPtr var_of(TypePtr type) { return make_var("a", std::move(type)); }

ExprPtr tile(DataType d, std::vector<int64_t> shape = {16, 16},
             std::optional<MemorySpace> space = {}) {
  return var_of(tile_type(std::move(shape), d, space));
}

ExprPtr literal(DataType d) { return var_of(literal_scalar_of(d)); }

// The result type of a call the rule accepts, else null.
TypePtr typed(const OpDef& def, const std::vector<ExprPtr>& args, const Attrs& attrs = {}) {
  try {
    return def.infer(args, attrs, Span{});
  } catch (const CompileError&) {
    return nullptr;
  }
}

// A matrix product's forms for one operand dtype: plain, accumulating onto its own result, with
// a bias row of the accumulator's type.
Forms matmul_forms(const OpDef& def, DataType d) {
  const OpDef* plain = OpRegistry::global().find(def.name == "gemv_acc" ? "gemv" : "matmul");
  const bool row = def.name == "gemv" || def.name == "gemv_acc";
  ExprPtr left = tile(d, {row ? 1 : 16, 16}, MemorySpace::Left);
  ExprPtr right = tile(d, {16, 16}, MemorySpace::Right);
  if (def.emit == EmitShape::BatchMatmul || def.emit == EmitShape::BatchMatmulAcc) {
    ExprPtr lhs = tile(d, {16, 16}, MemorySpace::Mat), rhs = tile(d, {16, 16}, MemorySpace::Mat);
    if (def.emit == EmitShape::BatchMatmul) return {{lhs, rhs}};
    const OpDef* batch = OpRegistry::global().find("batch_matmul");
    TypePtr acc = batch ? typed(*batch, {lhs, rhs}) : nullptr;
    return acc ? Forms{{var_of(acc), lhs, rhs}} : Forms{};
  }
  if (def.emit == EmitShape::Matmul && def.name != "matmul_bias") return {{left, right}};
  TypePtr product = plain ? typed(*plain, {left, right}) : nullptr;
  if (!product) return {};
  if (def.name == "matmul_bias") {
    return {{left, right, tile(product->as<TileType>()->dtype, {1, 16})}};
  }
  return {{var_of(product), left, right}};
}

// The generators take integer arguments and a shape, and make the dtype of their `dtype=`
// attribute.
Forms generate_forms(const OpDef& def) {
  std::vector<ExprPtr> args;
  for (size_t i = 0; i < def.min_args; ++i) {
    args.push_back(def.arg_names[i] == "shape" ? make_tuple({make_int(1), make_int(16)})
                                               : make_int(1));
  }
  return {args};
}

// The argument lists the op's instruction shape takes, with operands of dtype `d`.
Forms forms_of(const OpDef& def, DataType d) {
  switch (def.emit) {
    case EmitShape::Binary:
      return {{tile(d), tile(d)}, {tile(d), literal(d)}, {literal(d), tile(d)}};
    case EmitShape::Unary:
    case EmitShape::RowReduce:
    case EmitShape::ColReduce:
    case EmitShape::RowArgReduce:
    case EmitShape::ColArgReduce:
    case EmitShape::Cast:
      return {{tile(d)}};
    case EmitShape::RowExpand:
    case EmitShape::RowBroadcast:
      return {{tile(d), tile(d, {16, 1})}};
    case EmitShape::ColExpand:
      return {{tile(d), tile(d, {1, 16})}};
    case EmitShape::ExpandExpDif:
      return {
          {tile(d), tile(d, def.category == OpCategory::ColExpand ? std::vector<int64_t>{1, 16}
                                                                  : std::vector<int64_t>{16, 1})}};
    case EmitShape::Compare:
      return {{tile(d), tile(d)}, {tile(d), literal(d)}};
    case EmitShape::Select: {
      const OpDef* cmp = OpRegistry::global().find("cmp");
      TypePtr mask = cmp ? typed(*cmp, {tile(d), tile(d)}) : nullptr;
      if (!mask) return {};
      if (def.name == "sels") return {{var_of(mask), tile(d), tile(d), literal(d)}};
      return {{var_of(mask), tile(d), tile(d)}};
    }
    case EmitShape::Matmul:
    case EmitShape::MatmulAcc:
    case EmitShape::BatchMatmul:
    case EmitShape::BatchMatmulAcc:
      return matmul_forms(def, d);
    case EmitShape::Sort32:
      return {{tile(d, {4, 64}), tile(DataType::UINT32, {4, 64})}};
    case EmitShape::Ci:
    case EmitShape::Random:
      return generate_forms(def);
    default:
      return {};
  }
}

}  // namespace

TypePtr literal_scalar_of(DataType dtype) {
  return scalar_type(is_float(dtype) ? DataType::FP32 : DataType::INT64);
}

const std::vector<DataType>& all_element_dtypes() {
  static const std::vector<DataType> kAll = {
      DataType::FP32,    DataType::FP16,   DataType::BF16,   DataType::FP8E4M3FN, DataType::FP8E5M2,
      DataType::FP8E8M0, DataType::INT8,   DataType::INT16,  DataType::INT32,     DataType::INT64,
      DataType::UINT8,   DataType::UINT16, DataType::UINT32, DataType::UINT64,    DataType::BOOL,
      DataType::FP4,     DataType::INT4,   DataType::UINT4};
  return kAll;
}

bool op_accepts(const OpDef& def, const std::vector<TypePtr>& types, const Attrs& attrs) {
  std::vector<ExprPtr> args;
  args.reserve(types.size());
  for (const TypePtr& t : types) args.push_back(var_of(t));
  return typed(def, args, attrs) != nullptr;
}

std::optional<std::vector<DataType>> op_element_dtypes(const OpDef& def) {
  // The ops forms_of has no forms for move, lay out or select elements whatever their type
  // (transposes too: a permutation of the elements), or have none.
  if (forms_of(def, DataType::FP32).empty()) return std::nullopt;
  std::vector<DataType> accepted;
  for (DataType d : all_element_dtypes()) {
    Attrs attrs;
    if (def.emit == EmitShape::Cast) attrs.emplace_back("target_type", DataType::FP32);
    if (def.emit == EmitShape::Ci || def.emit == EmitShape::Random) attrs.emplace_back("dtype", d);
    for (const std::vector<ExprPtr>& args : forms_of(def, d)) {
      if (typed(def, args, attrs)) {
        accepted.push_back(d);
        break;
      }
    }
  }
  return accepted;
}

}  // namespace pypto::ir
