// Generated programs, built with the host compiler and run on an inline runtime: the full
// pipeline (parse -> passes -> codegen) on the example programs, and codegen alone on IR built
// by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "codegen_test_support.h"
#include "pypto/codegen/kernel_codegen.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/interpreter.h"
#include "pypto/ir/ir_size.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/pass_manager.h"

namespace pypto::codegen {
namespace {

using testing::HostArray;
using testing::InlineRuntime;
using testing::Library;

using testing::lower_program;

// Lowers and builds `text`, then runs the entry with `args`; returns the runtime.
std::unique_ptr<InlineRuntime> run(const std::string& text, std::vector<PtoArg> args,
                                   std::string* tu = nullptr) {
  GeneratedProgram g = generate_program(*lower_program(text));
  if (tu) *tu = g.translation_unit;
  Library lib(g.translation_unit);
  auto rt = std::make_unique<InlineRuntime>();
  if (!lib.ok()) return rt;
  EXPECT_EQ(lib.abi_version()(), PTO_ABI_VERSION);
  int32_t rc = lib.orchestrate()(rt->api(), args.data(), static_cast<int32_t>(args.size()));
  EXPECT_EQ(rc, rt->failures().empty() ? 0 : rc);
  return rt;
}

void expect_near_all(const HostArray& got, const HostArray& want, float tol) {
  ASSERT_EQ(got.data.size(), want.data.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    float g = got.data[i], w = want.data[i];
    if (!(std::fabs(g - w) <= tol + tol * std::fabs(w))) {
      if (bad++ < 5) ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(CodegenProgram, AddMatchesHostSum) {
  HostArray a({128, 128}), b({128, 128}, 1.5f), c({128, 128}, -7.0f), want({128, 128});
  testing::fill_random(a, 1);
  for (size_t i = 0; i < a.data.size(); ++i) want.data[i] = a.data[i] + 1.5f;
  auto rt = run(testing::read_example("add.py"), {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  EXPECT_EQ(rt->tasks(), std::vector<std::string>{"add_kernel"});
  expect_near_all(c, want, 0.0f);
}

TEST(CodegenProgram, WrongArgumentCountFailsTheRun) {
  HostArray a({128, 128});
  auto rt = run(testing::read_example("add.py"), {a.arg()});
  ASSERT_EQ(rt->failures().size(), 1u);
  EXPECT_NE(rt->failures()[0].find("main: expected 3 arguments, got 1"), std::string::npos)
      << rt->failures()[0];
  EXPECT_TRUE(rt->tasks().empty());
}

TEST(CodegenProgram, WrongArgumentShapeFailsTheRun) {
  HostArray a({128, 128}), b({64, 128}), c({128, 128});
  auto rt = run(testing::read_example("add.py"), {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  ASSERT_EQ(rt->failures().size(), 1u);
  EXPECT_NE(rt->failures()[0].find("argument 2 'b'"), std::string::npos) << rt->failures()[0];
  EXPECT_NE(rt->failures()[0].find("[128, 128]"), std::string::npos) << rt->failures()[0];
}

TEST(CodegenProgram, SoftmaxMatchesReference) {
  HostArray x({64, 64}), y({64, 64}), want({64, 64});
  testing::fill_random(x, 2);
  for (int64_t r = 0; r < 64; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < 64; ++c) m = std::max<double>(m, x.at(r, c));
    for (int64_t c = 0; c < 64; ++c) s += std::exp(x.at(r, c) - m);
    for (int64_t c = 0; c < 64; ++c)
      want.at(r, c) = static_cast<float>(std::exp(x.at(r, c) - m) / s);
  }
  auto rt = run(testing::read_example("softmax.py"), {x.arg(), y.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  expect_near_all(y, want, 1e-5f);
}

void reference_matmul(HostArray& a, HostArray& b, HostArray& c) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a.at(i, p)) * b.at(p, j);
      c.at(i, j) = static_cast<float>(s);
    }
}

TEST(CodegenProgram, MatmulKSplitCarriesTheAccumulator) {
  HostArray a({64, 256}), b({256, 64}), c({64, 64}), want({64, 64});
  testing::fill_random(a, 3);
  testing::fill_random(b, 4);
  reference_matmul(a, b, want);
  std::string tu;
  auto rt =
      run(testing::read_example("matmul_ksplit.py"), {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)}, &tu);
  EXPECT_TRUE(rt->failures().empty());
  expect_near_all(c, want, 1e-4f);
  EXPECT_NE(tu.find("for (int64_t k"), std::string::npos);
  EXPECT_NE(tu.find("isa->matmul(PTO_FP32, PTO_FP32, "), std::string::npos);
}

TEST(CodegenProgram, BlockedAddSubmitsOneTaskPerView) {
  HostArray a({512, 128}), b({512, 128}), c({512, 128}), want({512, 128});
  testing::fill_random(a, 5);
  testing::fill_random(b, 6);
  for (size_t i = 0; i < a.data.size(); ++i) want.data[i] = a.data[i] + b.data[i];
  auto rt = run(testing::read_example("blocked_add.py"), {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  EXPECT_EQ(rt->tasks().size(), 4u);
  expect_near_all(c, want, 0.0f);
}

TEST(CodegenProgram, ScopedScaleRunsTheOutlinedKernel) {
  HostArray x({256, 64}), y({256, 64}), want({256, 64});
  testing::fill_random(x, 7);
  for (size_t i = 0; i < x.data.size(); ++i)
    want.data[i] = static_cast<float>(static_cast<float>(x.data[i] * 3.0) + 1.0);
  auto rt = run(testing::read_example("scoped_scale.py"), {x.arg(), y.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  EXPECT_EQ(rt->tasks().size(), 1u);
  expect_near_all(y, want, 0.0f);
}

TEST(CodegenProgram, FfnChainsTasksThroughIntermediates) {
  HostArray x({64, 64}), w1({64, 64}), w2({64, 64}), y({64, 64});
  HostArray h({64, 64}), g({64, 64}), want({64, 64});
  testing::fill_random(x, 8);
  testing::fill_random(w1, 9);
  testing::fill_random(w2, 10);
  reference_matmul(x, w1, h);
  for (size_t i = 0; i < h.data.size(); ++i)
    g.data[i] = static_cast<float>(h.data[i] / (1.0 + std::exp(-1.702 * h.data[i])));
  reference_matmul(g, w2, want);
  auto rt = run(testing::read_example("ffn.py"), {x.arg(), w1.arg(), w2.arg(), y.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  EXPECT_EQ(rt->tasks(), (std::vector<std::string>{"mm", "gelu", "mm"}));
  EXPECT_EQ(rt->intermediates(), 2u);
  expect_near_all(y, want, 1e-3f);
}

const char* const kDynamicOffset = R"(
import pypto.language as pl

@pl.program
class OffsetProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def shifted(self, a: pl.Tensor[[128, 64], pl.FP32], row: pl.Scalar[pl.INT64],
                c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(a, [row, 0], [64, 64])
        c = pl.store(pl.neg(t), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], row: pl.Scalar[pl.INT64],
             c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        c = self.shifted(a, row, c)
        return c
)";

PtoArg int_scalar(int64_t v) {
  PtoArg a{};
  a.kind = PTO_ARG_SCALAR;
  a.dtype = PTO_INT64;
  a.i64 = v;
  return a;
}

TEST(CodegenProgram, ScalarOffsetLoadsTheRightRows) {
  HostArray a({128, 64}), c({64, 64});
  testing::fill_random(a, 11);
  auto rt = run(kDynamicOffset, {a.arg(), int_scalar(32), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  EXPECT_EQ(c.at(0, 0), -a.at(32, 0));
  EXPECT_EQ(c.at(63, 63), -a.at(95, 63));
}

TEST(CodegenProgram, OutOfBoundsLoadFailsWithAMessage) {
  HostArray a({128, 64}), c({64, 64}, 5.0f);
  auto rt = run(kDynamicOffset, {a.arg(), int_scalar(65), c.arg(PTO_ARG_OUT)});
  ASSERT_EQ(rt->failures().size(), 1u);
  const std::string& msg = rt->failures()[0];
  EXPECT_NE(msg.find("shifted: pl.load"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offsets [65, 0] with shape [64, 64] exceed the tensor view of shape "
                     "[128, 64]"),
            std::string::npos)
      << msg;
  EXPECT_EQ(c.at(0, 0), 5.0f);  // nothing stored
}

const char* const kLoopAndIf = R"(
import pypto.language as pl

@pl.program
class RowBlockSum:
    @pl.function(type=pl.FunctionType.InCore)
    def block_sum(self, a: pl.Tensor[[128, 64], pl.FP32], scale: pl.Scalar[pl.FP32],
                  n: pl.Scalar[pl.INT64],
                  c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        acc = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        for i in pl.range(n):
            t = pl.load(a, [i * 32, 0], [32, 64])
            acc = pl.add(acc, t)
        if n > 2:
            acc = pl.mul(acc, scale)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], n: pl.Scalar[pl.INT64],
             c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        c = self.block_sum(a, 0.5, n, c)
        return c
)";

TEST(CodegenProgram, LoopCarriedTileAndIfResult) {
  for (int64_t n : {2, 4}) {
    HostArray a({128, 64}), c({32, 64});
    testing::fill_random(a, 12);
    auto rt = run(kLoopAndIf, {a.arg(), int_scalar(n), c.arg(PTO_ARG_OUT)});
    EXPECT_TRUE(rt->failures().empty());
    for (int64_t r : {0, 17, 31}) {
      for (int64_t col : {0, 63}) {
        float s = 0;
        for (int64_t i = 0; i < n; ++i) s += a.at(i * 32 + r, col);
        if (n > 2) s *= 0.5f;
        EXPECT_FLOAT_EQ(c.at(r, col), s) << "n=" << n << " r=" << r << " c=" << col;
      }
    }
  }
}

// Every example: the generated program computes what the reference interpreter computes on
// the frontend IR.
// Lowers, generates, builds and runs `text` on random FP32 arguments and compares every
// argument afterwards with what the reference interpreter computes on the frontend IR.
void expect_matches_interpreter(const std::string& text, const std::string& file_name,
                                float tolerance) {
  auto frontend_program = frontend::parse_module(text, file_name).at(0);
  ir::FunctionPtr entry = frontend_program->entry();
  ASSERT_TRUE(entry);
  std::vector<HostArray> device, reference;
  for (size_t i = 0; i < entry->params.size(); ++i) {
    const auto* tt = entry->params[i].var->type()->as<ir::TensorType>();
    ASSERT_TRUE(tt && tt->dtype == ir::DataType::FP32);
    device.emplace_back(tt->shape);
    testing::fill_random(device.back(), static_cast<uint32_t>(100 + i));
    reference.push_back(device.back());
  }
  std::vector<ir::InterpreterArg> interpreter_args;
  std::vector<PtoArg> device_args;
  for (size_t i = 0; i < entry->params.size(); ++i) {
    ir::HostTensor t;
    t.name = entry->params[i].var->name;
    t.shape = reference[i].shape;
    t.data = reference[i].data.data();
    interpreter_args.emplace_back(t);
    bool out = entry->params[i].direction != ir::ParamDirection::In;
    device_args.push_back(device[i].arg(out ? PTO_ARG_OUT : PTO_ARG_IN));
  }
  ir::interpret(*frontend_program, interpreter_args);

  GeneratedProgram g =
      generate_program(*passes::PassManager::for_strategy(passes::OptimizationStrategy::Default)
                            .run(frontend_program));
  Library lib(g.translation_unit, "interp");
  ASSERT_TRUE(lib.ok());
  InlineRuntime rt;
  EXPECT_EQ(
      lib.orchestrate()(rt.api(), device_args.data(), static_cast<int32_t>(device_args.size())), 0);
  EXPECT_TRUE(rt.failures().empty());
  for (size_t i = 0; i < device.size(); ++i) {
    SCOPED_TRACE(entry->params[i].var->name);
    expect_near_all(device[i], reference[i], tolerance);
  }
}

class ExampleMatchesInterpreter : public ::testing::TestWithParam<const char*> {};

TEST_P(ExampleMatchesInterpreter, SameOutputs) {
  expect_matches_interpreter(testing::read_example(GetParam()), GetParam(), 1e-4f);
}

const char* const kCasts = R"(
import pypto.language as pl

@pl.program
class CastProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 16])
        h = pl.cast(pl.mul(t, 1000.0), target_type=pl.FP16)
        b = pl.cast(pl.sqrt(pl.abs(t)), target_type=pl.BF16)
        i = pl.cast(pl.mul(t, 100.0), target_type=pl.INT32)
        j = pl.div(pl.maximum(i, pl.neg(i)), 7)
        r = pl.relu(pl.sub(pl.cast(h, target_type=pl.FP32), pl.cast(b, target_type=pl.FP32)))
        s = pl.add(r, pl.cast(j, target_type=pl.FP32))
        y = pl.store(pl.minimum(s, pl.recip(pl.add(t, 3.0))), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.k(x, y)
        return y
)";

TEST(CodegenProgram, CastsAndIntegerTilesMatchInterpreter) {
  expect_matches_interpreter(kCasts, "casts.py", 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleMatchesInterpreter,
                         ::testing::Values("add.py", "softmax.py", "matmul.py", "matmul_ksplit.py",
                                           "blocked_add.py", "scoped_scale.py", "ffn.py"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

// Codegen alone, on post-pass IR built by hand: the result tile deliberately overlaps its
// operands at different addresses, so the generated code must go through scratch space.
ir::ExprPtr placed(const ir::ExprPtr& call, ir::MemorySpace space, int64_t buffer, int64_t addr) {
  const auto* c = call->as<ir::Call>();
  const auto* tt = c->type()->as<ir::TileType>();
  ir::MemRef m{space, buffer, tt->size_bytes(), addr};
  return std::make_shared<ir::Call>(c->call_kind, c->callee, c->args, c->attrs,
                                    ir::tile_type(tt->shape, tt->dtype, space, m), c->span());
}

TEST(CodegenProgram, HandBuiltIrWithOverlappingBuffers) {
  using namespace ir;
  auto a = make_var("a", tensor_type({8, 8}, DataType::FP32));
  auto c = make_var("c", tensor_type({8, 8}, DataType::FP32));
  auto zero2 = make_tuple({make_int(0), make_int(0)});
  auto shape = make_tuple({make_int(8), make_int(8)});
  auto load = placed(make_op_call("load", {a, zero2, shape}), MemorySpace::Vec, 0, 0);
  auto t = make_var("t", load->type());
  // u = row_expand_sub(t, row_max(t)), with u placed across the ends of both operands, which
  // die at that op.
  auto rmax = placed(make_op_call("row_max", {t}), MemorySpace::Vec, 1, 256);
  auto m = make_var("m", rmax->type());
  auto sub = placed(make_op_call("row_expand_sub", {t, m}), MemorySpace::Vec, 2, 224);
  auto u = make_var("u", sub->type());
  auto store = make_op_call("store", {u, zero2, c});
  auto c1 = make_var("c", c->type());
  auto body =
      make_seq({std::make_shared<AssignStmt>(t, load), std::make_shared<AssignStmt>(m, rmax),
                std::make_shared<AssignStmt>(u, sub), std::make_shared<AssignStmt>(c1, store),
                std::make_shared<ReturnStmt>(std::vector<ExprPtr>{c1})});
  auto kernel = std::make_shared<Function>(
      "k", FunctionType::InCore,
      std::vector<Param>{{a, ParamDirection::In}, {c, ParamDirection::Out}},
      std::vector<TypePtr>{c->type()}, body);
  auto oa = make_var("a", a->type());
  auto oc = make_var("c", c->type());
  auto call =
      std::make_shared<Call>(CallKind::Function, "k", std::vector<ExprPtr>{oa, oc},
                             Attrs{{"arg_directions", std::vector<int64_t>{0, 1}}}, oc->type());
  auto oc1 = make_var("c", oc->type());
  auto main_body = make_seq({std::make_shared<AssignStmt>(oc1, call),
                             std::make_shared<ReturnStmt>(std::vector<ExprPtr>{oc1})});
  auto main = std::make_shared<Function>(
      "main", FunctionType::Orchestration,
      std::vector<Param>{{oa, ParamDirection::In}, {oc, ParamDirection::Out}},
      std::vector<TypePtr>{oc->type()}, main_body);
  Program program("Hand", {kernel, main});

  std::string kernel_text = generate_kernel(*kernel);
  EXPECT_NE(kernel_text.find("pto::Scratch scratch(256);"), std::string::npos) << kernel_text;
  GeneratedProgram g = generate_program(program);
  Library lib(g.translation_unit);
  ASSERT_TRUE(lib.ok());
  HostArray ha({8, 8}), hc({8, 8});
  testing::fill_random(ha, 13);
  InlineRuntime rt;
  std::vector<PtoArg> args{ha.arg(), hc.arg(PTO_ARG_OUT)};
  EXPECT_EQ(lib.orchestrate()(rt.api(), args.data(), 2), 0);
  for (int64_t r = 0; r < 8; ++r) {
    float mx = ha.at(r, 0);
    for (int64_t col = 1; col < 8; ++col) mx = std::max(mx, ha.at(r, col));
    for (int64_t col = 0; col < 8; ++col) EXPECT_EQ(hc.at(r, col), ha.at(r, col) - mx);
  }
}

// A program big enough for kernels to be generated on several threads (program_codegen.cpp's
// threshold): the translation unit is the same as kernel-by-kernel generation on one thread, in
// program order.
TEST(CodegenProgram, KernelsOfALargeProgramMatchOneThreadGeneration) {
  std::string text = "import pypto.language as pl\n\n@pl.program\nclass Big:\n";
  const std::string t = "pl.Tensor[[1024, 64], pl.FP32]";
  for (int k = 0; k < 4; ++k) {
    text += "    @pl.function(type=pl.FunctionType.InCore)\n    def k" + std::to_string(k) +
            "(self, x: " + t + ", y: pl.Out[" + t + "]) -> " + t +
            ":\n        for i in pl.unroll(128):\n"
            "            a = pl.load(x, [i * 8, 0], [8, 64])\n"
            "            y = pl.store(pl.add(pl.exp(a), a), [i * 8, 0], y)\n        return y\n";
  }
  text += "    @pl.function(type=pl.FunctionType.Orchestration)\n    def main(self, x: " + t +
          ", y: pl.Out[" + t + "]) -> " + t + ":\n";
  for (int k = 0; k < 4; ++k) text += "        y = self.k" + std::to_string(k) + "(x, y)\n";
  text += "        return y\n";
  ir::ProgramPtr program = lower_program(text);
  ASSERT_GE(ir::count_nodes(*program), 4000);
  GeneratedProgram g = generate_program(*program);
  ASSERT_EQ(g.kernels.size(), 4u);
  size_t at = 0;
  for (int k = 0; k < 4; ++k) {
    const ir::Function* f = nullptr;
    for (const auto& fn : program->functions)
      if (fn->name == "k" + std::to_string(k)) f = fn.get();
    ASSERT_NE(f, nullptr);
    const std::string one_thread = generate_kernel(*f, 0);
    EXPECT_EQ(g.kernels[k].name, f->name);
    EXPECT_EQ(g.kernels[k].source, one_thread);
    size_t found = g.translation_unit.find(one_thread, at);
    ASSERT_NE(found, std::string::npos) << "kernel k" << k << " out of order";
    at = found + one_thread.size();
  }
}

TEST(CodegenProgram, TileWithoutAddressIsRejected) {
  using namespace ir;
  auto a = make_var("a", tensor_type({8, 8}, DataType::FP32));
  auto load = make_op_call(
      "load", {a, make_tuple({make_int(0), make_int(0)}), make_tuple({make_int(8), make_int(8)})});
  auto t = make_var("t", load->type());
  auto kernel = std::make_shared<Function>(
      "k", FunctionType::InCore, std::vector<Param>{{a, ParamDirection::In}},
      std::vector<TypePtr>{}, std::make_shared<AssignStmt>(t, load));
  try {
    generate_kernel(*kernel);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 't' has no memory address"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pypto::codegen
