// Pieces shared by kernel and orchestration codegen: C++ names for IR variables, type spellings
// and scalar expressions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// Gives every IR variable of one function a distinct, valid C++ identifier, keeping the DSL
// name when possible (`acc`, then `acc_1` for a second variable named acc).
class VarNames {
 public:
  VarNames();
  const std::string& name(const ir::Var* var);
  // A new identifier that no variable uses, based on `base`.
  std::string fresh(std::string_view base);
  // Whether the names are a kernel's, whose launch context (`mem`) is in scope: the launch
  // queries (pl.tile.get_block_idx and the like) read it, and nothing else may.
  void set_in_kernel(bool in_kernel) { in_kernel_ = in_kernel; }
  bool in_kernel() const { return in_kernel_; }

 private:
  bool in_kernel_ = false;
  std::unordered_map<const ir::Var*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int64_t> next_suffix_;  // last suffix given, per base name
};

// The parameter (an index into f.params) each value of `ret` is returned in, or kNoParam. A
// scalar is returned in the Out parameter at its position (passes/kernel_scalar_returns.h). The
// calls of `f` read their results from the same parameters (orchestration codegen), so callee and
// caller agree. A value written into an Out/InOut parameter (a pl.store or pl.assemble into it, or
// a call of a function of `program` that returns it in that argument, through any chain of them) is
// returned in that parameter; the other values take the remaining Out/InOut parameters in order. So
// `return b` of a kernel with Out parameters (ext, b) leaves what it wrote into ext there.
constexpr size_t kNoParam = static_cast<size_t>(-1);
// The return statement that ends `f`'s body, or null.
const ir::ReturnStmt* final_return(const ir::Function& f);
std::vector<size_t> return_params(const ir::Program* program, const ir::Function& f,
                                  const ir::ReturnStmt& ret);

std::string cpp_scalar_type(ir::DataType t);  // int64_t, float, bool, ...
// The C++ type an element is stored as in memory: int8_t, float, uint16_t (FP16, BF16), uint8_t
// (BOOL, FP8). Elements whose storage is not their scalar type are read only as FP32 (pl.read).
std::string cpp_storage_type(ir::DataType t);
std::string dtype_enum(ir::DataType t);            // PTO_FP32, ...
std::string memory_space_enum(ir::MemorySpace s);  // PTO_VEC, ...
std::string int_literal(int64_t v);
std::string float_literal(double v);  // a double literal that reads back exactly
// `{a, b, c}`
std::string brace_list(const std::vector<std::string>& items);
// A C++ string literal (quotes and escapes added).
std::string string_literal(std::string_view text);
// The C++ symbol of a program function: `<prefix>_<name>` for an ASCII identifier, else
// `<prefix>x_<hex of the name's bytes>` (DSL names may hold any non-ASCII bytes; the `x`
// keeps the two forms from ever colliding).
std::string function_symbol(std::string_view prefix, std::string_view name);

// The scalar type of an expression, or nullopt when it is not a scalar.
std::optional<ir::DataType> scalar_dtype(const ir::ExprPtr& e);

// A scalar IR expression (immediates, scalar variables, Binary, Unary) as a C++ expression of
// the expression's own type. Throws ir::CompileError for anything else.
std::string emit_scalar_expr(const ir::ExprPtr& e, VarNames& names);

// The number of dimensions of a tensor-typed expression; 0 for anything else.
size_t tensor_rank(const ir::ExprPtr& e);

// The elements of a MakeTuple (offsets, shapes) as C++ scalar expressions.
std::vector<std::string> emit_int_list(const ir::ExprPtr& e, VarNames& names,
                                       std::string_view what);

// Error for IR that codegen cannot handle, pointing at `span`.
[[noreturn]] void codegen_error(ir::Span span, const std::string& message);

}  // namespace pypto::codegen
