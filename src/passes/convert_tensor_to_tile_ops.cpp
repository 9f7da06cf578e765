// ConvertTensorToTileOps: inside InCore functions, elementwise ops written on whole tensors
// (`out = pl.add(pl.mul(x, 2.0), y)`, after FlattenCallExpr one assignment per op) are lowered
// to loads of row blocks, the same ops on tiles and a store into the Out parameter the result
// is returned through. A result returned by value, with no Out parameter for it, gets one
// (`ret0_out`), and each call of the kernel passes a tensor created just before it. When the tiles
// of one block would not fit in half of Vec, the rows are processed in blocks by a loop that
// carries the output tensor. A reduction of a tensor (row_max, col_sum, row_argmax...) may end
// such a chain: the blocks of its operand are reduced into blocks of the result (a reduction over
// rows takes the whole operand as one block). A result assembled into a tensor
// (`t = pl.assemble(t, result, offsets)`, what a `pl.at` scope writes) is stored there at those
// offsets instead. A matmul of two tensors (or slices of them) is its own chain: both operands are
// loaded whole into Mat, moved to Left/Right and multiplied on the cube unit (left in Mat when
// too large, for AutoTileMatmulL0); an operand made by another tensor op, or a product computed
// with, goes through a scratch tensor (tensor_matmul_operands.h), and a tensor accumulating a
// loop of matmuls becomes an Acc tile (tensor_accumulators.h). A gather or scatter of tensors
// is one too: its operands are loaded whole and its tile form applied (tensor_gather_lowering.h).
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "kernel_output_arguments.h"
#include "kernel_scalar_returns.h"
#include "pass_utils.h"
#include "pypto/passes/pass.h"
#include "tensor_accumulators.h"
#include "tensor_copies.h"
#include "tensor_gather_lowering.h"
#include "tensor_matmul_operands.h"
#include "tensor_op_kinds.h"
#include "tensor_op_tiles.h"
#include "tensor_whole_tiles.h"
#include "tensor_window_valid.h"

namespace pypto::passes {

namespace {

using namespace ir;

// Share of Vec the tiles of one block may use together.
constexpr int64_t kBlockBudgetBytes = 192 * 1024 / 2;

using detail::attr_flag;
using detail::int_tuple;
using detail::is_tensor_creation;
using detail::is_tensor_elementwise;
using detail::is_tensor_expand_clone;
using detail::is_tensor_matmul;
using detail::is_tensor_op;
using detail::is_tensor_reduction;
using detail::is_tensor_whole_op;
using detail::reduces_rows;

using detail::load_matrix;
using detail::MatrixWindow;

class TensorOpLowering : public IRMutator {
 public:
  // It reads the calls of earlier statements (virtual_defs_) to fuse chains of tensor ops, so it
  // keeps the old IR alive while it walks (releases_old_statements_ stays false).
  explicit TensorOpLowering(const Function& f) : function_(f) {
    Scan scan(this);
    scan.visit(f.body);
    std::vector<const Var*> outputs;
    for (const auto& p : f.params)
      if (p.direction != ParamDirection::In) outputs.push_back(p.var.get());
    for (const ReturnStmt* r : scan.returns) {
      for (size_t i = 0; i < r->values.size(); ++i) {
        const auto* v = r->values[i]->as<Var>();
        if (!v || !virtual_defs_.count(v)) continue;
        if (i < outputs.size()) {
          destination_[v] = f.params[index_of_param(f, outputs[i])].var;
          continue;
        }
        // Returned by value: as in PyPTO, the kernel gains an Out parameter for the result and
        // its callers allocate the tensor (add_output_arguments below).
        auto out = make_var("ret" + std::to_string(i) + "_out", v->type(), v->span());
        added_params_.push_back({out, ParamDirection::Out});
        added_outputs_.push_back(v->type());
        destination_[v] = out;
        outputs.push_back(out.get());
      }
    }
    // A result read by anything but a tensor op (a store into it, pl.tensor.read, a call) is
    // a tensor in memory: stored once, where it is returned to or into a scratch tensor, and
    // read there.
    for (const auto& [var, span] : scan.other_uses)
      if (virtual_defs_.count(var)) spilled_.insert(var);
    detail::choose_spills(&spilled_, virtual_defs_, def_order_, destination_, &added_scratch_);
  }

  bool has_tensor_ops() const { return !virtual_defs_.empty() || !dropped_.empty(); }
  // The Out parameters added for results returned by value, in order (their tensor types).
  const std::vector<TypePtr>& added_outputs() const { return added_outputs_; }
  // The scratch Out parameters added for spilled results (their tensor types), after those.
  std::vector<TypePtr> added_scratch() const {
    std::vector<TypePtr> types;
    for (const auto& v : added_scratch_) types.push_back(v->type());
    return types;
  }

  FunctionPtr lower(const FunctionPtr& f) {
    FunctionPtr lowered = mutate_function(f);
    if (added_params_.empty() && added_scratch_.empty()) return lowered;
    std::vector<Param> params = lowered->params;
    params.insert(params.end(), added_params_.begin(), added_params_.end());
    for (const auto& scratch : added_scratch_) params.push_back({scratch, ParamDirection::Out});
    // The blocks of an SPMD launch spill side by side: each into its own part of the scratch
    // (detail::kBlockScratchParams).
    FunctionAttrs attrs = lowered->attrs;
    if (!added_scratch_.empty())
      attrs.extra.emplace_back(detail::kBlockScratchParams, std::to_string(added_scratch_.size()));
    return ir::make_node<Function>(lowered->name, lowered->type, std::move(params),
                                   lowered->return_types, lowered->body, lowered->span,
                                   std::move(attrs));
  }

 protected:
  StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s) override {
    if (dropped_.count(s.get())) return make_seq({}, s->span());
    return IRMutator::mutate_eval(s);
  }

  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    if (auto sink = assembled_.find(s.get()); sink != assembled_.end()) {
      // `t2 = pl.assemble(t, result, offsets)`: the result's blocks are stored into t at offsets.
      // Its attributes (atomic=pl.AtomicType.Add) become the stores'.
      const Call& assemble = *s->value->as<Call>();
      store_attrs_ = assemble.attrs;
      StmtPtr stores = materialize(*sink->second, s->span(), mutate(assemble.args[0]), s->var,
                                   mutate(assemble.args[2]));
      store_attrs_.clear();
      return stores;
    }
    auto it = virtual_defs_.find(s->var.get());
    if (it == virtual_defs_.end()) return IRMutator::mutate_assign(s);
    auto dst = destination_.find(s->var.get());
    if (dst == destination_.end()) return make_seq({}, s->span());  // folded into its users
    return materialize(*s->var, s->span(), dst->second, s->var, nullptr);
  }

 private:
  static size_t index_of_param(const Function& f, const Var* v) {
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i].var.get() == v) return i;
    return 0;
  }

  struct Scan : IRVisitor {
    explicit Scan(TensorOpLowering* self) : self(self) {}
    TensorOpLowering* self;
    std::vector<const ReturnStmt*> returns;
    std::vector<std::pair<const Var*, Span>> other_uses;
    void visit_assign(const AssignStmt& s) override {
      if (const auto* gc = detail::as_op_call(s.value, "gather_compare")) {
        throw CompileError(gc->span(),
                           "pl.gather's compare form (kvalue=, cmp_mode=, "
                           "out_cols=) is not supported in InCore code yet; it "
                           "runs in the reference interpreter only");
      }
      if (is_tensor_op(s.value)) {
        self->virtual_defs_[s.var.get()] = s.value->as<Call>();
        self->def_order_.push_back(s.var.get());
        self->var_ptrs_[s.var.get()] = s.var;
        return;  // its operands are folded, not used
      }
      // A tensor op result assembled into a tensor is stored there, block by block.
      if (const auto* a = detail::as_op_call(s.value, "assemble");
          a && a->args.size() == 3 && detail::is_tensor(a->args[0]->type())) {
        const auto* source = a->args[1]->as<Var>();
        if (source && self->virtual_defs_.count(source)) {
          self->assembled_[&s] = source;
          visit(a->args[0]);
          visit(a->args[2]);
          return;
        }
      }
      IRVisitor::visit_assign(s);
    }
    void visit_return(const ReturnStmt& s) override { returns.push_back(&s); }
    // A tensor op whose result nobody takes computes nothing that is kept: it is dropped.
    void visit_eval(const EvalStmt& s) override {
      if (is_tensor_op(s.expr)) {
        self->dropped_.insert(&s);
        return;
      }
      IRVisitor::visit_eval(s);
    }
    // Only tensors can be results of tensor ops, whose other uses are errors.
    void visit_var(const Var& v) override {
      if (detail::is_tensor(v.type())) other_uses.emplace_back(&v, v.span());
    }
  };

  const VarPtr& virtual_var(const Var& v) const { return var_ptrs_.at(&v); }

  // Whether tensor op result `v` is computed inside the chain that uses it: true unless it is
  // spilled (stored once, then loaded by its users), except in its own materialization.
  bool is_fused(const Var* v) const {
    return virtual_defs_.count(v) && (!spilled_.count(v) || v == materializing_);
  }
  // The tensor a leaf is loaded from: a spilled result's stored version, else the leaf itself.
  ExprPtr stored_tensor(const ExprPtr& e) const {
    const auto* v = e->as<Var>();
    if (!v || !spilled_.count(v)) return e;
    auto it = var_map.find(v);
    return it == var_map.end() ? e : it->second;
  }

  // Collects the distinct tensor leaves and op nodes of the tree rooted at `e`.
  void collect(const ExprPtr& e, std::vector<const Var*>* leaves, std::vector<const Var*>* nodes) {
    const auto* v = e->as<Var>();
    if (!v) return;
    if (is_fused(v)) {
      if (std::find(nodes->begin(), nodes->end(), v) != nodes->end()) return;
      for (const auto& a : virtual_defs_.at(v)->args) collect(a, leaves, nodes);
      nodes->push_back(v);
    } else if (detail::is_tensor(v->type())) {
      if (std::find(leaves->begin(), leaves->end(), v) == leaves->end()) leaves->push_back(v);
    }
  }

  struct Block {
    std::vector<int64_t> shape;
    ExprPtr row_offset;
    std::vector<StmtPtr>* out;
    ir::NodeMap<const Var*, ExprPtr> tiles;  // tensor var -> its tile in this block
  };

  // Where a block sits in the operands (at its row offset), and in the destination (shifted by
  // the offsets the result is assembled at, when it is).
  ExprPtr offsets(const Block& b) const {
    std::vector<ExprPtr> els{b.row_offset};
    for (size_t i = 1; i < b.shape.size(); ++i) els.push_back(make_int(0));
    return make_tuple(std::move(els));
  }
  ExprPtr destination_offsets(const Block& b, const ExprPtr& base) const {
    if (!base) return offsets(b);
    const auto* tuple = base->as<MakeTuple>();
    if (!tuple || tuple->elements.size() != b.shape.size()) return offsets(b);
    std::vector<ExprPtr> els = tuple->elements;
    const auto* row = b.row_offset->as<IntImm>();
    if (!row || row->value != 0) els[0] = make_binary(BinaryOp::Add, els[0], b.row_offset);
    return make_tuple(std::move(els));
  }

  // The part of a tensor of `shape` that a block covers, as a block of its own: the block
  // itself for a tensor of the op's shape; for the broadcast operand of row_expand_* ([rows, 1])
  // the block's rows of it, for that of col_expand_* ([1, cols]) all of it in every block.
  // False when the tensor has neither shape.
  bool block_part(const std::vector<int64_t>& shape, const Block& b, Block* part) const {
    part->shape = b.shape;
    part->row_offset = b.row_offset;
    part->out = b.out;
    if (shape == function_shape_) return true;
    if (shape.size() != 2 || function_shape_.size() != 2) return false;
    if (shape == std::vector<int64_t>{function_shape_[0], 1}) {
      part->shape = {b.shape[0], 1};
      return true;
    }
    if (shape == std::vector<int64_t>{1, function_shape_[1]}) {
      part->shape = shape;
      part->row_offset = make_int(0);
      return true;
    }
    return false;
  }

  ExprPtr block_value(const ExprPtr& e, Block* whole) {
    const auto* v = e->as<Var>();
    if (!v || !detail::is_tensor(v->type())) return e;  // scalars pass through
    auto known = whole->tiles.find(v);
    if (known != whole->tiles.end()) return known->second;
    ExprPtr value;
    std::string name;
    const auto* tensor = v->type()->as<TensorType>();
    Block part;
    // A tensor narrowed by pl.set_validshape takes part by its valid region in a computation
    // over that region (an op that reads it whole, such as fillpad, takes all of it).
    const bool by_region =
        tensor->view && !tensor->view->valid_shape.empty() && tensor->shape != function_shape_;
    if (!block_part(by_region ? tensor->view->valid_shape : tensor->shape, *whole, &part)) {
      throw CompileError(v->span(), "tensor '" + v->name + "' of shape " +
                                        shape_to_string(tensor->shape) +
                                        " does not match the shape " +
                                        shape_to_string(function_shape_) + " of the tensor op");
    }
    Block* b = &part;
    if (auto def = virtual_defs_.find(v); def != virtual_defs_.end() && is_fused(v)) {
      const Call& c = *def->second;
      std::vector<ExprPtr> args;
      for (const auto& a : c.args)
        args.push_back(is_tensor_creation(&c) ? a : block_value(a, whole));
      value = detail::tile_form(c, std::move(args), b->shape, v->name, whole->out);
      name = v->name;
    } else {
      std::vector<ExprPtr> shape;
      for (int64_t d : b->shape) shape.push_back(make_int(d));
      value = make_op_call("load", {stored_tensor(e), offsets(*b), make_tuple(std::move(shape))},
                           {}, v->span());
      name = v->name + "_tile";
    }
    auto tile = make_var(name, value->type(), v->span());
    whole->out->push_back(ir::make_node<AssignStmt>(tile, value, v->span()));
    whole->tiles[v] = tile;
    return tile;
  }

  // Computes the chain of tensor ops ending at `value` block by block and stores each block into
  // `destination` (at `base_offsets` when the value is assembled into it, else at the block's own
  // offsets); `bound` becomes the destination's final version.
  StmtPtr materialize(const Var& value, Span span, const ExprPtr& destination, const VarPtr& bound,
                      const ExprPtr& base_offsets) {
    const auto* result = value.type()->as<TensorType>();
    const TypePtr& destination_type = destination->type();
    materializing_ = &value;
    const std::string& destination_name = bound->name;
    // A reduction ends the chain: its operand gives the blocks' shape.
    const Call* root = virtual_defs_.at(&value);
    if (is_tensor_matmul(root))
      return materialize_matmul(*root, span, destination, bound, base_offsets);
    if (is_tensor_expand_clone(root))
      return materialize_expand_clone(*root, span, destination, bound, base_offsets);
    if (detail::is_tensor_gather_op(root))
      return materialize_gather(*root, span, destination, bound, base_offsets);
    if (is_tensor_whole_op(root))
      return materialize_whole_op(*root, span, destination, bound, base_offsets);
    const bool reduction = is_tensor_reduction(root);
    // A result narrowed to a valid region (pl.set_validshape of its operands) is computed and
    // written over that region only: outside it there is no data.
    const bool narrowed = !reduction && result->view && !result->view->valid_shape.empty();
    const auto& shape = reduction  ? root->args[0]->type()->as<TensorType>()->shape
                        : narrowed ? result->view->valid_shape
                                   : result->shape;
    function_shape_ = shape;
    std::vector<const Var*> leaves, nodes;
    collect(virtual_var(value), &leaves, &nodes);
    for (const Var* n : nodes) {
      if (n != &value && is_tensor_matmul(virtual_defs_.at(n))) {
        throw CompileError(virtual_defs_.at(n)->span(),
                           "the result of pl.matmul on tensors can only be stored, assembled or "
                           "returned; to compute with it, write the matmul on tiles (pl.load to "
                           "Mat, pl.move to Left/Right, pl.matmul) and move the product to Vec");
      }
      if (n != &value && (is_tensor_expand_clone(virtual_defs_.at(n)) ||
                          is_tensor_whole_op(virtual_defs_.at(n)))) {
        throw CompileError(virtual_defs_.at(n)->span(),
                           "the result of pl." + virtual_defs_.at(n)->callee +
                               " on tensors can only be stored, assembled or returned; to "
                               "compute with it, write it on tiles");
      }
      if (n != &value && detail::is_tensor_gather_op(virtual_defs_.at(n))) {
        throw CompileError(virtual_defs_.at(n)->span(),
                           "the result of pl." + virtual_defs_.at(n)->callee +
                               " on tensors can only be stored, assembled or returned; to "
                               "compute with it, load tiles and apply the tile form");
      }
      if (n != &value && is_tensor_reduction(virtual_defs_.at(n))) {
        throw CompileError(virtual_defs_.at(n)->span(),
                           "the result of pl." + virtual_defs_.at(n)->callee +
                               " on tensors can only be stored or returned; to compute with it, "
                               "load tiles and reduce those");
      }
    }
    int64_t rows = shape.empty() ? 1 : shape[0];
    int64_t row_elems = 1;
    for (size_t i = 1; i < shape.size(); ++i) row_elems *= shape[i];
    int64_t elem_bytes = dtype_bytes(result->dtype);
    for (const Var* l : leaves)
      elem_bytes = std::max(elem_bytes, dtype_bytes(l->type()->as<TensorType>()->dtype));
    int64_t tiles = static_cast<int64_t>(leaves.size() + nodes.size());
    int64_t max_rows = kBlockBudgetBytes / std::max<int64_t>(1, row_elems * elem_bytes * tiles);
    int64_t block_rows = 0;
    for (int64_t d = std::min(rows, max_rows); d >= 1; --d) {
      if (rows % d == 0) {
        block_rows = d;
        break;
      }
    }
    if (block_rows == 0) {
      throw CompileError(span, "tensor op result '" + value.name + "' has rows of " +
                                   std::to_string(row_elems * elem_bytes) +
                                   " bytes, too wide to process in Vec");
    }
    std::vector<int64_t> block_shape = shape;
    if (block_shape.empty()) block_shape.push_back(1);
    block_shape[0] = block_rows;
    int64_t blocks = rows / block_rows;
    // A generator's words depend on the element's position in the whole tensor.
    for (const Var* n : nodes) {
      if (blocks > 1 && virtual_defs_.at(n)->callee == "random") {
        throw CompileError(virtual_defs_.at(n)->span(),
                           "pl.random of a tensor whose computation does not fit Vec in one "
                           "block; generate tiles with pl.tile.random");
      }
    }
    if (reduction && reduces_rows(*root) && blocks > 1) {
      throw CompileError(span, "pl." + root->callee + " of a tensor of shape " +
                                   shape_to_string(shape) +
                                   " needs it in Vec at once, which it does not fit; load "
                                   "tiles of it and reduce those");
    }

    // A block of the result, rounded to the destination's dtype when it is assembled into a
    // tensor of another float type.
    auto result_block = [&](Block* b) {
      ExprPtr tile = block_value(virtual_var(value), b);
      const DataType want = destination_type->as<TensorType>()->dtype;
      if (tile->type()->as<TileType>()->dtype == want) return tile;
      ExprPtr cast = make_op_call("cast", {tile}, {{"target_type", want}}, span);
      auto rounded = make_var(value.name + "_rounded", cast->type(), span);
      b->out->push_back(ir::make_node<AssignStmt>(rounded, cast, span));
      return ExprPtr(rounded);
    };
    std::vector<StmtPtr> out;
    if (blocks == 1) {
      Block b{block_shape, make_int(0), &out, {}};
      ExprPtr tile = result_block(&b);
      auto stored = make_var(destination_name, destination_type, span);
      out.push_back(ir::make_node<AssignStmt>(
          stored,
          make_op_call("store", {tile, destination_offsets(b, base_offsets), destination},
                       store_attrs_, span),
          span));
      var_map[bound.get()] = stored;
      return make_seq(std::move(out), span);
    }
    auto row_block = make_var("row_block", scalar_type(DataType::INT64), span);
    auto carried = make_var(destination_name, destination_type, span);
    std::vector<StmtPtr> body;
    Block b{block_shape, make_binary(BinaryOp::Mul, row_block, make_int(block_rows)), &body, {}};
    ExprPtr tile = result_block(&b);
    auto stored = make_var(destination_name, destination_type, span);
    body.push_back(ir::make_node<AssignStmt>(
        stored,
        make_op_call("store", {tile, destination_offsets(b, base_offsets), carried}, store_attrs_,
                     span),
        span));
    body.push_back(ir::make_node<YieldStmt>(std::vector<ExprPtr>{stored}, span));
    auto final_value = make_var(destination_name, destination_type, span);
    var_map[bound.get()] = final_value;
    return ir::make_node<ForStmt>(row_block, make_int(0), make_int(blocks), make_int(1),
                                  ForKind::Sequential, std::vector<VarPtr>{carried},
                                  std::vector<ExprPtr>{destination}, make_seq(body, span),
                                  std::vector<VarPtr>{final_value}, span);
  }

  // Stores a result made of matrices into the destination: a 2-D result is one matrix
  // (`batches` 0), a 3-D one `batches` of them, stored by a loop over the batch index.
  // `matrix(b, out)` appends to `out` the statements that compute matrix b (b is null for a 2-D
  // result) and returns its tile.
  StmtPtr store_matrices(
      int64_t batches, int64_t rows, int64_t cols, Span span, const ExprPtr& destination,
      const VarPtr& bound, const ExprPtr& base_offsets,
      const std::function<ExprPtr(const ExprPtr&, std::vector<StmtPtr>*)>& matrix) {
    std::vector<int64_t> block_shape = {rows, cols};
    if (batches > 0) block_shape.insert(block_shape.begin(), 1);
    auto store = [&](const ExprPtr& tile, const Block& block, const ExprPtr& into) {
      auto stored = make_var(bound->name, destination->type(), span);
      block.out->push_back(ir::make_node<AssignStmt>(
          stored,
          make_op_call("store", {tile, destination_offsets(block, base_offsets), into},
                       store_attrs_, span),
          span));
      return stored;
    };
    if (batches == 0) {
      std::vector<StmtPtr> out;
      Block whole{block_shape, make_int(0), &out, {}};
      var_map[bound.get()] = store(matrix(nullptr, &out), whole, destination);
      return make_seq(std::move(out), span);
    }
    auto b = make_var("batch", scalar_type(DataType::INT64), span);
    auto carried = make_var(bound->name, destination->type(), span);
    std::vector<StmtPtr> body;
    Block one{block_shape, b, &body, {}};
    auto stored = store(matrix(b, &body), one, carried);
    body.push_back(ir::make_node<YieldStmt>(std::vector<ExprPtr>{stored}, span));
    auto final_value = make_var(bound->name, destination->type(), span);
    var_map[bound.get()] = final_value;
    return ir::make_node<ForStmt>(b, make_int(0), make_int(batches), make_int(1),
                                  ForKind::Sequential, std::vector<VarPtr>{carried},
                                  std::vector<ExprPtr>{destination}, make_seq(body, span),
                                  std::vector<VarPtr>{final_value}, span);
  }

  // The Acc tile of a tensor matmul (or matmul_acc, whose accumulator is the product of an
  // earlier tensor matmul) for matrix b: operands loaded into Mat and moved to Left/Right.
  ExprPtr matmul_tile(const Call& mm, const ExprPtr& b, Span span, std::vector<StmtPtr>* out) {
    const size_t first = mm.callee == "matmul_acc" ? 1 : 0;
    ExprPtr acc;
    if (first == 1) {
      const auto* v = mm.args[0]->as<Var>();
      auto def = v ? virtual_defs_.find(v) : virtual_defs_.end();
      if (def == virtual_defs_.end() || !is_tensor_matmul(def->second)) {
        throw CompileError(mm.args[0]->span(),
                           "the accumulator of pl.matmul_acc on tensors must be the result of "
                           "pl.matmul (or pl.matmul_acc) on tensors in the same kernel");
      }
      acc = matmul_tile(*def->second, b, span, out);
    }
    const bool fits_l0 = detail::tensor_matmul_fits_l0(mm);
    auto operand = [&](size_t i, MemorySpace space) -> ExprPtr {
      const auto* v = mm.args[i]->as<Var>();
      const bool built = detail::as_tile(mm.args[i]);  // a Mat tile (create_l1 + gather_row)
      const Call* def = v && is_fused(v) ? virtual_defs_.at(v) : nullptr;
      const bool paged = def && def->callee == "paged_gather";  // gathered straight into Mat
      if (!v || (def && !paged && !built)) {
        throw CompileError(mm.args[i]->span(),
                           "an operand of pl.matmul on tensors must be a tensor (a parameter or a "
                           "slice of one, or pl.paged_gather's rows), not the result of another "
                           "tensor op");
      }
      ExprPtr mat =
          built   ? mm.args[i]
          : paged ? detail::paged_gather_into(*def, MemorySpace::Mat, out)
                  : load_matrix(stored_tensor(mm.args[i]), b, {{"target_memory", MemorySpace::Mat}},
                                span, out, v->name + "_mat");
      if (!fits_l0) return mat;  // AutoTileMatmulL0 splits it into blocks that fit
      ExprPtr moved = make_op_call("move", {mat}, {{"target_memory", space}}, span);
      auto r = make_var(v->name + (space == MemorySpace::Left ? "_left" : "_right"), moved->type(),
                        span);
      out->push_back(ir::make_node<AssignStmt>(r, moved, span));
      return r;
    };
    Attrs attrs;
    for (const auto& [key, v] : mm.attrs)
      if (key != "out_dtype") attrs.emplace_back(key, v);
    // Operands too large for Left/Right, or a product too large for Acc, stay in Mat for
    // AutoTileMatmulL0, unless the product fits and K blocks loaded one at a time fit.
    const bool built = detail::as_tile(mm.args[first]) || detail::as_tile(mm.args[first + 1]);
    if (first == 0 && !fits_l0 && !built && detail::tensor_product_fits_acc(mm)) {
      if (ExprPtr split = k_split_matmul(mm, b, attrs, span, out)) return split;
    }
    ExprPtr lhs = operand(first, MemorySpace::Left);
    ExprPtr rhs = operand(first + 1, MemorySpace::Right);
    std::vector<ExprPtr> args = {lhs, rhs};
    if (acc) args.insert(args.begin(), acc);
    ExprPtr product = make_op_call(mm.callee, std::move(args), attrs, span);
    auto p = make_var("product", product->type(), span);
    out->push_back(ir::make_node<AssignStmt>(p, product, span));
    return p;
  }

  // A matmul of tensors whose operands do not fit Left/Right whole: K split into the largest
  // blocks that fit, each block's product accumulated onto one Acc tile by a loop
  // (matmul_acc with init_cond on the first block). Null when the operands fit whole.
  ExprPtr k_split_matmul(const Call& mm, const ExprPtr& b, const Attrs& attrs, Span span,
                         std::vector<StmtPtr>* out) {
    auto matrix_dims = [](const ExprPtr& t) {
      const auto& s = t->type()->as<TensorType>()->shape;
      return std::pair<int64_t, int64_t>{s[s.size() - 2], s.back()};
    };
    auto [a_rows, a_cols] = matrix_dims(mm.args[0]);
    auto [b_rows, b_cols] = matrix_dims(mm.args[1]);
    const bool a_trans = attr_flag(mm.attrs, "a_trans");
    const bool b_trans = attr_flag(mm.attrs, "b_trans");
    const int64_t m = a_trans ? a_cols : a_rows, k = a_trans ? a_rows : a_cols;
    const int64_t n = b_trans ? b_rows : b_cols;
    const DataType dtype = mm.args[0]->type()->as<TensorType>()->dtype;
    const int64_t esz = dtype_bytes(dtype);
    auto fits = [&](int64_t kb) {
      return m * kb * esz <= memory_space_capacity(MemorySpace::Left) &&
             kb * n * esz <= memory_space_capacity(MemorySpace::Right) &&
             (m + n) * kb * esz <= memory_space_capacity(MemorySpace::Mat);
    };
    if (fits(k)) return nullptr;
    int64_t kb = 0;
    for (int64_t d = k - 1; d >= 1 && kb == 0; --d)
      if (k % d == 0 && fits(d)) kb = d;
    if (kb == 0) return nullptr;  // not even one row of K fits: the allocation says so
    const DataType acc_dtype = is_float(dtype) ? DataType::FP32 : DataType::INT32;
    ExprPtr start = make_op_call("create_tile", {int_tuple({m, n})},
                                 {{"dtype", acc_dtype}, {"target_memory", MemorySpace::Acc}}, span);
    auto acc0 = make_var("acc", start->type(), span);
    out->push_back(ir::make_node<AssignStmt>(acc0, start, span));
    auto kblock = make_var("k_block", scalar_type(DataType::INT64), span);
    auto acc_in = make_var("acc", start->type(), span);
    std::vector<StmtPtr> body;
    ExprPtr k0 = make_binary(BinaryOp::Mul, kblock, make_int(kb));
    auto operand = [&](size_t i, int k_axis, MemorySpace space, const char* suffix) {
      const auto* v = mm.args[i]->as<Var>();
      if (!v || is_fused(v)) return ExprPtr();
      ExprPtr mat = load_matrix(stored_tensor(mm.args[i]), b, {{"target_memory", MemorySpace::Mat}},
                                span, &body, v->name + "_mat", MatrixWindow{k_axis, k0, kb});
      ExprPtr moved = make_op_call("move", {mat}, {{"target_memory", space}}, span);
      auto r = make_var(v->name + suffix, moved->type(), span);
      body.push_back(ir::make_node<AssignStmt>(r, moved, span));
      return ExprPtr(r);
    };
    ExprPtr lhs = operand(0, a_trans ? 0 : 1, MemorySpace::Left, "_left");
    ExprPtr rhs = operand(1, b_trans ? 1 : 0, MemorySpace::Right, "_right");
    if (!lhs || !rhs) return nullptr;  // the whole-operand path reports the operand
    ExprPtr first_block = make_binary(BinaryOp::Eq, kblock, make_int(0));
    ExprPtr step = make_op_call("matmul_acc", {acc_in, lhs, rhs, first_block}, attrs, span);
    auto acc_out = make_var("acc", step->type(), span);
    body.push_back(ir::make_node<AssignStmt>(acc_out, step, span));
    body.push_back(ir::make_node<YieldStmt>(std::vector<ExprPtr>{acc_out}, span));
    auto product = make_var("product", step->type(), span);
    out->push_back(ir::make_node<ForStmt>(kblock, make_int(0), make_int(k / kb), make_int(1),
                                          ForKind::Sequential, std::vector<VarPtr>{acc_in},
                                          std::vector<ExprPtr>{acc0}, make_seq(body, span),
                                          std::vector<VarPtr>{product}, span));
    return product;
  }

  // A tensor matmul (chain) stored into the destination, matrix by matrix.
  StmtPtr materialize_matmul(const Call& matmul, Span span, const ExprPtr& destination,
                             const VarPtr& bound, const ExprPtr& base_offsets) {
    const auto& shape = matmul.type()->as<TensorType>()->shape;
    const bool batched = shape.size() == 3;
    return store_matrices(batched ? shape[0] : 0, shape[shape.size() - 2], shape.back(), span,
                          destination, bound, base_offsets,
                          [&](const ExprPtr& b, std::vector<StmtPtr>* out) {
                            return matmul_tile(matmul, b, span, out);
                          });
  }

  // expand_clone(src, target): each matrix of the result (one per index of a leading batch
  // dimension) is src's matrix, loaded as a 2-D tile and repeated along its unit dimensions
  // with col_expand (a row down the rows) and row_expand (a column along the columns).
  StmtPtr materialize_expand_clone(const Call& expand, Span span, const ExprPtr& destination,
                                   const VarPtr& bound, const ExprPtr& base_offsets) {
    const auto* src = expand.args[0]->as<Var>();
    if (!src || virtual_defs_.count(src)) {
      throw CompileError(expand.args[0]->span(),
                         "the source of pl.expand_clone must be a tensor (a parameter or a slice "
                         "of one), not the result of another tensor op");
    }
    const auto& from = src->type()->as<TensorType>()->shape;
    const auto& to = expand.type()->as<TensorType>()->shape;
    const DataType dtype = expand.type()->as<TensorType>()->dtype;
    if (to.size() != 2 && to.size() != 3) {
      throw CompileError(expand.span(),
                         "pl.expand_clone takes 2-D or 3-D tensors, got " + shape_to_string(to));
    }
    const int64_t rows = to[to.size() - 2], cols = to.back();
    const int64_t src_rows = from[from.size() - 2], src_cols = from.back();
    auto matrix = [&](const ExprPtr& b, std::vector<StmtPtr>* out) {
      ExprPtr tile = load_matrix(expand.args[0], b, {}, span, out, src->name + "_tile");
      auto expanded = [&](const std::string& name, const char* op, int64_t c) {
        ExprPtr target =
            make_op_call("create_tile", {int_tuple({rows, c})}, {{"dtype", dtype}}, span);
        auto t = make_var("expanded", target->type(), span);
        out->push_back(ir::make_node<AssignStmt>(t, target, span));
        ExprPtr value = make_op_call(op, {t, tile}, {}, span);
        auto v = make_var(name, value->type(), span);
        out->push_back(ir::make_node<AssignStmt>(v, value, span));
        tile = v;
      };
      if (src_rows == 1 && rows > 1) expanded("rows_repeated", "col_expand", src_cols);
      if (src_cols == 1 && cols > 1) expanded("cols_repeated", "row_expand", cols);
      return tile;
    };
    return store_matrices(to.size() == 3 ? to[0] : 0, rows, cols, span, destination, bound,
                          base_offsets, matrix);
  }

  // A gather or scatter of tensors (tensor_gather_lowering.h): its operands loaded whole, the
  // tile form applied, the result stored matrix by matrix.
  StmtPtr materialize_gather(const Call& op, Span span, const ExprPtr& destination,
                             const VarPtr& bound, const ExprPtr& base_offsets) {
    const auto& shape = op.type()->as<TensorType>()->shape;
    const int64_t batches = detail::gather_op_batches(op);
    // An operand made by an earlier gather or scatter of 2-D tensors is computed in place (a
    // chain); a parameter (or a view of one) is loaded.
    for (const auto& a : op.args) {
      const auto* v = a->as<Var>();
      if (batches != 0 && v && virtual_defs_.count(v)) {
        throw CompileError(a->span(), "an operand of pl." + op.callee +
                                          " on 3-D tensors must be a tensor (a parameter or a "
                                          "slice of one), not the result of another tensor op");
      }
    }
    detail::OperandTile operand = [&](const ExprPtr& t, const ExprPtr& b,
                                      std::vector<StmtPtr>* out) -> ExprPtr {
      const auto* v = t->as<Var>();
      auto def = v ? virtual_defs_.find(v) : virtual_defs_.end();
      if (def == virtual_defs_.end()) return detail::load_whole(t, b, span, out);
      if (!detail::is_tensor_gather_op(def->second) || batches != 0 ||
          detail::gather_op_batches(*def->second) != 0) {
        throw CompileError(t->span(), "an operand of pl." + op.callee +
                                          " on tensors must be a tensor (a parameter or a slice "
                                          "of one, or another gather or scatter of its shape), "
                                          "not the result of pl." +
                                          def->second->callee);
      }
      return detail::gather_op_matrix(*def->second, b, out, operand);
    };
    return store_matrices(batches, shape[shape.size() - 2], shape.back(), span, destination, bound,
                          base_offsets, [&](const ExprPtr& b, std::vector<StmtPtr>* out) {
                            return detail::gather_op_matrix(op, b, out, operand);
                          });
  }

  // An op of is_tensor_whole_op: its tensor operands computed whole (loaded, or an elementwise
  // chain or pl.arange as one block), the tile op, one store.
  StmtPtr materialize_whole_op(const Call& op, Span span, const ExprPtr& destination,
                               const VarPtr& bound, const ExprPtr& base_offsets) {
    for (const auto& a : op.args) {
      const auto* v = a->as<Var>();
      auto def = v ? virtual_defs_.find(v) : virtual_defs_.end();
      if (def != virtual_defs_.end() && !is_tensor_elementwise(a) &&
          !is_tensor_creation(def->second)) {
        throw CompileError(a->span(), "an operand of pl." + op.callee +
                                          " on tensors must be a tensor or the result of "
                                          "elementwise tensor ops, not of pl." +
                                          def->second->callee);
      }
    }
    function_shape_ = op.args[0]->type()->as<TensorType>()->shape;
    const auto& shape = op.type()->as<TensorType>()->shape;
    auto matrix = [&](const ExprPtr&, std::vector<StmtPtr>* out) {
      Block whole{function_shape_, make_int(0), out, {}};
      std::vector<ExprPtr> args;
      for (const auto& a : op.args) args.push_back(block_value(a, &whole));
      ExprPtr value = make_op_call(op.callee, std::move(args), op.attrs, span);
      auto v = make_var(bound->name + "_tile", value->type(), span);
      out->push_back(ir::make_node<AssignStmt>(v, value, span));
      return ExprPtr(v);
    };
    return store_matrices(0, shape[0], shape[1], span, destination, bound, base_offsets, matrix);
  }

  const Function& function_;
  std::vector<Param> added_params_;
  std::vector<TypePtr> added_outputs_;
  ir::NodeMap<const Var*, const Call*> virtual_defs_;
  ir::NodeMap<const Var*, VarPtr> destination_;
  // `t2 = pl.assemble(t, result, offsets)` statements whose result is a tensor op's.
  std::unordered_map<const AssignStmt*, const Var*> assembled_;
  std::unordered_set<const EvalStmt*> dropped_;  // tensor ops evaluated for nothing
  Attrs store_attrs_;                         // of the stores being built: the assemble's (atomic=)
  ir::NodeMap<const Var*, VarPtr> var_ptrs_;  // each tensor op result's shared pointer
  std::vector<int64_t> function_shape_;
  ir::NodeSet<const Var*> spilled_;    // results stored to a tensor and loaded by their users
  std::vector<VarPtr> added_scratch_;  // Out parameters that hold spilled results
  std::vector<const Var*> def_order_;  // tensor op results in program order
  const Var* materializing_ = nullptr;
};

}  // namespace

ProgramPtr convert_tensor_to_tile_ops(const ProgramPtr& program) {
  std::unordered_map<std::string, detail::AddedParameters> added;
  auto lower = [&](const FunctionPtr& original) -> FunctionPtr {
    FunctionPtr f = detail::rewrite_tensor_copies(detail::rewrite_tensor_accumulators(original));
    // Computed tensors carried by loops or branches cannot join a chain of row blocks: the
    // kernel keeps them whole in tiles (tensor_whole_tiles.h).
    if (detail::carries_computed_tensors(*f)) {
      std::vector<TypePtr> outputs;
      FunctionPtr g = detail::lower_to_whole_tiles(f, &outputs);
      if (!outputs.empty()) added[f->name] = {outputs, {}};
      return g;
    }
    TensorOpLowering lowering(*f);
    // A kernel already written in tile ops (the usual case) has nothing to lower: no second walk.
    if (!lowering.has_tensor_ops()) return f;
    FunctionPtr g = lowering.lower(f);
    // A spilled result is in memory now: a copy of it (or of a view of it, as a pl.aiv_shard of
    // a tensor-level product is) into another tensor is a load and a store like any other.
    if (!lowering.added_scratch().empty()) g = detail::rewrite_tensor_copies(g);
    if (!lowering.added_outputs().empty() || !lowering.added_scratch().empty())
      added[f->name] = {lowering.added_outputs(), lowering.added_scratch()};
    return g;
  };
  // The loads made, the windows' valid regions go into them (tensor_window_valid.h).
  // Scalars a kernel returns leave it through one-element outputs (kernel_scalar_returns.h).
  std::unordered_map<std::string, detail::ScalarOutputs> scalars;
  ProgramPtr lowered = detail::map_incore_functions(program, [&](const FunctionPtr& f) {
    detail::ScalarOutputs outputs;
    FunctionPtr g = detail::return_scalars_through_outputs(
        detail::fold_window_valid_shapes(lower(f)), &outputs);
    if (!outputs.param_indices.empty()) scalars[f->name] = std::move(outputs);
    return g;
  });
  if (added.empty() && scalars.empty()) return lowered;
  return detail::map_functions(lowered, [&](const FunctionPtr& f) {
    if (is_kernel(f->type)) return f;
    FunctionPtr g = added.empty() ? f : detail::pass_added_outputs(f, added);
    return scalars.empty() ? g : detail::pass_scalar_outputs(g, scalars);
  });
}

}  // namespace pypto::passes
