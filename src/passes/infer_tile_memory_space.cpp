// InferTileMemorySpace: decides the memory space of every tile of an InCore function.
// Compute ops work in Vec, matmul writes Acc and reads Left/Right. A load without an explicit
// target that only feeds matmuls (or moves to Left/Right) is retargeted to Mat, and a Mat tile
// used as a matmul operand gets a move to Left/Right inserted before the matmul. Uses that no legal
// move can fix (a Vec tile as a matmul operand, an Acc tile in an elementwise op) are rejected.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pass_utils.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

std::string legal_moves_from(MemorySpace from, Target target) {
  std::string out;
  for (auto to :
       {MemorySpace::DDR, MemorySpace::Vec, MemorySpace::Mat, MemorySpace::Left, MemorySpace::Right,
        MemorySpace::Acc, MemorySpace::Bias, MemorySpace::LeftScale, MemorySpace::RightScale}) {
    if (!is_legal_transfer(from, to, target)) continue;
    if (!out.empty()) out += ", ";
    out += memory_space_name(to);
  }
  return out.empty() ? "none" : out;
}

// The space each matmul operand position must be in (nullopt: not a matmul operand).
std::optional<MemorySpace> matmul_operand_space(const Call& c, size_t arg) {
  if (c.callee == "matmul" || c.callee == "matmul_bias" || c.callee == "gemv" ||
      c.callee == "gemv_bias" || c.callee == "batch_matmul") {
    if (arg == 0) return MemorySpace::Left;
    if (arg == 1) return MemorySpace::Right;
  } else if (c.callee == "matmul_acc" || c.callee == "gemv_acc" || c.callee == "batch_matmul_acc") {
    if (arg == 0) return MemorySpace::Acc;
    if (arg == 1) return MemorySpace::Left;
    if (arg == 2) return MemorySpace::Right;
  } else if (c.callee == "matmul_mx" || c.callee == "matmul_mx_bias" ||
             c.callee == "matmul_mx_acc") {
    // lhs, lhs_scale, rhs, rhs_scale after the accumulator of matmul_mx_acc. The scales are
    // read from Mat, or from the scale buffer a program moved them to (scale_buffer).
    const size_t first = c.callee == "matmul_mx_acc" ? 1 : 0;
    if (first == 1 && arg == 0) return MemorySpace::Acc;
    if (arg == first) return MemorySpace::Left;
    if (arg == first + 1 || arg == first + 3) return MemorySpace::Mat;
    if (arg == first + 2) return MemorySpace::Right;
  }
  return std::nullopt;
}

// The scale buffer an MX matmul's scale operand may also be read from (a5's LeftScale for the
// lhs scale, RightScale for the rhs one).
std::optional<MemorySpace> scale_buffer(const Call& c, size_t arg) {
  if (c.callee != "matmul_mx" && c.callee != "matmul_mx_bias" && c.callee != "matmul_mx_acc")
    return std::nullopt;
  const size_t first = c.callee == "matmul_mx_acc" ? 1 : 0;
  if (arg == first + 1) return MemorySpace::LeftScale;
  if (arg == first + 3) return MemorySpace::RightScale;
  return std::nullopt;
}

// The target_memory of a pl.move.
std::optional<MemorySpace> move_target(const Call& c) {
  if (const auto* a = find_attr(c.attrs, "target_memory"))
    if (const auto* m = std::get_if<MemorySpace>(a)) return *m;
  return std::nullopt;
}

// Ops that compute in Vec: their tile operands must be there, and so is their result.
bool computes_in_vec(OpCategory category) {
  switch (category) {
    case OpCategory::ElementwiseBinary:
    case OpCategory::ElementwiseUnary:
    case OpCategory::Cast:
    case OpCategory::RowReduce:
    case OpCategory::RowExpand:
    case OpCategory::ColExpand:
    case OpCategory::Concat:
    case OpCategory::FillPad:
    case OpCategory::ColReduce:
    case OpCategory::ArgReduce:
    case OpCategory::Transpose:
    case OpCategory::Compare:
    case OpCategory::Select:
    case OpCategory::Write:
    case OpCategory::Gather:
    case OpCategory::Scatter:
    case OpCategory::Generate:
    case OpCategory::Sort:
    case OpCategory::FillPadExpand:
      return true;
    default:
      return false;
  }
}

// Loads whose tile is used only as a Left/Right matmul operand (or an MX scale, read from Mat),
// or moved to Left/Right (PyPTO writes `pl.move(pl.load(a, ...), target_memory=pl.Mem.Left)`).
class MatmulOnlyLoads : public IRVisitor {
 public:
  ir::NodeMap<const Var*, bool> matmul_only;

 protected:
  void visit_assign(const AssignStmt& s) override {
    if (const auto* load = detail::as_op_call(s.value, "load")) {
      if (!find_attr(load->attrs, "target_memory")) matmul_only.emplace(s.var.get(), false);
    }
    if (const auto* c = detail::as_op_call(s.value)) {
      for (size_t i = 0; i < c->args.size(); ++i) {
        const auto* v = c->args[i]->as<Var>();
        if (!v || !matmul_only.count(v)) {
          visit(c->args[i]);
          continue;
        }
        auto space = matmul_operand_space(*c, i);
        bool operand = space && (*space == MemorySpace::Left || *space == MemorySpace::Right ||
                                 *space == MemorySpace::Mat);
        if (c->callee == "move" && i == 0) {
          space = move_target(*c);
          operand = space && (*space == MemorySpace::Left || *space == MemorySpace::Right);
        }
        auto& flag = matmul_only[v];
        flag = uses_.insert(v).second ? operand : (flag && operand);
      }
      return;
    }
    IRVisitor::visit_assign(s);
  }
  void visit_var(const Var& v) override {
    if (matmul_only.count(&v)) {
      matmul_only[&v] = false;
      uses_.insert(&v);
    }
  }

 private:
  ir::NodeSet<const Var*> uses_;
};

class SpaceInference : public IRMutator {
 public:
  SpaceInference(const Function& f, Target target) : target_(target) {
    // Only the statement at hand and variables are read during the walk (see IRMutator).
    releases_old_statements_ = true;
    var_map.reserve(detail::expected_variable_count(f));
    MatmulOnlyLoads loads;
    loads.visit(f.body);
    for (const auto& [v, only] : loads.matmul_only)
      if (only) to_mat_.insert(v);
  }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    const auto* call = detail::as_op_call(s->value);
    if (!call) {
      ExprPtr value = mutate(s->value);
      if (const auto* t = detail::as_tile(value)) {
        if (t->space) define(s->var, *t->space);
      }
      return ir::make_node<AssignStmt>(remap(s->var), value, s->span());
    }
    std::vector<StmtPtr> out;
    std::vector<ExprPtr> args;
    const auto category = detail::op_category(*call);
    const bool in_vec = category && computes_in_vec(*category) && detail::as_tile(call->type());
    for (size_t i = 0; i < call->args.size(); ++i) {
      ExprPtr a = mutate(call->args[i]);
      // An Acc operand of a Vec op moves there where the target can (a5: the fix-pipe to UB).
      if (in_vec && space_of(a) == MemorySpace::Acc &&
          is_legal_transfer(MemorySpace::Acc, MemorySpace::Vec, target_)) {
        const auto* source = a->as<Var>();
        auto moved = make_var((source ? source->name : std::string("tile")) + "_Vec",
                              types_.with_space(a->type(), MemorySpace::Vec), a->span());
        out.push_back(ir::make_node<AssignStmt>(
            moved,
            detail::make_typed_op_call("move", {a}, {{"target_memory", MemorySpace::Vec}},
                                       moved->type(), a->span()),
            s->span()));
        a = moved;
      }
      auto need = matmul_operand_space(*call, i);
      if (need && (*need == MemorySpace::Left || *need == MemorySpace::Right) &&
          space_of(a) == MemorySpace::Mat) {
        const auto* source = a->as<Var>();
        auto moved = make_var((source ? source->name : std::string("tile")) + "_" +
                                  std::string(memory_space_name(*need)),
                              types_.with_space(a->type(), *need), a->span());
        out.push_back(ir::make_node<AssignStmt>(
            moved,
            detail::make_typed_op_call("move", {a}, {{"target_memory", *need}}, moved->type(),
                                       a->span()),
            s->span()));
        a = moved;
      }
      args.push_back(a);
    }
    Attrs attrs = call->attrs;
    std::optional<MemorySpace> space = result_space(*s, *call, args, &attrs);
    TypePtr type = space ? types_.with_space(call->type(), *space) : call->type();
    ExprPtr value = detail::rebuild_call(*call, args, attrs, type);
    if (space) define(s->var, *space);
    out.push_back(ir::make_node<AssignStmt>(remap(s->var), value, s->span()));
    return make_seq(std::move(out), s->span());
  }

  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    enter_loop(s->iter_args, s->init_values, s->return_vars);
    StmtPtr result = IRMutator::mutate_for(s);
    const auto* loop = result->as<ForStmt>();
    check_carried_spaces(loop->iter_args, loop->body);
    return result;
  }

  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    enter_loop(s->iter_args, s->init_values, s->return_vars);
    StmtPtr result = IRMutator::mutate_while(s);
    const auto* loop = result->as<WhileStmt>();
    check_carried_spaces(loop->iter_args, loop->body);
    return result;
  }

  // A carried tile lives in the space of its initial value, as do the loop's results.
  void enter_loop(const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& init_values,
                  const std::vector<VarPtr>& return_vars) {
    for (size_t i = 0; i < iter_args.size() && i < init_values.size(); ++i) {
      auto space = space_of(mutate(init_values[i]));
      if (!space) continue;
      define(iter_args[i], *space);
      if (i < return_vars.size()) define(return_vars[i], *space);
    }
  }

  void check_carried_spaces(const std::vector<VarPtr>& iter_args, const StmtPtr& loop_body) {
    auto body = detail::stmt_list(loop_body);
    const auto* y = body.empty() ? nullptr : body.back()->as<YieldStmt>();
    for (size_t i = 0; y && i < y->values.size() && i < iter_args.size(); ++i) {
      auto carried = space_of(iter_args[i]);
      auto next = space_of(y->values[i]);
      if (carried && next && carried != next) {
        throw CompileError(y->span(),
                           "loop-carried tile '" + iter_args[i]->name + "' enters the loop in " +
                               std::string(memory_space_name(*carried)) + " but is yielded in " +
                               std::string(memory_space_name(*next)));
      }
    }
  }

  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    ExprPtr cond = mutate(s->cond);
    StmtPtr then_body = mutate(s->then_body);
    StmtPtr else_body = mutate(s->else_body);
    auto stmts = detail::stmt_list(then_body);
    const auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
    for (size_t i = 0; y && i < y->values.size() && i < s->return_vars.size(); ++i) {
      if (auto space = space_of(y->values[i])) define(s->return_vars[i], *space);
    }
    bool changed = false;
    auto return_vars = remap_all(s->return_vars, &changed);
    return ir::make_node<IfStmt>(cond, then_body, else_body, std::move(return_vars), s->span());
  }

 private:
  static std::optional<MemorySpace> space_of(const ExprPtr& e) {
    const auto* t = detail::as_tile(e);
    return t ? t->space : std::nullopt;
  }

  void define(const VarPtr& v, MemorySpace space) {
    if (!detail::as_tile(v->type())) return;
    var_map[v.get()] = make_var(v->name, types_.with_space(v->type(), space), v->span());
  }

  static std::string describe(const ExprPtr& e) {
    if (const auto* v = e->as<Var>()) return "'" + v->name + "'";
    return "operand";
  }

  [[noreturn]] void reject(const ExprPtr& operand, MemorySpace have, MemorySpace need,
                           const Call& c) {
    throw CompileError(operand->span().valid() ? operand->span() : c.span(),
                       "tile " + describe(operand) + " is in " +
                           std::string(memory_space_name(have)) + " but pl." + c.callee +
                           " needs it in " + std::string(memory_space_name(need)) +
                           "; legal moves from " + std::string(memory_space_name(have)) + ": " +
                           legal_moves_from(have, target_));
  }

  std::optional<MemorySpace> result_space(const AssignStmt& s, const Call& c,
                                          const std::vector<ExprPtr>& args, Attrs* attrs) {
    auto category = detail::op_category(c);
    if (!category) return std::nullopt;
    auto attr_space = [&]() -> std::optional<MemorySpace> {
      if (const auto* a = find_attr(c.attrs, "target_memory"))
        if (const auto* m = std::get_if<MemorySpace>(a)) return *m;
      return std::nullopt;
    };
    auto require = [&](size_t i, MemorySpace need) {
      if (i >= args.size()) return;
      auto have = space_of(args[i]);
      if (have && *have != need) reject(args[i], *have, need, c);
    };
    switch (*category) {
      case OpCategory::Load: {
        std::optional<MemorySpace> space = attr_space();
        if (!space && to_mat_.count(s.var.get())) {
          space = MemorySpace::Mat;
          attrs->emplace_back("target_memory", MemorySpace::Mat);
        }
        if (!space) space = MemorySpace::Vec;
        if (!is_legal_transfer(MemorySpace::DDR, *space, target_)) {
          throw CompileError(
              c.span(),
              "pl.load cannot target " + std::string(memory_space_name(*space)) +
                  "; legal targets from DDR: " + legal_moves_from(MemorySpace::DDR, target_));
        }
        return space;
      }
      case OpCategory::Move: {
        auto target = attr_space();
        auto from = args.empty() ? std::nullopt : space_of(args[0]);
        if (!target) throw CompileError(c.span(), "pl.move needs target_memory");
        if (from && !is_legal_transfer(*from, *target, target_)) {
          // A move another target can do names the platform that can.
          std::string elsewhere;
          if (is_legal_transfer(*from, *target, Target::A5))
            elsewhere = " (platform 'a5' can; this compile is for '" +
                        std::string(target_name(target_)) + "')";
          throw CompileError(c.span(), "cannot move tile " + describe(args[0]) + " from " +
                                           std::string(memory_space_name(*from)) + " to " +
                                           std::string(memory_space_name(*target)) +
                                           "; legal moves from " +
                                           std::string(memory_space_name(*from)) + ": " +
                                           legal_moves_from(*from, target_) + elsewhere);
        }
        return target;
      }
      case OpCategory::CreateTile: {
        auto space = attr_space();
        return space ? *space : MemorySpace::Vec;
      }
      case OpCategory::Store: {
        auto from = args.empty() ? std::nullopt : space_of(args[0]);
        if (from && !is_legal_transfer(*from, MemorySpace::DDR, target_)) {
          throw CompileError(c.span(), "cannot store tile " + describe(args[0]) + " from " +
                                           std::string(memory_space_name(*from)) +
                                           " to DDR; legal moves from " +
                                           std::string(memory_space_name(*from)) + ": " +
                                           legal_moves_from(*from, target_));
        }
        return std::nullopt;
      }
      case OpCategory::Matmul: {
        for (size_t i = 0; i < args.size(); ++i) {
          if (auto buffer = scale_buffer(c, i); buffer && space_of(args[i]) == *buffer) continue;
          if (auto need = matmul_operand_space(c, i)) require(i, *need);
        }
        return MemorySpace::Acc;
      }
      case OpCategory::Slice: {
        // A window read straight into another space (AutoTileMatmulL0's blocks of a Mat operand
        // read into Left/Right, PyPTO's extract) keeps it when the move is legal.
        const auto* window = detail::as_tile(c.type());
        auto from = args.empty() ? std::nullopt : space_of(args[0]);
        if (window && window->space && from && *window->space != *from &&
            is_legal_transfer(*from, *window->space, target_)) {
          return window->space;
        }
        if (!window) return std::nullopt;
        return from;
      }
      case OpCategory::Assemble:
      case OpCategory::Reshape:
        if (!detail::as_tile(c.type())) return std::nullopt;
        return args.empty() ? std::nullopt : space_of(args[0]);
      case OpCategory::Read:
        return std::nullopt;
      case OpCategory::ElementwiseBinary:
      case OpCategory::ElementwiseUnary:
      case OpCategory::Cast:
      case OpCategory::RowReduce:
      case OpCategory::RowExpand:
      case OpCategory::ColExpand:
      case OpCategory::Concat:
      case OpCategory::FillPad:
      case OpCategory::ColReduce:
      case OpCategory::ArgReduce:
      case OpCategory::Transpose:
      case OpCategory::Compare:
      case OpCategory::Select:
      case OpCategory::Write:
      case OpCategory::Gather:
      case OpCategory::Scatter:
      case OpCategory::Generate:
      case OpCategory::Sort:
      case OpCategory::FillPadExpand:
        if (!detail::as_tile(c.type())) return std::nullopt;
        // mgather's Mat form reads only tensors and makes a Mat tile.
        if (c.callee == "mgather" && attr_space() == MemorySpace::Mat) return MemorySpace::Mat;
        for (size_t i = 0; i < args.size(); ++i)
          if (detail::as_tile(args[i])) require(i, MemorySpace::Vec);
        return MemorySpace::Vec;
      case OpCategory::GatherRow:
        // create_l1 makes a Mat tile; gather_row's result is its destination, where it lies.
        if (c.callee == "create_l1") return MemorySpace::Mat;
        return args.empty() ? std::nullopt : space_of(args[0]);
      case OpCategory::CreateTensor:
      case OpCategory::ExpandClone:
      case OpCategory::Scheduling:
      case OpCategory::LaunchQuery:
      case OpCategory::Communication:
      case OpCategory::PagedGather:
        return std::nullopt;
      case OpCategory::System:
        // set_validshape narrows a tile where it lies; a pipe's pop says its own space.
        if (c.callee == "set_validshape" && detail::as_tile(c.type()) && !args.empty())
          return space_of(args[0]);
        return std::nullopt;
    }
    return std::nullopt;
  }

  ir::NodeSet<const Var*> to_mat_;
  Target target_;
  detail::TileTypeCache types_;
};

}  // namespace

ProgramPtr infer_tile_memory_space(const ProgramPtr& program) {
  const Target target = program->target;
  return detail::map_incore_functions(program, [target](const FunctionPtr& f) {
    SpaceInference inference(*f, target);
    return inference.mutate_function(f);
  });
}

}  // namespace pypto::passes
