// The element types beyond FP32/FP16/BF16/INT32/INT64/BOOL: names and sizes, the FP8
// conversions, the integer wrap-around and pl.cast's saturation, scalar arithmetic at the
// narrow widths, .npy headers, comparison of unsigned 64-bit values, and the parser's located
// refusal of PyPTO's dtypes this device does not have.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/ir/types.h"
#include "pypto/runtime/compare.h"
#include "pypto/runtime/npy.h"
#include "pypto/support/diagnostics.h"
#include "pypto/support/element_ops.h"
#include "pypto/support/float8.h"

namespace pypto {
namespace {

using ir::DataType;

TEST(DTypes, EveryDtypeHasANameASizeAndReadsBackByName) {
  const std::vector<std::pair<const char*, int64_t>> expected = {
      {"FP32", 4},      {"FP16", 2},    {"BF16", 2},    {"INT32", 4},  {"INT64", 8},  {"BOOL", 1},
      {"INT8", 1},      {"INT16", 2},   {"UINT8", 1},   {"UINT16", 2}, {"UINT32", 4}, {"UINT64", 8},
      {"FP8E4M3FN", 1}, {"FP8E5M2", 1}, {"FP8E8M0", 1}, {"FP4", 1},    {"INT4", 1},   {"UINT4", 1}};
  ASSERT_EQ(static_cast<int>(expected.size()), ir::kNumDataTypes);
  for (int i = 0; i < ir::kNumDataTypes; ++i) {
    const auto t = static_cast<DataType>(i);
    EXPECT_EQ(ir::dtype_name(t), expected[static_cast<size_t>(i)].first);
    EXPECT_EQ(ir::dtype_bytes(t), expected[static_cast<size_t>(i)].second);
    EXPECT_EQ(ir::dtype_from_name(ir::dtype_name(t)), t);
    EXPECT_EQ(ir::unsupported_dtype_reason(ir::dtype_name(t)), nullptr);
  }
  EXPECT_TRUE(ir::is_float(DataType::FP8E4M3FN));
  EXPECT_TRUE(ir::is_float(DataType::FP8E5M2));
  EXPECT_TRUE(ir::is_integer(DataType::UINT16));
  EXPECT_FALSE(ir::is_integer(DataType::BOOL));
  EXPECT_TRUE(ir::is_unsigned(DataType::UINT64));
  EXPECT_FALSE(ir::is_unsigned(DataType::INT8));
  EXPECT_TRUE(ir::is_float(DataType::FP8E8M0));
  EXPECT_TRUE(ir::is_float(DataType::FP4));
  EXPECT_TRUE(ir::is_integer(DataType::INT4));
  EXPECT_FALSE(ir::is_unsigned(DataType::INT4));
  EXPECT_TRUE(ir::is_unsigned(DataType::UINT4));
  for (const char* name : {"HF4", "HF8", "TASK_ID", "FP64"}) {
    EXPECT_FALSE(ir::dtype_from_name(name)) << name;
    EXPECT_NE(ir::unsupported_dtype_reason(name), nullptr) << name;
  }
}

TEST(DTypes, Fp8DecodesTheOcpEncodings) {
  using support::f8e4m3fn_to_f32;
  using support::f8e5m2_to_f32;
  EXPECT_EQ(f8e4m3fn_to_f32(0x38), 1.0f);
  EXPECT_EQ(f8e4m3fn_to_f32(0x7e), 448.0f);
  EXPECT_EQ(f8e4m3fn_to_f32(0xfe), -448.0f);
  EXPECT_EQ(f8e4m3fn_to_f32(0x01), std::ldexp(1.0f, -9));  // smallest denormal
  EXPECT_TRUE(std::isnan(f8e4m3fn_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(f8e4m3fn_to_f32(0xff)));
  EXPECT_EQ(f8e4m3fn_to_f32(0x78), 256.0f);  // S.1111.000 is a number, not infinity
  EXPECT_EQ(f8e5m2_to_f32(0x3c), 1.0f);
  EXPECT_EQ(f8e5m2_to_f32(0x7b), 57344.0f);
  EXPECT_EQ(f8e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f8e5m2_to_f32(0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f8e5m2_to_f32(0xfc), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f8e5m2_to_f32(0x7d)));
}

// FP4 (E2M1): its sixteen codes, rounding to nearest even on its grid, saturation at +-6 and a
// NaN to a zero of the opposite sign (ml_dtypes' float4_e2m1fn, which test_dtypes.py compares
// bit for bit over many more values).
TEST(DTypes, Fp4DecodesE2M1AndRoundsToNearestEvenAndSaturates) {
  using support::f32_to_f4e2m1;
  using support::f4e2m1_to_f32;
  const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint8_t code = 0; code < 16; ++code) {
    const float v = (code & 8) ? -grid[code & 7] : grid[code & 7];
    EXPECT_EQ(f4e2m1_to_f32(code), v) << int(code);
    EXPECT_EQ(std::signbit(f4e2m1_to_f32(code)), code >= 8) << int(code);
    EXPECT_EQ(f32_to_f4e2m1(v), code) << v;
  }
  // Halfway values go to the even code: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2,
  // 3.5 -> 4, 5 -> 4.
  const std::pair<float, uint8_t> ties[] = {{0.25f, 0}, {0.75f, 2}, {1.25f, 2}, {1.75f, 4},
                                            {2.5f, 4},  {3.5f, 6},  {5.0f, 6},  {-5.0f, 14}};
  for (const auto& [v, code] : ties) EXPECT_EQ(f32_to_f4e2m1(v), code) << v;
  EXPECT_EQ(f32_to_f4e2m1(5.01f), 7);
  EXPECT_EQ(f32_to_f4e2m1(100.0f), 7);
  EXPECT_EQ(f32_to_f4e2m1(std::numeric_limits<float>::infinity()), 7);
  EXPECT_EQ(f32_to_f4e2m1(-std::numeric_limits<float>::infinity()), 15);
  EXPECT_EQ(f32_to_f4e2m1(-0.2f), 8);  // -0
  EXPECT_EQ(f32_to_f4e2m1(std::nanf("")), 8);
  EXPECT_EQ(f32_to_f4e2m1(-std::nanf("")), 0);
}

// INT4 and UINT4 keep four bits in the low half of a byte: arithmetic wraps in four bits, a float
// saturates at the range, an integer wraps.
TEST(DTypes, FourBitIntegersWrapInFourBitsAndSaturateFloats) {
  using support::I4;
  using support::U4;
  EXPECT_EQ(I4::get(0x7), 7);
  EXPECT_EQ(I4::get(0x8), -8);
  EXPECT_EQ(I4::get(0xd), -3);
  EXPECT_EQ(I4::put(-3), 0xd);
  EXPECT_EQ(I4::get(I4::put(I4::get(0x7) + 1)), -8);
  EXPECT_EQ(U4::get(U4::put(U4::get(0xf) + 1u)), 0u);
  EXPECT_EQ(support::element_from<I4>(100.0), I4::put(7));
  EXPECT_EQ(support::element_from<I4>(-9.5f), I4::put(-8));
  EXPECT_EQ(support::element_from<I4>(-3.7), I4::put(-3));
  EXPECT_EQ(support::element_from<U4>(-1.0), 0);
  EXPECT_EQ(support::element_from<U4>(99.0), 15);
  EXPECT_EQ(support::element_from<I4>(int64_t{100}), I4::put(4));  // 100 = 6 * 16 + 4
  EXPECT_EQ(support::element_from<U4>(int64_t{17}), 1);
}

TEST(DTypes, Fp8EncodingRoundsToNearestEvenAndOverflowsLikeMlDtypes) {
  using support::f32_to_f8e4m3fn;
  using support::f32_to_f8e5m2;
  const float inf = std::numeric_limits<float>::infinity();
  // E4M3FN: ties to even at 464 (between 448 and the missing 480); beyond it, NaN.
  EXPECT_EQ(f32_to_f8e4m3fn(448.0f), 0x7e);
  EXPECT_EQ(f32_to_f8e4m3fn(464.0f), 0x7e);
  EXPECT_EQ(f32_to_f8e4m3fn(464.5f), 0x7f);
  EXPECT_EQ(f32_to_f8e4m3fn(inf), 0x7f);
  EXPECT_EQ(f32_to_f8e4m3fn(-inf), 0xff);
  EXPECT_EQ(f32_to_f8e4m3fn(std::nanf("")), 0x7f);
  EXPECT_EQ(f32_to_f8e4m3fn(1.0625f), 0x38);                // halfway between 1 and 1.125: even
  EXPECT_EQ(f32_to_f8e4m3fn(1.1875f), 0x3a);                // halfway between 1.125 and 1.25: even
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(1.0f, -10)), 0x00);  // half the smallest denormal
  EXPECT_EQ(f32_to_f8e4m3fn(std::ldexp(1.5f, -10)), 0x01);
  EXPECT_EQ(f32_to_f8e4m3fn(-0.0f), 0x80);
  // E5M2: overflow to infinity from the midpoint 61440 on; NaN stays NaN.
  EXPECT_EQ(f32_to_f8e5m2(57344.0f), 0x7b);
  EXPECT_EQ(f32_to_f8e5m2(61439.0f), 0x7b);
  EXPECT_EQ(f32_to_f8e5m2(61440.0f), 0x7c);
  EXPECT_EQ(f32_to_f8e5m2(-inf), 0xfc);
  EXPECT_EQ(f32_to_f8e5m2(std::nanf("")), 0x7e);
  // Every encoding converts to float and back to itself (NaNs to the canonical NaN).
  for (int b = 0; b < 256; ++b) {
    const auto bits = static_cast<uint8_t>(b);
    const float e4 = support::f8e4m3fn_to_f32(bits), e5 = support::f8e5m2_to_f32(bits);
    EXPECT_EQ(f32_to_f8e4m3fn(e4), std::isnan(e4) ? (bits | 0x7f) : bits) << b;
    EXPECT_EQ(f32_to_f8e5m2(e5), std::isnan(e5) ? ((bits & 0x80) | 0x7e) : bits) << b;
  }
}

TEST(DTypes, Fp8E8M0IsAPowerOfTwoRoundedHalfUpLikeMlDtypes) {
  using support::f32_to_f8e8m0;
  using support::f8e8m0_to_f32;
  EXPECT_EQ(f8e8m0_to_f32(127), 1.0f);
  EXPECT_EQ(f8e8m0_to_f32(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(f8e8m0_to_f32(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(f8e8m0_to_f32(255)));
  EXPECT_EQ(f32_to_f8e8m0(1.0f), 127);
  EXPECT_EQ(f32_to_f8e8m0(1.4999f), 127);
  EXPECT_EQ(f32_to_f8e8m0(1.5f), 128);  // half up, not to even
  EXPECT_EQ(f32_to_f8e8m0(3.0f), 129);
  EXPECT_EQ(f32_to_f8e8m0(std::ldexp(1.5f, -127)), 1);
  EXPECT_EQ(f32_to_f8e8m0(std::ldexp(1.0f, -140)), 0);  // below the range: the smallest
  for (float nan_input : {0.0f, -0.0f, -1.0f, std::ldexp(1.5f, 127),
                          std::numeric_limits<float>::infinity(), std::nanf("")}) {
    EXPECT_EQ(f32_to_f8e8m0(nan_input), 255) << nan_input;
  }
  for (int b = 0; b < 255; ++b) EXPECT_EQ(f32_to_f8e8m0(f8e8m0_to_f32(static_cast<uint8_t>(b))), b);
}

template <typename T, typename Op>
typename T::S apply(typename T::S a, typename T::S b) {
  return T::put(Op::f(T::get(a), T::get(b)));
}

TEST(DTypes, NarrowIntegerArithmeticWrapsInTheElementType) {
  using namespace support;
  EXPECT_EQ((apply<I8, OpAdd>(100, 100)), -56);
  EXPECT_EQ((apply<I8, OpMul>(-128, -1)), -128);
  EXPECT_EQ((apply<I8, OpDiv>(-128, -1)), -128);
  EXPECT_EQ((apply<I16, OpMul>(300, 300)), static_cast<int16_t>(90000 - 65536 * 1));
  EXPECT_EQ((apply<U8, OpSub>(3, 5)), 254);
  EXPECT_EQ((apply<U16, OpMul>(65535, 65535)), 1);
  EXPECT_EQ((apply<U32, OpAdd>(4294967295u, 2u)), 1u);
  EXPECT_EQ((apply<U32, OpDiv>(7u, 4294967295u)), 0u);
  EXPECT_EQ((apply<U64, OpDiv>(18446744073709551615ull, 2ull)), 9223372036854775807ull);
  EXPECT_EQ((apply<U8, OpMax>(200, 100)), 200);
  EXPECT_EQ(U8::put(OpAbs::f(U8::get(250))), 250);
  EXPECT_EQ(U8::put(OpNeg::f(U8::get(1))), 255);
  EXPECT_EQ(I8::put(OpAbs::f(I8::get(-128))), -128);
}

TEST(DTypes, CastFromFloatSaturatesAtTheTargetAndIntegersWrap) {
  using namespace support;
  EXPECT_EQ(element_from<I8>(300.0f), 127);
  EXPECT_EQ(element_from<I8>(-300.0), -128);
  EXPECT_EQ(element_from<I8>(-1.9), -1);  // toward zero
  EXPECT_EQ(element_from<U8>(-5.0f), 0);
  EXPECT_EQ(element_from<U8>(255.9f), 255);
  EXPECT_EQ(element_from<U16>(std::nan("")), 0);
  EXPECT_EQ(element_from<U64>(1e30), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(element_from<U64>(18446744073709549568.0), 18446744073709549568ull);
  EXPECT_EQ(element_from<I64>(9223372036854775808.0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(element_from<I8>(int32_t{300}), 44);
  EXPECT_EQ(element_from<U8>(int32_t{-1}), 255);
  EXPECT_EQ(element_from<U32>(int64_t{-1}), 4294967295u);
  EXPECT_EQ(element_from<I32>(uint32_t{4294967295u}), -1);
  EXPECT_EQ(element_from<F8E4M3>(1000.0f), 0x7f);  // NaN: E4M3FN does not saturate
  EXPECT_EQ(element_from<F8E5M2>(int32_t{3}), 0x42);
  EXPECT_EQ(element_from<Bool>(0.5), 0);  // nonzero after truncation
}

TEST(DTypes, ScalarArithmeticWrapsAtTheResultWidth) {
  EXPECT_EQ(ir::wrap_int(200, DataType::INT8), -56);
  EXPECT_EQ(ir::wrap_int(static_cast<uint64_t>(-1), DataType::UINT8), 255);
  EXPECT_EQ(ir::wrap_int(70000, DataType::UINT16), 70000 - 65536);
  EXPECT_EQ(ir::wrap_int(40000, DataType::INT16), 40000 - 65536);
  EXPECT_EQ(ir::wrap_int(uint64_t{1} << 32, DataType::UINT32), 0);
  const ir::ScalarFold f = ir::fold_binary(ir::BinaryOp::Add, ir::Scalar::of_int(100),
                                           ir::Scalar::of_int(100), DataType::INT8);
  ASSERT_TRUE(f.value);
  EXPECT_EQ(f.value->i, -56);
  EXPECT_TRUE(f.overflowed);
}

TEST(DTypes, MixedIntegerScalarsPromoteToTheWiderType) {
  auto var = [](DataType t) { return ir::make_var("v", ir::scalar_type(t), ir::Span{}); };
  auto type_of = [](const ir::ExprPtr& e) { return e->type()->as<ir::ScalarType>()->dtype; };
  EXPECT_EQ(type_of(ir::make_binary(ir::BinaryOp::Add, var(DataType::INT8), var(DataType::INT32),
                                    ir::Span{})),
            DataType::INT32);
  EXPECT_EQ(type_of(ir::make_binary(ir::BinaryOp::Mul, var(DataType::UINT16), var(DataType::INT8),
                                    ir::Span{})),
            DataType::UINT16);
  EXPECT_EQ(type_of(ir::make_binary(ir::BinaryOp::Add, var(DataType::FP8E4M3FN),
                                    var(DataType::FP16), ir::Span{})),
            DataType::FP16);
  EXPECT_EQ(type_of(ir::make_binary(ir::BinaryOp::Add, var(DataType::INT8), var(DataType::FP8E5M2),
                                    ir::Span{})),
            DataType::FP8E5M2);
}

std::string npy_header_of(DataType dtype, void* data) {
  ir::HostTensor t{"x", dtype, {2}, data};
  const auto path = std::filesystem::temp_directory_path() / "pypto_dtypes_test.npy";
  runtime::write_npy(path.string(), t);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().substr(10, 60);
}

TEST(DTypes, NpyFilesNameNumpysDtype) {
  uint64_t data[2] = {0, 0};
  EXPECT_NE(npy_header_of(DataType::INT8, data).find("'|i1'"), std::string::npos);
  EXPECT_NE(npy_header_of(DataType::INT16, data).find("'<i2'"), std::string::npos);
  EXPECT_NE(npy_header_of(DataType::UINT8, data).find("'|u1'"), std::string::npos);
  EXPECT_NE(npy_header_of(DataType::UINT16, data).find("'<u2'"), std::string::npos);
  EXPECT_NE(npy_header_of(DataType::UINT32, data).find("'<u4'"), std::string::npos);
  EXPECT_NE(npy_header_of(DataType::UINT64, data).find("'<u8'"), std::string::npos);
  // numpy has no 8-bit floats: their bit patterns.
  EXPECT_NE(npy_header_of(DataType::FP8E4M3FN, data).find("'|u1'"), std::string::npos);
}

TEST(DTypes, ComparisonIsExactForEveryIntegerAndDecodesFp8) {
  runtime::CompareOptions exact;
  exact.rtol = exact.atol = 0;
  std::vector<uint64_t> a = {18446744073709551615ull, 5}, e = {18446744073709551614ull, 5};
  runtime::CompareResult r = runtime::compare_tensors(
      {"u", DataType::UINT64, {2}, a.data()}, {"u", DataType::UINT64, {2}, e.data()}, exact);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("got 18446744073709551615, expected 18446744073709551614"),
            std::string::npos)
      << r.message;
  std::vector<int8_t> a8 = {-128, 7}, e8 = {-128, 6};
  r = runtime::compare_tensors({"i", DataType::INT8, {2}, a8.data()},
                               {"i", DataType::INT8, {2}, e8.data()}, exact);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("got 7, expected 6"), std::string::npos) << r.message;
  std::vector<uint8_t> f8a = {0x38, 0x7e}, f8e = {0x38, 0x7d};  // 1, 448 against 1, 416
  r = runtime::compare_tensors({"f", DataType::FP8E4M3FN, {2}, f8a.data()},
                               {"f", DataType::FP8E4M3FN, {2}, f8e.data()});
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("got 448, expected 416"), std::string::npos) << r.message;
}

const char* kKernelHead =
    "import pypto.language as pl\n\n@pl.program\nclass P:\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n";

TEST(DTypes, NewDtypesParseAndPrintBack) {
  const std::string text =
      std::string(kKernelHead) +
      "    def k(self, a: pl.Tensor[[16, 16], pl.UINT16],\n"
      "          o: pl.Out[pl.Tensor[[16, 16], pl.FP8E5M2]]) -> "
      "pl.Tensor[[16, 16], pl.FP8E5M2]:\n"
      "        t: pl.Tile[[16, 16], pl.UINT16] = pl.load(a, [0, 0], [16, 16])\n"
      "        u: pl.Tile[[16, 16], pl.INT8] = pl.cast(t, pl.INT8)\n"
      "        f = pl.cast(u, target_type=pl.FP8E5M2)\n"
      "        o = pl.store(f, [0, 0], o)\n"
      "        return o\n";
  auto program = frontend::parse_module(text, "dtypes.py").at(0);
  const std::string printed = ir::print_program(*program);
  EXPECT_NE(printed.find("pl.Tensor[[16, 16], pl.UINT16]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("pl.Tile[[16, 16], pl.INT8"), std::string::npos) << printed;
  EXPECT_NE(printed.find("pl.FP8E5M2"), std::string::npos) << printed;
  auto again = frontend::parse_module(printed, "printed.py").at(0);
  EXPECT_EQ(ir::print_program(*again), printed);
}

TEST(DTypes, DtypesThisDeviceLacksAreRefusedByNameWhereTheyAreWritten) {
  for (const char* name : {"HF4", "HF8", "TASK_ID"}) {
    const std::string text =
        std::string(kKernelHead) + "    def k(self, a: pl.Tensor[[16, 16], pl.FP32],\n" +
        "          o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n" +
        "        t = pl.cast(pl.load(a, [0, 0], [16, 16]), pl." + name + ")\n" +
        "        return o\n";
    try {
      frontend::parse_module(text, "lacks.py");
      ADD_FAILURE() << "pl." << name << " was accepted";
    } catch (const support::ParseError& e) {
      EXPECT_EQ(e.line(), 8) << e.rendered();
      EXPECT_EQ(e.col(), 51) << e.rendered();
      EXPECT_NE(std::string(e.what()).find("pl." + std::string(name) + " is not supported yet: "),
                std::string::npos)
          << e.rendered();
    }
  }
}

}  // namespace
}  // namespace pypto
