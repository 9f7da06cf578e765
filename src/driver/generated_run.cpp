#include "pypto/driver/generated_run.h"

#include <xxhash.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "pypto/support/element_ops.h"

namespace pypto::driver {

void fill_random(ir::HostTensor& t, uint64_t seed) {
  using ir::DataType;
  std::mt19937_64 rng(seed);
  const int64_t n = t.num_elements();
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(-8, 8);
  auto fill = [&](auto type, auto value) {
    using T = decltype(type);
    auto* data = static_cast<typename T::S*>(t.data);
    for (int64_t i = 0; i < n; ++i) data[i] = support::element_from<T>(value());
  };
  switch (t.dtype) {
    case DataType::FP32:
      fill(support::F32{}, [&] { return normal(rng); });
      break;
    case DataType::FP8E4M3FN:
      fill(support::F8E4M3{}, [&] { return normal(rng); });
      break;
    case DataType::FP8E5M2:
      fill(support::F8E5M2{}, [&] { return normal(rng); });
      break;
    case DataType::FP8E8M0:  // positive: E8M0 has no sign
      fill(support::F8E8M0{}, [&] { return std::fabs(normal(rng)) + 0.25f; });
      break;
    case DataType::FP4:
      fill(support::F4E2M1{}, [&] { return normal(rng); });
      break;
    case DataType::INT4:
    case DataType::UINT4:
      support::with_dtype(static_cast<int32_t>(t.dtype), [&](auto type) {
        fill(type, [&] { return small(rng) + (t.dtype == DataType::UINT4 ? 8 : 0); });
      });
      break;
    case DataType::INT8:
    case DataType::INT16:
    case DataType::INT32:
    case DataType::INT64:
      support::with_dtype(static_cast<int32_t>(t.dtype),
                          [&](auto type) { fill(type, [&] { return small(rng); }); });
      break;
    case DataType::UINT8:
    case DataType::UINT16:
    case DataType::UINT32:
    case DataType::UINT64:
      support::with_dtype(static_cast<int32_t>(t.dtype),
                          [&](auto type) { fill(type, [&] { return small(rng) + 8; }); });
      break;
    case DataType::BOOL:
      for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(t.data)[i] = small(rng) > 0;
      break;
    case DataType::FP16:
    case DataType::BF16:
      // Bit patterns of small normal numbers: exponent near the bias, random mantissa.
      for (int64_t i = 0; i < n; ++i) {
        auto mantissa = static_cast<uint16_t>(rng() & 0x7f);
        auto bits = static_cast<uint16_t>(t.dtype == DataType::BF16 ? (0x3f00 | mantissa)
                                                                    : (0x3800 | mantissa));
        static_cast<uint16_t*>(t.data)[i] = bits;
      }
      break;
  }
}

GeneratedRunResult run_generated(Session& session, const ir::ProgramPtr& parsed,
                                 const RunConfig& config, uint64_t seed) {
  GeneratedRunResult out;
  ir::ProgramPtr program;
  try {
    program = runnable_program(parsed);
  } catch (const std::exception& e) {
    out.run.error = e.what();
    return out;
  }
  ir::FunctionPtr entry = program->entry();
  if (!entry) {
    out.run.error = "program '" + program->name +
                    "' has no Orchestration entry function: define one named 'main'";
    return out;
  }
  std::vector<RunTensor> tensors;
  for (const auto& param : entry->params) {
    const auto* type = param.var->type()->as<ir::TensorType>();
    if (!type) {
      out.run.error = "parameter '" + param.var->name + "' of " + entry->name +
                      " is not a tensor; a run with generated inputs passes tensors only";
      return out;
    }
    RunTensor t;
    t.tensor.name = param.var->name;
    t.tensor.dtype = type->dtype;
    t.tensor.shape = type->shape;
    t.is_output = param.direction != ir::ParamDirection::In;
    t.starts_zero = param.direction == ir::ParamDirection::Out;
    tensors.push_back(std::move(t));
  }
  // Made inside the run's `golden_write` stage (prepare), so that the profile shows them.
  std::vector<std::vector<unsigned char>> storage(tensors.size());
  auto prepare = [&](std::vector<RunTensor>& run_tensors) {
    for (size_t i = 0; i < run_tensors.size(); ++i) {
      ir::HostTensor& t = run_tensors[i].tensor;
      storage[i].assign(static_cast<size_t>(t.size_bytes()), 0);
      t.data = storage[i].data();
      // One stream per tensor, so that a tensor's values do not depend on the ones before it.
      if (!run_tensors[i].starts_zero) fill_random(t, seed + i);
    }
  };
  out.run = run(session, program, tensors, nullptr, config, prepare);
  if (!out.run.passed && out.run.error.rfind("golden mismatch", 0) == 0) {
    // The same default tolerance as run() with the user's golden; against a reference that
    // computes in double, a long FP32 accumulation may need more.
    out.run.error +=
        "\n(the reference interpreter computes in double: a kernel that accumulates in FP32, "
        "e.g. a matmul, may need a larger rtol/atol, --rtol and --atol)";
  }
  if (out.run.round_times.empty()) return out;  // the device did not finish
  XXH3_state_t* state = XXH3_createState();
  if (!state) return out;
  XXH3_64bits_reset(state);
  for (const RunTensor& t : tensors) {
    if (t.is_output)
      XXH3_64bits_update(state, t.tensor.data, static_cast<size_t>(t.tensor.size_bytes()));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits_digest(state)));
  XXH3_freeState(state);
  out.output_checksum = hex;
  return out;
}

}  // namespace pypto::driver
