// pl.batch_matmul and pl.tile.batch_matmul_acc on 3-D and 4-D tiles: the type rule's shapes,
// broadcasts and errors, and programs run as generated code (host compiler, the runtime's
// GEMM) and in the reference interpreter, both against a plain triple loop here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/batch_index.h"
#include "pypto/ir/interpreter.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::ir {
namespace {

using codegen::testing::HostArray;

std::string list(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string zeros(size_t rank) { return list(std::vector<int64_t>(rank, 0)); }

// A kernel c = body(ta, tb) of tensors a, b loaded whole into Mat, and its orchestration.
std::string program_text(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                         const std::vector<int64_t>& c, const std::string& body) {
  const std::string ta = "pl.Tensor[" + list(a) + ", pl.FP32]";
  const std::string tb = "pl.Tensor[" + list(b) + ", pl.FP32]";
  const std::string tc = "pl.Tensor[" + list(c) + ", pl.FP32]";
  const std::string params = "a: " + ta + ", b: " + tb + ", c: pl.Out[" + tc + "]";
  return "import pypto.language as pl\n\n@pl.program\nclass P:\n"
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, " +
         params + ") -> " + tc +
         ":\n"
         "        ta = pl.load(a, " +
         zeros(a.size()) + ", " + list(a) +
         ", target_memory=pl.MemorySpace.Mat)\n"
         "        tb = pl.load(b, " +
         zeros(b.size()) + ", " + list(b) +
         ", target_memory=pl.MemorySpace.Mat)\n"
         "        " +
         body +
         "\n"
         "        c = pl.store(tc, " +
         zeros(c.size()) +
         ", c)\n"
         "        return c\n\n"
         "    @pl.function(type=pl.FunctionType.Orchestration)\n"
         "    def main(self, " +
         params + ") -> " + tc +
         ":\n"
         "        c = self.k(a, b, c)\n        return c\n";
}

// c[batch] = a[batch'] @ b[batch''] with numpy's broadcast of the batch dimensions; `a_trans`
// and `b_trans` read an operand stored with its last two axes swapped.
std::vector<double> reference(const HostArray& a, const HostArray& b, const std::vector<int64_t>& c,
                              bool a_trans, bool b_trans) {
  const size_t ra = a.shape.size(), rc = c.size();
  const int64_t m = c[rc - 2], n = c[rc - 1];
  const int64_t k = a_trans ? a.shape[ra - 2] : a.shape[ra - 1];
  const std::vector<int64_t> out_batch = batch_dims(c);
  std::vector<double> out;
  for (int64_t bi = 0; bi < batch_count(out_batch); ++bi) {
    const int64_t ai = broadcast_batch_index(out_batch, batch_dims(a.shape), bi);
    const int64_t bj = broadcast_batch_index(out_batch, batch_dims(b.shape), bi);
    const float* am = a.data.data() + ai * m * k;
    const float* bm = b.data.data() + bj * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += static_cast<double>(a_trans ? am[p * m + i] : am[i * k + p]) *
                 static_cast<double>(b_trans ? bm[j * k + p] : bm[p * n + j]);
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

struct Case {
  const char* name;
  std::vector<int64_t> a, b, c;
  std::string body;
  bool a_trans = false, b_trans = false;
  double scale = 1.0;  // the result is this multiple of the product
};

class BatchMatmulRuns : public ::testing::TestWithParam<Case> {};

TEST_P(BatchMatmulRuns, AsGeneratedCodeAndInTheInterpreter) {
  const Case& t = GetParam();
  const std::string text = program_text(t.a, t.b, t.c, t.body);
  SCOPED_TRACE(text);
  auto program = frontend::parse_module(text, "bmm.py").at(0);
  std::vector<HostArray> device = {HostArray(t.a), HostArray(t.b), HostArray(t.c)};
  codegen::testing::fill_random(device[0], 7);
  codegen::testing::fill_random(device[1], 8);
  std::vector<HostArray> interpreted = device;
  const std::vector<double> want = reference(device[0], device[1], t.c, t.a_trans, t.b_trans);

  std::vector<InterpreterArg> interpreter_args;
  const char* names[] = {"a", "b", "c"};
  for (size_t i = 0; i < interpreted.size(); ++i) {
    HostTensor h;
    h.name = names[i];
    h.shape = interpreted[i].shape;
    h.data = interpreted[i].data.data();
    interpreter_args.emplace_back(h);
  }
  interpret(*program, interpreter_args);

  auto lowered =
      passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
  codegen::testing::Library lib(codegen::generate_program(*lowered).translation_unit, "bmm");
  ASSERT_TRUE(lib.ok());
  codegen::testing::InlineRuntime rt;
  std::vector<PtoArg> args = {device[0].arg(), device[1].arg(), device[2].arg(PTO_ARG_OUT)};
  ASSERT_EQ(lib.orchestrate()(rt.api(), args.data(), 3), 0);
  ASSERT_TRUE(rt.failures().empty()) << rt.failures().front();

  ASSERT_EQ(want.size(), device[2].data.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double expected = t.scale * want[i];
    const double tol = 1e-4 * (1 + std::fabs(expected));
    if (std::fabs(device[2].data[i] - expected) > tol && bad++ < 3)
      ADD_FAILURE() << "element " << i << ": generated code " << device[2].data[i] << ", want "
                    << expected;
    if (std::fabs(interpreted[2].data[i] - expected) > tol && bad++ < 3)
      ADD_FAILURE() << "element " << i << ": interpreter " << interpreted[2].data[i] << ", want "
                    << expected;
  }
  EXPECT_EQ(bad, 0u);
}

const char* kProduct = "tc = pl.batch_matmul(ta, tb)";

INSTANTIATE_TEST_SUITE_P(
    Shapes, BatchMatmulRuns,
    ::testing::Values(Case{"same_batch", {3, 16, 24}, {3, 24, 40}, {3, 16, 40}, kProduct},
                      Case{"one_right_matrix", {3, 16, 24}, {1, 24, 40}, {3, 16, 40}, kProduct},
                      Case{"two_d_right", {3, 16, 24}, {24, 40}, {3, 16, 40}, kProduct},
                      Case{"one_left_matrix", {1, 16, 24}, {3, 24, 40}, {3, 16, 40}, kProduct},
                      Case{
                          "both_broadcast", {2, 1, 8, 24}, {1, 3, 24, 16}, {2, 3, 8, 16}, kProduct},
                      Case{"b_transposed",
                           {2, 16, 24},
                           {2, 40, 24},
                           {2, 16, 40},
                           "tc = pl.batch_matmul(ta, pl.tile.transpose_view(tb))",
                           false,
                           true},
                      Case{"a_transposed",
                           {2, 24, 16},
                           {2, 24, 40},
                           {2, 16, 40},
                           "tc = pl.batch_matmul(pl.tile.transpose_view(ta), tb)",
                           true,
                           false},
                      // acc + a @ b with acc = a @ b: twice the product, accumulated in place.
                      Case{"accumulated",
                           {2, 16, 24},
                           {2, 24, 40},
                           {2, 16, 40},
                           "tc = pl.tile.batch_matmul_acc(pl.batch_matmul(ta, tb), ta, tb)",
                           false,
                           false,
                           2.0},
                      Case{"accumulated_broadcast",
                           {2, 16, 24},
                           {24, 40},
                           {2, 16, 40},
                           "tc = pl.tile.batch_matmul_acc(pl.batch_matmul(ta, tb), ta, tb)",
                           false,
                           false,
                           2.0}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The type rule: the result's shape, dtype and space, and located errors for misuse.
TypePtr infer(const std::string& op, const std::vector<TypePtr>& args) {
  std::vector<ExprPtr> vars;
  for (const TypePtr& t : args) vars.push_back(make_var("t", t));
  return OpRegistry::global().find(op)->infer(vars, {}, Span{});
}

TypePtr mat(std::vector<int64_t> shape, DataType dtype = DataType::FP32) {
  return tile_type(std::move(shape), dtype, MemorySpace::Mat);
}

TEST(BatchMatmulType, BroadcastsTheBatchAndAccumulatesInFp32OrInt32) {
  auto t = infer("batch_matmul", {mat({2, 1, 8, 16}), mat({5, 16, 4})});
  const auto* tile = t->as<TileType>();
  ASSERT_NE(tile, nullptr);
  EXPECT_EQ(tile->shape, (std::vector<int64_t>{2, 5, 8, 4}));
  EXPECT_EQ(tile->dtype, DataType::FP32);
  EXPECT_EQ(tile->space, MemorySpace::Acc);
  auto i = infer("batch_matmul", {mat({3, 8, 16}, DataType::INT8), mat({16, 4}, DataType::INT8)});
  EXPECT_EQ(i->as<TileType>()->dtype, DataType::INT32);
  EXPECT_EQ(i->as<TileType>()->shape, (std::vector<int64_t>{3, 8, 4}));
  auto two_d = infer("batch_matmul", {mat({8, 16}), mat({16, 4})});
  EXPECT_EQ(two_d->as<TileType>()->shape, (std::vector<int64_t>{8, 4}));
}

void expect_error(const std::string& op, const std::vector<TypePtr>& args,
                  const std::string& message) {
  try {
    infer(op, args);
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(BatchMatmulType, RejectsWhatIsNoBatchedProduct) {
  expect_error("batch_matmul", {mat({2, 8, 16}), mat({2, 8, 4})},
               "shape mismatch in pl.batch_matmul: [2, 8, 16] @ [2, 8, 4] (inner dimensions 16 "
               "and 8 differ)");
  expect_error("batch_matmul", {mat({2, 8, 16}), mat({3, 16, 4})},
               "batch dimensions of pl.batch_matmul do not broadcast");
  expect_error("batch_matmul", {mat({16}), mat({16, 4})},
               "pl.batch_matmul multiplies tiles of 2 or more dimensions");
  expect_error("batch_matmul",
               {tile_type({2, 8, 16}, DataType::FP32, MemorySpace::Acc), mat({2, 16, 4})},
               "expected a tile in Left, got one in Acc");
  expect_error("batch_matmul", {mat({2, 8, 16}), mat({2, 16, 4}, DataType::FP16)},
               "dtype mismatch in pl.batch_matmul");
  const TypePtr acc = tile_type({2, 8, 4}, DataType::FP32, MemorySpace::Acc);
  expect_error("batch_matmul_acc", {acc, mat({8, 16}), mat({16, 4})},
               "the accumulator of pl.batch_matmul_acc must have the product's shape [8, 4], "
               "got [2, 8, 4]");
  expect_error(
      "batch_matmul_acc",
      {tile_type({2, 8, 4}, DataType::INT32, MemorySpace::Acc), mat({2, 8, 16}), mat({2, 16, 4})},
      "pl.batch_matmul_acc accumulates into a FP32 tile for these operands, got INT32");
}

}  // namespace
}  // namespace pypto::ir
