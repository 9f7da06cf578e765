// The per-thread scratch pool behind NodeMap and NodeSet (ir/node_memory.h).
#include <gtest/gtest.h>

#include <thread>

#include "pypto/ir/node_memory.h"

namespace pypto::ir {
namespace {

TEST(ScratchMemory, NodeTablesTakeTheirEntriesFromTheCallingThreadsPool) {
  NodeMap<const void*, int> map;
  NodeSet<const void*> set;
  EXPECT_EQ(map.get_allocator().resource(), scratch_memory());
  EXPECT_EQ(set.get_allocator().resource(), scratch_memory());
  std::pmr::memory_resource* other = nullptr;
  std::thread([&] { other = scratch_memory(); }).join();
  EXPECT_NE(other, scratch_memory());
}

TEST(ScratchMemory, ACopiedTableKeepsItsEntries) {
  NodeMap<const void*, int> map;
  int a = 0, b = 0;
  map[&a] = 1;
  map[&b] = 2;
  NodeMap<const void*, int> copy;
  copy = map;
  map.clear();
  EXPECT_EQ(copy.at(&a), 1);
  EXPECT_EQ(copy.at(&b), 2);
  EXPECT_EQ(copy.get_allocator().resource(), scratch_memory());
}

}  // namespace
}  // namespace pypto::ir
