// ExpandMixedKernel: gives each InCore kernel the core type it runs on, as PyPTO's pass of that
// name does once the memory spaces are known. A kernel whose tile work is all on the cube side
// (matmuls, and loads, stores and moves of Mat/Left/Right/Acc tiles) becomes an AIC function; one
// whose tile work is all on the vector side (Vec tiles), or that has no tile work at all, becomes
// an AIV function. Scalar code, tensor views and calls are shared: either core runs them.
//
// A kernel with work on both sides (a matmul and a vector op, or a move between cube and vector
// memory) is what PyPTO splits into an AIC and an AIV kernel joined by cross-core pipes under a
// Group. That split is not done here: such a kernel stays InCore and the CPU device runs it whole
// on one simulated core, which computes the same (the pipes only move tiles between the halves).
// Kernels the program declared AIC or AIV are left as they are.
#include "expand_mixed_kernel.h"

#include "pass_utils.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

bool is_cube_memory(MemorySpace m) {
  return m == MemorySpace::Mat || m == MemorySpace::Left || m == MemorySpace::Right ||
         m == MemorySpace::Acc;
}

// The cube's own ops: the matmul family is cube work whatever its operands' spaces say.
bool is_cube_op(const std::string& callee) {
  return callee.rfind("matmul", 0) == 0 || callee.rfind("gemv", 0) == 0 ||
         callee.rfind("batch_matmul", 0) == 0;
}

// The cross-core pipe ops: a kernel that uses them by hand is one half of a split the program
// wrote itself, which only an AIC or AIV kernel of a Group can be.
bool is_pipe_op(const std::string& op) {
  return op == "system.reserve_buffer" || op == "system.import_peer_buffer" ||
         op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe" ||
         op == "tpush_to_aiv" || op == "tpush_to_aic" || op == "tpop_from_aic" ||
         op == "tpop_from_aiv" || op == "system.tfree_to_aic" || op == "system.tfree_to_aiv";
}

// Which sides of the core pair a kernel's op calls use: a call is on the side of the memory its
// tiles (operands and result) live in, so a load into Mat is cube work and a store of a Vec tile
// vector work, as PyPTO classifies tile.load / tile.store / tile.move.
class CoreSides : public IRVisitor {
 public:
  bool cube = false;
  bool vector = false;
  bool pipes = false;

 protected:
  void visit_call(const Call& c) override {
    if (c.call_kind == CallKind::Op) {
      if (is_cube_op(c.callee)) cube = true;
      if (is_pipe_op(c.callee)) pipes = true;
      note_tile(c.type());
      for (const auto& a : c.args) note_tile(a->type());
    }
    IRVisitor::visit_call(c);
  }

 private:
  void note_tile(const TypePtr& type) {
    const auto* tile = type ? type->as<TileType>() : nullptr;
    if (!tile || !tile->space) return;
    if (is_cube_memory(*tile->space)) cube = true;
    if (*tile->space == MemorySpace::Vec) vector = true;
  }
};

}  // namespace

ProgramPtr expand_mixed_kernel(const ProgramPtr& program) {
  return detail::map_functions(program, [](const FunctionPtr& f) -> FunctionPtr {
    if (f->type != FunctionType::InCore) return f;
    CoreSides sides;
    sides.visit_function(*f);
    // An InCore kernel with pipe ops of its own is left as the program declared it, so that code
    // generation reports those ops where they are rather than running a pipe without a peer.
    if ((sides.cube && sides.vector) || sides.pipes) return f;
    const FunctionType core = sides.cube ? FunctionType::AIC : FunctionType::AIV;
    return make_node<Function>(f->name, core, f->params, f->return_types, f->body, f->span,
                               f->attrs);
  });
}

}  // namespace pypto::passes
