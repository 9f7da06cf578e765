// The sizes of the IR nodes a large kernel is made of. Every pass walks the whole IR, and past
// the size of the last-level cache each walk reads it from memory, so these sizes are part of the
// compiler's speed (the git history of bench/README.md, "Pass pipeline per IR node"). A node and
// its reference count are one block of the node pool (node_memory.h), whose block sizes step from
// 64 to 80, 96, 112, 128 and then 192 bytes: a Call of 128 bytes with its count instead of 152
// takes a third less memory.
#include <gtest/gtest.h>

#include <type_traits>

#include "pypto/ir/node_memory.h"
#include "pypto/ir/stmt.h"

namespace pypto::ir {
namespace {

// What std::allocate_shared adds to a node: a vtable pointer and two counts (the allocator it
// stores is empty, so it takes no room).
constexpr size_t kCountBytes = 16;

TEST(IRNodeSize, ThePoolAllocatorTakesNoRoomInANode) {
  EXPECT_TRUE(std::is_empty_v<NodeAllocator<Call>>);
}

TEST(IRNodeSize, CommonNodesFitTheSmallerPoolBlocks) {
  // The base ends in padding that Call::call_kind fills.
  EXPECT_LE(sizeof(Expr), 40u);
  EXPECT_LE(sizeof(Call) + kCountBytes, 128u);
  EXPECT_LE(sizeof(Var) + kCountBytes, 96u);
  EXPECT_LE(sizeof(IntImm) + kCountBytes, 64u);
  EXPECT_LE(sizeof(MakeTuple) + kCountBytes, 80u);
  EXPECT_LE(sizeof(Binary) + kCountBytes, 96u);
  EXPECT_LE(sizeof(AssignStmt) + kCountBytes, 80u);
}

TEST(IRNodeSize, CallsRebuiltWithTheSameAttributesShareThem) {
  auto type = scalar_type(DataType::INT64);
  Call first(CallKind::Op, "load", {}, Attrs{{"target_memory", MemorySpace::Vec}}, type);
  Call rebuilt(CallKind::Op, "load", {}, first.attrs, type);
  EXPECT_EQ(&first.attrs.get(), &rebuilt.attrs.get());
  EXPECT_EQ(first.attrs, rebuilt.attrs);
  Call none(CallKind::Op, "exp", {}, Attrs{}, type);
  EXPECT_TRUE(none.attrs.empty());
  EXPECT_EQ(find_attr(first.attrs, "target_memory") != nullptr, true);
}

}  // namespace
}  // namespace pypto::ir
