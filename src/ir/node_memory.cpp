#include "pypto/ir/node_memory.h"

namespace pypto::ir {

std::pmr::memory_resource* node_memory() {
  // Leaked on purpose: nodes held by static objects are freed after main returns.
  static auto* pool = new std::pmr::synchronized_pool_resource();
  return pool;
}

std::pmr::memory_resource* scratch_memory() {
  thread_local std::pmr::unsynchronized_pool_resource pool;
  return &pool;
}

}  // namespace pypto::ir
