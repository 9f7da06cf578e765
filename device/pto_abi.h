// The binary interface between a generated program library and the runtime that loads it.
//
// Plain C so that the generated translation unit (built by the user's $CXX, possibly a different
// compiler than the one that built libpypto) and the runtime agree on layout without sharing any
// C++ symbols. The runtime hands the library a table of callbacks; the library never links
// against libpypto.
#ifndef PYPTO_DEVICE_PTO_ABI_H
#define PYPTO_DEVICE_PTO_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_ABI_VERSION 2
#define PTO_MAX_DIMS 4

// Element types; the values equal pypto::ir::DataType.
enum PtoDType { PTO_FP32 = 0, PTO_FP16 = 1, PTO_BF16 = 2, PTO_INT32 = 3, PTO_INT64 = 4, PTO_BOOL = 5 };

// On-chip memory spaces of one simulated core; the values equal pypto::ir::MemorySpace.
enum PtoMemorySpace { PTO_DDR = 0, PTO_VEC = 1, PTO_MAT = 2, PTO_LEFT = 3, PTO_RIGHT = 4, PTO_ACC = 5 };
#define PTO_NUM_SPACES 6

// A view of a global-memory (DDR) tensor: element (i0, i1, ...) lives at
// base + (offset + sum(ik * strides[k])) * element_size. Views of one buffer share `base`.
typedef struct PtoTensor {
  void* base;
  int64_t offset;
  int32_t ndim;
  int32_t dtype;
  int64_t shape[PTO_MAX_DIMS];
  int64_t strides[PTO_MAX_DIMS];
} PtoTensor;

// How a task uses one argument; drives dependency tracking in the runtime.
enum PtoArgKind { PTO_ARG_IN = 0, PTO_ARG_OUT = 1, PTO_ARG_INOUT = 2, PTO_ARG_SCALAR = 3 };

typedef struct PtoArg {
  int32_t kind;
  int32_t dtype;    // of the tensor, or of the scalar
  PtoTensor tensor; // valid unless kind == PTO_ARG_SCALAR
  int64_t i64;      // scalar value for integer/bool scalars
  double f64;       // scalar value for floating scalars
} PtoArg;

// Per-core on-chip memory: one arena per space, sized like the real memory spaces.
// `fail` lets a kernel abort the run with a message (a runtime check in generated kernel code
// failed); the kernel should return right after calling it. `core_id` is the simulated core.
typedef struct PtoCoreMemory {
  uint8_t* space[PTO_NUM_SPACES];
  int64_t capacity[PTO_NUM_SPACES];
  int32_t core_id;
  void* ctx;
  void (*fail)(void* ctx, const char* message);
} PtoCoreMemory;

// A kernel (one InCore function) runs on one simulated core.
typedef void (*PtoKernelFn)(const PtoArg* args, PtoCoreMemory* mem);

// Callbacks the runtime provides to the orchestration. `create_tensor` allocates a zeroed
// intermediate DDR tensor; `submit` enqueues one task (the runtime copies `args`, infers its
// dependencies from the tensor arguments and may start it at once). `fail` aborts the run with a
// message (e.g. a shape check in generated code failed).
typedef struct PtoRuntimeApi {
  void* ctx;
  PtoTensor (*create_tensor)(void* ctx, int32_t dtype, int32_t ndim, const int64_t* shape);
  void (*submit)(void* ctx, const char* kernel_name, PtoKernelFn fn, const PtoArg* args,
                 int32_t nargs);
  void (*fail)(void* ctx, const char* message);
} PtoRuntimeApi;

// Exported by every generated program library:
//   int32_t pto_abi_version(void);  -> PTO_ABI_VERSION
//   int32_t pto_orchestrate(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams);
//     runs the orchestration function; returns 0 on success. `params` follow the orchestration
//     function's parameter order.
typedef int32_t (*PtoAbiVersionFn)(void);
typedef int32_t (*PtoOrchestrateFn)(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams);

#ifdef __cplusplus
}
#endif

#endif  // PYPTO_DEVICE_PTO_ABI_H
