#pragma once

#include <cstdint>
#include <map>

#include "pypto/ir/node_memory.h"
#include "pypto/ir/program.h"

namespace pypto::passes {

// Positions in a function's execution order: each simple statement, loop header, loop end, if
// header and if end gets the next number.
struct LiveInterval {
  int64_t start = 0;  // definition (0 for parameters)
  int64_t end = 0;    // last use; a value used inside a loop it was defined before stays live to
                      // the end of that loop, since the next iteration uses it again
};

// Live intervals of every variable defined or used in `f` (structured liveness, no CFG).
ir::NodeMap<const ir::Var*, LiveInterval> compute_live_intervals(const ir::Function& f);

// One buffer of an InCore function as its tiles' MemRefs describe it: the union of their
// lifetimes and the largest size.
struct BufferLiveness {
  ir::MemorySpace space = ir::MemorySpace::Vec;
  int64_t size = 0;
  int64_t addr = -1;
  LiveInterval live{INT64_MAX, INT64_MIN};
  const ir::Var* first_tile = nullptr;  // the earliest-defined tile, named in messages
};
// Buffers by buffer_id, from the tiles that have a MemRef.
std::map<int64_t, BufferLiveness> collect_buffers(const ir::Function& f);

// Memory use of one space of an InCore function, from the MemRefs of its tiles.
struct MemoryUsage {
  int64_t tile_bytes = 0;       // sum of the sizes of all tiles, as if each had its own buffer
  int64_t buffer_bytes = 0;     // sum of the sizes of distinct buffers
  int64_t peak_live_bytes = 0;  // largest sum of sizes of buffers live at the same time
};
MemoryUsage measure_memory_usage(const ir::Function& f, ir::MemorySpace space);

}  // namespace pypto::passes
