#include "operand_views.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pypto/ir/atomic_mode.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {
namespace {

// Elementwise operands with shorter rows keep their load: a load of short rows also prefetches
// the next tiles along them (the runtime's loads do, below 2 KiB), which reading in place does
// not, and the 4096² add in 64x64 tiles (256-byte rows) took 8-15% longer on one core read in
// place. Rows of 2 KiB and more are streams the hardware prefetchers follow.
constexpr int64_t kMinElementwiseViewRowBytes = 2048;

// `var = op(...)` with an op of emission shape `shape`: the call, else null.
const ir::Call* assigned_op(const ir::StmtPtr& s, ir::EmitShape shape) {
  const auto* assign = s->as<ir::AssignStmt>();
  if (!assign) return nullptr;
  const auto* call = assign->value->as<ir::Call>();
  return call && ir::emit_shape(*call) == shape ? call : nullptr;
}

std::optional<ir::MemorySpace> tile_space(const ir::Var& var) {
  const auto* tile = var.type()->as<ir::TileType>();
  if (!tile || !tile->memref) return std::nullopt;
  return tile->memref->space;
}

bool tile_by_tile_binary(const ir::Call& call) {
  return ir::emit_shape(call) == ir::EmitShape::Binary && call.args.size() == 2 &&
         call.args[0]->type()->as<ir::TileType>() && call.args[1]->type()->as<ir::TileType>();
}

// A float tile op a scalar (or a scalar op a float tile): the instructions that read its
// operand in place or write into a store compute in double (binary_scalar_f64).
bool float_tile_with_scalar(const ir::Call& call) {
  if (ir::emit_shape(call) != ir::EmitShape::Binary || call.args.size() != 2) return false;
  const auto* a = call.args[0]->type()->as<ir::TileType>();
  const auto* b = call.args[1]->type()->as<ir::TileType>();
  const ir::TileType* tile = a ? a : b;
  return (a == nullptr) != (b == nullptr) && ir::is_float(tile->dtype);
}

bool unary_op(const ir::Call& call) {
  return ir::emit_shape(call) == ir::EmitShape::Unary && call.args.size() == 1;
}

// A reduction along rows or columns, or an index reduction, of its first operand (a col_sum
// with a tmp_tile adds rows pairwise in a copy of the tile: not that one).
bool reduction(const ir::Call& call) {
  switch (ir::emit_shape(call)) {
    case ir::EmitShape::RowReduce:
    case ir::EmitShape::RowArgReduce:
    case ir::EmitShape::ColArgReduce:
      return true;
    case ir::EmitShape::ColReduce:
      return call.args.size() == 1;
    default:
      return false;
  }
}

// A partial op (part_add, ...) of two tiles that are both plain loads: whole tiles, for which
// the kernel emitter computes the plain op (emit_part_binary). `plain_loads` are those loads.
bool whole_partial_op(const ir::Call& call, const std::unordered_set<const ir::Var*>& plain_loads) {
  if (ir::emit_shape(call) != ir::EmitShape::PartBinary || call.args.size() != 2) return false;
  for (const auto& arg : call.args) {
    const auto* var = arg->as<ir::Var>();
    if (!var || !plain_loads.count(var)) return false;
  }
  return true;
}

// How often each variable is read in the function (definitions do not count).
class UseCount : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::Var*, int> uses;

 protected:
  void visit_var(const ir::Var& v) override { ++uses[&v]; }
  void visit_assign(const ir::AssignStmt& s) override { visit(s.value); }
};

// Whether a statement writes a tensor anywhere inside it.
class ContainsStore : public ir::IRVisitor {
 public:
  bool found = false;

 protected:
  void visit_call(const ir::Call& c) override {
    found = found || ir::emit_shape(c) == ir::EmitShape::Store;
    ir::IRVisitor::visit_call(c);
  }
};

bool contains_store(const ir::StmtPtr& s) {
  ContainsStore walk;
  walk.visit(s);
  return walk.found;
}

// How many times `var` is an operand of the matmul (or batched matmul) in `s` other than its
// accumulator.
int operand_uses(const ir::StmtPtr& s, const ir::Var& var) {
  const ir::Call* call = assigned_op(s, ir::EmitShape::Matmul);
  if (!call) call = assigned_op(s, ir::EmitShape::BatchMatmul);
  size_t first = 0;
  if (!call) {
    call = assigned_op(s, ir::EmitShape::MatmulAcc);
    if (!call) call = assigned_op(s, ir::EmitShape::BatchMatmulAcc);
    first = 1;
  }
  if (!call) return 0;
  int n = 0;
  for (size_t i = first; i < call->args.size(); ++i)
    if (call->args[i]->as<ir::Var>() == &var) ++n;
  return n;
}

class Finder : public ir::IRVisitor {
 public:
  Finder(const std::unordered_map<const ir::Var*, int>& uses, OperandViews& out)
      : uses_(uses), out_(out) {}

 protected:
  void visit_seq(const ir::SeqStmts& seq) override {
    for (const auto& stmt : seq.stmts) {
      const ir::Call* load = assigned_op(stmt, ir::EmitShape::Load);
      if (load && !(load->args.size() > 3 && load->args[3]))  // valid_shapes: partly valid
        plain_loads_.insert(stmt->as<ir::AssignStmt>()->var.get());
    }
    for (size_t i = 0; i < seq.stmts.size(); ++i) {
      consider_load(seq.stmts, i);
      if (i + 1 < seq.stmts.size()) consider_stored_result(*seq.stmts[i], *seq.stmts[i + 1]);
    }
    ir::IRVisitor::visit_seq(seq);
  }

 private:
  int uses_of(const ir::Var& v) const {
    auto it = uses_.find(&v);
    return it == uses_.end() ? 0 : it->second;
  }

  // The ops that can read a Vec load in place: tile-by-tile binary ops (and partial ops of
  // whole tiles), a float tile op a scalar, unary ops and pl.cmp (against a tile or a scalar),
  // whose instructions take their operands' row strides.
  bool reads_operands_in_place(const ir::Call& call) const {
    return tile_by_tile_binary(call) || whole_partial_op(call, plain_loads_) ||
           float_tile_with_scalar(call) || unary_op(call) || reduction(call) ||
           ir::emit_shape(call) == ir::EmitShape::Compare;
  }

  void consider_load(const std::vector<ir::StmtPtr>& list, size_t at) {
    const ir::Call* load = assigned_op(list[at], ir::EmitShape::Load);
    if (!load || (load->args.size() > 3 && load->args[3])) return;  // valid_shapes: partly valid
    const ir::Var& loaded = *list[at]->as<ir::AssignStmt>()->var;
    // Left and Right tiles are only ever moved from Mat, and elementwise ops read Vec tiles.
    const auto space = tile_space(loaded);
    if (space == ir::MemorySpace::Mat) consider_matmul_operand(list, at, loaded);
    if (space == ir::MemorySpace::Vec) consider_elementwise_operand(list, at, loaded);
  }

  // An elementwise op whose result only the next statement reads, storing it whole: a
  // tile-by-tile binary op (or a partial op, which the kernel emitter computes into the store
  // when its operands are whole tiles), a float tile op a scalar, or a unary op.
  void consider_stored_result(const ir::Stmt& op_stmt, const ir::Stmt& next) {
    const auto* assign = op_stmt.as<ir::AssignStmt>();
    const auto* call = assign ? assign->value->as<ir::Call>() : nullptr;
    if (!call ||
        !(tile_by_tile_binary(*call) || ir::emit_shape(*call) == ir::EmitShape::PartBinary ||
          float_tile_with_scalar(*call) || unary_op(*call)))
      return;
    const ir::Var& result = *assign->var;
    const auto* tile = result.type()->as<ir::TileType>();
    if (!tile || tile->shape.size() > 2 || tile_space(result) != ir::MemorySpace::Vec) return;
    ir::ExprPtr value;
    if (const auto* a = next.as<ir::AssignStmt>()) value = a->value;
    if (const auto* e = next.as<ir::EvalStmt>()) value = e->expr;
    const auto* store = value ? value->as<ir::Call>() : nullptr;
    if (!store || ir::emit_shape(*store) != ir::EmitShape::Store || store->args.size() != 3 ||
        store->args[0]->as<ir::Var>() != &result || uses_of(result) != 1 ||
        ir::is_atomic_add(store->attrs))  // an adding store reads the box first
      return;
    out_.stored[&result] = store;
  }

  // A Vec load read only by tile-by-tile binary ops (operand_views.h). The scan stops at the
  // first nested block or store, so it stays short however long the list is.
  void consider_elementwise_operand(const std::vector<ir::StmtPtr>& list, size_t at,
                                    const ir::Var& loaded) {
    const auto* tile = loaded.type()->as<ir::TileType>();
    if (!tile || !ir::is_float(tile->dtype) || tile->shape.size() > 2) return;
    const int64_t row_bytes =
        (tile->shape.empty() ? 1 : tile->shape.back()) * ir::dtype_bytes(tile->dtype);
    if (row_bytes < kMinElementwiseViewRowBytes) return;
    const int loaded_uses = uses_of(loaded);
    int found = 0;
    for (size_t j = at + 1; j < list.size() && found < loaded_uses; ++j) {
      const auto* assign = list[j]->as<ir::AssignStmt>();
      const auto* call = assign ? assign->value->as<ir::Call>() : nullptr;
      if (!call || contains_store(list[j])) return;
      int n = 0;
      for (const auto& arg : call->args)
        if (arg->as<ir::Var>() == &loaded) ++n;
      if (n == 0) continue;
      if (!reads_operands_in_place(*call)) return;
      found += n;
    }
    if (found == loaded_uses && found > 0) out_.loads.insert(&loaded);
  }

  void consider_matmul_operand(const std::vector<ir::StmtPtr>& list, size_t at,
                               const ir::Var& loaded) {
    const int loaded_uses = uses_of(loaded);
    std::vector<const ir::Var*> moves;
    size_t last = at;
    int move_uses = 0;
    // Both scans stop once every use is accounted for: nothing after can be another one.
    for (size_t j = at + 1; j < list.size() && move_uses < loaded_uses; ++j) {
      const ir::Call* move = assigned_op(list[j], ir::EmitShape::Move);
      if (!move || move->args.empty() || move->args[0]->as<ir::Var>() != &loaded) continue;
      const ir::Var& moved = *list[j]->as<ir::AssignStmt>()->var;
      const auto space = tile_space(moved);
      if (space != ir::MemorySpace::Left && space != ir::MemorySpace::Right) return;
      const int moved_uses = uses_of(moved);
      int matmul_uses = 0;
      for (size_t u = j + 1; u < list.size() && matmul_uses < moved_uses; ++u) {
        const int n = operand_uses(list[u], moved);
        if (n == 0) continue;
        matmul_uses += n;
        last = std::max(last, u);
      }
      if (matmul_uses != moved_uses) return;  // also read otherwise, or in a nested block
      last = std::max(last, j);
      moves.push_back(&moved);
      ++move_uses;
    }
    if (moves.empty() || move_uses != loaded_uses) return;
    for (size_t j = at + 1; j <= last; ++j)
      if (contains_store(list[j])) return;
    out_.loads.insert(&loaded);
    out_.moves.insert(moves.begin(), moves.end());
  }

  const std::unordered_map<const ir::Var*, int>& uses_;
  std::unordered_set<const ir::Var*> plain_loads_;  // loads without valid_shapes
  OperandViews& out_;
};

}  // namespace

OperandViews operand_views(const ir::Function& func) {
  UseCount count;
  count.visit(func.body);
  OperandViews views;
  Finder finder(count.uses, views);
  finder.visit(func.body);
  return views;
}

}  // namespace pypto::codegen
