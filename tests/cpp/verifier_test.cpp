#include "pypto/passes/verifier.h"

#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/ir/mutator.h"

namespace pypto::passes {
namespace {

using namespace testing;

std::string verification_message(const ir::Program& p, IRProperties props, const char* pass) {
  try {
    verify_program(p, props, pass);
  } catch (const VerificationError& e) {
    return e.what();
  }
  return "";
}

// Replaces the MemRef of every tile variable in buffer `buffer_id` of function `fn`.
ir::ProgramPtr move_buffer(const ir::ProgramPtr& p, const std::string& fn, int64_t buffer_id,
                           int64_t addr) {
  auto f = p->find_function(fn);
  struct Retyper : ir::IRMutator {
    int64_t buffer, addr;
    void retype(const ir::VarPtr& v) {
      const auto* t = v->type()->as<ir::TileType>();
      if (!t || !t->memref || t->memref->buffer_id != buffer || var_map.count(v.get())) return;
      ir::MemRef m = *t->memref;
      m.addr = addr;
      var_map[v.get()] = ir::make_var(v->name, ir::tile_type(t->shape, t->dtype, t->space, m));
    }
    ir::StmtPtr mutate_assign(const std::shared_ptr<const ir::AssignStmt>& s) override {
      retype(s->var);
      return IRMutator::mutate_assign(s);
    }
  } r;
  r.buffer = buffer_id;
  r.addr = addr;
  auto g = r.mutate_function(f);
  std::vector<ir::FunctionPtr> fns;
  for (const auto& h : p->functions) fns.push_back(h == f ? g : h);
  return p->with_functions(fns);
}

TEST(Verifier, UseBeforeDefinitionNamesTheVariableAndThePass) {
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  auto ssa = run_passes(in, {"ConvertToSSA"});
  // Swap the load and the store of the kernel.
  auto k = ssa->find_function("k");
  auto stmts = k->body->as<ir::SeqStmts>()->stmts;
  std::swap(stmts[0], stmts[1]);
  auto broken = ssa->with_functions(
      {std::make_shared<ir::Function>(k->name, k->type, k->params, k->return_types,
                                      ir::make_seq(stmts), k->span),
       ssa->find_function("main")});
  EXPECT_EQ(
      verification_message(*broken, static_cast<IRProperties>(IRProperty::SSA), "ConvertToSSA"),
      "after ConvertToSSA: variable 't' used before definition at 11:9");
  EXPECT_EQ(verification_message(*ssa, static_cast<IRProperties>(IRProperty::SSA), "ConvertToSSA"),
            "");
}

TEST(Verifier, DoubleAssignmentIsNotSSA) {
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  // The frontend IR assigns the parameter `y` again.
  auto msg = verification_message(*in, static_cast<IRProperties>(IRProperty::SSA), "UnrollLoops");
  EXPECT_NE(msg.find("after UnrollLoops: variable 'y' assigned more than once"), std::string::npos)
      << msg;
}

std::string all_messages(const std::vector<VerificationProblem>& problems) {
  std::string all;
  for (const auto& p : problems) all += p.message + "\n";
  return all;
}

TEST(Verifier, LoopAndBranchBodiesAreScopes) {
  // The frontend IR (before ConvertToSSA) reuses one Var per name: `t` is defined before the
  // loop and again inside it, `u` only inside it, `v` in the then branch only.
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        for i in pl.range(4):
            t = pl.add(t, t)
            u = pl.mul(t, t)
        if 1 > 0:
            v = pl.exp(t)
        else:
            v = pl.exp(v)
        w = pl.add(t, u)
        y = pl.store(w, [0, 0], y)
        return y
)" + kCallK);
  auto problems = check_properties(*in, static_cast<IRProperties>(IRProperty::SSA));
  std::string all = all_messages(problems);
  // `t` stays visible after the loop (its first definition is outside), `u` does not; `v` of
  // the then branch is not visible in the else branch.
  EXPECT_NE(all.find("variable 't' assigned more than once"), std::string::npos) << all;
  EXPECT_EQ(all.find("variable 't' used"), std::string::npos) << all;
  EXPECT_NE(all.find("variable 'u' used outside the loop or branch defining it at 18:9"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("variable 'v' used outside the loop or branch defining it at 17:13"),
            std::string::npos)
      << all;
}

TEST(Verifier, OverlappingLiveBuffersAreReported) {
  auto allocated = run_pipeline_through(load_example("softmax.py"), "AllocateMemoryAddr");
  EXPECT_EQ(
      verification_message(*allocated, static_cast<IRProperties>(IRProperty::AddressesAssigned),
                           "AllocateMemoryAddr"),
      "");
  // Buffer 1 holds row_expand_sub, which is computed from `t` (buffer 0, at address 0).
  auto broken = move_buffer(allocated, "softmax_kernel", 1, 0);
  auto msg = verification_message(*broken, static_cast<IRProperties>(IRProperty::AddressesAssigned),
                                  "AllocateMemoryAddr");
  EXPECT_NE(msg.find("after AllocateMemoryAddr: tiles 't' and "), std::string::npos) << msg;
  EXPECT_NE(msg.find("are live at the same time but their Vec buffers overlap at [0, 16384)"),
            std::string::npos)
      << msg;
}

TEST(Verifier, TileBeyondCapacityIsReported) {
  auto allocated = run_pipeline_through(load_example("softmax.py"), "AllocateMemoryAddr");
  auto broken = move_buffer(allocated, "softmax_kernel", 0, 196608 - 64);
  auto msg = verification_message(*broken, static_cast<IRProperties>(IRProperty::AddressesAssigned),
                                  "MemoryReuse");
  EXPECT_EQ(msg.rfind("after MemoryReuse: tile 't' at [196544, 212928) exceeds Vec capacity of "
                      "196608 bytes",
                      0),
            0u)
      << msg;
}

TEST(Verifier, NestedCallsScopesAndMissingSpacesAreReported) {
  auto scoped = load_example("scoped_scale.py");
  auto problems = check_properties(
      *scoped, IRProperty::Flat | IRProperty::NoScopes | IRProperty::NoUnrollLoops);
  std::string all;
  for (const auto& p : problems) all += p.message + "\n";
  EXPECT_EQ(problems.size(), 3u) << all;
  EXPECT_NE(all.find("pl.at scope left in function 'main'"), std::string::npos) << all;
  EXPECT_NE(all.find("pl.unroll loop over 'i' was not unrolled"), std::string::npos) << all;
  EXPECT_NE(all.find("call of 'add' nested inside another expression"), std::string::npos) << all;

  auto ssa = run_passes(load_example("softmax.py"), {"ConvertToSSA", "FlattenCallExpr"});
  auto missing = check_properties(*ssa, static_cast<IRProperties>(IRProperty::MemRefsSet));
  ASSERT_FALSE(missing.empty());
  EXPECT_EQ(missing[0].message.rfind("tile 't' has no MemRef", 0), 0u) << missing[0].message;
}

TEST(Verifier, MissingArgDirectionsAreReported) {
  auto out = run_pipeline_through(load_example("add.py"), "AllocateMemoryAddr");
  auto problems = check_properties(*out, static_cast<IRProperties>(IRProperty::CallDirectionsSet));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].message.rfind("call of 'add_kernel' has no arg_directions", 0), 0u);
}

TEST(VerificationMemory, ARebuiltFunctionIsCheckedAgain) {
  const auto addresses = static_cast<IRProperties>(IRProperty::AddressesAssigned);
  auto allocated = run_pipeline_through(load_example("softmax.py"), "AllocateMemoryAddr");
  VerificationMemory memory;
  memory.verify(*allocated, addresses, "AllocateMemoryAddr");
  memory.verify(*allocated, addresses, "AllocateMemoryAddr");
  // The same kernel rebuilt with overlapping buffers is a new object: checked, and caught.
  auto broken = move_buffer(allocated, "softmax_kernel", 1, 0);
  EXPECT_THROW(memory.verify(*broken, addresses, "Later"), VerificationError);
}

TEST(VerificationMemory, CallDirectionsAreCheckedAgainstTheCalleesOfEachProgram) {
  const auto directions = static_cast<IRProperties>(IRProperty::CallDirectionsSet);
  auto out = run_pipeline_through(load_example("add.py"), "AllocateMemoryAddr");
  // With its kernel turned into an orchestration function, the call of it needs no directions.
  std::vector<ir::FunctionPtr> fns;
  for (const auto& f : out->functions) {
    fns.push_back(!ir::is_kernel(f->type) ? f
                                          : std::make_shared<ir::Function>(
                                                f->name, ir::FunctionType::Orchestration, f->params,
                                                f->return_types, f->body, f->span));
  }
  auto without_kernels = out->with_functions(fns);
  VerificationMemory memory;
  memory.verify(*without_kernels, directions, "X");
  // The same orchestration object calling a real kernel is checked again: its calls lack them.
  EXPECT_THROW(memory.verify(*out, directions, "DeriveCallDirections"), VerificationError);
}

}  // namespace
}  // namespace pypto::passes
