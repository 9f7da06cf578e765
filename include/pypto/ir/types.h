#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/node_memory.h"

namespace pypto::ir {

// Element types. The numeric values are part of the device ABI (device/pto_abi.h: PtoDType).
enum class DataType : uint8_t { FP32 = 0, FP16 = 1, BF16 = 2, INT32 = 3, INT64 = 4, BOOL = 5 };

std::string_view dtype_name(DataType t);  // "FP32"
// "FP32" -> FP32. "INDEX" (PyPTO's index type: loop indices, offsets, valid lengths) names the
// 64-bit signed integer, INT64: there is no separate index width on this device.
std::optional<DataType> dtype_from_name(std::string_view);
int64_t dtype_bytes(DataType t);
bool is_float(DataType t);

// Memory spaces of a core. The numeric values are part of the device ABI (PtoMemorySpace).
enum class MemorySpace : uint8_t { DDR = 0, Vec = 1, Mat = 2, Left = 3, Right = 4, Acc = 5 };

std::string_view memory_space_name(MemorySpace s);  // "Vec"
std::optional<MemorySpace> memory_space_from_name(std::string_view);
// Capacity in bytes of an on-chip space (Vec 192 KiB, Mat 512 KiB, Left/Right 64 KiB,
// Acc 128 KiB); DDR is unbounded and returns 0.
int64_t memory_space_capacity(MemorySpace s);
// The hardware generation a program is compiled for. Targets differ in the data movement they
// can do: A5 (PyPTO's "a5") also moves tiles between Mat and Vec, which A2A3 ("a2a3", the
// default, which every PyPTO example runs on) cannot.
enum class Target : uint8_t { A2A3 = 0, A5 = 1 };

std::string_view target_name(Target t);  // "a2a3"
// A RunConfig / CompileOptions platform name: "a2a3", "a2a3sim" and "cpu_sim" (the simulator's
// former name) are A2A3; "a5" and "a5sim" are A5.
std::optional<Target> target_from_platform(std::string_view platform);
// The platform names target_from_platform accepts, for messages: "a2a3, a2a3sim, ...".
std::string platform_names();

// Whether data may move directly from `from` to `to` (load, move or store) on `target`.
bool is_legal_transfer(MemorySpace from, MemorySpace to, Target target);
// On the target that can do the most moves: what a program may say before its target is known
// (the parser); the compile then checks the program's own target (InferTileMemorySpace).
bool is_legal_transfer(MemorySpace from, MemorySpace to);
// "DDR->Vec, DDR->Mat, ..." for messages.
std::string legal_moves_text(Target target);

// What pl.tile.fillpad writes outside a tile's valid region (pl.PadValue): zero, the lowest value
// of the element type (-inf for floats) or the highest (+inf).
enum class PadValue : uint8_t { Zero = 0, Min = 1, Max = 2 };
std::string_view pad_value_name(PadValue p);  // "zero"
std::optional<PadValue> pad_value_from_name(std::string_view);

// PyPTO's function kinds. A bare @pl.function is Opaque until OutlineIncoreScopes decides what it
// is: an orchestration when it outlines scopes or calls other functions, else a kernel. InCore,
// AIC (cube core) and AIV (vector core) are kernels: code that runs on one core. A Group
// co-schedules kernels: its body calls them, and each call is a task of its caller.
enum class FunctionType : uint8_t { Orchestration, InCore, Opaque, AIC, AIV, Group };
std::string_view function_type_name(FunctionType t);  // "InCore"
std::optional<FunctionType> function_type_from_name(std::string_view name);
// Whether the function runs on one core of the device (InCore, AIC, AIV).
bool is_kernel(FunctionType t);

enum class ParamDirection : uint8_t { In, Out, InOut };
std::string_view param_direction_name(ParamDirection d);

// Where a tile lives once memory has been planned: InitMemRef gives every tile its own buffer,
// MemoryReuse lets tiles with disjoint lifetimes share one, AllocateMemoryAddr sets `addr`.
struct MemRef {
  MemorySpace space = MemorySpace::Vec;
  int64_t buffer_id = 0;
  int64_t size = 0;   // bytes
  int64_t addr = -1;  // byte offset in the space; -1 until AllocateMemoryAddr

  bool operator==(const MemRef& o) const {
    return space == o.space && buffer_id == o.buffer_id && size == o.size && addr == o.addr;
  }
  bool operator!=(const MemRef& o) const { return !(*this == o); }
};

enum class TypeKind : uint8_t { Scalar, Tensor, Tile, Tuple };

class Type;
using TypePtr = std::shared_ptr<const Type>;

// Types are immutable values; compare with types_equal (structural).
class Type {
 public:
  explicit Type(TypeKind kind) : kind_(kind) {}
  virtual ~Type() = default;
  TypeKind kind() const { return kind_; }

  template <typename T>
  const T* as() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 private:
  TypeKind kind_;
};

class ScalarType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Scalar;
  explicit ScalarType(DataType dtype) : Type(kKind), dtype(dtype) {}
  DataType dtype;
};

// A tensor in global memory (DDR). Shapes are compile-time constants.
class TensorType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tensor;
  TensorType(std::vector<int64_t> shape, DataType dtype)
      : Type(kKind), shape(std::move(shape)), dtype(dtype) {}
  std::vector<int64_t> shape;
  DataType dtype;
};

// A tile in on-chip memory. `space` is unset until the frontend or InferTileMemorySpace decides
// it; `memref` is unset until InitMemRef.
class TileType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tile;
  TileType(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space = {},
           std::optional<MemRef> memref = {})
      : Type(kKind), shape(std::move(shape)), dtype(dtype), space(space), memref(memref) {}
  std::vector<int64_t> shape;
  DataType dtype;
  std::optional<MemorySpace> space;
  std::optional<MemRef> memref;

  int64_t num_elements() const;
  int64_t size_bytes() const;
};

class TupleType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tuple;
  explicit TupleType(std::vector<TypePtr> elements) : Type(kKind), elements(std::move(elements)) {}
  std::vector<TypePtr> elements;
};

TypePtr scalar_type(DataType dtype);  // shared instances
TypePtr tensor_type(std::vector<int64_t> shape, DataType dtype);
TypePtr tile_type(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space = {},
                  std::optional<MemRef> memref = {});
TypePtr tuple_type(std::vector<TypePtr> elements);

bool types_equal(const TypePtr& a, const TypePtr& b);
// Human-readable, in DSL syntax: "pl.Tile[[64, 64], pl.FP32]".
std::string type_to_string(const TypePtr& t);
std::string shape_to_string(const std::vector<int64_t>& shape);  // "[64, 64]"
// The byte count of a tile or tensor of this shape; no value when it does not fit in int64.
std::optional<int64_t> shape_bytes(const std::vector<int64_t>& shape, DataType dtype);

}  // namespace pypto::ir
