#include "tile_band.h"

#include <utility>
#include <vector>

#include "pypto/codegen/cpp_emit.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/support/checked_int.h"

namespace pypto::codegen {
namespace {

// k when `e` is k * var plus terms without var (sums, differences and constant multiples);
// nothing when var appears otherwise.
std::optional<int64_t> coefficient(const ir::ExprPtr& e, const ir::Var& var) {
  if (const auto* v = e->as<ir::Var>()) return v == &var ? 1 : 0;
  if (const auto* b = e->as<ir::Binary>()) {
    const auto ca = coefficient(b->a, var);
    const auto cb = coefficient(b->b, var);
    if (!ca || !cb) return std::nullopt;
    switch (b->op) {
      case ir::BinaryOp::Add:
        return support::checked_add(*ca, *cb);
      case ir::BinaryOp::Sub:
        return support::checked_sub(*ca, *cb);
      case ir::BinaryOp::Mul:
        if (auto k = ir::as_const_int(b->a)) return support::checked_mul(*k, *cb);
        if (auto k = ir::as_const_int(b->b)) return support::checked_mul(*ca, *k);
        break;
      default:
        break;
    }
    if (*ca == 0 && *cb == 0) return 0;
    return std::nullopt;
  }
  return ir::mentions(e, {&var}) ? std::nullopt : std::optional<int64_t>(0);
}

const ir::Call* op_call(const ir::ExprPtr& e, ir::EmitShape shape) {
  const auto* call = e ? e->as<ir::Call>() : nullptr;
  return call && ir::emit_shape(*call) == shape ? call : nullptr;
}

std::optional<std::vector<int64_t>> const_ints(const ir::ExprPtr& e) {
  const auto* tuple = e->as<ir::MakeTuple>();
  if (!tuple) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& item : tuple->elements) {
    auto v = ir::as_const_int(item);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// Offsets [row, col] of which the one across the band (the row of a band of columns) does not
// move with the loop and the one along it moves by one tile each iteration.
bool band_offsets(const ir::ExprPtr& offsets, const ir::Var& var, int64_t step,
                  const TileBand& band) {
  const auto* tuple = offsets->as<ir::MakeTuple>();
  if (!tuple || tuple->elements.size() != 2) return false;
  const bool rows = band.along == TileBand::Along::Rows;
  const auto across = coefficient(tuple->elements[rows ? 1 : 0], var);
  const auto along = coefficient(tuple->elements[rows ? 0 : 1], var);
  return across == 0 && along &&
         support::checked_mul(*along, step) == (rows ? band.tile_rows : band.tile_cols);
}

// Which way the tiles of a load at `offsets` lie one after another, if they do at all.
std::optional<TileBand::Along> band_direction(const ir::ExprPtr& offsets, const ir::Var& var) {
  const auto* tuple = offsets->as<ir::MakeTuple>();
  if (!tuple || tuple->elements.size() != 2) return std::nullopt;
  if (coefficient(tuple->elements[0], var) == 0) return TileBand::Along::Columns;
  if (coefficient(tuple->elements[1], var) == 0) return TileBand::Along::Rows;
  return std::nullopt;
}

const ir::TileType* vec_tile(const ir::Var& var) {
  const auto* tile = var.type()->as<ir::TileType>();
  if (!tile || !tile->memref || tile->memref->space != ir::MemorySpace::Vec) return nullptr;
  return tile;
}

}  // namespace

std::optional<TileBand> tile_band(const ir::ForStmt& loop) {
  const auto start = ir::as_const_int(loop.start);
  const auto stop = ir::as_const_int(loop.stop);
  const auto step = ir::as_const_int(loop.step);
  if (!start || !stop || !step || *step <= 0 || *stop <= *start) return std::nullopt;
  const auto span = support::checked_sub(*stop, *start);
  if (!span) return std::nullopt;
  const int64_t tiles = *span / *step + (*span % *step != 0);
  const auto* seq = loop.body ? loop.body->as<ir::SeqStmts>() : nullptr;
  if (tiles < 2 || loop.iter_args.size() != 1 || !seq || seq->stmts.size() != 5)
    return std::nullopt;
  const auto& s = seq->stmts;
  const auto* load_lhs = s[0]->as<ir::AssignStmt>();
  const auto* load_rhs = s[1]->as<ir::AssignStmt>();
  const auto* op_stmt = s[2]->as<ir::AssignStmt>();
  const auto* store_stmt = s[3]->as<ir::AssignStmt>();
  const auto* yield = s[4]->as<ir::YieldStmt>();
  if (!load_lhs || !load_rhs || !op_stmt || !store_stmt || !yield) return std::nullopt;

  TileBand band;
  band.tiles = tiles;
  band.op = op_call(op_stmt->value, ir::EmitShape::Binary);
  band.store = op_call(store_stmt->value, ir::EmitShape::Store);
  band.lhs = op_call(load_lhs->value, ir::EmitShape::Load);
  band.rhs = op_call(load_rhs->value, ir::EmitShape::Load);
  if (!band.op || !band.store || !band.lhs || !band.rhs || band.op->args.size() != 2 ||
      band.store->args.size() != 3 || yield->values.size() != 1)
    return std::nullopt;
  // The op reads the two loads (in either order), the store writes its result into the carried
  // tensor, and the yield hands the store's result on.
  const ir::Var* x = band.op->args[0]->as<ir::Var>();
  const ir::Var* y = band.op->args[1]->as<ir::Var>();
  if (x == load_rhs->var.get() && y == load_lhs->var.get())
    std::swap(band.lhs, band.rhs);
  else if (x != load_lhs->var.get() || y != load_rhs->var.get())
    return std::nullopt;
  if (band.store->args[0]->as<ir::Var>() != op_stmt->var.get() ||
      band.store->args[2]->as<ir::Var>() != loop.iter_args[0].get() ||
      yield->values[0]->as<ir::Var>() != store_stmt->var.get())
    return std::nullopt;

  const ir::TileType* result = vec_tile(*op_stmt->var);
  if (!result || result->shape.size() != 2 || !ir::is_float(result->dtype)) return std::nullopt;
  band.tile_rows = result->shape[0];
  band.tile_cols = result->shape[1];
  const ir::Var& var = *loop.loop_var;
  const auto along = band_direction(band.store->args[1], var);
  if (!along) return std::nullopt;
  band.along = *along;
  for (const auto* load : {load_lhs, load_rhs}) {
    const ir::TileType* tile = vec_tile(*load->var);
    const ir::Call& call = *load->value->as<ir::Call>();
    if (!tile || tile->shape != result->shape || tile->dtype != result->dtype ||
        call.args.size() < 3 || (call.args.size() > 3 && call.args[3]) ||
        const_ints(call.args[2]) != result->shape || tensor_rank(call.args[0]) != 2 ||
        !band_offsets(call.args[1], var, *step, band))
      return std::nullopt;
  }
  if (tensor_rank(band.store->args[2]) != 2 || !band_offsets(band.store->args[1], var, *step, band))
    return std::nullopt;
  // The box must have a size (a loop this long fails its bounds checks anyway).
  const bool rows = band.along == TileBand::Along::Rows;
  const std::optional<int64_t> length =
      support::checked_mul(rows ? band.tile_rows : band.tile_cols, band.tiles);
  if (band.tile_rows <= 0 || band.tile_cols <= 0 || !length) return std::nullopt;
  band.box_rows = rows ? *length : band.tile_rows;
  band.box_cols = rows ? band.tile_cols : *length;
  return band;
}

}  // namespace pypto::codegen
