// PyPTO's small value and loop forms in the parser: list/tuple constants (from the caller or
// the module) with indexing and len(), pl.parallel loops, and pl.at's arguments (name_hint
// naming the outlined kernel, NPU-only hints accepted, the rest refused where written).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pass_test_helpers.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

using passes::testing::print;
using passes::testing::run_passes;

const std::string kClass = "@pl.program\nclass P:\n";
const std::string kHeader = "import pypto.language as pl\n" + kClass;

// The 1-based column of `needle` in line `line` (1-based) of `text`.
int32_t column_of(const std::string& text, int line, const std::string& needle) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  return static_cast<int32_t>(text.find(needle, start) - start + 1);
}

// A kernel whose body is `body` (8-space indented lines) over a [16, 32] input and output.
std::string kernel(const std::string& body) {
  return kHeader +
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, a: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[16, 32], "
         "pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n" +
         body + "        return o\n";
}

ConstantListPtr list_of(std::initializer_list<Constant> items) {
  auto list = std::make_shared<ConstantList>();
  list->items.assign(items.begin(), items.end());
  return list;
}

ir::ProgramPtr parse_one(const std::string& text, const Constants& constants = {}) {
  auto programs = parse_module(text, "values.py", constants);
  EXPECT_EQ(programs.size(), 1u);
  return programs.empty() ? nullptr : programs[0];
}

// The ParseError parsing `text` throws (the test fails when none is thrown).
ParseError error_of(const std::string& text, const Constants& constants = {}) {
  try {
    parse_module(text, "values.py", constants);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return ParseError({}, "", "", 0, "", "");
}

TEST(ParserValues, CallerListsStandWhereWrittenListsDo) {
  Constants constants{{"vshape", list_of({int64_t{12}, int64_t{20}})},
                      {"tile", list_of({int64_t{16}, int64_t{32}})},
                      {"blocks", list_of({list_of({int64_t{0}, int64_t{0}})})}};
  auto with_constants = parse_one(
      kernel("        t = pl.load(a, blocks[0], tile, valid_shape=vshape)\n"
             "        u = pl.create_tile([tile[0], tile[-1] // len(vshape)], dtype=pl.FP32)\n"
             "        o = pl.store(pl.tile.fillpad(t), blocks[-1], o)\n"),
      constants);
  auto written =
      parse_one(kernel("        t = pl.load(a, [0, 0], [16, 32], valid_shapes=[12, 20])\n"
                       "        u = pl.create_tile([16, 32 // 2], dtype=pl.FP32)\n"
                       "        o = pl.store(pl.tile.fillpad(t), [0, 0], o)\n"));
  ASSERT_TRUE(with_constants && written);
  EXPECT_EQ(print(with_constants), print(written));
}

TEST(ParserValues, ModuleListsAndTuplesAreConstants) {
  auto p = parse_one(
      "import pypto.language as pl\n"
      "ORIGIN = [0, 0]\n"
      "TILE = 8, 32\n"
      "ROWS = TILE[0] * 2\n"
      "NESTED = ((1, 2), [3.5, True])\n"
      "NOT_CONST = [foo(), 1]\n" +
      kClass +
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, a: pl.Tensor[[ROWS, 32], pl.FP32], o: pl.Out[pl.Tensor[[8, 32], "
      "pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:\n"
      "        t = pl.load(a, ORIGIN, TILE)\n"
      "        t = pl.mul(t, NESTED[1][0])\n"
      "        o = pl.store(t, [NESTED[0][1] - 2, 0], o)\n"
      "        return o\n");
  ASSERT_TRUE(p);
  const std::string text = print(p);
  EXPECT_NE(text.find("a: pl.Tensor[[16, 32], pl.FP32]"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.load(a, [0, 0], [8, 32])"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.mul(t, 3.5)"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.store(t, [2 - 2, 0], o)"), std::string::npos) << text;
}

TEST(ParserValues, AListThatIsNotConstantIsNoConstant) {
  ParseError e = error_of(std::string("import pypto.language as pl\nBAD = [foo(), 1]\n") + kClass +
                          "    @pl.function(type=pl.FunctionType.InCore)\n"
                          "    def k(self, a: pl.Tensor[[16, 32], pl.FP32]) -> "
                          "pl.Tensor[[16, 32], pl.FP32]:\n"
                          "        t = pl.load(a, BAD, [16, 32])\n"
                          "        return a\n");
  EXPECT_NE(std::string(e.what()).find("undefined name 'BAD'"), std::string::npos) << e.what();
  EXPECT_EQ(e.line(), 7);
}

TEST(ParserValues, ListIndexOutOfRangeAndLenOfATileAreLocated) {
  Constants constants{{"vshape", list_of({int64_t{12}, int64_t{20}})}};
  const std::string text =
      kernel("        t = pl.load(a, [0, 0], [16, 32], valid_shape=[vshape[2], 20])\n");
  ParseError e = error_of(text, constants);
  EXPECT_NE(std::string(e.what()).find("index 2 is out of range for a list of 2 item(s)"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.col(), column_of(text, 6, "2], 20"));
  ParseError len =
      error_of(kernel("        t = pl.load(a, [0, 0], [16, 32])\n"
                      "        n = len(t)\n"));
  EXPECT_NE(std::string(len.what()).find("len() takes a list or tuple"), std::string::npos)
      << len.what();
  EXPECT_EQ(len.line(), 7);
  EXPECT_EQ(len.col(), 17);
}

TEST(ParserValues, ListOfDtypesIsRefusedWhereUsed) {
  Constants constants{{"dts", list_of({ir::DataType::FP32})}};
  const std::string text = kernel("        t = pl.load(a, dts, [16, 32])\n");
  ParseError e = error_of(text, constants);
  EXPECT_NE(std::string(e.what()).find("a list of dtypes cannot be used"), std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.col(), column_of(text, 6, "dts"));
}

TEST(ParserValues, LoadTakesClampFalseOnly) {
  EXPECT_TRUE(
      parse_one(kernel("        t = pl.load(a, [0, 0], [16, 32], clamp=False)\n"
                       "        o = pl.store(t, [0, 0], o)\n")));
  ParseError e = error_of(kernel("        t = pl.load(a, [0, 0], [16, 32], clamp=True)\n"));
  EXPECT_NE(std::string(e.what()).find("pl.load(clamp=True) is not supported"), std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 6);
}

const std::string kParallel = kHeader +
                              "    @pl.function(type=pl.FunctionType.InCore)\n"
                              "    def k(self, a: pl.Tensor[[16, 64], pl.FP32], o: "
                              "pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], "
                              "pl.FP32]:\n"
                              "        acc = pl.load(a, [0, 0], [16, 32])\n"
                              "        for i, (s,) in pl.parallel(1, 2, init_values=(acc,)):\n"
                              "            s = pl.yield_(pl.add(s, pl.load(a, [0, i * 32], [16, "
                              "32])))\n"
                              "        o = pl.store(s, [0, 0], o)\n"
                              "        return o\n";

TEST(ParserValues, ParallelLoopIsAParallelForThatPrintsBack) {
  auto p = parse_one(kParallel);
  ASSERT_TRUE(p);
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  ASSERT_TRUE(body);
  const auto* loop = body->stmts[1]->as<ir::ForStmt>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->for_kind, ir::ForKind::Parallel);
  const std::string text = print(p);
  EXPECT_NE(text.find("in pl.parallel(1, 2, init_values="), std::string::npos) << text;
  EXPECT_EQ(print(parse_one(text)), text);
}

TEST(ParserValues, PipelineLoopIsARangeLoopWithACheckedStage) {
  std::string text = kParallel;
  text.replace(text.find("pl.parallel(1, 2,"), 17, "pl.pipeline(1, 2, stage=2,");
  auto p = parse_one(text);
  ASSERT_TRUE(p);
  const auto* loop = p->functions[0]->body->as<ir::SeqStmts>()->stmts[1]->as<ir::ForStmt>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->for_kind, ir::ForKind::Sequential);
  EXPECT_NE(print(p).find("in pl.range(1, 2, init_values="), std::string::npos) << print(p);
  std::string no_stage = kParallel;
  no_stage.replace(no_stage.find("pl.parallel(1, 2,"), 17, "pl.pipeline(1, 2,");
  ParseError e = error_of(no_stage);
  EXPECT_NE(std::string(e.what()).find("pl.pipeline needs stage=N"), std::string::npos) << e.what();
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.col(), column_of(no_stage, 7, "pl.pipeline"));
}

const std::string kScopes = kHeader +
                            "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                            "    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: "
                            "pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], "
                            "pl.FP32]:\n"
                            "        with pl.at(ARGS1):\n"
                            "            y = pl.store(pl.load(x, [0, 0], [8, 32]), [0, 0], y)\n"
                            "        with pl.at(ARGS2):\n"
                            "            y = pl.store(pl.load(x, [8, 0], [8, 32]), [8, 0], y)\n"
                            "        return y\n";

std::string scopes(const std::string& first, const std::string& second) {
  std::string text = kScopes;
  text.replace(text.find("ARGS1"), 5, first);
  text.replace(text.find("ARGS2"), 5, second);
  return text;
}

const std::vector<std::string> kThroughOutline = {"UnrollLoops", "ConvertToSSA", "Simplify",
                                                  "FlattenCallExpr", "OutlineIncoreScopes"};

std::vector<std::string> kernel_names(const ir::ProgramPtr& p) {
  std::vector<std::string> names;
  for (const auto& f : p->functions) {
    if (f->name != "main") names.push_back(f->name);
  }
  return names;
}

TEST(ParserValues, NameHintNamesTheOutlinedKernelUniquely) {
  auto p = parse_one(
      scopes("level=pl.Level.CORE_GROUP, name_hint=\"attn\", "
             "optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]",
             "pl.Level.CORE_GROUP, name_hint='attn', allow_early_resolve=True, windowize=False"));
  ASSERT_TRUE(p);
  const std::string text = print(p);
  EXPECT_NE(text.find("with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"attn\"):"),
            std::string::npos)
      << text;
  EXPECT_EQ(print(parse_one(text)), text);
  auto out = run_passes(p, kThroughOutline);
  EXPECT_EQ(kernel_names(out), (std::vector<std::string>{"attn", "attn_1"}));
  // A hint that a function already has, and scopes without hints.
  auto taken = run_passes(
      parse_one(scopes("pl.Level.CORE_GROUP, name_hint=\"main\"", "level=pl.Level.CORE_GROUP")),
      kThroughOutline);
  EXPECT_EQ(kernel_names(taken), (std::vector<std::string>{"main_1", "main_incore_0"}));
}

TEST(ParserValues, SpmdLoopIsOneLaunchOfANamedScope) {
  std::string text = kScopes;
  const std::string first_scope = "        with pl.at(ARGS1):\n";
  text.replace(text.find(first_scope), first_scope.size(),
               "        for b in pl.spmd(2, name_hint=\"blk\", sync_start=False):\n");
  text.replace(text.find("ARGS2"), 5, "level=pl.Level.CORE_GROUP");
  auto p = parse_one(text);
  ASSERT_TRUE(p);
  // task_options, task_blocks(2), then the scope, whose first statement binds the loop's name
  // to the block index.
  const auto* body = p->functions[0]->body->as<ir::SeqStmts>();
  ASSERT_TRUE(body);
  ASSERT_GE(body->stmts.size(), 3u);
  const auto* blocks = body->stmts[1]->as<ir::EvalStmt>()->expr->as<ir::Call>();
  ASSERT_TRUE(blocks);
  EXPECT_EQ(blocks->callee, "task_blocks");
  const auto* scope = body->stmts[2]->as<ir::ScopeStmt>();
  ASSERT_TRUE(scope);
  EXPECT_EQ(scope->name_hint, "blk");
  const auto* first = scope->body->as<ir::SeqStmts>()->stmts.at(0)->as<ir::AssignStmt>();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->var->name, "b");
  EXPECT_EQ(first->value->as<ir::Call>()->callee, "get_block_idx");
  auto out = run_passes(p, kThroughOutline);
  EXPECT_EQ(kernel_names(out), (std::vector<std::string>{"blk", "main_incore_0"}));
}

TEST(ParserValues, RefusedPlAtArgumentsAreLocatedByName) {
  struct Case {
    std::string args;
    std::string needle;
    int32_t col;
  };
  // `        with pl.at(` is 19 characters: the first argument is at column 20.
  const std::vector<Case> cases = {
      {"pl.Level.CORE_GROUP, deps=[1]", "deps= entries must be TaskIds", 47},
      {"pl.Level.CORE_GROUP, no_dep_args=[x]", "pl.at(no_dep_args=...) is not supported", 41},
      {"pl.Level.CORE_GROUP, dumps=[1]", "dumps= of pl.at lists tensors", 48},
      {"pl.Level.CORE_GROUP, pl.Role.Orchestrator", "a CORE_GROUP scope is a kernel", 41},
      {"pl.Level.CHIP, pl.Role.Worker", "unknown role 'pl.Role.Worker'", 43},
      {"pl.Level.CORE_GROUP, name_hint=\"a b\"", "name_hint must be a valid identifier", 51},
      {"pl.Level.CORE_GROUP, speed=2", "unknown argument 'speed' of pl.at", 41},
      {"pl.Level.CORE_GROUP, optimizations=[pl.split()]", "pl.split needs a mode", 56},
      {"pl.Level.CORE_GROUP, level=pl.Level.CORE_GROUP", "pl.at got argument 'level' twice", 41},
      {"name_hint=\"k\"", "pl.at needs a level", 9},
  };
  for (const Case& c : cases) {
    ParseError e = error_of(scopes(c.args, "level=pl.Level.CORE_GROUP"));
    EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos)
        << c.args << ": " << e.what();
    EXPECT_EQ(e.line(), 6) << c.args;
    EXPECT_EQ(e.col(), c.col) << c.args << ": " << e.what();
  }
}

}  // namespace
}  // namespace pypto::frontend
