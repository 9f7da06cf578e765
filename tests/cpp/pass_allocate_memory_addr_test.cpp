#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(AllocateMemoryAddr, AssignsAlignedNonOverlappingAddresses) {
  auto out = run_pipeline_through(load_example("softmax.py"), "AllocateMemoryAddr");
  EXPECT_TRUE(
      check_properties(*out, static_cast<IRProperties>(IRProperty::AddressesAssigned)).empty());
  std::string text = print(out);
  EXPECT_NE(text.find("t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, 16384, 0)]"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(", -1)]"), std::string::npos) << text;
}

TEST(AllocateMemoryAddr, RejectsATileThatDoesNotFit) {
  auto in = parse_body(kKernelK + R"(
        t2 = pl.load(x, [0, 0], [64, 64])
        big = pl.create_tile([256, 256], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        u = pl.add(big, 1.0)
        s = pl.slice(u, [64, 64], [0, 0])
        y = pl.store(pl.add(s, t2), [0, 0], y)
        return y
)" + kCallK);
  EXPECT_EQ(error_of([&] { run_pipeline_through(in, "AllocateMemoryAddr"); }),
            "tile 'big' of 262144 bytes does not fit in Vec (capacity 196608 bytes, 16384 already "
            "in use)");
}

TEST(AllocateMemoryAddr, AllExamplesFitAndVerify) {
  for (const auto& [file, program] : example_programs()) {
    SCOPED_TRACE(file);
    auto out = run_pipeline_through(program, "AllocateMemoryAddr");
    EXPECT_TRUE(
        check_properties(*out, IRProperty::MemRefsSet | IRProperty::AddressesAssigned).empty());
  }
}

}  // namespace
}  // namespace pypto::passes
