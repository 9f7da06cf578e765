// ReleaseWhileRebuilding (ir/mutator.h): a rebuild frees the old statements of a function that
// only it holds as it goes, keeps their variables until it ends, and never touches a program
// somebody else holds.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pass_test_helpers.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/node_memory.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::ir {
namespace {

// `x0 = 0; x1 = x0 + 1; ...; return x{n-1}` in a function of a program held only by the result.
ProgramPtr chain_program(int n) {
  std::vector<StmtPtr> stmts;
  VarPtr prev;
  for (int i = 0; i < n; ++i) {
    auto v = make_var("x" + std::to_string(i), scalar_type(DataType::INT64));
    ExprPtr value = prev ? make_binary(BinaryOp::Add, prev, make_int(1)) : make_int(0);
    stmts.push_back(make_node<AssignStmt>(v, value));
    prev = v;
  }
  stmts.push_back(make_node<ReturnStmt>(std::vector<ExprPtr>{prev}));
  auto f = make_node<Function>("f", FunctionType::Orchestration, std::vector<Param>{},
                               std::vector<TypePtr>{scalar_type(DataType::INT64)},
                               make_seq(std::move(stmts)));
  return make_node<Program>("P", std::vector<FunctionPtr>{f});
}

std::vector<std::weak_ptr<const Stmt>> watch_statements(const Function& f) {
  std::vector<std::weak_ptr<const Stmt>> out;
  for (const auto& s : f.body->as<SeqStmts>()->stmts) out.push_back(s);
  return out;
}

// Gives every assigned variable a new Var (as the memory passes do when they retype tiles) and
// records, at each statement, how many of the old statements are already gone.
class Renamer : public IRMutator {
 public:
  Renamer(bool releases, const std::vector<std::weak_ptr<const Stmt>>* watched,
          const std::weak_ptr<const Var>* first_var)
      : watched_(watched), first_var_(first_var) {
    releases_old_statements_ = releases;
  }
  std::vector<int> released_before;   // per statement reached: old statements already freed
  std::vector<bool> first_var_alive;  // per statement reached: is x0's old Var alive

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    note();
    ExprPtr value = mutate(s->value);
    auto renamed = make_var(s->var->name, s->var->type());
    var_map[s->var.get()] = renamed;
    return make_node<AssignStmt>(renamed, value);
  }
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    note();
    return IRMutator::mutate_return(s);
  }

 private:
  void note() {
    int gone = 0;
    for (const auto& w : *watched_) gone += w.expired() ? 1 : 0;
    released_before.push_back(gone);
    first_var_alive.push_back(!first_var_->expired());
  }
  const std::vector<std::weak_ptr<const Stmt>>* watched_;
  const std::weak_ptr<const Var>* first_var_;
};

std::weak_ptr<const Var> first_var(const Function& f) {
  return f.body->as<SeqStmts>()->stmts[0]->as<AssignStmt>()->var;
}

TEST(ReleaseWhileRebuilding, FreesEachOldStatementOnceItsReplacementIsBuilt) {
  ProgramPtr program = chain_program(4);
  auto watched = watch_statements(*program->functions[0]);
  auto x0 = first_var(*program->functions[0]);
  Renamer renamer(true, &watched, &x0);
  FunctionPtr out;
  {
    ReleaseWhileRebuilding release(program, program->functions[0]);
    out = renamer.mutate_function(program->functions[0]);
  }
  // Statement i is reached after the i statements before it were freed.
  EXPECT_EQ(renamer.released_before, (std::vector<int>{0, 1, 2, 3, 4}));
  // x0's definition went first, but the old Var outlived the walk's last statement...
  EXPECT_EQ(renamer.first_var_alive, (std::vector<bool>{true, true, true, true, true}));
  // ...and no longer: nothing refers to it once the rebuild returned.
  EXPECT_TRUE(x0.expired());
  EXPECT_EQ(print_function(*out), print_function(*chain_program(4)->functions[0]));
}

TEST(ReleaseWhileRebuilding, AProgramSomebodyElseHoldsIsNeverReleased) {
  ProgramPtr program = chain_program(4);
  ProgramPtr users_copy = program;
  const std::string before = print_program(*program);
  auto watched = watch_statements(*program->functions[0]);
  auto x0 = first_var(*program->functions[0]);
  Renamer renamer(true, &watched, &x0);
  {
    ReleaseWhileRebuilding release(program, program->functions[0]);
    renamer.mutate_function(program->functions[0]);
  }
  EXPECT_EQ(renamer.released_before, (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_EQ(print_program(*users_copy), before);
}

TEST(ReleaseWhileRebuilding, AMutatorThatDoesNotAllowItKeepsTheOldStatements) {
  ProgramPtr program = chain_program(4);
  auto watched = watch_statements(*program->functions[0]);
  auto x0 = first_var(*program->functions[0]);
  Renamer renamer(false, &watched, &x0);
  ReleaseWhileRebuilding release(program, program->functions[0]);
  renamer.mutate_function(program->functions[0]);
  EXPECT_EQ(renamer.released_before, (std::vector<int>{0, 0, 0, 0, 0}));
}

TEST(ReleaseWhileRebuilding, OnlyTheFirstRebuildInTheScopeReleases) {
  ProgramPtr program = chain_program(3);
  const std::string before = print_function(*program->functions[0]);
  auto watched = watch_statements(*program->functions[0]);
  auto x0 = first_var(*program->functions[0]);
  ReleaseWhileRebuilding release(program, program->functions[0]);
  // A walk that changes nothing claims the function and puts every statement back.
  IRMutator identity;
  struct Releasing : IRMutator {
    Releasing() { releases_old_statements_ = true; }
  } unchanged;
  EXPECT_EQ(unchanged.mutate_function(program->functions[0]), program->functions[0]);
  for (const auto& w : watched) EXPECT_FALSE(w.expired());
  EXPECT_EQ(print_function(*program->functions[0]), before);
  // The next walk sees a plain function: nothing is freed under it.
  Renamer renamer(true, &watched, &x0);
  renamer.mutate_function(program->functions[0]);
  EXPECT_EQ(renamer.released_before, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(identity.mutate_function(program->functions[0]), program->functions[0]);
}

TEST(ReleaseWhileRebuilding, ThePipelineLeavesTheCallersProgramAsItWas) {
  for (const auto& [file, program] : passes::testing::example_programs()) {
    SCOPED_TRACE(file);
    const std::string before = print_program(*program);
    auto out =
        passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
    ASSERT_TRUE(out);
    EXPECT_EQ(print_program(*program), before);
  }
}

}  // namespace
}  // namespace pypto::ir
