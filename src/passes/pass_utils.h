// Small helpers shared by several passes (internal to src/passes).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/program.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/ir/visitor.h"
#include "pypto/support/checked_int.h"

namespace pypto::passes::detail {

const ir::TileType* as_tile(const ir::TypePtr& t);
const ir::TileType* as_tile(const ir::ExprPtr& e);
bool is_tensor(const ir::TypePtr& t);
bool is_scalar(const ir::TypePtr& t);

// The op call an expression is, or null (function calls and non-calls give null).
const ir::Call* as_op_call(const ir::ExprPtr& e, std::string_view name = {});
// Category of a registered op; nullopt for unknown ops.
std::optional<ir::OpCategory> op_category(const ir::Call& call);
// Pure: no side effect, may be removed when unused (everything but stores and function calls).
bool is_pure(const ir::ExprPtr& e);
// A True/False attribute of a call (False when absent).
bool attr_flag(const ir::Attrs& attrs, const char* key);

// A tile type with its space and MemRef replaced.
ir::TypePtr with_space(const ir::TypePtr& tile, ir::MemorySpace space);
ir::TypePtr with_memref(const ir::TypePtr& tile, std::optional<ir::MemRef> memref);

// Tile types made by one pass, shared: equal types (shape, dtype, space, MemRef) come back as
// one object. A memory pass gives every tile a new type, and most of them are equal (after
// MemoryReuse a kernel has a handful of buffers), so sharing saves an allocation per tile and
// keeps the IR small enough to stay in cache longer. Types are values compared with
// types_equal, so sharing them changes nothing else.
class TileTypeCache {
 public:
  // Like detail::with_space / with_memref.
  ir::TypePtr with_space(const ir::TypePtr& tile, ir::MemorySpace space);
  ir::TypePtr with_memref(const ir::TypePtr& tile, std::optional<ir::MemRef> memref);

 private:
  struct Key {
    std::vector<int64_t> shape;
    ir::DataType dtype = ir::DataType::FP32;
    std::optional<ir::MemorySpace> space;
    std::optional<ir::MemRef> memref;
    bool operator==(const Key& o) const {
      return shape == o.shape && dtype == o.dtype && space == o.space && memref == o.memref;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  ir::TypePtr get(const ir::TileType& like, std::optional<ir::MemorySpace> space,
                  std::optional<ir::MemRef> memref);

  std::unordered_map<Key, ir::TypePtr, KeyHash> types_;
  Key probe_;  // reused for look-ups, so a hit copies the shape without allocating
};

// A call node like `call` with different arguments, attributes or type.
ir::ExprPtr rebuild_call(const ir::Call& call, std::vector<ir::ExprPtr> args, ir::AttrList attrs,
                         ir::TypePtr type);

// An op call built without the registry's type inference (the caller knows the type).
ir::ExprPtr make_typed_op_call(std::string op, std::vector<ir::ExprPtr> args, ir::Attrs attrs,
                               ir::TypePtr type, ir::Span span = {});

// Every Var occurrence (definitions and uses) counted.
void count_var_occurrences(const ir::StmtPtr& s, ir::NodeMap<const ir::Var*, int64_t>* out);
// Vars used (not defined) anywhere in an expression.
void collect_used_vars(const ir::ExprPtr& e, std::vector<const ir::Var*>* out);

// The statements of a body as a list (a SeqStmts is unpacked, anything else is one element).
std::vector<ir::StmtPtr> stmt_list(const ir::StmtPtr& s);

// Replaces the type of every tile variable of `f` for which `new_type` returns a type (keeping
// its name and span), in definitions and uses alike, and gives each call assigned to a retyped
// variable the same type.
ir::FunctionPtr retype_tiles(
    const ir::FunctionPtr& f,
    const std::function<std::optional<ir::TypePtr>(const ir::Var&)>& new_type);

// A guess, without walking the IR, of how many variables `f` defines: its parameters plus the
// statements of its top-level body. Hash maps keyed by variables reserve this much up front:
// growing a map of 10^5 entries step by step costs a rehash per doubling, and each large bucket
// array made glibc consolidate every small block freed so far.
size_t expected_variable_count(const ir::Function& f);

// Applies `fn` to every InCore function; other functions are kept. Returns the same program when
// nothing changed.
ir::ProgramPtr map_incore_functions(
    const ir::ProgramPtr& program,
    const std::function<ir::FunctionPtr(const ir::FunctionPtr&)>& fn);
ir::ProgramPtr map_functions(const ir::ProgramPtr& program,
                             const std::function<ir::FunctionPtr(const ir::FunctionPtr&)>& fn);

// "12:9" or "?" without a position.
std::string span_text(ir::Span span);

// A tuple of integer constants: the shapes and offsets the passes build (`[0, 0]`, `[32, 128]`).
ir::ExprPtr int_tuple(const std::vector<int64_t>& values);

}  // namespace pypto::passes::detail

namespace pypto::passes::detail {

// The value of an integer expression built from integer literals (no value when it is not one),
// computed as the program would compute it; `overflowed` says an operation wrapped around.
ir::ScalarFold evaluate_const_int(const ir::ExprPtr& e);

// Makes the in-place writes through windows of Acc tiles explicit: after a matmul_acc into a
// pl.tile.slice of an Acc tile, the parent is assembled from the result (acc_windows.cpp; run by
// ConvertToSSA, while the frontend's one Var per name still stands).
ir::FunctionPtr write_back_acc_windows(const ir::FunctionPtr& f);

}  // namespace pypto::passes::detail
