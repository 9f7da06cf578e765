// The kernel emitter: C++ of one InCore function, op by op by emission shape. Private to
// src/codegen. This header declares it; the definitions are split by concern:
//   kernel_codegen.cpp     generate_kernel, the public entry (pypto/codegen/kernel_codegen.h)
//   kernel_emitter.cpp     the core: run(), tile references and declarations, the statements,
//                          and tile_op, which dispatches each op call by its emission shape
//   kernel_tile_ops.cpp    load and store, elementwise, row reduce/expand, matmul, slice and
//                          assemble
//   kernel_layout_ops.cpp  col_expand*, concat, reshape, fillpad, read, and the valid regions of
//                          tiles loaded with valid_shapes
//   kernel_gather_ops.cpp  write, gather, scatter, scatter_update, mscatter and the mask forms
//   kernel_generate_ops.cpp  ci, random, sort32, mrgsort, fillpad_expand
//   kernel_gather_load_ops.cpp  gatherb, mgather, gather_row
//   kernel_batch_matmul.cpp  batch_matmul and batch_matmul_acc, a matmul per matrix of the batch
//   kernel_matmul_mx.cpp   matmul_mx, matmul_mx_acc and matmul_mx_bias
//   kernel_pipe_ops.cpp    the cross-core pipes of a Group's AIC and AIV kernels
// Loops, ifs and yields are StructuredEmitter's (structured_emitter.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "operand_views.h"
#include "pypto/codegen/cpp_emit.h"
#include "pypto/ir/op_registry.h"
#include "pypto/support/element_ops.h"
#include "structured_emitter.h"

namespace pypto::codegen::kernel_detail {

using ir::ExprPtr;
using ir::Span;
using ir::TileType;

// Where a tile value lives, and how the kernel refers to it.
struct TileRef {
  std::string ptr;  // C++ expression of the data pointer
  const TileType* type = nullptr;
  ir::MemorySpace space = ir::MemorySpace::Vec;
  int64_t addr = 0;
  int64_t bytes = 0;  // of the value (shape x dtype), not of the buffer

  int64_t rows() const { return type->shape.size() >= 2 ? type->shape[type->shape.size() - 2] : 1; }
  int64_t cols() const { return type->shape.empty() ? 1 : type->shape.back(); }
  int64_t elements() const { return type->num_elements(); }
};

inline bool overlaps(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes;
}
inline bool same_start(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.addr == b.addr;
}
// True when `dst` overlaps `x` other than exactly in place.
inline bool partial_overlap(const TileRef& dst, const TileRef& x) {
  return overlaps(dst, x) && !same_start(dst, x);
}

class KernelEmitter : public StructuredEmitter {
 public:
  KernelEmitter(const ir::Function& func, int32_t line_offset)
      : func_(func), line_offset_(line_offset), views_(operand_views(func)) {
    names_.set_in_kernel(true);
  }

  // The generated function: `static void kernel_<name>(const PtoArg* args, PtoCoreMemory* mem)`.
  std::string run();

 private:
  // One call being emitted: the op's entry, the call, its result tile.
  struct OpSite {
    const ir::OpDef& def;
    const ir::Call& call;
    const TileRef& dst;
    Span span;

    const std::string& op() const { return call.callee; }
    const ExprPtr& arg(size_t i) const { return call.args[i]; }
    std::string opcode() const { return def.isa_opcode_name; }
    std::string dtype() const { return dtype_enum(dst.type->dtype); }
    std::string n() const { return std::to_string(dst.elements()); }
  };

  // ----- tile references (kernel_emitter.cpp) -------------------------------------------------

  std::string where(Span span, std::string_view op) const override;
  size_t block_scratch_params() const;
  std::string fail_target() const override { return "mem->fail, mem->ctx"; }
  std::string fail_statement(const std::string& message_expr) const override {
    return "mem->fail(mem->ctx, " + message_expr + ");";
  }
  std::string leave_after_failure() const override { return "return;"; }
  std::string stop_flag() const override { return "mem->stop"; }

  TileRef tile_ref(const ir::Var& var, Span span);
  TileRef tile_arg(const ExprPtr& e, std::string_view op, size_t index);
  std::string tensor_arg(const ExprPtr& e, std::string_view op);
  // Declares the data pointer of a tile variable defined here.
  TileRef declare_tile(const ir::Var& var, Span span);
  // Runs `emit(dst)` so that the result lands in `dst`: through a scratch buffer when `dst`
  // overlaps an operand in a way the primitive cannot handle in place.
  void with_destination(const TileRef& dst, bool needs_scratch,
                        const std::function<void(const std::string&)>& emit);
  // Copies tile `src` into `dst` unless they are the same buffer.
  void copy_tile(const TileRef& dst, const TileRef& src);

  // ----- statements (kernel_emitter.cpp) ------------------------------------------------------

  void simple_stmt(const ir::StmtPtr& s) override;
  void assign(const ir::AssignStmt& s);
  void eval(const ir::EvalStmt& s);
  void ret(const ir::ReturnStmt& s);
  bool is_own_kind(const ir::TypePtr& type) const override {
    return type->as<TileType>() != nullptr;
  }
  void assign_own_values(const std::vector<ir::VarPtr>& targets, const std::vector<ExprPtr>& values,
                         Span span) override;
  bool declare_own_carried(const ir::Var& var, const ExprPtr& init, Span span) override;
  bool bind_own_result(const ir::Var& result, const ir::Var& from, Span span) override;

  // A tile op, emitted by the emission shape of its registry entry; `dst` is the result tile
  // (null for store).
  void tile_op(const ir::Call& call, const TileRef* dst, Span span);

  // ----- tile ops (kernel_tile_ops.cpp) -------------------------------------------------------

  // The view a pl.store writes and its box: the view's C++ name and rank, the box's offsets and
  // its shape (the tile's, after a 1 for each leading dimension the tile lacks). Nothing when the
  // offsets do not give one entry per tensor dimension.
  struct StoreBox {
    std::string tensor;
    size_t rank = 0;
    std::vector<std::string> offsets, shape;
  };
  std::optional<StoreBox> store_box(const ir::Call& store, const TileType& tile);
  void emit_store(const ir::Call& call, Span span);
  void emit_load(const OpSite& o);
  void emit_binary(const OpSite& o);
  void emit_unary(const OpSite& o);
  void emit_cast(const OpSite& o);
  void emit_row_reduce(const OpSite& o);
  void emit_row_expand(const OpSite& o);
  void emit_packed_row_expand(const OpSite& o, const TileRef& x, const TileRef& v, bool scratch);
  void emit_matmul(const OpSite& o, bool acc);
  // kernel_batch_matmul.cpp
  void emit_batch_matmul(const OpSite& o, bool acc);
  void emit_load_planes(const OpSite& o, const std::string& tensor,
                        const std::vector<std::string>& offsets);
  void emit_move_planes(const OpSite& o);
  std::tuple<std::string, std::string, std::string> open_plane_loop(int64_t planes);
  // Operand `arg` of a batched product: the C++ expressions of matrix `index`'s first element
  // and row stride.
  std::pair<std::string, std::string> batch_operand(const ir::ExprPtr& arg, const TileRef& t,
                                                    const std::string& index);
  std::string batch_operand_index(const std::vector<int64_t>& out_batch,
                                  const std::vector<int64_t>& operand_batch, const std::string& b);
  // A load or move of operand_views: the tile as an address and a row stride, read in
  // place from its tensor when the runtime can.
  void emit_load_view(const OpSite& o, const std::string& tensor, const std::string& offsets,
                      const std::string& shape, size_t rank);
  void emit_move_view(const OpSite& o);
  // Whether `e` is a tile of emit_load_view or emit_move_view, and an operand as the C++ of a
  // data pointer and a row stride (elements): the view's, else the tile's buffer and its cols.
  bool is_view(const ExprPtr& e) const;
  std::string strided_operand(const ExprPtr& e, const TileRef& t) const;
  bool emit_into_store(const OpSite& o, const std::string& name, const std::string& operands);
  // A loop over the tiles of a band (tile_band.h): one binary_band call before it.
  std::string loop_shortcut(const ir::ForStmt& s) override;
  void emit_slice(const OpSite& o);
  // Multi-rank ops (kernel_comm_ops.cpp): a scalar (comm_ctx, comm_rank, comm_nranks), a tensor
  // view (comm_peer_view, comm_barrier) or a statement (comm_notify, comm_wait).
  void emit_comm_scalar(const ir::Var& var, const ir::Call& call, Span span);
  void emit_comm_tensor(const ir::Var& var, const ir::Call& call, Span span);
  void emit_comm_collective(const ir::Var& var, const ir::Call& call, Span span);
  void emit_comm_statement(const ir::Call& call, Span span);
  // The pl.system ops (kernel_system_ops.cpp).
  void emit_system_statement(const ir::Call& call, Span span);
  // The cross-core pipe ops (kernel_pipe_ops.cpp).
  static bool is_pipe_call(const ir::Call& call);
  void note_pipe_use(Span span);
  void emit_pipe_scalar(const ir::Var& var, const ir::Call& call, Span span);
  void emit_pipe_statement(const ir::Call& call, Span span);
  void emit_pipe_pop(const ir::Var& var, const ir::Call& call, Span span);
  void expect_pipe_side(ir::FunctionType side, const std::string& op, Span span);
  int64_t declared_slots(const ir::Call& init, size_t buffer_arg) const;
  bool check_popped_whole(const ir::Var& var, Span span);
  void emit_set_validshape(const ir::Var& var, const ir::Call& call, Span span);
  std::string comm_where(Span span, std::string_view op) const;
  void emit_assemble(const OpSite& o);
  // Integer division by zero is a fault (pypto/support/element_ops.h): before an instruction that
  // divides by the n elements of `divisor`, check them.
  void check_divisor(const OpSite& o, support::OpFamily family, const std::string& divisor,
                     int64_t n);
  // The same for the divisor tile `t` given as `operand`: of a partly valid tile only the valid
  // region is checked, since only it is computed on (the rest holds whatever the buffer held).
  void check_divisor(const OpSite& o, support::OpFamily family, const ExprPtr& operand,
                     const TileRef& t);
  // Checks at run time that a rows x cols box at (r0, c0) fits a tile of tile_rows x tile_cols.
  void emit_tile_box_check(const std::string& r0, const std::string& c0, int64_t rows, int64_t cols,
                           int64_t tile_rows, int64_t tile_cols, Span span, std::string_view op);

  // ----- valid regions and layout ops (kernel_layout_ops.cpp) --------------------------------
  // A tile loaded with valid_shapes is valid in [0, rows) x [0, cols) given by two int64
  // variables of the kernel; elementwise results keep their first operand's region (as in the
  // interpreter), pl.store writes only that region, pl.tile.fillpad ends it.

  void inherit_valid(const ir::Var& var, const ir::Call& call);
  void expect_fully_valid(const ir::Var& var, Span span);
  void emit_partial_load(const OpSite& o, const std::string& tensor,
                         const std::vector<std::string>& offsets);
  void emit_col_expand(const OpSite& o);
  void emit_concat(const OpSite& o);
  void emit_reshape(const OpSite& o);
  void emit_fillpad(const OpSite& o);
  // pl.cmp's predicate mask and pl.sel / pl.sels (kernel_tile_ops.cpp).
  void emit_compare(const OpSite& o);
  void emit_select(const OpSite& o);
  // A scalar operand of compare and select: "f, i, integer_scalar" arguments of the instruction.
  std::string scalar_operand(const OpSite& o, const ExprPtr& scalar, ir::DataType tile_dtype);
  void emit_read(const ir::Var& var, const ir::ScalarType& st, const ir::Call& call, Span span);

  // ----- reductions along columns, index reductions, broadcasts, transposes
  // (kernel_reduce_ops.cpp)

  void emit_col_reduce(const OpSite& o);
  void emit_pairwise_col_sum(const OpSite& o, const TileRef& x);
  void pad_reduction_operand(const OpSite& o, const TileRef& x);
  void emit_arg_reduce(const OpSite& o, bool per_column);
  void emit_row_broadcast(const OpSite& o);
  void emit_expand_expdif(const OpSite& o);
  void emit_transpose(const OpSite& o);

  // ----- gather and scatter (kernel_gather_ops.cpp)

  std::string write_value(const ExprPtr& value);
  void emit_write(const OpSite& o);
  void emit_tensor_write(const ir::Var& var, const ir::Call& call, Span span);
  void emit_gather(const OpSite& o);
  void emit_gather_mask(const OpSite& o);
  void emit_scatter(const OpSite& o);
  void emit_scatter_mask(const OpSite& o);
  void emit_scatter_update(const OpSite& o);
  void emit_mscatter(const ir::Call& call, Span span);
  // ----- generators, sorts and padding copies (kernel_generate_ops.cpp)

  void emit_ci(const OpSite& o);
  void emit_random(const OpSite& o);
  void emit_sort32(const OpSite& o);
  void emit_mrgsort(const OpSite& o);
  void emit_mrgsort_lists(const OpSite& o);
  void emit_fillpad_expand(const OpSite& o);
  // ----- loads by index and by window into a tile (kernel_gather_load_ops.cpp)

  // The C++ of the valid row and column counts of tile operand `e` (its whole shape when it is
  // valid whole), and whether it is valid only in part.
  std::pair<std::string, std::string> valid_counts(const ExprPtr& e, const TileRef& t,
                                                   bool* partial) const;
  void emit_gatherb(const OpSite& o);
  void emit_mgather(const OpSite& o);
  void emit_gather_row(const OpSite& o);
  // ----- triangular masks (kernel_generate_ops.cpp), partial elementwise ops
  // (kernel_layout_ops.cpp) and MX block-scaled matmul (kernel_matmul_mx.cpp)

  void emit_tri(const OpSite& o);
  void emit_part_binary(const OpSite& o);
  void emit_matmul_mx(const OpSite& o, bool acc);

  const ir::Function& func_;
  int32_t line_offset_;
  std::unordered_map<const ir::Var*, std::string> tile_ptrs_;
  // Tiles valid only in part: the C++ names of their valid row and column counts.
  std::unordered_map<const ir::Var*, std::pair<std::string, std::string>> valid_;
  const ir::Var* result_var_ = nullptr;  // the tile the op being emitted defines
  const OperandViews views_;
  // The tiles of views_: the C++ names of their data pointer and row stride (elements).
  std::unordered_map<const ir::Var*, std::pair<std::string, std::string>> view_ptrs_;
  // Batches of matrices read in place plane by plane (emit_load_planes): the names of the
  // arrays of each plane's data pointer and row stride.
  std::unordered_map<const ir::Var*, std::pair<std::string, std::string>> plane_ptrs_;
  // The results of views_.stored computed into their store's box (emit_into_store).
  std::unordered_set<const ir::Var*> stored_;
  // Cross-core pipes: the buffers the kernel reserved or imported, the slot size of each pipe
  // id it initialized, the valid-row names of popped tiles.
  std::unordered_map<const ir::Var*, const ir::Call*> pipe_buffers_;
  std::unordered_map<int64_t, int64_t> pipe_slot_sizes_;
  std::unordered_set<std::string> popped_valid_;
};

}  // namespace pypto::codegen::kernel_detail
