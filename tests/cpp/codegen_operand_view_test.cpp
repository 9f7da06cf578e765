// Operands read in place from their tensors (operand_views.h): which loads kernel codegen turns
// into PtoIsa::load_view, for matmuls and for elementwise binary ops, and that the programs still
// compute what the copies computed, including where a copy must stay (a store between the load
// and its use, a use in a nested loop, a use by another op) and where load_view falls back to
// loading (a column-strided view).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/codegen/program_codegen.h"

namespace pypto::codegen {
namespace {

using testing::HostArray;
using testing::InlineRuntime;
using testing::Library;

std::string translation_unit(const std::string& text) {
  return generate_program(*testing::lower_program(text, "views.py")).translation_unit;
}

// The generated C++ of kernel `name`, up to the next function.
std::string kernel_text(const std::string& tu, const std::string& name) {
  const size_t begin = tu.find("static void kernel_" + name + "(");
  if (begin == std::string::npos) return "";
  const size_t end = tu.find("\nstatic ", begin + 1);
  return tu.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::unique_ptr<InlineRuntime> run(Library& lib, std::vector<PtoArg> args) {
  auto rt = std::make_unique<InlineRuntime>();
  if (!lib.ok()) return rt;
  lib.orchestrate()(rt->api(), args.data(), static_cast<int32_t>(args.size()));
  return rt;
}

// want = (want or 0) + a @ b over the given extents, in double.
void matmul_into(std::vector<double>& want, int64_t m, int64_t k, int64_t n,
                 const std::function<double(int64_t, int64_t)>& a,
                 const std::function<double(int64_t, int64_t)>& b) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) want[i * n + j] += a(i, p) * b(p, j);
}

void expect_close(const HostArray& got, const std::vector<double>& want) {
  ASSERT_EQ(got.data.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got.data[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i])) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << got.data[i] << ", want " << want[i];
  }
}

// The benchmark's shape of kernel with tails everywhere: 40 rows (five blocks of 8), 36 columns
// (vectors and a scalar tail), two k-blocks of 24.
constexpr const char* kBlocked = R"(
import pypto.language as pl

@pl.program
class Blocked:
    @pl.function(type=pl.FunctionType.InCore)
    def blocked(self, a: pl.Tensor[[40, 48], pl.FP32], b: pl.Tensor[[48, 36], pl.FP32],
                c: pl.Out[pl.Tensor[[40, 36], pl.FP32]]) -> pl.Tensor[[40, 36], pl.FP32]:
        a0 = pl.load(a, [0, 0], [40, 24], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [24, 36], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 2):
            ak = pl.load(a, [0, k * 24], [40, 24], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [k * 24, 0], [24, 36], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left),
                                pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[40, 48], pl.FP32], b: pl.Tensor[[48, 36], pl.FP32],
             c: pl.Out[pl.Tensor[[40, 36], pl.FP32]]) -> pl.Tensor[[40, 36], pl.FP32]:
        c = self.blocked(a, b, c)
        return c
)";

TEST(CodegenMatmulView, BlockedMatmulReadsItsOperandsInPlace) {
  const std::string tu = translation_unit(kBlocked);
  const std::string kernel = kernel_text(tu, "blocked");
  EXPECT_EQ(count(kernel, "isa->load_view("), 4) << kernel;
  EXPECT_EQ(count(kernel, "isa->load("), 0) << kernel;
  Library lib(tu);
  HostArray a({40, 48}), b({48, 36}), c({40, 36}, 9.0f);
  testing::fill_random(a, 21);
  testing::fill_random(b, 22);
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  std::vector<double> want(40 * 36, 0.0);
  matmul_into(
      want, 40, 48, 36, [&](int64_t i, int64_t p) { return a.at(i, p); },
      [&](int64_t p, int64_t j) { return b.at(p, j); });
  expect_close(c, want);
}

// A view whose columns are not adjacent cannot be read in place: load_view loads the Mat tile
// and the move copies it on, as without views.
TEST(CodegenMatmulView, ColumnStridedViewIsLoadedAndMovedInstead) {
  Library lib(translation_unit(kBlocked));
  HostArray wide({40, 96}), b({48, 36}), c({40, 36});
  testing::fill_random(wide, 23);
  testing::fill_random(b, 24);
  PtoArg a = wide.arg();  // every other column: a [40, 48] view
  a.tensor.shape[1] = 48;
  a.tensor.strides[1] = 2;
  auto rt = run(lib, {a, b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  std::vector<double> want(40 * 36, 0.0);
  matmul_into(
      want, 40, 48, 36, [&](int64_t i, int64_t p) { return wide.at(i, 2 * p); },
      [&](int64_t p, int64_t j) { return b.at(p, j); });
  expect_close(c, want);
}

// One Mat tile moved to both Left and Right is read in place by both; a Left tile used inside a
// nested loop keeps its load and move (the rule does not follow uses into loops), while the
// loop's own loads are read in place.
TEST(CodegenMatmulView, TileMovedTwiceIsReadInPlaceAndNestedUseKeepsTheCopy) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class TwoUses:
    @pl.function(type=pl.FunctionType.InCore)
    def square(self, s: pl.Tensor[[24, 24], pl.FP32],
               c: pl.Out[pl.Tensor[[24, 24], pl.FP32]]) -> pl.Tensor[[24, 24], pl.FP32]:
        x = pl.load(s, [0, 0], [24, 24], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(x, target_memory=pl.MemorySpace.Left),
                        pl.move(x, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def nested(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[48, 16], pl.FP32],
               c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        left = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat),
                       target_memory=pl.MemorySpace.Left)
        b0 = pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(left, pl.move(b0, target_memory=pl.MemorySpace.Right))
        for k in pl.range(1, 3):
            bk = pl.load(b, [k * 16, 0], [16, 16], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, left, pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[48, 16], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 16], pl.FP32]], s: pl.Tensor[[24, 24], pl.FP32],
             sq: pl.Out[pl.Tensor[[24, 24], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        sq = self.square(s, sq)
        c = self.nested(a, b, c)
        return c
)");
  const std::string square = kernel_text(tu, "square");
  EXPECT_EQ(count(square, "isa->load_view("), 1) << square;
  EXPECT_EQ(count(square, "isa->load("), 0) << square;
  const std::string nested = kernel_text(tu, "nested");
  EXPECT_EQ(count(nested, "isa->load("), 1) << nested;  // a: its Left tile is used in the loop
  EXPECT_EQ(count(nested, "isa->load_view("), 2) << nested;
  Library lib(tu);
  HostArray s({24, 24}), sq({24, 24}), a({16, 16}), b({48, 16}), c({16, 16});
  testing::fill_random(s, 25);
  testing::fill_random(a, 26);
  testing::fill_random(b, 27);
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT), s.arg(), sq.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  std::vector<double> want_sq(24 * 24, 0.0), want_c(16 * 16, 0.0);
  matmul_into(
      want_sq, 24, 24, 24, [&](int64_t i, int64_t p) { return s.at(i, p); },
      [&](int64_t p, int64_t j) { return s.at(p, j); });
  for (int64_t blk = 0; blk < 3; ++blk) {
    matmul_into(
        want_c, 16, 16, 16, [&](int64_t i, int64_t p) { return a.at(i, p); },
        [&](int64_t p, int64_t j) { return b.at(blk * 16 + p, j); });
  }
  expect_close(sq, want_sq);
  expect_close(c, want_c);
}

// Tiles are values: a load taken before a store into the same tensor holds the old values. The
// matmul must not read the tensor after the store, so that load keeps its copy; the load of b,
// with no store after it, is read in place.
TEST(CodegenMatmulView, StoreBetweenLoadAndMatmulKeepsTheCopy) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class Overwrite:
    @pl.function(type=pl.FunctionType.InCore)
    def overwrite(self, b: pl.Tensor[[24, 24], pl.FP32],
                  c: pl.InOut[pl.Tensor[[24, 24], pl.FP32]]) -> pl.Tensor[[24, 24], pl.FP32]:
        old = pl.load(c, [0, 0], [24, 24], target_memory=pl.MemorySpace.Mat)
        left = pl.move(old, target_memory=pl.MemorySpace.Left)
        c = pl.store(pl.load(b, [0, 0], [24, 24]), [0, 0], c)
        right = pl.move(pl.load(b, [0, 0], [24, 24], target_memory=pl.MemorySpace.Mat),
                        target_memory=pl.MemorySpace.Right)
        c = pl.store(pl.matmul(left, right), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, b: pl.Tensor[[24, 24], pl.FP32],
             c: pl.InOut[pl.Tensor[[24, 24], pl.FP32]]) -> pl.Tensor[[24, 24], pl.FP32]:
        c = self.overwrite(b, c)
        return c
)");
  const std::string kernel = kernel_text(tu, "overwrite");
  EXPECT_EQ(count(kernel, "isa->load_view("), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->load("), 2) << kernel;  // old (kept) and the Vec load of b
  Library lib(tu);
  HostArray b({24, 24}), c({24, 24});
  testing::fill_random(b, 28);
  testing::fill_random(c, 29);
  const HostArray old = c;
  auto rt = run(lib, {b.arg(), c.arg(PTO_ARG_INOUT)});
  EXPECT_TRUE(rt->failures().empty());
  std::vector<double> want(24 * 24, 0.0);
  matmul_into(
      want, 24, 24, 24,
      [&](int64_t i, int64_t p) { return old.data[static_cast<size_t>(i * 24 + p)]; },
      [&](int64_t p, int64_t j) { return b.at(p, j); });
  expect_close(c, want);
}

// A tile-wise add of 5 x 650 tiles (rows of 2600 bytes: whole vectors and a tail) over a
// 10 x 1300 tensor: both loads are read in place, rows 1300 elements apart, and the sum is exact.
constexpr const char* kTiledAdd = R"(
import pypto.language as pl

@pl.program
class TiledAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_tiles(self, a: pl.Tensor[[10, 1300], pl.FP32], b: pl.Tensor[[10, 1300], pl.FP32],
                  c: pl.Out[pl.Tensor[[10, 1300], pl.FP32]]) -> pl.Tensor[[10, 1300], pl.FP32]:
        for i in pl.range(2):
            for j in pl.range(2):
                s = pl.add(pl.load(a, [i * 5, j * 650], [5, 650]),
                           pl.load(b, [i * 5, j * 650], [5, 650]))
                c = pl.store(s, [i * 5, j * 650], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[10, 1300], pl.FP32], b: pl.Tensor[[10, 1300], pl.FP32],
             c: pl.Out[pl.Tensor[[10, 1300], pl.FP32]]) -> pl.Tensor[[10, 1300], pl.FP32]:
        c = self.add_tiles(a, b, c)
        return c
)";

// c == a + b, exactly, where a's column j is column j * a_col_step of `a`.
void expect_sum(const HostArray& a, const HostArray& b, const HostArray& c, int64_t a_col_step) {
  std::vector<double> want(c.data.size());
  for (int64_t i = 0; i < c.shape[0]; ++i)
    for (int64_t j = 0; j < c.shape[1]; ++j)
      want[static_cast<size_t>(i * c.shape[1] + j)] =
          static_cast<double>(a.data[static_cast<size_t>(i * a.shape[1] + j * a_col_step)]) +
          static_cast<double>(b.data[static_cast<size_t>(i * b.shape[1] + j)]);
  for (size_t k = 0; k < want.size(); ++k)
    ASSERT_EQ(c.data[k], static_cast<float>(want[k])) << "element " << k;
}

TEST(CodegenElementwiseView, TileWiseAddReadsBothOperandsInPlace) {
  const std::string tu = translation_unit(kTiledAdd);
  const std::string kernel = kernel_text(tu, "add_tiles");
  EXPECT_EQ(count(kernel, "isa->load_view("), 2) << kernel;
  EXPECT_EQ(count(kernel, "isa->load("), 0) << kernel;
  // The sum is only stored: computed into the box of c (binary_store), no separate store.
  EXPECT_EQ(count(kernel, "isa->binary_store("), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->store("), 0) << kernel;
  EXPECT_EQ(count(kernel, "isa->binary("), 0) << kernel;
  // The loop over j adds two adjacent tiles of a row band: one binary_band call before it
  // (tile_band.h), which computes both here; the loop above runs when it cannot.
  EXPECT_EQ(count(kernel, "isa->binary_band("), 1) << kernel;
  Library lib(tu);
  HostArray a({10, 1300}), b({10, 1300}), c({10, 1300}, 9.0f);
  testing::fill_random(a, 31);
  testing::fill_random(b, 32);
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  expect_sum(a, b, c, 1);
}

// A view whose columns are not adjacent cannot be read in place: binary_band leaves the loop to
// run, load_view loads the tile and binary_rows reads it with its own row length.
TEST(CodegenElementwiseView, ColumnStridedOperandIsLoadedInstead) {
  Library lib(translation_unit(kTiledAdd));
  HostArray wide({10, 2600}), b({10, 1300}), c({10, 1300});
  testing::fill_random(wide, 33);
  testing::fill_random(b, 34);
  PtoArg a = wide.arg();  // every other column: a [10, 1300] view
  a.tensor.shape[1] = 1300;
  a.tensor.strides[1] = 2;
  auto rt = run(lib, {a, b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  expect_sum(wide, b, c, 2);
}

// Only loads of long rows read by nothing but tile-by-tile binary (or unary, or cmp) ops before
// any store are views: a tile also multiplied by a scalar, one whose tensor is stored to before its
// add, one added to a scalar, tiles of short rows (256 bytes) and an integer tile keep their
// copies; a tile added to itself is a view read twice.
TEST(CodegenElementwiseView, OtherUsesStoresAndShortRowsKeepTheCopy) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def mixed(self, a: pl.Tensor[[2, 528], pl.FP32],
              c: pl.InOut[pl.Tensor[[2, 1120], pl.FP32]]) -> pl.Tensor[[2, 1120], pl.FP32]:
        x = pl.load(a, [0, 0], [2, 528])
        e = pl.add(pl.mul(x, 2.0), x)
        old = pl.load(c, [0, 0], [2, 528])
        c = pl.store(e, [0, 0], c)
        d = pl.add(old, pl.add(pl.load(a, [0, 0], [2, 528]), 1.0))
        t = pl.load(a, [0, 0], [2, 528])
        d = pl.add(d, pl.add(t, t))
        c = pl.store(d, [0, 528], c)
        u = pl.add(pl.load(a, [0, 0], [2, 64]), pl.load(a, [0, 64], [2, 64]))
        c = pl.store(u, [0, 1056], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def doubled(self, n: pl.Tensor[[2, 528], pl.INT32],
                m: pl.Out[pl.Tensor[[2, 528], pl.INT32]]) -> pl.Tensor[[2, 528], pl.INT32]:
        k = pl.load(n, [0, 0], [2, 528])
        m = pl.store(pl.add(k, k), [0, 0], m)
        return m

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 528], pl.FP32], c: pl.InOut[pl.Tensor[[2, 1120], pl.FP32]],
             n: pl.Tensor[[2, 528], pl.INT32],
             m: pl.Out[pl.Tensor[[2, 528], pl.INT32]]) -> pl.Tensor[[2, 1120], pl.FP32]:
        c = self.mixed(a, c)
        m = self.doubled(n, m)
        return c
)");
  const std::string mixed = kernel_text(tu, "mixed");
  // x, the one added to 1.0 (tile-scalar ops read in place too) and t; old (a store follows it
  // before its use) and the two of short rows keep their copies.
  EXPECT_EQ(count(mixed, "isa->load_view("), 3) << mixed;
  EXPECT_EQ(count(mixed, "isa->load("), 3) << mixed;
  EXPECT_EQ(count(mixed, "isa->binary_rows("), 2) << mixed;
  EXPECT_EQ(count(mixed, "isa->binary_scalar_rows_f64("), 2) << mixed;
  const std::string doubled = kernel_text(tu, "doubled");
  EXPECT_EQ(count(doubled, "isa->load_view("), 0) << doubled;
  Library lib(tu);
  HostArray a({2, 528}), c({2, 1120});
  testing::fill_random(a, 35);
  testing::fill_random(c, 36);
  const HostArray old_c = c;
  std::vector<int32_t> ints(2 * 528), doubled_ints(2 * 528, -1);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i) - 500;
  PtoArg n = a.arg(), m = a.arg(PTO_ARG_OUT);
  for (auto [arg, data] : {std::pair{&n, ints.data()}, std::pair{&m, doubled_ints.data()}}) {
    arg->dtype = arg->tensor.dtype = PTO_INT32;
    arg->tensor.base = data;
  }
  auto rt = run(lib, {a.arg(), c.arg(PTO_ARG_INOUT), n, m});
  EXPECT_TRUE(rt->failures().empty());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 528; ++j) {
      const float x = a.at(i, j);
      const auto at = static_cast<size_t>(i * 528 + j);
      ASSERT_EQ(c.at(i, j), x * 2.0f + x) << i << "," << j;
      ASSERT_EQ(c.at(i, 528 + j),
                (old_c.data[static_cast<size_t>(i * 1120 + j)] + (x + 1.0f)) + (x + x))
          << i << "," << j;
      ASSERT_EQ(doubled_ints[at], 2 * ints[at]) << i << "," << j;
    }
    for (int64_t j = 0; j < 64; ++j) ASSERT_EQ(c.at(i, 1056 + j), a.at(i, j) + a.at(i, 64 + j));
  }
}

// A tile-by-tile binary result whose only use is the next statement's store is computed into the
// store's box (binary_store): here `s` (short rows, loaded copies) and `w` (into a 3-D tensor).
// Kept as tile and store: `p`, also read after its store; `q`, with a statement between op and
// store; `v`, of partly valid tiles (its store writes the valid region only).
TEST(CodegenStoredResult, OnlyAResultStoredByTheNextStatementIsComputedIntoTheBox) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class Stored:
    @pl.function(type=pl.FunctionType.InCore)
    def stored(self, a: pl.Tensor[[4, 64], pl.FP32], b: pl.Tensor[[4, 64], pl.FP32],
               c: pl.Out[pl.Tensor[[4, 384], pl.FP32]]) -> pl.Tensor[[4, 384], pl.FP32]:
        x = pl.load(a, [0, 0], [4, 64])
        y = pl.load(b, [0, 0], [4, 64])
        s = pl.sub(x, y)
        c = pl.store(s, [0, 0], c)
        p = pl.mul(x, y)
        c = pl.store(p, [0, 64], c)
        c = pl.store(pl.add(p, x), [0, 128], c)
        q = pl.maximum(x, y)
        r = pl.exp(y)
        c = pl.store(q, [0, 192], c)
        c = pl.store(r, [0, 256], c)
        v = pl.add(pl.load(a, [0, 0], [4, 64], valid_shapes=[3, 40]), y)
        c = pl.store(v, [0, 0], c)
        w = pl.minimum(x, y)
        c = pl.store(w, [0, 320], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 64], pl.FP32], b: pl.Tensor[[4, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[4, 384], pl.FP32]]) -> pl.Tensor[[4, 384], pl.FP32]:
        c = self.stored(a, b, c)
        return c
)");
  const std::string kernel = kernel_text(tu, "stored");
  // s, the add of p and x, and w; p, q, r and v keep their stores.
  EXPECT_EQ(count(kernel, "isa->binary_store("), 3) << kernel;
  EXPECT_EQ(count(kernel, "isa->store("), 4) << kernel;
  Library lib(tu);
  HostArray a({4, 64}), b({4, 64}), c({4, 384}, 7.0f);
  testing::fill_random(a, 37);
  testing::fill_random(b, 38);
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 64; ++j) {
      const float x = a.at(i, j), y = b.at(i, j);
      const bool valid = i < 3 && j < 40;
      ASSERT_EQ(c.at(i, j), valid ? x + y : x - y) << i << "," << j;
      ASSERT_EQ(c.at(i, 64 + j), x * y) << i << "," << j;
      ASSERT_EQ(c.at(i, 128 + j), x * y + x) << i << "," << j;
      ASSERT_EQ(c.at(i, 192 + j), x < y ? y : x) << i << "," << j;
      ASSERT_EQ(c.at(i, 256 + j), std::exp(y)) << i << "," << j;
      ASSERT_EQ(c.at(i, 320 + j), y < x ? y : x) << i << "," << j;
    }
  }
}

// The other elementwise ops that read a load of long rows in place and compute into the next
// statement's store: a unary op (unary_store), a tile op a scalar (binary_scalar_store) and a
// partial op of two whole tiles (the plain op, binary_store). A partial op with a partly valid
// operand keeps part_binary over tiles and its store.
TEST(CodegenStoredResult, UnaryScalarAndWholePartialResultsAreComputedIntoTheBox) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class Fused:
    @pl.function(type=pl.FunctionType.InCore)
    def fused(self, a: pl.Tensor[[4, 1024], pl.FP32], b: pl.Tensor[[4, 1024], pl.FP32],
              c: pl.Out[pl.Tensor[[4, 4096], pl.FP32]]) -> pl.Tensor[[4, 4096], pl.FP32]:
        x = pl.load(a, [0, 0], [4, 1024])
        c = pl.store(pl.neg(x), [0, 0], c)
        x2 = pl.load(a, [0, 0], [4, 1024])
        c = pl.store(pl.adds(x2, 0.25), [0, 1024], c)
        x3 = pl.load(a, [0, 0], [4, 1024])
        c = pl.store(pl.part_add(x3, x3), [0, 2048], c)
        z = pl.load(a, [0, 0], [4, 1024])
        y = pl.load(b, [0, 0], [4, 1024], valid_shapes=[3, 700])
        c = pl.store(pl.part_max(z, y), [0, 3072], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 1024], pl.FP32], b: pl.Tensor[[4, 1024], pl.FP32],
             c: pl.Out[pl.Tensor[[4, 4096], pl.FP32]]) -> pl.Tensor[[4, 4096], pl.FP32]:
        c = self.fused(a, b, c)
        return c
)");
  const std::string kernel = kernel_text(tu, "fused");
  // x, x2 and x3 (each read before any store); z is read by part_max with y, partly valid.
  EXPECT_EQ(count(kernel, "isa->load_view("), 3) << kernel;
  EXPECT_EQ(count(kernel, "isa->unary_store(PTO_OP_NEG"), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->binary_scalar_store(PTO_OP_ADD"), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->binary_store(PTO_OP_ADD"), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->part_binary(PTO_OP_MAX"), 1) << kernel;
  EXPECT_EQ(count(kernel, "isa->store("), 1) << kernel;
  Library lib(tu);
  HostArray a({4, 1024}), b({4, 1024}), c({4, 4096}, 7.0f);
  testing::fill_random(a, 39);
  testing::fill_random(b, 40);
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT)});
  EXPECT_TRUE(rt->failures().empty());
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 1024; ++j) {
      const float x = a.at(i, j), y = b.at(i, j);
      ASSERT_EQ(c.at(i, j), -x) << i << "," << j;
      ASSERT_EQ(c.at(i, 1024 + j), x + 0.25f) << i << "," << j;
      ASSERT_EQ(c.at(i, 2048 + j), x + x) << i << "," << j;
      const bool both = i < 3 && j < 700;
      ASSERT_EQ(c.at(i, 3072 + j), both && x < y ? y : x) << i << "," << j;
    }
  }
}

// A loop over adjacent tiles of a band (tile_band.h): `band` subtracts four 4x8 tiles side by
// side, from a loop that starts at 1 and offsets that differ per tensor, in one binary_band call
// before the loop. Loops that do not cover one box tile after tile keep only the loop: tiles
// 16 columns apart, a row offset that moves with the loop, integer tiles, an op between the
// loads and the add. `over`'s third tile lies past its tensor's end: the loop runs as written
// and reports it, with the first two tiles stored.
TEST(CodegenTileBand, AdjacentTilesOfALoopAreComputedAsOneBox) {
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class Bands:
    @pl.function(type=pl.FunctionType.InCore)
    def band(self, a: pl.Tensor[[8, 48], pl.FP32], b: pl.Tensor[[8, 48], pl.FP32],
             c: pl.Out[pl.Tensor[[8, 48], pl.FP32]]) -> pl.Tensor[[8, 48], pl.FP32]:
        for j in pl.range(1, 5):
            s = pl.sub(pl.load(a, [2, j * 8 - 8], [4, 8]), pl.load(b, [0, 8 + 8 * j], [4, 8]))
            c = pl.store(s, [1, j * 8], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def others(self, a: pl.Tensor[[8, 48], pl.FP32], b: pl.Tensor[[8, 48], pl.FP32],
               c: pl.Out[pl.Tensor[[8, 48], pl.FP32]]) -> pl.Tensor[[8, 48], pl.FP32]:
        for j in pl.range(2):
            c = pl.store(pl.add(pl.load(a, [0, j * 16], [4, 8]), pl.load(b, [0, j * 16], [4, 8])),
                         [0, j * 16], c)
        for j in pl.range(2):
            c = pl.store(pl.add(pl.load(a, [j, j * 8], [4, 8]), pl.load(b, [0, j * 8], [4, 8])),
                         [0, j * 8], c)
        for j in pl.range(2):
            c = pl.store(pl.add(pl.exp(pl.load(a, [0, j * 8], [4, 8])),
                                pl.load(b, [0, j * 8], [4, 8])), [0, j * 8], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def ints(self, n: pl.Tensor[[4, 16], pl.INT32],
             m: pl.Out[pl.Tensor[[4, 16], pl.INT32]]) -> pl.Tensor[[4, 16], pl.INT32]:
        for j in pl.range(2):
            m = pl.store(pl.add(pl.load(n, [0, j * 8], [4, 8]), pl.load(n, [0, j * 8], [4, 8])),
                         [0, j * 8], m)
        return m

    @pl.function(type=pl.FunctionType.InCore)
    def over(self, a: pl.Tensor[[2, 20], pl.FP32],
             d: pl.Out[pl.Tensor[[2, 20], pl.FP32]]) -> pl.Tensor[[2, 20], pl.FP32]:
        for j in pl.range(3):
            d = pl.store(pl.add(pl.load(a, [0, j * 8], [2, 8]), pl.load(a, [0, j * 8], [2, 8])),
                         [0, j * 8], d)
        return d

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 48], pl.FP32], b: pl.Tensor[[8, 48], pl.FP32],
             c: pl.Out[pl.Tensor[[8, 48], pl.FP32]], e: pl.Out[pl.Tensor[[8, 48], pl.FP32]],
             n: pl.Tensor[[4, 16], pl.INT32], m: pl.Out[pl.Tensor[[4, 16], pl.INT32]],
             x: pl.Tensor[[2, 20], pl.FP32],
             d: pl.Out[pl.Tensor[[2, 20], pl.FP32]]) -> pl.Tensor[[8, 48], pl.FP32]:
        c = self.band(a, b, c)
        e = self.others(a, b, e)
        m = self.ints(n, m)
        d = self.over(x, d)
        return c
)");
  EXPECT_EQ(count(kernel_text(tu, "band"), "isa->binary_band("), 1) << kernel_text(tu, "band");
  EXPECT_EQ(count(kernel_text(tu, "others"), "isa->binary_band("), 0) << kernel_text(tu, "others");
  EXPECT_EQ(count(kernel_text(tu, "ints"), "isa->binary_band("), 0) << kernel_text(tu, "ints");
  EXPECT_EQ(count(kernel_text(tu, "over"), "isa->binary_band("), 1) << kernel_text(tu, "over");
  Library lib(tu);
  HostArray a({8, 48}), b({8, 48}), c({8, 48}, 5.0f), e({8, 48}, 6.0f), x({2, 20}),
      d({2, 20}, -3.0f), n({4, 16}), m({4, 16});
  testing::fill_random(a, 41);
  testing::fill_random(b, 42);
  testing::fill_random(x, 43);
  std::vector<int32_t> ints(4 * 16), doubled(4 * 16, -1);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i) * 3 - 70;
  PtoArg int_in = n.arg(), int_out = m.arg(PTO_ARG_OUT);
  for (auto [arg, data] : {std::pair{&int_in, ints.data()}, std::pair{&int_out, doubled.data()}}) {
    arg->dtype = arg->tensor.dtype = PTO_INT32;
    arg->tensor.base = data;
  }
  auto rt = run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT), e.arg(PTO_ARG_OUT), int_in, int_out,
                      x.arg(), d.arg(PTO_ARG_OUT)});
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 48; ++j) {
      const bool in_box = i >= 1 && i < 5 && j >= 8 && j < 40;
      ASSERT_EQ(c.at(i, j), in_box ? a.at(i + 1, j - 8) - b.at(i - 1, j + 8) : 5.0f)
          << i << "," << j;
      const float others = i >= 4 || j >= 24 ? 6.0f
                           : j < 16          ? std::exp(a.at(i, j)) + b.at(i, j)
                                             : a.at(i, j) + b.at(i, j);
      ASSERT_EQ(e.at(i, j), others) << i << "," << j;
    }
  for (size_t k = 0; k < ints.size(); ++k) ASSERT_EQ(doubled[k], 2 * ints[k]) << k;
  ASSERT_EQ(rt->failures().size(), 1u);
  EXPECT_NE(rt->failures()[0].find("offsets [0, 16] with shape [2, 8] exceed the tensor view of "
                                   "shape [2, 20]"),
            std::string::npos)
      << rt->failures()[0];
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 20; ++j) ASSERT_EQ(d.at(i, j), j < 16 ? 2 * x.at(i, j) : -3.0f);
}

TEST(CodegenTileBand, TilesOneBelowTheOtherAreComputedAsOneBox) {
  // `rows` tiles a column band of its tensors; `whole_rows` tiles whole rows, in a column loop
  // of one iteration (Simplify makes it the row loop's body), as a kernel author writes 2x4096
  // tiles of a 4096-wide tensor.
  const std::string tu = translation_unit(R"(
import pypto.language as pl

@pl.program
class RowBands:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, a: pl.Tensor[[8, 32], pl.FP32], b: pl.Tensor[[8, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        for i in pl.range(3):
            s = pl.mul(pl.load(a, [i * 2, 8], [2, 16]), pl.load(b, [2 * i + 1, 0], [2, 16]))
            c = pl.store(s, [i * 2, 4], c)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def whole_rows(self, a: pl.Tensor[[8, 32], pl.FP32], b: pl.Tensor[[8, 32], pl.FP32],
                   e: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        for i in pl.range(4):
            for j in pl.range(1):
                t = pl.sub(pl.load(a, [i * 2, j * 32], [2, 32]), pl.load(b, [i * 2, j * 32], [2, 32]))
                e = pl.store(t, [i * 2, j * 32], e)
        return e

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 32], pl.FP32], b: pl.Tensor[[8, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[8, 32], pl.FP32]],
             e: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        c = self.rows(a, b, c)
        e = self.whole_rows(a, b, e)
        return c
)");
  const std::string rows = kernel_text(tu, "rows"), whole_rows = kernel_text(tu, "whole_rows");
  EXPECT_EQ(count(rows, "isa->binary_band("), 1) << rows;
  EXPECT_NE(rows.find("one below the other: one [6, 16] box"), std::string::npos) << rows;
  EXPECT_EQ(count(whole_rows, "isa->binary_band("), 1) << whole_rows;
  EXPECT_NE(whole_rows.find("one [8, 32] box"), std::string::npos) << whole_rows;
  Library lib(tu);
  HostArray a({8, 32}), b({8, 32}), c({8, 32}, 5.0f), e({8, 32}, 6.0f);
  testing::fill_random(a, 51);
  testing::fill_random(b, 52);
  run(lib, {a.arg(), b.arg(), c.arg(PTO_ARG_OUT), e.arg(PTO_ARG_OUT)});
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 32; ++j) {
      const bool in_box = i < 6 && j >= 4 && j < 20;
      ASSERT_EQ(c.at(i, j), in_box ? a.at(i, j + 4) * b.at(i + 1, j - 4) : 5.0f) << i << "," << j;
      ASSERT_EQ(e.at(i, j), a.at(i, j) - b.at(i, j)) << i << "," << j;
    }
}

}  // namespace
}  // namespace pypto::codegen
