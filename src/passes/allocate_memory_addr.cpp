// AllocateMemoryAddr: gives every buffer of an InCore function a byte address in its memory
// space, aligned to 64 bytes. Buffers are placed in order of first use at the lowest address
// that does not overlap a buffer live at the same time; a buffer that does not fit below the
// capacity of its space is a compile error naming the tile.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "pass_utils.h"
#include "pypto/passes/liveness.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

namespace {

using namespace ir;

// Saturates: an end address that overflowed stays "past every capacity".
int64_t align_up(int64_t v) {
  auto bumped = support::checked_add(v, kMemoryAlignment - 1);
  return bumped ? *bumped / kMemoryAlignment * kMemoryAlignment : support::kInt64Max;
}

FunctionPtr allocate(const FunctionPtr& f) {
  using Buffer = BufferLiveness;
  auto buffers = collect_buffers(*f);
  std::vector<Buffer*> order;
  for (auto& [id, b] : buffers) {
    b.addr = -1;
    order.push_back(&b);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Buffer* a, const Buffer* b) { return a->live.start < b->live.start; });
  // Per space, the placed buffers still live, ordered by end of lifetime for cheap expiry.
  std::map<MemorySpace, std::multimap<int64_t, Buffer*>> live_by_space;
  for (Buffer* b : order) {
    auto& live = live_by_space[b->space];
    while (!live.empty() && live.begin()->first < b->live.start) live.erase(live.begin());
    std::vector<std::pair<int64_t, int64_t>> taken;  // [addr, addr + size)
    int64_t in_use = 0;
    for (const auto& [end, other] : live) {
      taken.emplace_back(other->addr,
                         support::saturated(support::checked_add(other->addr, other->size)));
      in_use += other->size;
    }
    std::sort(taken.begin(), taken.end());
    int64_t addr = 0;
    for (const auto& [lo, hi] : taken) {
      if (support::box_fits(addr, b->size, lo)) break;
      addr = std::max(addr, align_up(hi));
    }
    int64_t capacity = memory_space_capacity(b->space);
    if (capacity > 0 && !support::box_fits(addr, b->size, capacity)) {
      std::string space(memory_space_name(b->space));
      throw CompileError(b->first_tile ? b->first_tile->span() : f->span,
                         "tile '" + (b->first_tile ? b->first_tile->name : std::string("?")) +
                             "' of " + std::to_string(b->size) + " bytes does not fit in " + space +
                             " (capacity " + std::to_string(capacity) + " bytes, " +
                             std::to_string(in_use) + " already in use)");
    }
    b->addr = addr;
    live.emplace(b->live.end, b);
  }
  detail::TileTypeCache types;
  return detail::retype_tiles(f, [&](const Var& v) -> std::optional<TypePtr> {
    const auto* t = detail::as_tile(v.type());
    if (!t->memref) return std::nullopt;
    MemRef m = *t->memref;
    const Buffer& b = buffers.at(m.buffer_id);
    m.addr = b.addr;
    m.size = b.size;
    return types.with_memref(v.type(), m);
  });
}

}  // namespace

ProgramPtr allocate_memory_addr(const ProgramPtr& program) {
  return detail::map_incore_functions(program, allocate);
}

}  // namespace pypto::passes
