// AutoTileMatmulL0: splits a tile matmul (matmul, matmul_bias, matmul_acc) whose operands are in
// Mat into blocks that fit the cube unit's L0 buffers, as PyPTO's chooser picks them.
//
// The cube unit reads its left operand from Left (64 KiB), its right one from Right (64 KiB) and
// accumulates in Acc (128 KiB); Mat (512 KiB) holds whole operands. Every matmul of Mat tiles
// gets the block (m, n, k) of choose_l0_tile (l0_tile_choice.h, PyPTO's roofline model: an
// operand that streams gets half of its buffer, so a K that fits a buffer whole may still be
// split) and is rewritten into products of windows of them (pl.slice of the Mat tiles read
// straight into Left/Right, PyPTO's tile.extract) unless the block is the whole matmul:
//   - K split: the first K block is the op itself (matmul, matmul_bias with its bias, or
//     matmul_acc with its accumulator and init_cond), the others are accumulated with
//     matmul_acc by a loop, and a shorter last block after it;
//   - M/N split: each [m, n] block of the product is computed that way and placed where the
//     product goes: a product whose one use is `pl.store` is stored block by block at the
//     store's offsets (the tensor threaded through the stores), a product used only as matmul
//     operands is assembled block by block into a Mat tile (the operand then is that Mat tile).
//     The bias of matmul_bias is windowed along with the columns (one already moved to Bias
//     is used whole: only M and K are split then). The blocks are made in the
//     chooser's loop order: with k == K its stationary operand's blocks are the outer loop and
//     each of their windows is read into L0 once for the inner blocks.
// A matmul_acc, or a product with other uses, can only be split along K (the chooser is told
// to keep the output whole). One whose operands are already in Left/Right, or which nothing
// fits, is left as it is (AllocateMemoryAddr then reports the tile that does not fit). This
// compiler has no two-accumulator schedule, so the chooser is not offered PyPTO's
// double-buffered L0C.
#include <string>
#include <vector>

#include "pass_utils.h"
#include "pypto/passes/l0_tile_choice.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;
using detail::int_tuple;

bool is_tiled_matmul(const Call* c) {
  return c && (c->callee == "matmul" || c->callee == "matmul_bias" || c->callee == "matmul_acc") &&
         detail::as_tile(c->type());
}

bool flag(const Call& c, const char* key) {
  const AttrValue* v = find_attr(c.attrs, key);
  const auto* on = v ? std::get_if<bool>(v) : nullptr;
  return on && *on;
}

// How each tile variable is used: the number of uses, the store statement when one of them is
// `pl.store(var, ...)`, and whether every use is the left or right operand of a matmul.
struct Uses {
  int64_t count = 0;
  const AssignStmt* store = nullptr;
  const AssignStmt* cast = nullptr;
  bool only_matmul_operands = true;
};

class UseScan : public IRVisitor {
 public:
  ir::NodeMap<const Var*, Uses> uses;
  bool has_matmul = false;

 protected:
  void visit_assign(const AssignStmt& s) override {
    const auto* c = detail::as_op_call(s.value);
    if (!c) {
      visit(s.value);  // not s.var: a definition is no use
      return;
    }
    has_matmul = has_matmul || is_tiled_matmul(c);
    const size_t first = c->callee == "matmul_acc" ? 1 : 0;
    for (size_t i = 0; i < c->args.size(); ++i) {
      const auto* v = c->args[i]->as<Var>();
      if (!v) {
        visit(c->args[i]);
        continue;
      }
      Uses& u = uses[v];
      ++u.count;
      if (c->callee == "store" && i == 0) u.store = &s;
      if (c->callee == "cast" && i == 0) u.cast = &s;
      const bool operand = is_tiled_matmul(c) && (i == first || i == first + 1);
      u.only_matmul_operands = u.only_matmul_operands && operand;
    }
  }
  void visit_var(const Var& v) override {
    Uses& u = uses[&v];
    ++u.count;
    u.only_matmul_operands = false;
  }
};

// A matmul to tile, its operands already rewritten.
struct Site {
  std::string op;  // matmul, matmul_bias or matmul_acc
  ExprPtr acc, left, right, bias, init_cond;
  Attrs attrs;  // a_trans / b_trans (and out_dtype of matmul)
  bool a_trans = false, b_trans = false;
  int64_t M = 0, N = 0, K = 0;
  L0TileResult tile;
  std::string name;  // of the product
  Span span;
  // `cb = pl.cast(product, FP16/BF16)` read only by matmuls: the blocks are rounded into a Mat
  // tile of that dtype as they leave Acc (the fix-pipe), and the cast goes.
  const AssignStmt* folded_cast = nullptr;
};

ExprPtr add_offset(const ExprPtr& base, int64_t delta) {
  if (delta == 0) return base;
  if (const auto* i = base->as<IntImm>()) return make_int(i->value + delta, base->span());
  return make_binary(BinaryOp::Add, base, make_int(delta), base->span());
}

class MatmulTiling : public IRMutator {
 public:
  explicit MatmulTiling(UseScan scan) : uses_(std::move(scan.uses)) {}

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    const auto* call = detail::as_op_call(s->value);
    if (is_tiled_matmul(call)) {
      if (auto site = plan(*s, *call)) return rewrite(*s, std::move(*site));
      return IRMutator::mutate_assign(s);
    }
    if (folded_casts_.count(s.get())) return make_seq({}, s->span());
    if (const auto* store = detail::as_op_call(s->value, "store")) {
      const auto* tile = store->args[0]->as<Var>();
      auto it = tile ? deferred_.find(tile) : deferred_.end();
      if (it != deferred_.end()) return store_blocks(*s, *store, it->second);
    }
    return IRMutator::mutate_assign(s);
  }

 private:
  // The matmul as a Site when it needs tiling and can be tiled, else nothing.
  std::optional<Site> plan(const AssignStmt& s, const Call& call) {
    Site site;
    site.op = call.callee;
    site.name = s.var->name;
    site.span = s.span();
    std::vector<ExprPtr> args;
    for (const auto& a : call.args) args.push_back(mutate(a));
    const size_t first = site.op == "matmul_acc" ? 1 : 0;
    if (args.size() < first + 2) return std::nullopt;
    site.left = args[first];
    site.right = args[first + 1];
    if (site.op == "matmul_acc") {
      site.acc = args[0];
      if (args.size() > 3) site.init_cond = args[3];
    }
    if (site.op == "matmul_bias") {
      if (args.size() < 3) return std::nullopt;
      site.bias = args[2];
    }
    const auto* l = detail::as_tile(site.left);
    const auto* r = detail::as_tile(site.right);
    const auto* product = detail::as_tile(call.type());
    // Only operands in Mat are tiled: an operand placed in Left/Right is the program's own
    // L0 schedule.
    if (!l || !r || !product || l->space != MemorySpace::Mat || r->space != MemorySpace::Mat ||
        l->shape.size() != 2 || r->shape.size() != 2 || product->shape.size() != 2) {
      return std::nullopt;
    }
    site.a_trans = flag(call, "a_trans");
    site.b_trans = flag(call, "b_trans");
    for (const auto& [key, value] : call.attrs) site.attrs.emplace_back(key, value);
    site.M = product->shape[0];
    site.N = product->shape[1];
    site.K = site.a_trans ? l->shape[0] : l->shape[1];
    const int64_t acc_bytes = dtype_bytes(product->dtype);
    // Blocks of the product go where its one store puts them, or into a Mat tile for the
    // matmuls that read it. A matmul_acc's accumulator is one Acc tile: only K is split.
    const Uses& u = uses_[s.var.get()];
    const bool stored = u.count == 1 && u.store;
    const bool scratch = u.count >= 1 && u.only_matmul_operands;
    if (site.op != "matmul_acc" && u.count == 1 && u.cast && product->dtype == DataType::FP32) {
      const auto* rounded = detail::as_tile(u.cast->var->type());
      const Uses& cast_uses = uses_[u.cast->var.get()];
      if (rounded && (rounded->dtype == DataType::FP16 || rounded->dtype == DataType::BF16) &&
          cast_uses.count >= 1 && cast_uses.only_matmul_operands) {
        site.folded_cast = u.cast;
      }
    }
    const bool split_product = site.op != "matmul_acc" && (stored || scratch || site.folded_cast);
    L0TileConfig cfg = device_l0_tile_config(site.M, site.N, site.K, dtype_bytes(l->dtype),
                                             dtype_bytes(r->dtype), acc_bytes);
    cfg.whole_output = !split_product;
    cfg.c_read = site.op == "matmul_acc";
    auto tile = choose_device_l0_tile(cfg);
    if (!tile) return std::nullopt;
    // A matmul the chooser keeps whole is already L0-sized (a folded cast still moves it).
    if (tile->m == site.M && tile->n == site.N && tile->k == site.K && !site.folded_cast)
      return std::nullopt;
    // A bias already in the bias table serves blocks of all N columns only: the table has no
    // path to a window of itself, so a split of N leaves the matmul as it is (as PyPTO does).
    const auto* bias = site.bias ? detail::as_tile(site.bias) : nullptr;
    if (bias && bias->space == MemorySpace::Bias && tile->n != site.N) return std::nullopt;
    // Blocks of the product are written out one by one: beyond a bound (a product far larger
    // than any kernel's) the matmul is left for AllocateMemoryAddr to report.
    constexpr int64_t kMaxProductBlocks = 4096;
    if ((site.M + tile->m - 1) / tile->m * ((site.N + tile->n - 1) / tile->n) > kMaxProductBlocks)
      return std::nullopt;
    site.tile = *tile;
    return site;
  }

  StmtPtr rewrite(const AssignStmt& s, Site site) {
    std::vector<StmtPtr> out;
    if (site.tile.m == site.M && site.tile.n == site.N && !site.folded_cast) {
      ExprPtr product = product_block(site, 0, 0, site.M, site.N, &out);
      var_map[s.var.get()] = product;
      return make_seq(std::move(out), s.span());
    }
    const Uses& u = uses_[s.var.get()];
    if (u.count == 1 && u.store && !site.folded_cast) {
      // Computed where it is stored, block by block.
      deferred_.emplace(s.var.get(), std::move(site));
      return make_seq({}, s.span());
    }
    // Assembled into a Mat tile for the matmuls that read it (rounded, for a folded cast).
    const AssignStmt* cast = site.folded_cast;
    const DataType dtype = detail::as_tile(cast ? cast->var->type() : s.value->type())->dtype;
    ExprPtr create =
        make_op_call("create_tile", {int_tuple({site.M, site.N})},
                     {{"dtype", dtype}, {"target_memory", MemorySpace::Mat}}, site.span);
    VarPtr scratch = make_var(site.name + "_mat", create->type(), site.span);
    out.push_back(ir::make_node<AssignStmt>(scratch, create, site.span));
    for_each_block(site, [&](int64_t mi, int64_t ni, int64_t m, int64_t n) {
      ExprPtr block = product_block(site, mi, ni, m, n, &out);
      ExprPtr placed =
          make_op_call("assemble", {scratch, block, int_tuple({mi, ni})}, {}, site.span);
      scratch = make_var(site.name + "_mat", placed->type(), site.span);
      out.push_back(ir::make_node<AssignStmt>(scratch, placed, site.span));
    });
    if (cast) {
      var_map[cast->var.get()] = scratch;
      folded_casts_.insert(cast);
    } else {
      var_map[s.var.get()] = scratch;
    }
    return make_seq(std::move(out), s.span());
  }

  // Whether the full-K grid's outer loop runs over rows of blocks (the left operand's window is
  // held while the columns pass) rather than columns (the right one's is held).
  static bool rows_outer(const Site& site) {
    const L0TileResult& t = site.tile;
    return t.stationarity == Stationarity::AStationary ||
           (t.stationarity == Stationarity::OutputStationary && t.os_holds_a);
  }

  // Calls f(mi, ni, m, n) for each block of the product, in the chooser's loop order: its
  // stationary operand's blocks outer, so that each of its windows is read into L0 once.
  template <typename F>
  void for_each_block(const Site& site, F&& f) {
    held_at_ = -1;
    held_ = nullptr;
    const int64_t bm = site.tile.m, bn = site.tile.n;
    if (rows_outer(site)) {
      for (int64_t mi = 0; mi < site.M; mi += bm)
        for (int64_t ni = 0; ni < site.N; ni += bn)
          f(mi, ni, std::min(bm, site.M - mi), std::min(bn, site.N - ni));
    } else {
      for (int64_t ni = 0; ni < site.N; ni += bn)
        for (int64_t mi = 0; mi < site.M; mi += bm)
          f(mi, ni, std::min(bm, site.M - mi), std::min(bn, site.N - ni));
    }
    held_ = nullptr;
  }

  // `pl.store(product, offsets, t)` of a deferred product: each block stored at the offsets
  // shifted by its origin, the tensor threaded through the stores.
  StmtPtr store_blocks(const AssignStmt& s, const Call& store, const Site& site) {
    std::vector<StmtPtr> out;
    ExprPtr offsets = mutate(store.args[1]);
    ExprPtr tensor = mutate(store.args[2]);
    const auto* tuple = offsets->as<MakeTuple>();
    if (!tuple || tuple->elements.size() < 2) {
      throw CompileError(s.span(),
                         "pl.store of a tiled matmul product needs its offsets as a list");
    }
    VarPtr stored;
    for_each_block(site, [&](int64_t mi, int64_t ni, int64_t m, int64_t n) {
      ExprPtr block = product_block(site, mi, ni, m, n, &out);
      std::vector<ExprPtr> at = tuple->elements;
      at[at.size() - 2] = add_offset(at[at.size() - 2], mi);
      at[at.size() - 1] = add_offset(at[at.size() - 1], ni);
      ExprPtr value =
          make_op_call("store", {block, make_tuple(std::move(at)), tensor}, store.attrs, s.span());
      stored = make_var(s.var->name, value->type(), s.span());
      out.push_back(ir::make_node<AssignStmt>(stored, value, s.span()));
      tensor = stored;
    });
    var_map[s.var.get()] = stored;
    return make_seq(std::move(out), s.span());
  }

  // The [rows, cols] window of Mat tile `x` at (r0, c0), read into `space` (Left/Right: the
  // cube's operand buffers; nothing: where x is).
  ExprPtr window(const ExprPtr& x, int64_t rows, int64_t cols, const ExprPtr& r0, const ExprPtr& c0,
                 const std::string& name, std::vector<StmtPtr>* out, Span span,
                 std::optional<MemorySpace> space = std::nullopt) {
    const auto* t = detail::as_tile(x);
    const auto* r = r0->as<IntImm>();
    const auto* c = c0->as<IntImm>();
    // All of x where it already is: nothing to read. All of x for Left/Right (an operand held
    // whole across a grid) is still read there once, rather than moved again for each matmul.
    if (t->shape == std::vector<int64_t>{rows, cols} && r && r->value == 0 && c && c->value == 0 &&
        (!space || *space == t->space))
      return x;
    ExprPtr sliced =
        make_op_call("slice", {x, int_tuple({rows, cols}), make_tuple({r0, c0})}, {}, span);
    const auto* sc = sliced->as<Call>();
    if (!space) space = t->space;
    if (space)
      sliced =
          detail::rebuild_call(*sc, sc->args, sc->attrs, detail::with_space(sc->type(), *space));
    auto v = make_var(name, sliced->type(), span);
    out->push_back(ir::make_node<AssignStmt>(v, sliced, span));
    return v;
  }

  // The windows of the left and right operands for product block (mi, ni) of [m, n] and the
  // reduction block at `k0`, `k` long. With k == K (one reduction block), the stationary
  // operand's window of the current outer block is read once and reused by the inner ones.
  std::pair<ExprPtr, ExprPtr> operand_windows(const Site& site, int64_t mi, int64_t ni, int64_t m,
                                              int64_t n, const ExprPtr& k0, int64_t k,
                                              std::vector<StmtPtr>* out) {
    const auto* left_var = site.left->as<Var>();
    const auto* right_var = site.right->as<Var>();
    const std::string ln = (left_var ? left_var->name : std::string("left")) + "_block";
    const std::string rn = (right_var ? right_var->name : std::string("right")) + "_block";
    const MemorySpace left = MemorySpace::Left, right = MemorySpace::Right;
    const bool hold = k == site.K && (m != site.M || n != site.N);
    const bool hold_left = hold && rows_outer(site);
    const int64_t outer = hold_left ? mi : ni;
    auto make_left = [&] {
      return site.a_trans ? window(site.left, k, m, k0, make_int(mi), ln, out, site.span, left)
                          : window(site.left, m, k, make_int(mi), k0, ln, out, site.span, left);
    };
    auto make_right = [&] {
      return site.b_trans ? window(site.right, n, k, make_int(ni), k0, rn, out, site.span, right)
                          : window(site.right, k, n, k0, make_int(ni), rn, out, site.span, right);
    };
    if (hold && held_at_ != outer) {
      held_ = hold_left ? make_left() : make_right();
      held_at_ = outer;
    }
    ExprPtr l = hold_left ? held_ : make_left();
    ExprPtr r = hold && !hold_left ? held_ : make_right();
    return {l, r};
  }

  Attrs trans_attrs(const Site& site) const {
    Attrs a;
    for (const auto& [key, value] : site.attrs)
      if (key == "a_trans" || key == "b_trans") a.emplace_back(key, value);
    return a;
  }

  // Block (mi, ni) of the product, [m, n]: its first reduction block by the op itself, the
  // other full ones accumulated by a loop, a shorter last one after it.
  ExprPtr product_block(const Site& site, int64_t mi, int64_t ni, int64_t m, int64_t n,
                        std::vector<StmtPtr>* out) {
    const int64_t kb = site.tile.k;
    const int64_t full = site.K / kb;
    const int64_t tail = site.K % kb;
    auto [l0, r0] = operand_windows(site, mi, ni, m, n, make_int(0), kb, out);
    ExprPtr first;
    if (site.op == "matmul") {
      first = make_op_call("matmul", {l0, r0}, site.attrs, site.span);
    } else if (site.op == "matmul_bias") {
      ExprPtr bias = window(site.bias, 1, n, make_int(0), make_int(ni), site.name + "_bias_block",
                            out, site.span);
      first = make_op_call("matmul_bias", {l0, r0, bias}, site.attrs, site.span);
    } else {
      std::vector<ExprPtr> args = {site.acc, l0, r0};
      if (site.init_cond) args.push_back(site.init_cond);
      first = make_op_call("matmul_acc", std::move(args), site.attrs, site.span);
    }
    VarPtr acc = make_var(site.name, first->type(), site.span);
    out->push_back(ir::make_node<AssignStmt>(acc, first, site.span));
    if (full > 1) {
      auto k_block = make_var("k_block", scalar_type(DataType::INT64), site.span);
      auto carried = make_var(site.name, acc->type(), site.span);
      std::vector<StmtPtr> body;
      ExprPtr k0 = make_binary(BinaryOp::Mul, k_block, make_int(kb), site.span);
      auto [l, r] = operand_windows(site, mi, ni, m, n, k0, kb, &body);
      ExprPtr step = make_op_call("matmul_acc", {carried, l, r}, trans_attrs(site), site.span);
      auto next = make_var(site.name, step->type(), site.span);
      body.push_back(ir::make_node<AssignStmt>(next, step, site.span));
      body.push_back(ir::make_node<YieldStmt>(std::vector<ExprPtr>{next}, site.span));
      auto result = make_var(site.name, acc->type(), site.span);
      out->push_back(ir::make_node<ForStmt>(k_block, make_int(1), make_int(full), make_int(1),
                                            ForKind::Sequential, std::vector<VarPtr>{carried},
                                            std::vector<ExprPtr>{acc}, make_seq(body, site.span),
                                            std::vector<VarPtr>{result}, site.span));
      acc = result;
    }
    if (tail > 0) {
      auto [l, r] = operand_windows(site, mi, ni, m, n, make_int(full * kb), tail, out);
      ExprPtr step = make_op_call("matmul_acc", {acc, l, r}, trans_attrs(site), site.span);
      acc = make_var(site.name, step->type(), site.span);
      out->push_back(ir::make_node<AssignStmt>(acc, step, site.span));
    }
    return acc;
  }

  ir::NodeMap<const Var*, Uses> uses_;
  // While a full-K grid is walked: the stationary operand's window of the current outer block
  // (a row of blocks when rows are outer, else a column) and that block's origin.
  int64_t held_at_ = -1;
  ExprPtr held_;
  ir::NodeMap<const Var*, Site> deferred_;       // products computed where they are stored
  ir::NodeSet<const AssignStmt*> folded_casts_;  // casts done by assembling into Mat
};

}  // namespace

ProgramPtr auto_tile_matmul_l0(const ProgramPtr& program) {
  return detail::map_incore_functions(program, [](const FunctionPtr& f) {
    UseScan scan;
    scan.visit(f->body);
    if (!scan.has_matmul) return f;  // the usual kernel: nothing to walk again
    MatmulTiling tiling(std::move(scan));
    return tiling.mutate_function(f);
  });
}

}  // namespace pypto::passes
