// LowerSplitAiv: turns every `for aiv in pl.split_aiv(2, mode=...)` region (a ScopeStmt of level
// SPLIT_AIV, see ir::ScopeStmt) into what the two AIV lanes of a cluster run, as a loop over the
// lanes:
//
//   for lane in pl.range(2):
//       aiv = lane
//       <body>, with   v = pl.aiv_shard(x)   ->  v = lane's part of x (a slice)
//                      g = pl.aic_gather(y)  ->  g = pl.assemble(g, y, lane's offset)
//
// The CPU device has no vector lanes to run side by side; the lanes' parts are disjoint (that is
// what the split promises), so running lane 0 and then lane 1 computes what the two lanes do at
// once. UP_DOWN gives a lane ceil(rows / 2) rows starting at lane * ceil(rows / 2) (an odd row
// count leaves lane 1 one row fewer: its slice is padded with zeros), LEFT_RIGHT the same on the
// columns, NONE all of x. A gathered value starts as a zero buffer of the joined shape before the
// loop, and each lane assembles its part into it.
//
// A data-parallel region (UP_DOWN / LEFT_RIGHT) with no aiv_shard / aic_gather holds full-width
// vector code that the NPU compiler halves op by op; the halves together compute the full-width
// code, so when the body does not read `aiv` it runs once, whole. One that reads `aiv` depends on
// a per-op halving this compiler does not do, and is refused with its position.
//
// It is the first pass: the ones after it see plain loops, slices and assembles.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pass_utils.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

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
  explicit BoundaryLowering(VarPtr lane) : lane_(std::move(lane)) {}
  std::vector<StmtPtr> gather_inits;  // `g = <zeros of the joined shape>`, before the lane loop

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    if (!is_boundary_call(*s->value)) return IRMutator::mutate_assign(s);
    const auto& call = *s->value->as<Call>();
    ExprPtr input = mutate(call.args.at(0));
    const int64_t mode = split_mode_of(call);
    const auto axis = split_axis_of_mode(mode);
    if (call.callee == "aiv_shard") {
      if (in_cube_memory(*input)) return through_global_memory(*s, input, axis, call.span());
      if (!axis) return make_node<AssignStmt>(s->var, input, s->span());
      return make_node<AssignStmt>(s->var, lane_part(input, *axis, call.span()), s->span());
    }
    // aic_gather: each lane's part goes to its offset in one buffer of the joined shape.
    if (!axis) return make_node<AssignStmt>(s->var, input, s->span());
    const Shaped joined = shaped_of(s->value);
    gather_inits.push_back(make_node<AssignStmt>(
        s->var, zeros(joined.shape, joined.dtype, joined.is_tile, call.span()), s->span()));
    const int64_t part = shaped_of(input).shape[*axis];
    return make_node<AssignStmt>(
        s->var,
        make_op_call("assemble", {s->var, input, lane_offsets(*axis, part, call.span())}, {},
                     call.span()),
        s->span());
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
  static ExprPtr zeros(const std::vector<int64_t>& shape, DataType dtype, bool tile, Span span) {
    return make_op_call(tile ? "create_tile" : "create_tensor", {detail::int_tuple(shape)},
                        {{"dtype", AttrValue(dtype)}}, span);
  }

  static bool in_cube_memory(const Expr& x) {
    const auto* tile = x.type()->as<TileType>();
    if (!tile || !tile->space) return false;
    const MemorySpace m = *tile->space;
    return m == MemorySpace::Acc || m == MemorySpace::Mat || m == MemorySpace::Left ||
           m == MemorySpace::Right;
  }

  // A cube tile read on the vector lanes goes the way the device's cube-to-vector pipe takes
  // it: the cube writes the whole tile to a buffer in global memory, and each lane loads its
  // part into its own Vec memory. With an odd split axis the buffer has one row (or column) of
  // padding, and lane 1's load is valid to one fewer than lane 0's.
  StmtPtr through_global_memory(const AssignStmt& s, const ExprPtr& x, std::optional<size_t> axis,
                                Span span) {
    const Shaped info = shaped_of(x);
    std::vector<int64_t> buffer_shape = info.shape, part_shape = info.shape;
    int64_t part = 0;
    if (axis) {
      part = split_lane_extent(info.shape[*axis]);
      buffer_shape[*axis] = 2 * part;
      part_shape[*axis] = part;
    }
    ExprPtr created = zeros(buffer_shape, info.dtype, false, span);
    VarPtr buffer = make_var(s.var->name + "_pipe", created->type(), span);
    std::vector<StmtPtr> out;
    out.push_back(make_node<AssignStmt>(buffer, created, span));
    out.push_back(make_node<AssignStmt>(
        buffer, make_op_call("store", {x, detail::int_tuple({0, 0}), buffer}, {}, span), span));
    ExprPtr offsets = axis ? lane_offsets(*axis, part, span) : detail::int_tuple({0, 0});
    std::vector<ExprPtr> args{buffer, offsets, detail::int_tuple(part_shape)};
    if (axis && buffer_shape[*axis] != info.shape[*axis]) {
      // Lane 0 holds `part`, lane 1 `part - 1`: part - lane.
      std::vector<ExprPtr> valid;
      for (int64_t extent : part_shape) valid.push_back(make_int(extent, span));
      valid[*axis] = make_binary(BinaryOp::Sub, make_int(part, span), lane_, span);
      args.push_back(make_tuple(std::move(valid), span));
    }
    out.push_back(
        make_node<AssignStmt>(s.var, make_op_call("load", std::move(args), {}, span), s.span()));
    return make_seq(std::move(out), s.span());
  }

  // [lane * part, 0] or [0, lane * part].
  ExprPtr lane_offsets(size_t axis, int64_t part, Span span) const {
    ExprPtr along = make_binary(BinaryOp::Mul, lane_, make_int(part, span), span);
    std::vector<ExprPtr> offsets{make_int(0, span), make_int(0, span)};
    offsets[axis] = along;
    return make_tuple(std::move(offsets), span);
  }

  // The lane's ceil-half of `x` along `axis`. A tile with an odd extent is first padded to an
  // even one (the pad is zeros) so that lane 1's window lies inside it; a tensor's window is a
  // view the device clips to the tensor.
  ExprPtr lane_part(ExprPtr x, size_t axis, Span span) const {
    Shaped info = shaped_of(x);
    const int64_t part = split_lane_extent(info.shape[axis]);
    if (info.is_tile && info.shape[axis] % 2 != 0) {
      std::vector<int64_t> padded = info.shape;
      padded[axis] = 2 * part;
      x = make_op_call("assemble",
                       {zeros(padded, info.dtype, true, span), x, detail::int_tuple({0, 0})}, {},
                       span);
    }
    std::vector<int64_t> shape = info.shape;
    shape[axis] = part;
    return make_op_call("slice", {x, detail::int_tuple(shape), lane_offsets(axis, part, span)}, {},
                        span);
  }

  VarPtr lane_;
};

class SplitAivLowering : public IRMutator {
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
    if (s->split != "NONE" && !scan.has_boundary) {
      if (scan.reads_lane) {
        throw CompileError(s->span(),
                           "this pl.split_aiv(mode=" + s->split +
                               ") region has no pl.aiv_shard and reads its "
                               "lane '" +
                               first->var->name +
                               "': halving full-width vector code per lane is not "
                               "supported here. Take each lane's part with pl.aiv_shard(x), or use "
                               "mode=pl.SplitMode.NONE and address each lane's data by '" +
                               first->var->name + "'");
      }
      // Full-width code: the two halves together are the whole; run it once.
      body.insert(body.begin(), seq->stmts.front());
      return make_seq(std::move(body), s->span());
    }

    VarPtr lane = make_var("lane", first->var->type(), first->span());
    BoundaryLowering lowering(lane);
    std::vector<StmtPtr> lane_body{make_node<AssignStmt>(first->var, lane, first->span())};
    for (const auto& st : body) lane_body.push_back(lowering.mutate(st));
    std::vector<StmtPtr> out = std::move(lowering.gather_inits);
    out.push_back(make_node<ForStmt>(
        lane, make_int(0, s->span()), make_int(2, s->span()), make_int(1, s->span()),
        ForKind::Sequential, std::vector<VarPtr>{}, std::vector<ExprPtr>{},
        make_seq(std::move(lane_body), s->span()), std::vector<VarPtr>{}, s->span()));
    return make_seq(std::move(out), s->span());
  }

 private:
  bool inside_region_ = false;
};

}  // namespace

ProgramPtr lower_split_aiv(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) {
    SplitAivLowering lowering;
    return lowering.mutate_function(f);
  });
}

}  // namespace pypto::passes
