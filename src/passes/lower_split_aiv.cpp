// LowerSplitAiv: turns every `for aiv in pl.split_aiv(2, mode=...)` region (a ScopeStmt of level
// SPLIT_AIV, see ir::ScopeStmt) into what the two AIV lanes of a cluster run, as a loop over the
// lanes that UnrollLoops then copies once per lane:
//
//   for lane in pl.unroll(2):
//       aiv = lane
//       <body>, with   v = pl.aiv_shard(x)   ->  v = the lane's part of x, loaded into Vec
//                      g = pl.aic_gather(y)  ->  y stored at the lane's place in a buffer
//   g = <the buffer, loaded into Mat>
//
// The CPU device has no vector lanes to run side by side; the lanes' parts are disjoint (that is
// what the split promises), so running lane 0 and then lane 1 computes what the two lanes do at
// once. UP_DOWN gives a lane ceil(rows / 2) rows starting at lane * ceil(rows / 2) (an odd row
// count leaves lane 1 a part valid to one row fewer), LEFT_RIGHT the same on the columns, NONE
// all of x. Cube tiles cross to the vector lanes through a buffer in global memory, as the
// device's cube-to-vector pipe moves them (a2a3 has no Acc-to-Vec move), and back the same way.
//
// A data-parallel region (UP_DOWN / LEFT_RIGHT) with no aiv_shard / aic_gather holds full-width
// vector code that the NPU compiler halves op by op. When the body reads `aiv` each lane runs
// its halved copy (split_aiv_halving.h); when it does not, the halves together compute the
// full-width code, which then runs once, whole.
//
// It is the first pass: the ones after it see plain loops, loads, stores and slices.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pass_utils.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "split_aiv_halving.h"
#include "split_aiv_ragged.h"

namespace pypto::passes {

namespace {

using namespace ir;

bool is_boundary_call(const Expr& e) {
  const auto* call = e.as<Call>();
  return call && call->call_kind == CallKind::Op &&
         (call->callee == "aiv_shard" || call->callee == "aic_gather");
}

// The dimension a split mode (the split= attribute: 0 NONE, 1 UP_DOWN, 2 LEFT_RIGHT) halves.
std::optional<size_t> split_axis_of_mode(int64_t mode) {
  if (mode == 1) return 0;
  if (mode == 2) return 1;
  return std::nullopt;
}

// A lane's extent on the split axis: the ceil half, as the boundary ops' types say.
int64_t split_lane_extent(int64_t extent) { return (extent + 1) / 2; }

int64_t split_mode_of(const Call& call) {
  const AttrValue* v = find_attr(call.attrs, "split");
  const auto* mode = v ? std::get_if<int64_t>(v) : nullptr;
  return mode ? *mode : 0;
}

// Whether a statement reads `var` or calls a boundary op.
class RegionScan : public IRVisitor {
 public:
  explicit RegionScan(const Var* lane) : lane_(lane) {}
  bool reads_lane = false;
  bool has_boundary = false;

 protected:
  void visit_var(const Var& v) override {
    if (&v == lane_) reads_lane = true;
  }
  void visit_call(const Call& c) override {
    if (is_boundary_call(c)) has_boundary = true;
    IRVisitor::visit_call(c);
  }

 private:
  const Var* lane_;
};

// The 2-D shape of a shaped value (tile or tensor), and whether it is a tile.
struct Shaped {
  std::vector<int64_t> shape;
  DataType dtype;
  bool is_tile;
};
Shaped shaped_of(const ExprPtr& e) {
  if (const auto* t = e->type()->as<TileType>()) return {t->shape, t->dtype, true};
  const auto* t = e->type()->as<TensorType>();
  return {t->shape, t->dtype, false};
}

// Rewrites the boundary ops of one region's body for the lane `lane`.
class BoundaryLowering : public IRMutator {
 public:
  BoundaryLowering(VarPtr lane, const detail::StaticValidExtents& extents)
      : lane_(std::move(lane)), extents_(extents) {}
  std::vector<StmtPtr> before_lanes;  // the buffers of gathers, made before the lane loop
  std::vector<StmtPtr> after_lanes;   // the gathered values, read after it

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    if (!is_boundary_call(*s->value)) return IRMutator::mutate_assign(s);
    const auto& call = *s->value->as<Call>();
    const auto axis = split_axis_of_mode(split_mode_of(call));
    detail::check_ragged_boundary(call, axis, extents_);
    ExprPtr input = mutate(call.args.at(0));
    if (call.callee == "aiv_shard")
      return shard(*s, input, axis, extents_.of(call.args.at(0)), call.span());
    return gather(*s, input, axis, call.span());
  }

  ExprPtr mutate_call(const std::shared_ptr<const Call>& e) override {
    if (is_boundary_call(*e)) {
      throw CompileError(e->span(), "pl." + e->callee +
                                        " must be the whole right-hand side of an assignment "
                                        "in its pl.split_aiv region: write `v = pl." +
                                        e->callee + "(x)` and use v");
    }
    return IRMutator::mutate_call(e);
  }

 private:
  static bool in_cube_memory(const Expr& x) {
    const auto* tile = x.type()->as<TileType>();
    if (!tile || !tile->space) return false;
    const MemorySpace m = *tile->space;
    return m == MemorySpace::Acc || m == MemorySpace::Mat || m == MemorySpace::Left ||
           m == MemorySpace::Right || m == MemorySpace::Bias || m == MemorySpace::LeftScale ||
           m == MemorySpace::RightScale;
  }

  static ExprPtr zeros(const std::vector<int64_t>& shape, DataType dtype, bool tile, Span span) {
    return make_op_call(tile ? "create_tile" : "create_tensor", {detail::int_tuple(shape)},
                        {{"dtype", AttrValue(dtype)}}, span);
  }

  // [lane * part, 0] or [0, lane * part]; [0, 0] without a split axis.
  ExprPtr lane_offsets(std::optional<size_t> axis, int64_t part, Span span) const {
    std::vector<ExprPtr> offsets{make_int(0, span), make_int(0, span)};
    if (axis) offsets[*axis] = make_binary(BinaryOp::Mul, lane_, make_int(part, span), span);
    return make_tuple(std::move(offsets), span);
  }

  // v = pl.aiv_shard(x): the lane's part of x. A tensor's part is a slice of it (a view), a
  // vector tile's a slice too. A cube tile goes the way the device's cube-to-vector pipe takes
  // it: the cube writes it whole to a buffer in global memory and each lane loads its part into
  // Vec. With an odd split axis lane 0 holds one more than lane 1: lane 1's part is valid to one
  // fewer (a tile's is padded with zeros, the buffer has a row or column to spare).
  //
  // A value valid to part of its box (`valid`, known at compile time) gives each lane the part
  // of that region its rows or columns hold, clamp(valid - lane * part, 0, part) on the split
  // axis (lane 1 of 5 valid rows of 16 holds none), so that what the lane stores is what the
  // value holds; check_ragged_boundary has refused the regions no lane extent describes.
  StmtPtr shard(const AssignStmt& s, ExprPtr x, std::optional<size_t> axis,
                const std::optional<std::vector<int64_t>>& valid, Span span) {
    const Shaped info = shaped_of(x);
    if (!axis && !in_cube_memory(*x)) return make_node<AssignStmt>(s.var, x, s.span());
    std::vector<int64_t> part_shape = info.shape, buffer_shape = info.shape;
    const int64_t part = axis ? split_lane_extent(info.shape[*axis]) : 0;
    if (axis) {
      part_shape[*axis] = part;
      buffer_shape[*axis] = 2 * part;
    }
    const bool odd = buffer_shape != info.shape;
    // The lane's valid extent: clamp(held - lane * part, 0, part) on the split axis, where the
    // value holds `held` (its valid extent, else its extent: an odd one leaves lane 1 one fewer),
    // and the value's valid extent on the other axis.
    const bool lane_extents = axis && (odd || valid);
    auto lane_valid = [&] {
      std::vector<ExprPtr> extents;
      for (size_t i = 0; i < part_shape.size(); ++i) {
        const int64_t extent =
            valid && i != *axis ? std::min((*valid)[i], part_shape[i]) : part_shape[i];
        extents.push_back(make_int(extent, span));
      }
      const int64_t held = valid ? (*valid)[*axis] : info.shape[*axis];
      ExprPtr rest =
          make_binary(BinaryOp::Sub, make_int(held, span),
                      make_binary(BinaryOp::Mul, lane_, make_int(part, span), span), span);
      extents[*axis] = make_binary(
          BinaryOp::Max, make_int(0, span),
          make_binary(BinaryOp::Min, make_int(part, span), std::move(rest), span), span);
      return make_tuple(std::move(extents), span);
    };
    // The lane's part of a tensor or a vector tile: a window of it, valid to the lane's extent.
    auto lane_window = [&](ExprPtr of) {
      std::vector<ExprPtr> args{std::move(of), detail::int_tuple(part_shape),
                                lane_offsets(axis, part, span)};
      if (lane_extents) args.push_back(lane_valid());
      return make_node<AssignStmt>(s.var, make_op_call("slice", std::move(args), {}, span),
                                   s.span());
    };
    if (!info.is_tile) {
      if (odd) {
        throw CompileError(span, "pl.aiv_shard of a tensor with an odd extent (" +
                                     std::to_string(info.shape[*axis]) +
                                     ") on the split axis is not supported: lane 1's part would "
                                     "be a window valid to one fewer, which a kernel cannot "
                                     "load. Shard a tile (pl.load the value first), or give the "
                                     "axis an even extent");
      }
      return lane_window(x);
    }
    if (!in_cube_memory(*x)) {
      if (odd) {
        // Lane 1's part is padded with zeros (the buffer has a row or column to spare), as
        // before valid regions were carried: its window stays whole.
        x = make_op_call(
            "assemble", {zeros(buffer_shape, info.dtype, true, span), x, detail::int_tuple({0, 0})},
            {}, span);
        return make_node<AssignStmt>(
            s.var,
            make_op_call("slice",
                         {x, detail::int_tuple(part_shape), lane_offsets(axis, part, span)}, {},
                         span),
            s.span());
      }
      return lane_window(x);
    }
    std::vector<StmtPtr> out;
    ExprPtr created = zeros(buffer_shape, info.dtype, false, span);
    VarPtr buffer = make_var(s.var->name + "_pipe", created->type(), span);
    out.push_back(make_node<AssignStmt>(buffer, created, span));
    out.push_back(make_node<AssignStmt>(
        buffer, make_op_call("store", {x, detail::int_tuple({0, 0}), buffer}, {}, span), span));
    std::vector<ExprPtr> args{buffer, lane_offsets(axis, part, span),
                              detail::int_tuple(part_shape)};
    if (lane_extents) args.push_back(lane_valid());
    out.push_back(
        make_node<AssignStmt>(s.var, make_op_call("load", std::move(args), {}, span), s.span()));
    return make_seq(std::move(out), s.span());
  }

  // g = pl.aic_gather(v): the lanes' parts joined where the cube reads them. Tiles go the way of
  // the device's vector-to-cube pipe: each lane writes its part to its place in a buffer in
  // global memory, and after both lanes the cube loads the whole into Mat. Tensors are
  // assembled into one of the joined shape. Without a split axis both lanes write the whole
  // value to the same place (the program keeps it the same on both lanes).
  StmtPtr gather(const AssignStmt& s, const ExprPtr& v, std::optional<size_t> axis, Span span) {
    const Shaped joined = shaped_of(s.value);
    const int64_t part = axis ? shaped_of(v).shape[*axis] : 0;
    ExprPtr created = zeros(joined.shape, joined.dtype, false, span);
    if (!joined.is_tile) {
      before_lanes.push_back(make_node<AssignStmt>(s.var, created, s.span()));
      return make_node<AssignStmt>(
          s.var, make_op_call("assemble", {s.var, v, lane_offsets(axis, part, span)}, {}, span),
          s.span());
    }
    VarPtr buffer = make_var(s.var->name + "_pipe", created->type(), span);
    before_lanes.push_back(make_node<AssignStmt>(buffer, created, span));
    after_lanes.push_back(make_node<AssignStmt>(
        s.var,
        make_op_call("load", {buffer, detail::int_tuple({0, 0}), detail::int_tuple(joined.shape)},
                     {{"target_memory", AttrValue(MemorySpace::Mat)}}, span),
        s.span()));
    return make_node<AssignStmt>(
        buffer, make_op_call("store", {v, lane_offsets(axis, part, span), buffer}, {}, span),
        s.span());
  }

  VarPtr lane_;
  const detail::StaticValidExtents& extents_;
};

class SplitAivLowering : public IRMutator {
 public:
  explicit SplitAivLowering(const Function& f) : function_(f) {}

 protected:
  StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s) override {
    if (!s->is_split_aiv()) return IRMutator::mutate_scope(s);
    if (inside_region_) {
      throw CompileError(s->span(),
                         "a pl.split_aiv region cannot be nested in another one: each already "
                         "runs once per AIV lane");
    }
    const auto* seq = s->body->as<SeqStmts>();
    const auto* first = seq && !seq->stmts.empty() ? seq->stmts.front()->as<AssignStmt>()
                                                   : s->body->as<AssignStmt>();
    if (!first) throw CompileError(s->span(), "internal: a split_aiv region without its lane");
    std::vector<StmtPtr> body;
    if (seq) body.assign(seq->stmts.begin() + 1, seq->stmts.end());

    inside_region_ = true;
    for (auto& st : body) st = mutate(st);  // errors for regions nested in this one
    inside_region_ = false;

    RegionScan scan(first->var.get());
    for (const auto& st : body) scan.visit(st);
    const bool halves = s->split != "NONE" && !scan.has_boundary;
    if (halves && !scan.reads_lane) {
      // Full-width code that does not depend on the lane: the two halves together are the
      // whole, so it runs once, whole.
      body.insert(body.begin(), seq->stmts.front());
      return make_seq(std::move(body), s->span());
    }

    VarPtr lane = make_var("lane", first->var->type(), first->span());
    // The valid regions boundary ops are given, found once per function that has a region.
    if (!extents_) extents_.emplace(function_);
    BoundaryLowering lowering(lane, *extents_);
    std::vector<StmtPtr> lane_body{make_node<AssignStmt>(first->var, lane, first->span())};
    if (halves) {
      // Full-width code that reads the lane: each lane runs its half of every vector tile.
      const size_t axis = s->split == "UP_DOWN" ? 0 : 1;
      lane_body.push_back(detail::halve_for_lane(make_seq(std::move(body), s->span()), lane, axis));
    } else {
      for (const auto& st : body) lane_body.push_back(lowering.mutate(st));
    }
    std::vector<StmtPtr> out = std::move(lowering.before_lanes);
    out.push_back(make_node<ForStmt>(
        lane, make_int(0, s->span()), make_int(2, s->span()), make_int(1, s->span()),
        ForKind::Unroll, std::vector<VarPtr>{}, std::vector<ExprPtr>{},
        make_seq(std::move(lane_body), s->span()), std::vector<VarPtr>{}, s->span()));
    for (auto& st : lowering.after_lanes) out.push_back(std::move(st));
    return make_seq(std::move(out), s->span());
  }

 private:
  bool inside_region_ = false;
  const Function& function_;
  std::optional<detail::StaticValidExtents> extents_;
};

}  // namespace

ProgramPtr lower_split_aiv(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    SplitAivLowering lowering(*f);
    return lowering.mutate_function(f);
  });
}

}  // namespace pypto::passes
