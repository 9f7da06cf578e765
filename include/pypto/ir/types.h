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
// FP8E4M3FN and FP8E5M2 are the OCP 8-bit floats, FP8E8M0 the MX scale: a power of two
// (pypto/support/float8.h). FP4 is MXFP4's E2M1 (pypto/support/float4.h); FP4, INT4 and UINT4
// are stored one per byte, in its low four bits (PyPTO packs two to a byte: see run()).
enum class DataType : uint8_t {
  FP32 = 0,
  FP16 = 1,
  BF16 = 2,
  INT32 = 3,
  INT64 = 4,
  BOOL = 5,
  INT8 = 6,
  INT16 = 7,
  UINT8 = 8,
  UINT16 = 9,
  UINT32 = 10,
  UINT64 = 11,
  FP8E4M3FN = 12,
  FP8E5M2 = 13,
  FP8E8M0 = 14,
  FP4 = 15,
  INT4 = 16,
  UINT4 = 17,
};
inline constexpr int kNumDataTypes = 18;

std::string_view dtype_name(DataType t);  // "FP32"
// "FP32" -> FP32. "INDEX" (PyPTO's index type: loop indices, offsets, valid lengths) names the
// 64-bit signed integer, INT64: there is no separate index width on this device.
std::optional<DataType> dtype_from_name(std::string_view);
// For a dtype name of PyPTO that has no element type here (the 4-bit types, HF8, TASK_ID): why not,
// for a located "pl.INT4 is not supported yet: <reason>". Null otherwise.
const char* unsupported_dtype_reason(std::string_view name);
int64_t dtype_bytes(DataType t);
bool is_float(DataType t);  // FP32, FP16, BF16, FP8E4M3FN, FP8E5M2, FP8E8M0, FP4
// The integer element types, BOOL excluded (INT8 ... INT64, UINT8 ... UINT64).
bool is_integer(DataType t);
bool is_unsigned(DataType t);  // UINT8 ... UINT64

// Memory spaces of a core. The numeric values are part of the device ABI (PtoMemorySpace).
// Bias holds a matmul's bias row, LeftScale / RightScale the MX scales of its operands (a5).
enum class MemorySpace : uint8_t {
  DDR = 0,
  Vec = 1,
  Mat = 2,
  Left = 3,
  Right = 4,
  Acc = 5,
  Bias = 6,
  LeftScale = 7,
  RightScale = 8
};

std::string_view memory_space_name(MemorySpace s);  // "Vec"
std::optional<MemorySpace> memory_space_from_name(std::string_view);
// Capacity in bytes of an on-chip space (Vec 192 KiB, Mat 512 KiB, Left/Right 64 KiB,
// Acc 128 KiB); DDR is unbounded and returns 0.
int64_t memory_space_capacity(MemorySpace s);
// The hardware generation a program is compiled for. Targets differ in the data movement they
// can do: A5 (PyPTO's "a5") also moves tiles between Mat and Vec, which A2A3 ("a2a3", the
// default, which every PyPTO example runs on) cannot. Both move Acc to Vec (a2a3 from the cube
// core to the vector core through GM).
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

// PyPTO's layouts, views and compaction modes. On the NPU they describe how data is arranged in
// memory (fractal blocks, column-major boxes); this device keeps every tensor and tile row-major
// and dense, so a layout is carried in the type (and printed back) without changing a result.
// Tensor layouts: ND (row-major), DN (column-major), NZ (fractal), and the MX scale layouts.
enum class TensorLayout : uint8_t { ND = 0, DN = 1, NZ = 2, MX_A_ZZ = 3, MX_B_NN = 4 };
std::string_view tensor_layout_name(TensorLayout l);  // "NZ"
std::optional<TensorLayout> tensor_layout_from_name(std::string_view);
// Tile block/sub-block layouts (pl.TileLayout).
enum class TileLayout : uint8_t { none_box = 0, row_major = 1, col_major = 2 };
std::string_view tile_layout_name(TileLayout l);  // "row_major"
std::optional<TileLayout> tile_layout_from_name(std::string_view);
// Whether a partly valid boxed tile is packed to its valid region (pl.CompactMode).
enum class CompactMode : uint8_t { null = 0, normal = 1 };
std::string_view compact_mode_name(CompactMode c);  // "normal"
std::optional<CompactMode> compact_mode_from_name(std::string_view);

// PyPTO's function kinds. A bare @pl.function is Opaque until OutlineIncoreScopes decides what it
// is: an orchestration when it outlines scopes or calls other functions, else a kernel. InCore,
// AIC (cube core) and AIV (vector core) are kernels: code that runs on one core. A Group
// co-schedules kernels: its body calls them, and each call is a task of its caller.
enum class FunctionType : uint8_t { Orchestration, InCore, Opaque, AIC, AIV, Group };
std::string_view function_type_name(FunctionType t);  // "InCore"
std::optional<FunctionType> function_type_from_name(std::string_view name);
// Whether the function runs on one core of the device (InCore, AIC, AIV).
bool is_kernel(FunctionType t);
// Whether the function's calls of kernels are task submissions: an Orchestration, or a Group
// (kernels an NPU schedules together on a core cluster; on the CPU device they are tasks of the
// caller's graph, ordered by what they access like any other).
bool submits_tasks(FunctionType t);

enum class ParamDirection : uint8_t { In, Out, InOut };
std::string_view param_direction_name(ParamDirection d);

// How a call passes each argument to the task it submits: the values of a call's
// `arg_directions` attribute (DeriveCallDirections derives them; a program may write them,
// PyPTO's `attrs={"arg_directions": [pl.adir.<marker>, ...]}`). Out is written into the tensor
// the caller passes (PyPTO's OutputExisting); Output is a tensor the task fills from scratch
// (PyPTO lets the runtime allocate it; here the caller's tensor is that allocation); NoDep is a
// tensor passed without ordering the task after, or before, anything else that touches it.
enum class ArgDirection : int64_t { In = 0, Out = 1, InOut = 2, Scalar = 3, NoDep = 4, Output = 5 };
// PyPTO's `pl.adir` marker name: "input", "output_existing", "inout", "scalar", "no_dep",
// "output".
std::string_view arg_direction_marker(ArgDirection d);
std::optional<ArgDirection> arg_direction_from_marker(std::string_view marker);
// Whether the task may write the argument.
bool arg_direction_writes(ArgDirection d);

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

// pl.TensorView(valid_shape=, stride=, layout=, pad=) of a tensor annotation. A view that says
// nothing beyond the defaults (the whole shape, packed row-major strides, ND, no pad) is not kept:
// see canonical_tensor_view.
struct TensorView {
  std::vector<int64_t> valid_shape;  // empty: the whole shape
  std::vector<int64_t> stride;       // empty: packed for the layout
  TensorLayout layout = TensorLayout::ND;
  std::optional<PadValue> pad;  // unset: PyPTO's PadValue.null

  bool operator==(const TensorView& o) const {
    return valid_shape == o.valid_shape && stride == o.stride && layout == o.layout && pad == o.pad;
  }
  bool operator!=(const TensorView& o) const { return !(*this == o); }
};

// pl.TileView(valid_shape=, stride=, start_offset=, blayout=, slayout=, fractal=, pad=, compact=)
// of a tile annotation. The layouts and fractal are stored resolved (a field the annotation
// leaves out takes the implicit default of the tile's shape and memory space, as in PyPTO), so a
// view keeps its meaning when InferTileMemorySpace later gives the tile another space.
struct TileView {
  std::vector<int64_t> valid_shape;  // empty: the whole shape
  std::vector<int64_t> stride;       // empty: packed row-major
  int64_t start_offset = 0;
  TileLayout blayout = TileLayout::row_major;
  TileLayout slayout = TileLayout::none_box;
  int64_t fractal = 512;
  std::optional<PadValue> pad;  // unset: PyPTO's PadValue.null
  CompactMode compact = CompactMode::null;

  bool operator==(const TileView& o) const {
    return valid_shape == o.valid_shape && stride == o.stride && start_offset == o.start_offset &&
           blayout == o.blayout && slayout == o.slayout && fractal == o.fractal && pad == o.pad &&
           compact == o.compact;
  }
  bool operator!=(const TileView& o) const { return !(*this == o); }
};

// The view PyPTO gives a tile whose annotation has no pl.TileView: block layout column-major for
// a [N, 1] column (N > 1) and for Mat/Left/Acc, sub-block layout row-major in Mat/Left/Acc and
// column-major in Right, fractal 1024 in Acc (512 elsewhere).
TileView implicit_tile_view(const std::vector<int64_t>& shape, std::optional<MemorySpace> space);

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

// A tensor in global memory (DDR); its shape, a compile-time constant, is the logical one. `view`
// and `memref` are what the annotation said; a DN or strided view says where elements lie, which
// the entry's staging honours (tensor_strides.h; DESIGN.md, "Type syntax").
class TensorType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tensor;
  TensorType(std::vector<int64_t> shape, DataType dtype, std::optional<TensorView> view = {},
             std::optional<MemRef> memref = {})
      : Type(kKind), shape(std::move(shape)), dtype(dtype), view(std::move(view)), memref(memref) {}
  std::vector<int64_t> shape;
  DataType dtype;
  std::optional<TensorView> view;
  std::optional<MemRef> memref;
};

// A tile in on-chip memory. `space` is unset until the frontend or InferTileMemorySpace decides
// it; `memref` is unset until InitMemRef. `view` is an annotation's pl.TileView, unset when it
// says no more than implicit_tile_view; the passes that retype tiles do not keep it.
class TileType : public Type {
 public:
  static constexpr TypeKind kKind = TypeKind::Tile;
  TileType(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space = {},
           std::optional<MemRef> memref = {}, std::optional<TileView> view = {})
      : Type(kKind),
        shape(std::move(shape)),
        dtype(dtype),
        space(space),
        memref(memref),
        view(std::move(view)) {}
  std::vector<int64_t> shape;
  DataType dtype;
  std::optional<MemorySpace> space;
  std::optional<MemRef> memref;
  std::optional<TileView> view;

  // The view in force: `view`, or the implicit one of the shape and space.
  TileView effective_view() const { return view ? *view : implicit_tile_view(shape, space); }

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
TypePtr tensor_type(std::vector<int64_t> shape, DataType dtype, std::optional<TensorView> view = {},
                    std::optional<MemRef> memref = {});
TypePtr tile_type(std::vector<int64_t> shape, DataType dtype, std::optional<MemorySpace> space = {},
                  std::optional<MemRef> memref = {}, std::optional<TileView> view = {});

// The view to keep for a tensor annotation: none when it says nothing beyond the defaults (a
// valid_shape equal to the shape and packed ND strides are dropped first).
std::optional<TensorView> canonical_tensor_view(const std::vector<int64_t>& shape, TensorView view);
// The same for a tile: none when the view equals implicit_tile_view(shape, space).
std::optional<TileView> canonical_tile_view(const std::vector<int64_t>& shape,
                                            std::optional<MemorySpace> space, TileView view);
// Packed row-major strides of a shape, in elements ([32, 64] -> [64, 1]).
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);
// "pl.TileView(valid_shape=[48, 64], blayout=pl.TileLayout.col_major)": the fields that differ
// from implicit_tile_view(shape, space); empty when none does.
std::string tile_view_to_string(const TileView& view, const std::vector<int64_t>& shape,
                                std::optional<MemorySpace> space);
std::string tensor_view_to_string(const TensorView& view);
// PyPTO's numeric form, "pl.MemRef(addr, size_bytes, buffer_id)".
std::string memref_to_string(const MemRef& m);
TypePtr tuple_type(std::vector<TypePtr> elements);

bool types_equal(const TypePtr& a, const TypePtr& b);
// Human-readable, in DSL syntax: "pl.Tile[[64, 64], pl.FP32]".
std::string type_to_string(const TypePtr& t);
std::string shape_to_string(const std::vector<int64_t>& shape);  // "[64, 64]", "[16, ?]"

// The extent of a tensor dimension known only when the orchestration runs: a tensor created or
// sliced with a shape computed from values read at run time (pl.tensor.read of a config
// tensor). Only orchestration functions hold such tensors; the device checks them where they
// are used (a kernel's loads are bounds-checked against the tensor it is given).
inline constexpr int64_t kDynamicExtent = -1;
bool has_dynamic_extent(const std::vector<int64_t>& shape);
// The byte count of a tile or tensor of this shape; no value when it does not fit in int64.
std::optional<int64_t> shape_bytes(const std::vector<int64_t>& shape, DataType dtype);

}  // namespace pypto::ir
