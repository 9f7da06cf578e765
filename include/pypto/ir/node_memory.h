// Where IR nodes live. Every pass rebuilds the IR and drops the previous version, so a compile
// allocates and frees each node's memory many times over; at hundreds of thousands of nodes the
// general-purpose allocator's free-list upkeep grows faster than the IR (see the git history of
// bench/README.md, "Pass pipeline per IR node"). IR nodes, types and programs are therefore
// allocated from one process-wide pool of fixed-size blocks: a freed node's block is reused by the
// next node of that size without going back to malloc.
//
// The pool is thread-safe (a program may be built on one thread and dropped on another) and is
// never destroyed, so a node may outlive static destruction. It keeps the blocks it has handed
// out once: the process's footprint stays at the largest IR it has held.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace pypto::ir {

std::pmr::memory_resource* node_memory();

// The pool as a stateless allocator. std::allocate_shared stores its allocator in the node's
// control block; a std::pmr::polymorphic_allocator there is a pointer per node, this one is
// empty, which keeps the common nodes inside the pool's smaller block sizes.
template <typename T>
struct NodeAllocator {
  using value_type = T;
  NodeAllocator() = default;
  template <typename U>
  NodeAllocator(const NodeAllocator<U>&) {}  // NOLINT: rebinding, as allocators do
  T* allocate(std::size_t n) {
    return static_cast<T*>(node_memory()->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) { node_memory()->deallocate(p, n * sizeof(T), alignof(T)); }
  friend bool operator==(const NodeAllocator&, const NodeAllocator&) { return true; }
  friend bool operator!=(const NodeAllocator&, const NodeAllocator&) { return false; }
};

// `std::make_shared` for IR objects: one allocation (node + reference count) from the pool.
template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::allocate_shared<T>(NodeAllocator<T>(), std::forward<Args>(args)...);
}

// The calling thread's pool for the short-lived tables passes and the verifier build about IR
// nodes: a variable's live interval, definition or replacement. Such a table holds an entry per
// variable, 10^4 or more for a large kernel; from glibc's allocator, after the churn of earlier
// passes, building one cost several times more per entry than on a small kernel (the git history of
// bench/README.md, "Pass pipeline per IR node"). A per-thread pool needs no lock and hands each
// table the blocks the previous one freed. A table must not outlive its thread: these are locals of
// a pass.
std::pmr::memory_resource* scratch_memory();

// Hash maps and sets for those tables: std::pmr containers on scratch_memory().
template <typename Key, typename Value>
class NodeMap : public std::pmr::unordered_map<Key, Value> {
 public:
  NodeMap() : std::pmr::unordered_map<Key, Value>(scratch_memory()) {}
};
template <typename Key>
class NodeSet : public std::pmr::unordered_set<Key> {
 public:
  NodeSet() : std::pmr::unordered_set<Key>(scratch_memory()) {}
};

}  // namespace pypto::ir
