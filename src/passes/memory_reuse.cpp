// MemoryReuse: buffers of one memory space whose lifetimes do not overlap share one buffer.
// Lifetimes come from structured liveness (a value used inside a loop stays live for the whole
// loop). Buffers are placed greedily, largest first, into the first shared buffer none of whose
// current occupants is live at the same time.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "pass_utils.h"
#include "pypto/passes/liveness.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// A shared buffer: its occupants' live intervals, disjoint, keyed by start.
struct SharedBuffer {
  MemorySpace space;
  int64_t size = 0;
  std::map<int64_t, int64_t> occupied;  // start -> end

  bool is_free(const LiveInterval& iv) const {
    auto it = occupied.upper_bound(iv.end);  // first occupant starting after iv
    if (it == occupied.begin()) return true;
    --it;  // the last occupant starting at or before iv.end
    return it->second < iv.start;
  }
};

FunctionPtr reuse_buffers(const FunctionPtr& f) {
  auto buffers = collect_buffers(*f);
  // Sorted as pointers into the map: looking buffers up by id inside the comparison cost a map
  // search per comparison, the largest part of this pass on big kernels.
  std::vector<std::pair<int64_t, const BufferLiveness*>> order;
  order.reserve(buffers.size());
  for (const auto& [id, b] : buffers) order.emplace_back(id, &b);
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if (x.second->size != y.second->size) return x.second->size > y.second->size;
    return x.second->live.start < y.second->live.start;
  });
  std::vector<SharedBuffer> shared;
  std::unordered_map<int64_t, size_t> assignment;
  assignment.reserve(order.size());
  for (const auto& [id, buffer] : order) {
    const BufferLiveness& b = *buffer;
    size_t chosen = shared.size();
    for (size_t s = 0; s < shared.size(); ++s) {
      if (shared[s].space == b.space && shared[s].is_free(b.live)) {
        chosen = s;
        break;
      }
    }
    if (chosen == shared.size()) shared.push_back({b.space, 0, {}});
    shared[chosen].size = std::max(shared[chosen].size, b.size);
    shared[chosen].occupied[b.live.start] = b.live.end;
    assignment[id] = chosen;
  }
  // Number shared buffers by first use so the output reads in program order.
  std::vector<size_t> by_start(shared.size());
  for (size_t i = 0; i < shared.size(); ++i) by_start[i] = i;
  std::sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) {
    return shared[a].occupied.begin()->first < shared[b].occupied.begin()->first;
  });
  std::vector<int64_t> new_id(shared.size());
  for (size_t i = 0; i < by_start.size(); ++i) new_id[by_start[i]] = static_cast<int64_t>(i);

  detail::TileTypeCache types;
  return detail::retype_tiles(f, [&](const Var& v) -> std::optional<TypePtr> {
    const auto* t = detail::as_tile(v.type());
    if (!t->memref) return std::nullopt;
    size_t s = assignment.at(t->memref->buffer_id);
    MemRef m = *t->memref;
    m.buffer_id = new_id[s];
    m.size = shared[s].size;
    m.addr = -1;
    return types.with_memref(v.type(), m);
  });
}

}  // namespace

ProgramPtr memory_reuse(const ProgramPtr& program) {
  return detail::map_incore_functions(program, reuse_buffers);
}

}  // namespace pypto::passes
