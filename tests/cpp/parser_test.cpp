#include "pypto/frontend/parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

using ir::FunctionType;
using ir::ParamDirection;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path example(const std::string& name) {
  return std::filesystem::path(PYPTO_EXAMPLES_DIR) / name;
}

ir::ProgramPtr parse_one(const std::string& text, const Constants& constants = {}) {
  auto programs = parse_module(text, "test.py", constants);
  EXPECT_EQ(programs.size(), 1u);
  return programs.empty() ? nullptr : programs[0];
}

std::string type_of_param(const ir::Function& f, size_t i) {
  return ir::type_to_string(f.params.at(i).var->type());
}

TEST(ParserExamples, EveryExampleParsesWithItsFunctions) {
  struct Expected {
    std::string file;
    std::string program;
    std::vector<std::pair<std::string, FunctionType>> functions;
  };
  const std::vector<Expected> cases = {
      {"add.py",
       "AddProgram",
       {{"add_kernel", FunctionType::InCore}, {"main", FunctionType::Orchestration}}},
      {"blocked_add.py",
       "BlockedAddProgram",
       {{"add_block", FunctionType::InCore}, {"main", FunctionType::Orchestration}}},
      {"ffn.py",
       "FfnProgram",
       {{"mm", FunctionType::InCore},
        {"gelu", FunctionType::InCore},
        {"main", FunctionType::Orchestration}}},
      {"matmul.py",
       "MatmulProgram",
       {{"mm", FunctionType::InCore}, {"main", FunctionType::Orchestration}}},
      {"matmul_ksplit.py",
       "MatmulKSplitProgram",
       {{"mm_ksplit", FunctionType::InCore}, {"main", FunctionType::Orchestration}}},
      {"scoped_scale.py", "ScopedScaleProgram", {{"main", FunctionType::Orchestration}}},
      {"softmax.py",
       "SoftmaxProgram",
       {{"softmax_kernel", FunctionType::InCore}, {"main", FunctionType::Orchestration}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto programs = parse_module(read_file(example(c.file)), c.file);
    ASSERT_EQ(programs.size(), 1u);
    const auto& p = *programs[0];
    EXPECT_EQ(p.name, c.program);
    ASSERT_EQ(p.functions.size(), c.functions.size());
    for (size_t i = 0; i < c.functions.size(); ++i) {
      EXPECT_EQ(p.functions[i]->name, c.functions[i].first);
      EXPECT_EQ(p.functions[i]->type, c.functions[i].second);
      ASSERT_EQ(p.functions[i]->return_types.size(), 1u);
    }
    ASSERT_TRUE(p.source);
    EXPECT_EQ(p.source->file_name, c.file);
  }
}

TEST(ParserExamples, ProfilingApiExampleHasNoProgram) {
  EXPECT_TRUE(parse_module(read_file(example("profiling_api.py")), "profiling_api.py").empty());
}

TEST(ParserExamples, ParamsTypesAndDirections) {
  auto p = parse_one(read_file(example("blocked_add.py")));
  const auto& kernel = *p->functions[0];
  ASSERT_EQ(kernel.params.size(), 3u);
  EXPECT_EQ(kernel.params[0].var->name, "a");
  EXPECT_EQ(type_of_param(kernel, 0), "pl.Tensor[[128, 128], pl.FP32]");
  EXPECT_EQ(kernel.params[0].direction, ParamDirection::In);
  EXPECT_EQ(kernel.params[2].direction, ParamDirection::Out);
  const auto& main = *p->functions[1];
  // ROWS, COLS, BLOCK = 512, 128, 128 at module level.
  EXPECT_EQ(type_of_param(main, 0), "pl.Tensor[[512, 128], pl.FP32]");
  EXPECT_EQ(ir::type_to_string(main.return_types[0]), "pl.Tensor[[512, 128], pl.FP32]");
}

TEST(ParserExamples, LoopCarriedRebindingReusesOneVar) {
  auto p = parse_one(read_file(example("matmul_ksplit.py")));
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  ASSERT_TRUE(body);
  const auto* first_acc = body->stmts[2]->as<ir::AssignStmt>();
  ASSERT_TRUE(first_acc);
  EXPECT_EQ(first_acc->var->name, "acc");
  const auto* loop = body->stmts[3]->as<ir::ForStmt>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(ir::as_const_int(loop->start), 1);
  EXPECT_EQ(ir::as_const_int(loop->stop), 4);  // K_BLOCKS
  EXPECT_TRUE(loop->iter_args.empty());
  const auto* loop_body = loop->body->as<ir::SeqStmts>();
  ASSERT_TRUE(loop_body);
  const auto* rebind = loop_body->stmts.back()->as<ir::AssignStmt>();
  ASSERT_TRUE(rebind);
  EXPECT_EQ(rebind->var, first_acc->var);  // the same Var: the frontend IR is not SSA
  EXPECT_EQ(ir::type_to_string(rebind->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Acc]");
}

TEST(ParserExamples, ScopeAndUnroll) {
  auto p = parse_one(read_file(example("scoped_scale.py")));
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  ASSERT_TRUE(body);
  const auto* scope = body->stmts[0]->as<ir::ScopeStmt>();
  ASSERT_TRUE(scope);
  EXPECT_EQ(scope->level, "CORE_GROUP");
  const auto* loop = scope->body->as<ir::ForStmt>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->for_kind, ir::ForKind::Unroll);
  EXPECT_EQ(loop->loop_var->name, "i");
  EXPECT_EQ(ir::type_to_string(loop->loop_var->type()), "pl.Scalar[pl.INT64]");
}

TEST(ParserExamples, PrintParsePrintIsAFixedPoint) {
  for (const char* file : {"add.py", "blocked_add.py", "ffn.py", "matmul.py", "matmul_ksplit.py",
                           "scoped_scale.py", "softmax.py"}) {
    SCOPED_TRACE(file);
    auto p = parse_one(read_file(example(file)));
    std::string printed = ir::print_program(*p);
    auto q = parse_one(printed);
    ASSERT_TRUE(q);
    EXPECT_EQ(ir::print_program(*q), printed);
    EXPECT_TRUE(ir::structural_equal(*p, *q));
  }
}

const char* kHeader =
    "import pypto.language as pl\n"
    "\n"
    "@pl.program\n"
    "class P:\n";

TEST(Parser, ConstantsFromTheCallerBecomeLiterals) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def k(self, a: pl.Tensor[[R, C], DT], o: pl.Out[pl.Tensor[[R, C], DT]]) "
                     "-> pl.Tensor[[R, C], DT]:\n"
                     "        t = pl.load(a, [0, 0], [R, C])\n"
                     "        t = pl.mul(t, SCALE)\n"
                     "        if FLAG:\n"
                     "            t = pl.add(t, 1.0)\n"
                     "        o = pl.store(t, [0, 0], o)\n"
                     "        return o\n";
  Constants constants{{"R", int64_t{32}},
                      {"C", int64_t{16}},
                      {"DT", ir::DataType::FP32},
                      {"SCALE", 0.5},
                      {"FLAG", true}};
  auto p = parse_one(text, constants);
  const auto& f = *p->functions[0];
  EXPECT_EQ(type_of_param(f, 0), "pl.Tensor[[32, 16], pl.FP32]");
  const auto* body = f.body->as<ir::SeqStmts>();
  const auto* mul = body->stmts[1]->as<ir::AssignStmt>()->value->as<ir::Call>();
  ASSERT_TRUE(mul);
  const auto* scale = mul->args[1]->as<ir::FloatImm>();
  ASSERT_TRUE(scale);
  EXPECT_DOUBLE_EQ(scale->value, 0.5);
  const auto* branch = body->stmts[2]->as<ir::IfStmt>();
  ASSERT_TRUE(branch);
  ASSERT_TRUE(branch->cond->as<ir::BoolImm>());
  EXPECT_TRUE(branch->cond->as<ir::BoolImm>()->value);
}

TEST(Parser, ModuleConstantsAreEvaluatedInOrder) {
  std::string text =
      "import pypto.language as pl\n"
      "N = 64\n"
      "K = N // 2 + 1\n"
      "A, B = 8, 4\n"
      "NOT_CONST = foo()\n"
      "DT = pl.FP16\n"
      "def helper(x):\n"
      "    return x\n"
      "if __name__ == '__main__':\n"
      "    N = 1\n"
      "@pl.program\n"
      "class P:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, a: pl.Tensor[[K, A * B], DT]) -> pl.Tensor[[N, B], DT]:\n"
      "        return pl.create_tensor([N, B], dtype=DT)\n";
  auto p = parse_one(text);
  EXPECT_EQ(type_of_param(*p->functions[0], 0), "pl.Tensor[[33, 32], pl.FP16]");
  EXPECT_EQ(ir::type_to_string(p->functions[0]->return_types[0]), "pl.Tensor[[64, 4], pl.FP16]");
}

TEST(Parser, FunctionsMayBeCalledBeforeTheyAreDefined) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                     "    def main(self, a: pl.Tensor[[64, 64], pl.FP32], c: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        c = self.kernel(a, c)\n"
                     "        return c\n"
                     "\n"
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def kernel(self, a: pl.Tensor[[64, 64], pl.FP32], c: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        c = pl.store(pl.exp(pl.load(a, [0, 0], [64, 64])), [0, 0], c)\n"
                     "        return c\n";
  auto p = parse_one(text);
  ASSERT_EQ(p->functions.size(), 2u);
  EXPECT_EQ(p->functions[0]->name, "main");
  const auto* assign = p->functions[0]->body->as<ir::SeqStmts>()->stmts[0]->as<ir::AssignStmt>();
  const auto* call = assign->value->as<ir::Call>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->call_kind, ir::CallKind::Function);
  EXPECT_EQ(call->callee, "kernel");
  EXPECT_EQ(p->entry()->name, "main");
}

TEST(Parser, TupleUnpackingOfAMultiResultCall) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def two(self, a: pl.Tensor[[64, 64], pl.FP32], b: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]], c: pl.InOut[pl.Tensor[[64, 64], "
                     "pl.FP32]]) -> tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], "
                     "pl.FP32]]:\n"
                     "        return b, c\n"
                     "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                     "    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]], c: pl.InOut[pl.Tensor[[64, 64], "
                     "pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        x, y = self.two(a, b, c, attrs={\"arg_directions\": [pl.adir.input, "
                     "pl.adir.output_existing, pl.adir.inout]})\n"
                     "        t = self.two(a, x, y)\n"
                     "        z = t[1]\n"
                     "        return z\n";
  auto p = parse_one(text);
  const auto& two = *p->functions[0];
  EXPECT_EQ(two.params[2].direction, ParamDirection::InOut);
  EXPECT_EQ(two.return_types.size(), 2u);
  const auto* body = p->functions[1]->body->as<ir::SeqStmts>();
  ASSERT_EQ(body->stmts.size(), 6u);  // tuple var, x, y, t, z, return
  const auto* tuple_assign = body->stmts[0]->as<ir::AssignStmt>();
  ASSERT_TRUE(tuple_assign->var->type()->as<ir::TupleType>());
  const auto* call = tuple_assign->value->as<ir::Call>();
  ASSERT_EQ(call->attrs.size(), 1u);
  EXPECT_EQ(call->attrs[0].first, "arg_directions");
  EXPECT_EQ(std::get<std::vector<int64_t>>(call->attrs[0].second), (std::vector<int64_t>{0, 1, 2}));
  const auto* x = body->stmts[1]->as<ir::AssignStmt>();
  EXPECT_EQ(x->var->name, "x");
  ASSERT_TRUE(x->value->as<ir::TupleGetItem>());
  EXPECT_EQ(x->value->as<ir::TupleGetItem>()->index, 0);
  const auto* z = body->stmts[4]->as<ir::AssignStmt>();
  EXPECT_EQ(z->value->as<ir::TupleGetItem>()->index, 1);
}

TEST(Parser, ExplicitSsaLoopAndIfWithYield) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64], o: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        t0 = pl.load(a, [0, 0], [64, 64])\n"
                     "        for i, (acc, other) in pl.range(0, 4, 1, init_values=(t0, t0)):\n"
                     "            acc_1 = pl.add(acc, other)\n"
                     "            acc_2, other_2 = pl.yield_(acc_1, other)\n"
                     "        if n > 0:\n"
                     "            y_1 = pl.exp(acc_2)\n"
                     "            y_2 = pl.yield_(y_1)\n"
                     "        else:\n"
                     "            y_2 = pl.yield_(other_2)\n"
                     "        o = pl.store(y_2, [0, 0], o)\n"
                     "        return o\n";
  auto p = parse_one(text);
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  const auto* loop = body->stmts[1]->as<ir::ForStmt>();
  ASSERT_TRUE(loop);
  ASSERT_EQ(loop->iter_args.size(), 2u);
  EXPECT_EQ(loop->iter_args[0]->name, "acc");
  ASSERT_EQ(loop->return_vars.size(), 2u);
  EXPECT_EQ(loop->return_vars[0]->name, "acc_2");
  const auto* loop_body = loop->body->as<ir::SeqStmts>();
  const auto* yield = loop_body->stmts.back()->as<ir::YieldStmt>();
  ASSERT_TRUE(yield);
  EXPECT_EQ(yield->values.size(), 2u);
  const auto* branch = body->stmts[2]->as<ir::IfStmt>();
  ASSERT_TRUE(branch);
  ASSERT_EQ(branch->return_vars.size(), 1u);
  EXPECT_EQ(branch->return_vars[0]->name, "y_2");
  ASSERT_TRUE(branch->else_body);
  // The store uses the if's return var.
  const auto* store = body->stmts[3]->as<ir::AssignStmt>()->value->as<ir::Call>();
  EXPECT_EQ(store->args[0], branch->return_vars[0]);
  // Printing and parsing again gives the same program.
  auto q = parse_one(ir::print_program(*p));
  EXPECT_TRUE(ir::structural_equal(*p, *q));
}

TEST(Parser, ElifChainsNest) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                     "    def k(self, n: pl.Scalar[pl.INT64], a: pl.Tensor[[8, 8], pl.FP32]) -> "
                     "pl.Tensor[[8, 8], pl.FP32]:\n"
                     "        if n == 0 or n > 10:\n"
                     "            a = pl.create_tensor([8, 8], dtype=pl.FP32)\n"
                     "        elif not n < 5:\n"
                     "            pass\n"
                     "        else:\n"
                     "            a = pl.create_tensor([8, 8], dtype=pl.FP32)\n"
                     "        return a\n";
  auto p = parse_one(text);
  const auto* outer = p->functions[0]->body->as<ir::SeqStmts>()->stmts[0]->as<ir::IfStmt>();
  ASSERT_TRUE(outer);
  const auto* cond = outer->cond->as<ir::Binary>();
  ASSERT_TRUE(cond);
  EXPECT_EQ(cond->op, ir::BinaryOp::Or);
  ASSERT_TRUE(outer->else_body);
  const auto* inner = outer->else_body->as<ir::IfStmt>();
  ASSERT_TRUE(inner);
  ASSERT_TRUE(inner->cond->as<ir::Unary>());
  EXPECT_EQ(inner->cond->as<ir::Unary>()->op, ir::UnaryOp::Not);
  EXPECT_TRUE(inner->else_body);
}

TEST(Parser, ScalarPrecedenceFollowsPython) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                     "    def k(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:\n"
                     "        x = 1 + n * 2 - -3 // min(n, 4) % max(2, n)\n"
                     "        return x\n";
  auto p = parse_one(text);
  const auto* assign = p->functions[0]->body->as<ir::SeqStmts>()->stmts[0]->as<ir::AssignStmt>();
  // ((1 + (n * 2)) - ((-3 // min(n, 4)) % max(2, n)))
  const auto* sub = assign->value->as<ir::Binary>();
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->op, ir::BinaryOp::Sub);
  const auto* add = sub->a->as<ir::Binary>();
  ASSERT_TRUE(add);
  EXPECT_EQ(add->op, ir::BinaryOp::Add);
  EXPECT_EQ(add->b->as<ir::Binary>()->op, ir::BinaryOp::Mul);
  const auto* mod = sub->b->as<ir::Binary>();
  ASSERT_TRUE(mod);
  EXPECT_EQ(mod->op, ir::BinaryOp::Mod);
  const auto* floordiv = mod->a->as<ir::Binary>();
  EXPECT_EQ(floordiv->op, ir::BinaryOp::FloorDiv);
  ASSERT_TRUE(floordiv->a->as<ir::IntImm>());
  EXPECT_EQ(floordiv->a->as<ir::IntImm>()->value, -3);  // unary minus folds into the literal
  EXPECT_EQ(floordiv->b->as<ir::Binary>()->op, ir::BinaryOp::Min);
  EXPECT_EQ(mod->b->as<ir::Binary>()->op, ir::BinaryOp::Max);
}

TEST(Parser, KeywordArgumentsForPositionalParametersAndTileAlias) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        t = pl.tile.load(a, shapes=[64, 64], offsets=[0, 0], "
                     "target_memory=pl.MemorySpace.Vec)\n"
                     "        o = pl.store(t, [0, 0], output_tensor=o)\n"
                     "        return o\n";
  auto p = parse_one(text);
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  const auto* load = body->stmts[0]->as<ir::AssignStmt>()->value->as<ir::Call>();
  ASSERT_TRUE(load);
  EXPECT_EQ(load->callee, "load");
  ASSERT_EQ(load->args.size(), 3u);
  EXPECT_EQ(load->args[1]->as<ir::MakeTuple>()->elements.size(), 2u);
  EXPECT_EQ(ir::as_const_int(load->args[2]->as<ir::MakeTuple>()->elements[0]), 64);
  ASSERT_EQ(load->attrs.size(), 1u);
  EXPECT_EQ(std::get<ir::MemorySpace>(load->attrs[0].second), ir::MemorySpace::Vec);
}

TEST(Parser, AnnotationRefinesMemorySpaceAndMemRef) {
  std::string text =
      std::string(kHeader) +
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) "
      "-> pl.Tensor[[64, 64], pl.FP32]:\n"
      "        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(256, 16384, 3)] = "
      "pl.load(a, [0, 0], [64, 64])\n"
      "        u: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.exp(t)\n"
      "        o = pl.store(u, [0, 0], o)\n"
      "        return o\n";
  auto p = parse_one(text);
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  const auto* t = body->stmts[0]->as<ir::AssignStmt>();
  const auto* tile = t->var->type()->as<ir::TileType>();
  ASSERT_TRUE(tile && tile->memref);
  EXPECT_EQ(tile->memref->buffer_id, 3);
  EXPECT_EQ(tile->memref->size, 16384);
  EXPECT_EQ(tile->memref->addr, 256);
  EXPECT_EQ(tile->memref->space, ir::MemorySpace::Vec);
  // The call's own type is rebuilt with the annotation.
  EXPECT_TRUE(ir::types_equal(t->value->type(), t->var->type()));
  const auto* u = body->stmts[1]->as<ir::AssignStmt>();
  EXPECT_EQ(ir::type_to_string(u->var->type()), "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec]");
  EXPECT_EQ(ir::type_to_string(u->value->type()), "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec]");
}

TEST(Parser, VariableFirstAssignedInALoopIsUsableAfterIt) {
  std::string text = std::string(kHeader) +
                     "    @pl.function(type=pl.FunctionType.InCore)\n"
                     "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: "
                     "pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
                     "        for i in pl.range(2):\n"
                     "            t = pl.load(a, [0, 0], [64, 64])\n"
                     "        o = pl.store(t, [0, 0], o)\n"
                     "        return o\n";
  EXPECT_NO_THROW(parse_one(text));
}

TEST(Parser, ClassSourceRunningToTheEndOfItsFileStopsWithTheClass) {
  // From an indented class header to the end of the file: the rest of the enclosing function
  // and the module's remaining code (not DSL, not even valid for the parser) are not read.
  std::string text =
      "    class Inner:\n"
      "        @pl.function(type=pl.FunctionType.Orchestration)\n"
      "        def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
      "            return a\n"
      "\n"
      "    # a comment between the class and the next statement\n"
      "    return Inner\n"
      "print(f'{1 + 1}') ; x = $\n";
  auto p = parse_program(text, "file.py", {}, 20, /*rest_of_file=*/true);
  EXPECT_EQ(p->name, "Inner");
  ASSERT_EQ(p->functions.size(), 1u);
  EXPECT_EQ(p->functions[0]->span.line, 3);
  EXPECT_THROW(parse_program(text, "file.py", {}, 20), ParseError) << "without rest_of_file";
}

TEST(Parser, ClassSourceWithLineOffsetAndIndentation) {
  // As inspect.getsource returns a class defined inside a function, starting at file line 11.
  std::string text =
      "    @pl.program\n"
      "    class Inner:\n"
      "        \"\"\"Docstring.\"\"\"\n"
      "        @pl.function(type=pl.FunctionType.Orchestration)\n"
      "        def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n"
      "            \"\"\"Docstring.\"\"\"\n"
      "            return a\n";
  auto p = parse_program(text, "file.py", {}, 10);
  EXPECT_EQ(p->name, "Inner");
  ASSERT_TRUE(p->source);
  EXPECT_EQ(p->source->line_offset, 10);
  EXPECT_EQ(p->functions[0]->span.line, 5);

  std::string bad = text;
  bad.replace(bad.find("return a"), 8, "return b");
  try {
    parse_program(bad, "file.py", {}, 10);
    FAIL() << "expected an error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 17);
    EXPECT_EQ(e.col(), 20);
    EXPECT_EQ(e.file_name(), "file.py");
    EXPECT_EQ(e.rendered(),
              "file.py:17:20: error: undefined name 'b'\n"
              "            return b\n"
              "                   ^");
  }
}

TEST(Parser, CommentsContinuationsAndOneLineBodies) {
  std::string text = std::string(kHeader) +
                     "    # a comment\n"
                     "    @pl.function(type=pl.FunctionType.Orchestration)  # trailing\n"
                     "    def k(self, n: pl.Scalar[pl.INT64]) -> pl.Scalar[pl.INT64]:\n"
                     "        x = n + \\\n"
                     "            1\n"
                     "        if x > 3: x = x - 1\n"
                     "        for i in pl.range(x): pass\n"
                     "        return x\n";
  auto p = parse_one(text);
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  ASSERT_EQ(body->stmts.size(), 4u);
  EXPECT_TRUE(body->stmts[1]->as<ir::IfStmt>());
  EXPECT_TRUE(body->stmts[2]->as<ir::ForStmt>());
}

TEST(Diagnostics, RenderedWithFileLineColumnAndCaret) {
  std::string rendered = render_diagnostic("f.py", "a\n\tx = y\n", 4, ir::Span{2, 6}, "oops");
  EXPECT_EQ(rendered, "f.py:6:6: error: oops\n\tx = y\n\t    ^");
  EXPECT_EQ(render_diagnostic("f.py", "a\n", 0, ir::Span{}, "no position"),
            "f.py: error: no position");
}

}  // namespace
}  // namespace pypto::frontend
