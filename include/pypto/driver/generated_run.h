// A run that needs nothing but the program: reproducible random inputs for every tensor of the
// entry, the reference interpreter as the golden, and a checksum of the outputs. It is what
// `pypto run` and every job of a sweep (pypto.sweep) do, so that a job's outputs can be compared
// across machines and schedulers by their checksum alone.
#pragma once

#include <cstdint>
#include <string>

#include "pypto/driver/run.h"

namespace pypto::driver {

struct GeneratedRunResult {
  RunResult run;
  // XXH3-64 (hex) of the bytes of every output, in entry-parameter order, after the last
  // launch; empty when the device did not run to the end.
  std::string output_checksum;
};

// Fills a tensor with values from a generator seeded with `seed`: standard normal for floats,
// integers in
// [-8, 8], coin flips for booleans, small normal numbers' bit patterns for FP16/BF16.
void fill_random(ir::HostTensor& tensor, uint64_t seed);

// Runs `program` in `session` on tensors made from its entry's parameters: In and InOut ones
// get random values from `seed`, Out ones start as zeros; the reference interpreter computes
// the expected outputs. Never throws for what goes wrong (as run()); the profile is the caller's
// to take (take_profile), after the checksum.
GeneratedRunResult run_generated(Session& session, const ir::ProgramPtr& program,
                                 const RunConfig& config, uint64_t seed);

}  // namespace pypto::driver
