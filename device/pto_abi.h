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

#define PTO_ABI_VERSION 29

// comm_wait's flag for pld.system.defer_wait (see PtoIsa::comm_wait).
#define PTO_WAIT_DEFERRED 0x100

#define PTO_MAX_DIMS 4

// Element types; the values equal pypto::ir::DataType. FP8E4M3FN / FP8E5M2 are the OCP 8-bit
// floats, FP8E8M0 the MX scale (a power of two), all stored as their bit patterns like FP16.
// FP4 (E2M1), INT4 and UINT4 take a byte each, their four bits in its low half (the high half
// zero).
enum PtoDType {
  PTO_FP32 = 0,
  PTO_FP16 = 1,
  PTO_BF16 = 2,
  PTO_INT32 = 3,
  PTO_INT64 = 4,
  PTO_BOOL = 5,
  PTO_INT8 = 6,
  PTO_INT16 = 7,
  PTO_UINT8 = 8,
  PTO_UINT16 = 9,
  PTO_UINT32 = 10,
  PTO_UINT64 = 11,
  PTO_FP8E4M3FN = 12,
  PTO_FP8E5M2 = 13,
  PTO_FP8E8M0 = 14,
  PTO_FP4 = 15,
  PTO_INT4 = 16,
  PTO_UINT4 = 17
};
#define PTO_NUM_DTYPES 18  // the valid dtype values are 0 .. PTO_NUM_DTYPES - 1

// On-chip memory spaces of one simulated core; the values equal pypto::ir::MemorySpace.
enum PtoMemorySpace {
  PTO_DDR = 0,
  PTO_VEC = 1,
  PTO_MAT = 2,
  PTO_LEFT = 3,
  PTO_RIGHT = 4,
  PTO_ACC = 5,
  PTO_BIAS = 6,
  PTO_LEFT_SCALE = 7,
  PTO_RIGHT_SCALE = 8
};
#define PTO_NUM_SPACES 9

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

// One call of a built-in collective (PtoIsa::comm_collective). Tensors the call does not take are
// null. The signal's cell of peer p is p along dimension `signal_dim` (0 elsewhere).
enum PtoCollectiveKind {
  PTO_ALLREDUCE = 0,
  PTO_ALLGATHER = 1,
  PTO_REDUCE_SCATTER = 2,
  PTO_BROADCAST = 3,
  PTO_ALL_TO_ALL = 4,
  PTO_ALL_TO_ALL_V = 5
};
// pld.ReduceOp
enum PtoReduceOp {
  PTO_REDUCE_SUM = 0,
  PTO_REDUCE_MAX = 1,
  PTO_REDUCE_MIN = 2,
  PTO_REDUCE_PROD = 3
};
typedef struct PtoCollective {
  int32_t kind;        // PtoCollectiveKind
  int32_t reduce_op;   // PtoReduceOp (allreduce, reduce_scatter)
  int32_t signal_dim;  // the dimension of `signal` indexed by the peer
  int32_t reserved;
  int64_t root;                  // broadcast
  const PtoTensor* target;       // the window every rank ends with the result in
  const PtoTensor* signal;       // INT32 window cells of the credit barrier
  const PtoTensor* input;        // allgather, all_to_all, all_to_all_v: this rank's data
  const PtoTensor* send_counts;  // all_to_all_v: INT32 rows per destination
  const PtoTensor* recv_counts;  // all_to_all_v: INT32 window [nranks, 1], rows received
} PtoCollective;

// How a task uses one argument; drives dependency tracking in the runtime.
// NODEP: a tensor the task may read and write without being ordered against the other tasks that
// touch it (the program vouches for that, PyPTO's pl.adir.no_dep).
enum PtoArgKind {
  PTO_ARG_IN = 0,
  PTO_ARG_OUT = 1,
  PTO_ARG_INOUT = 2,
  PTO_ARG_SCALAR = 3,
  PTO_ARG_NODEP = 4
};

typedef struct PtoArg {
  int32_t kind;
  int32_t dtype;     // of the tensor, or of the scalar
  PtoTensor tensor;  // valid unless kind == PTO_ARG_SCALAR
  int64_t i64;       // scalar value for integer/bool scalars
  double f64;        // scalar value for floating scalars
} PtoArg;

typedef void (*PtoFailFn)(void* ctx, const char* message);

// The declared type of an orchestration parameter (ndim < 0: a scalar).
typedef struct PtoParamSpec {
  const char* name;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[PTO_MAX_DIMS];
} PtoParamSpec;

// Operation codes of the tile instructions.
enum PtoBinaryOp {
  PTO_OP_ADD = 0,
  PTO_OP_SUB = 1,
  PTO_OP_MUL = 2,
  PTO_OP_DIV = 3,
  PTO_OP_MAX = 4,
  PTO_OP_MIN = 5,
  // Remainders (REM: sign of the divisor, like Python's %; FMOD: sign of the dividend), bitwise
  // ops of integers, prelu (a > 0 ? a : a * b) and the fill of expands (b).
  PTO_OP_REM = 6,
  PTO_OP_FMOD = 7,
  PTO_OP_AND = 8,
  PTO_OP_OR = 9,
  PTO_OP_XOR = 10,
  PTO_OP_SHL = 11,
  PTO_OP_SHR = 12,
  PTO_OP_PRELU = 13,
  PTO_OP_FILL = 14
};
enum PtoUnaryOp {
  PTO_OP_EXP = 0,
  PTO_OP_NEG = 1,
  PTO_OP_SQRT = 2,
  PTO_OP_ABS = 3,
  PTO_OP_RECIP = 4,
  PTO_OP_RELU = 5,
  PTO_OP_LOG = 6,
  PTO_OP_SIN = 7,
  PTO_OP_COS = 8,
  PTO_OP_RSQRT = 9,
  PTO_OP_NOT = 10
};
// The folds of row_reduce and col_reduce (max and min: also of arg_reduce).
enum PtoRowReduceOp { PTO_ROW_MAX = 0, PTO_ROW_SUM = 1, PTO_ROW_MIN = 2, PTO_ROW_PROD = 3 };
// The comparisons of compare (pl.cmp's cmp_type codes).
enum PtoCmpType {
  PTO_CMP_EQ = 0,
  PTO_CMP_NE = 1,
  PTO_CMP_LT = 2,
  PTO_CMP_LE = 3,
  PTO_CMP_GT = 4,
  PTO_CMP_GE = 5
};
// Which operands of matmul are stored transposed.
enum PtoMatmulTrans { PTO_MATMUL_TRANS_LEFT = 1, PTO_MATMUL_TRANS_RIGHT = 2 };
// What fill_pad writes outside the valid region; the values equal pypto::ir::PadValue.
// PTO_PAD_ONE is not a PadValue: it pads the operand of a product (a reduction's identity).
enum PtoPadValue { PTO_PAD_ZERO = 0, PTO_PAD_MIN = 1, PTO_PAD_MAX = 2, PTO_PAD_ONE = 3 };
// What gather_load reads for an index past its bound (pl.tile.mgather's gather_oob=): a checked
// failure (PyPTO leaves it undefined), the last unit, the index modulo the bound, or zeros.
enum PtoGatherOob {
  PTO_GATHER_OOB_UNDEFINED = 0,
  PTO_GATHER_OOB_CLAMP = 1,
  PTO_GATHER_OOB_WRAP = 2,
  PTO_GATHER_OOB_ZERO = 3
};

// The instruction set of a simulated core, implemented (and optimized once) in the runtime.
// Generated code holds the program's control flow, scalar arithmetic and addressing and issues
// these instructions, the way kernel code on the real device issues vector and cube
// instructions: a cold build then costs about as much as compiling that control flow.
//
// Tiles are dense row-major blocks in an on-chip arena, given by pointer and element count.
// Integer arithmetic wraps around; integer division by zero is a fault that the kernel checks
// for first (check_divisor, or a test of a scalar divisor) and reports; float-to-integer
// conversions truncate and saturate (NaN gives 0); FP16/BF16 compute in float.
// The checked instructions return 1, or report through `fail(ctx, message)` (naming `where`)
// and return 0, after which the caller returns.
typedef struct PtoIsa {
  // dst[i] = a[i] op b[i]
  void (*binary)(int32_t op, int32_t dtype, void* dst, const void* a, const void* b, int64_t n);
  // dst[r, c] = a[r, c] op b[r, c] into a dense rows x cols dst, where row r of a starts
  // `a_stride` elements after row r - 1 (cols for a dense tile), and likewise for b, so that an
  // operand can be read in place from a tensor (see load_view).
  void (*binary_rows)(int32_t op, int32_t dtype, void* dst, const void* a, int64_t a_stride,
                      const void* b, int64_t b_stride, int64_t rows, int64_t cols);
  // dst[i] = a[i] op s, or s op a[i] when `scalar_first`. The scalar keeps its precision and
  // the result is rounded to `dtype`.
  void (*binary_scalar_f64)(int32_t op, int32_t dtype, void* dst, const void* a, double s,
                            int32_t scalar_first, int64_t n);
  void (*binary_scalar_i64)(int32_t op, int32_t dtype, void* dst, const void* a, int64_t s,
                            int32_t scalar_first, int64_t n);
  void (*unary)(int32_t op, int32_t dtype, void* dst, const void* a, int64_t n);
  void (*cast)(int32_t dst_dtype, int32_t src_dtype, void* dst, const void* src, int64_t n);
  // dst[rows, 1] = reduce(src[rows, cols]) along each row. The reductions read src's row r
  // `src_stride` elements after row r - 1 (cols for a dense tile; a view's row stride for an
  // operand read in place, see load_view).
  void (*row_reduce)(int32_t op, int32_t dtype, void* dst, const void* src, int64_t src_stride,
                     int64_t rows, int64_t cols);
  // dst[r, c] = src[r, c] op vec[r]
  void (*row_expand)(int32_t op, int32_t dtype, void* dst, const void* src, const void* vec,
                     int64_t rows, int64_t cols);
  // dst[m, n] = (acc, or 0 when null) + left[m, k] @ right[k, n]: FP32 accumulation for float
  // operands, INT32 (exact, wrapping) when both are integers; `acc` may be dst itself. dst and
  // acc are dense; row i of left starts `left_stride` elements after row i - 1 (k for a dense
  // tile), and likewise for right, so that an operand can be read in place from a tensor (see
  // load_view). `trans` (PtoMatmulTrans bits): left is stored [k, m] (its rows left_stride
  // apart), right is stored [n, k].
  void (*matmul)(int32_t left_dtype, int32_t right_dtype, void* dst, const void* acc,
                 const void* left, int64_t left_stride, const void* right, int64_t right_stride,
                 int64_t m, int64_t k, int64_t n, int32_t trans);
  // dst[rows, cols] = src (src_cols wide)[r0.., c0..]
  void (*slice)(void* dst, const void* src, int64_t src_cols, int64_t r0, int64_t c0, int64_t rows,
                int64_t cols, int64_t elem_size);
  // dst (dst_cols wide)[r0.., c0..] = src[rows, cols]
  void (*assemble)(void* dst, int64_t dst_cols, const void* src, int64_t r0, int64_t c0,
                   int64_t rows, int64_t cols, int64_t elem_size);

  // Global memory: tile <- box [offsets, offsets + shape) of a view, and back. Checked.
  int32_t (*load)(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                  int32_t ndim, const char* where, PtoFailFn fail, void* ctx);
  // A load for an instruction that reads its operand where it lies (matmul, binary_rows): when
  // the box is one plane of rows with unit column stride, *data points at its first element in
  // the view and *row_stride is the view's row stride (elements), and nothing is copied;
  // otherwise the box is loaded into `tile` as by load, and *data = tile, *row_stride = the
  // box's column count. Checked like load. The caller must not let anything write the box while
  // it reads *data.
  int32_t (*load_view)(void* tile, const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                       int32_t ndim, const void** data, int64_t* row_stride, const char* where,
                       PtoFailFn fail, void* ctx);
  int32_t (*store)(const PtoTensor* t, const int64_t* offsets, const int64_t* shape, int32_t ndim,
                   const void* tile, const char* where, PtoFailFn fail, void* ctx);
  // A binary op whose result only a store reads: the box of the view (checked like store) =
  // a op b, tile by tile as binary_rows reads them, written where the box lies when it is rows
  // of adjacent elements that neither operand partly overlaps; otherwise computed into `tile`
  // (rows x cols, dense) and stored from there. Stores into a large view go around the caches.
  int32_t (*binary_store)(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                          const int64_t* offsets, const int64_t* shape, int32_t ndim, const void* a,
                          int64_t a_stride, const void* b, int64_t b_stride, int64_t rows,
                          int64_t cols, const char* where, PtoFailFn fail, void* ctx);
  // The box `shape` of view dst = a op b, its operands the boxes of the same shape at a_offsets
  // of a and b, in one pass where all three lie, when each lies inside its view as rows of
  // adjacent elements of type `dtype` and neither operand partly overlaps the result; then 1.
  // Otherwise nothing happens and 0 is returned: generated code calls it in place of a loop
  // over the adjacent tiles of such a box (a band), which it runs instead on 0, tile by tile,
  // with that loop's own checks and messages.
  int32_t (*binary_band)(int32_t op, int32_t dtype, const PtoTensor* dst,
                         const int64_t* dst_offsets, const PtoTensor* a, const int64_t* a_offsets,
                         const PtoTensor* b, const int64_t* b_offsets, const int64_t* shape,
                         int32_t ndim);
  // Checks that a box lies inside a view (before taking a sub-view of it).
  int32_t (*check_box)(const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                       int32_t ndim, const char* where, PtoFailFn fail, void* ctx);
  // Checks that a rows x cols box at (r0, c0) lies inside a tile_rows x tile_cols tile.
  int32_t (*check_tile_box)(int64_t r0, int64_t c0, int64_t rows, int64_t cols, int64_t tile_rows,
                            int64_t tile_cols, const char* where, PtoFailFn fail, void* ctx);
  // Copies every element of `src` into `dst` (same shape and dtype); the views may overlap.
  void (*copy_tensor)(const PtoTensor* dst, const PtoTensor* src);
  // Checks the arguments of orchestration function `func` against its parameters.
  int32_t (*check_params)(const PtoArg* params, int32_t nparams, const PtoParamSpec* specs,
                          int32_t count, const char* func, PtoFailFn fail, void* ctx);
  // Checks that none of the n elements of `divisor` is zero when `dtype` is an integer type
  // (integer division by zero is a fault; float division follows IEEE).
  int32_t (*check_divisor)(int32_t dtype, const void* divisor, int64_t n, const char* where,
                           PtoFailFn fail, void* ctx);
  // Sets every element of the rows x cols tile outside [0, valid_rows) x [0, valid_cols) to
  // `pad` (PtoPadValue): 0, or the lowest / highest value of dtype (-inf / +inf for floats).
  void (*fill_pad)(int32_t dtype, void* dst, int64_t rows, int64_t cols, int64_t valid_rows,
                   int64_t valid_cols, int32_t pad);

  // ----- Reductions along columns, index reductions and layout changes.
  // dst[1, cols] = reduce(src[:, c]) down each column, rows folded in order from row 0 with the
  // element function of `op` (PtoRowReduceOp).
  void (*col_reduce)(int32_t op, int32_t dtype, void* dst, const void* src, int64_t src_stride,
                     int64_t rows, int64_t cols);
  // The INT32 index of the first maximum (op PTO_ROW_MAX) or minimum (PTO_ROW_MIN) of each row
  // (per_column 0: dst[rows, 1] holds column indices) or of each column (per_column 1:
  // dst[1, cols] holds row indices). A NaN is more extreme than any number.
  void (*arg_reduce)(int32_t op, int32_t dtype, int32_t per_column, int32_t* dst, const void* src,
                     int64_t src_stride, int64_t rows, int64_t cols);
  // dst[r, c] = vec[r] for a rows x cols dst of elem_size-byte elements.
  void (*row_broadcast)(void* dst, const void* vec, int64_t rows, int64_t cols, int64_t elem_size);
  // dst[cols, rows] = the transpose of src[rows, cols] (elem_size-byte elements).
  void (*transpose)(void* dst, const void* src, int64_t rows, int64_t cols, int64_t elem_size);
  // The predicate mask of pl.cmp (rows x mask_cols elements of mask_dtype, each holding a byte):
  // bit c % 8 of byte c / 8 of row r is a[r, c] <cmp> b[r, c] (PtoCmpType), the bytes past
  // (cols + 7) / 8 are 0. With b null the right operand is a scalar: `i` when `integer_scalar`
  // (an integer tile compares in int64), else `f` (in double). Row r of a starts `a_stride`
  // elements after row r - 1 (cols for a dense tile; see load_view), and likewise for b.
  void (*compare)(int32_t cmp, int32_t dtype, int32_t mask_dtype, void* mask, const void* a,
                  int64_t a_stride, const void* b, int64_t b_stride, double f, int64_t i,
                  int32_t integer_scalar, int64_t rows, int64_t cols, int64_t mask_cols);
  // dst[r, c] = the mask's bit for (r, c) ? a[r, c] : b[r, c]; with b null the scalar (`i` or
  // `f` as for compare) converted to dtype.
  void (*select)(int32_t dtype, int32_t mask_dtype, void* dst, const void* mask, const void* a,
                 const void* b, double f, int64_t i, int32_t integer_scalar, int64_t rows,
                 int64_t cols, int64_t mask_cols);
  // dst[r, c] = op a[r, c] into a dense rows x cols dst, row r of a starting `a_stride`
  // elements after row r - 1 (an operand read in place, see load_view).
  void (*unary_rows)(int32_t op, int32_t dtype, void* dst, const void* a, int64_t a_stride,
                     int64_t rows, int64_t cols);
  // The adding store (atomic=pl.AtomicType.Add): box [offsets, offsets + shape) of the view +=
  // tile, elementwise in the view's dtype, checked like store. Atomic with respect to every
  // other store_add into the same buffer, from any core.
  int32_t (*store_add)(const PtoTensor* t, const int64_t* offsets, const int64_t* shape,
                       int32_t ndim, const void* tile, const char* where, PtoFailFn fail,
                       void* ctx);

  // ----- Multi-rank programs (pld): the window buffers of the run's ranks, reached through its
  // communication transport (src/runtime/comm_transport.h). The ones returning int32_t return 0
  // after calling `fail` (the kernel then returns).
  // This process's rank and the number of ranks (0 and 1 outside a multi-rank run).
  int32_t (*comm_rank)(void);
  int32_t (*comm_nranks)(void);
  // *peer_view = the view `local` (which must lie inside this rank's window) at the same place
  // of `peer`'s window (pld.tile.remote_load / remote_store, pld.tensor.put / get).
  int32_t (*comm_peer_view)(PtoTensor* peer_view, const PtoTensor* local, int64_t peer,
                            const char* where, PtoFailFn fail, void* ctx);
  // pld.system.notify: the INT32 cell at `offsets` of window view `signal`, on rank `peer`,
  // gets `value` by `op` (0 AtomicAdd, 1 Set), after every write this rank made before.
  int32_t (*comm_notify)(const PtoTensor* signal, const int64_t* offsets, int32_t ndim,
                         int64_t peer, int64_t value, int32_t op, const char* where, PtoFailFn fail,
                         void* ctx);
  // pld.system.wait: until this rank's cell at `offsets` of `signal` compares `cmp` (0 Eq,
  // 1 Ge) to `expected`; fails after the run's signal timeout or when another rank failed.
  // With `cmp | PTO_WAIT_DEFERRED` (pld.system.defer_wait) it returns at once and the task of the
  // kernel completes when the cell compares so, its core free meanwhile.
  int32_t (*comm_wait)(const PtoTensor* signal, const int64_t* offsets, int32_t ndim,
                       int64_t expected, int32_t cmp, const char* where, PtoFailFn fail, void* ctx);
  // pld.tensor's built-in collectives (allreduce, allgather, ...; PtoCollective below), run by
  // every rank of the run over window buffers, synchronised through `signal`'s credit barrier.
  int32_t (*comm_collective)(const struct PtoCollective* c, const char* where, PtoFailFn fail,
                             void* ctx);
  // ----- Gather and scatter (pl.gather, pl.gather_mask, pl.gather_compare, pl.scatter,
  // pl.scatter_mask, pl.scatter_update, pl.mscatter, pl.write). Index elements are of
  // `index_dtype` (PTO_INT16, PTO_INT32 or PTO_INT64). The checked instructions first check every
  // index against its bound and report the first one outside it (its position and value, naming
  // `where`) through `fail`, writing nothing; then they return 0, else 1.
  // dst[r, c] = src[index[r, c], c] (axis 0) or src[r, index[r, c]] (axis 1), for a rows x cols
  // dst and index; src is src_rows x src_cols (rows <= src_rows for axis 1, cols <= src_cols for
  // axis 0).
  int32_t (*gather)(void* dst, const void* src, int64_t src_rows, int64_t src_cols,
                    const void* index, int32_t index_dtype, int64_t rows, int64_t cols,
                    int32_t axis, int64_t elem_size, const char* where, PtoFailFn fail, void* ctx);
  // The inverse: dst (dst_rows x dst_cols) [index[r, c], c] (axis 0) or [r, index[r, c]]
  // (axis 1) = src[r, c], in row-major order of (r, c), so that the last write wins.
  int32_t (*scatter)(void* dst, int64_t dst_rows, int64_t dst_cols, const void* src,
                     const void* index, int32_t index_dtype, int64_t rows, int64_t cols,
                     int32_t axis, int64_t elem_size, const char* where, PtoFailFn fail, void* ctx);
  // Row k of src (n rows of `cols` elements) into row index[k] of dst (dst_rows rows), k in
  // order (the last write wins).
  int32_t (*scatter_rows)(void* dst, int64_t dst_rows, const void* src, const void* index,
                          int32_t index_dtype, int64_t n, int64_t cols, int64_t elem_size,
                          const char* where, PtoFailFn fail, void* ctx);
  // Element k of src (n elements) into element index[k] of view t, its elements counted in
  // row-major order of its shape.
  int32_t (*scatter_store)(const PtoTensor* t, const void* src, const void* index,
                           int32_t index_dtype, int64_t n, const char* where, PtoFailFn fail,
                           void* ctx);
  // Every stride-th column from `phase`: dst[r, c] = src[r, c * stride + phase] (gather_columns,
  // dst rows x cols) and dst[r, c * stride + phase] = src[r, c] (scatter_columns, src rows x cols;
  // the other columns of dst keep their values).
  void (*gather_columns)(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                         int64_t phase, int64_t elem_size);
  void (*scatter_columns)(void* dst, const void* src, int64_t rows, int64_t cols, int64_t stride,
                          int64_t phase, int64_t elem_size);
  // For each row r of src (rows x cols of dtype): the column numbers (plus `offset`) of the
  // elements for which `element <cmp> scalar` holds (PtoCmpType; the scalar is `i` when
  // `integer_scalar`, else `f`), the first out_cols of them into row r of the INT32 dst (the rest
  // of the row 0), and how many there are into counts[r] (count_dtype).
  void (*gather_compare)(int32_t cmp, int32_t dtype, int32_t* dst, void* counts,
                         int32_t count_dtype, const void* src, double f, int64_t i,
                         int32_t integer_scalar, int64_t rows, int64_t cols, int64_t out_cols,
                         int64_t offset);
  // *at (one element of dtype) = the scalar (`i` when `integer_scalar`, else `f`) converted to
  // dtype as a cast converts it.
  void (*write_element)(int32_t dtype, void* at, double f, int64_t i, int32_t integer_scalar);
  // ----- Generators and sorts (pl.tile.ci, pl.tile.random, pl.tile.sort32, pl.tile.mrgsort).
  // dst[k] = start + k, or start - k when `descending`, for k < n, wrapped to the integer dtype.
  void (*ci)(int32_t dtype, void* dst, int64_t start, int32_t descending, int64_t n);
  // The counter-based generator of pypto/support/counter_rng.h: element (r, c) of a tile of
  // `cols` 32-bit columns is word (r * cols + c) of the stream of key[2] and counter[4] after
  // `rounds` rounds; only the valid_rows x valid_cols corner is written.
  void (*random)(void* dst, const uint32_t* key, const uint32_t* counter, int32_t rounds,
                 int64_t cols, int64_t valid_rows, int64_t valid_cols);
  // Each 32-element block of each row of src (rows x cols, FP32) sorted in descending order
  // into (value, index) pairs of dst (rows x 2 * cols): the value, then the bits of the UINT32
  // that idx holds at the value's position (pypto/support/sort_ops.h).
  void (*sort32)(int32_t dtype, void* dst, const void* src, const uint32_t* idx, int64_t rows,
                 int64_t cols);
  // Each row of (value, index) pairs (rows x cols elements, two per pair) holds sorted runs of
  // block_len elements: every four adjacent runs are merged into one, in descending order.
  // Returns 0 after reporting through fail when block_len is not a positive even number.
  int32_t (*merge_sort)(int32_t dtype, void* dst, const void* src, int64_t rows, int64_t cols,
                        int64_t block_len, const char* where, PtoFailFn fail, void* ctx);
  // Row r of dst (rows x the sum of cols[i]) = the `count` sorted lists of pairs srcs[i]
  // (rows x cols[i] each) merged in descending order (equal values: the earlier list's first).
  void (*merge_lists)(int32_t dtype, void* dst, const void* const* srcs, const int64_t* cols,
                      int32_t count, int64_t rows);
  // ----- Loads by index (pl.tile.gatherb, pl.tile.mgather). Checked like the gathers above.
  // Block (r, c) of dst (rows x cols blocks of 32 bytes, a row of dst being cols * 32 bytes) =
  // the 32 bytes of src (src_bytes long) from byte offset[r, c] (offset: rows x cols UINT32),
  // for r < valid_rows and c < valid_cols; the other blocks of dst keep their bytes.
  int32_t (*gather_blocks)(void* dst, const void* src, int64_t src_bytes, const uint32_t* offset,
                           int64_t rows, int64_t cols, int64_t valid_rows, int64_t valid_cols,
                           const char* where, PtoFailFn fail, void* ctx);
  // Unit k of dst (n units of `unit` elements) = unit index[k] of view t, its units counted in
  // row-major order of its elements (unit: t's last extent for rows, 1 for elements). An index
  // is read as the bits of an unsigned 32-bit number; one of `bound` units or more is handled
  // by `oob` (PtoGatherOob).
  int32_t (*gather_load)(void* dst, const PtoTensor* t, const int32_t* index, int64_t n,
                         int64_t unit, int32_t oob, const char* where, PtoFailFn fail, void* ctx);
  // ----- Triangular masks, partial elementwise ops and MX block-scaled matmul (pl.tile.tri,
  // pl.tile.part_add / part_mul / part_max / part_min, pl.tile.matmul_mx*).
  // dst[r, c] (a tile of `cols` columns) = 1 where c <= r + diagonal (upper: c >= r + diagonal),
  // else 0, in dtype, for r < valid_rows and c < valid_cols only.
  void (*tri)(int32_t dtype, void* dst, int64_t cols, int64_t valid_rows, int64_t valid_cols,
              int64_t diagonal, int32_t upper);
  // Over a's valid region [0, a_rows) x [0, a_cols) of rows x cols tiles: dst = a op b where b
  // is valid too (r < b_rows and c < b_cols), else a (op: PtoBinaryOp). dst may be a or b.
  void (*part_binary)(int32_t op, int32_t dtype, void* dst, const void* a, const void* b,
                      int64_t cols, int64_t a_rows, int64_t a_cols, int64_t b_rows, int64_t b_cols);
  // dst[m, n] (FP32) = (acc, or 0 when null) + (left * 2^left_scale) @ (right * 2^right_scale):
  // left [m, k] and right [k, n] are FP8E4M3FN (rows lda / ldb elements apart), left_scale
  // [m, ceil(k / 32)] and right_scale [ceil(k / 32), n] dense FP8E8M0; element (i, p) of left
  // takes the scale of its row and its block of 32 along k (p / 32), element (p, j) of right
  // that of block p / 32 and its column. The scaled operands are FP32, their products
  // fused-multiply-added in k order onto each element (the reference interpreter's order).
  void (*matmul_mx)(void* dst, const void* acc, const void* left, int64_t lda,
                    const void* left_scale, const void* right, int64_t ldb, const void* right_scale,
                    int64_t m, int64_t k, int64_t n);
  // dst[r, c] = a[r, c] op s (s op a[r, c] when scalar_first) into a dense rows x cols dst, row r
  // of a starting `a_stride` elements after row r - 1 (an operand read in place, see load_view);
  // computed like binary_scalar_f64.
  void (*binary_scalar_rows_f64)(int32_t op, int32_t dtype, void* dst, const void* a,
                                 int64_t a_stride, double s, int32_t scalar_first, int64_t rows,
                                 int64_t cols);
  // unary_rows and binary_scalar_rows_f64 for a result only a store reads, as binary_store: the
  // box of the view (checked like store) written where it lies when it can be, else computed
  // into `tile` (rows x cols, dense) and stored from there.
  int32_t (*unary_store)(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                         const int64_t* offsets, const int64_t* shape, int32_t ndim, const void* a,
                         int64_t a_stride, int64_t rows, int64_t cols, const char* where,
                         PtoFailFn fail, void* ctx);
  int32_t (*binary_scalar_store)(int32_t op, int32_t dtype, void* tile, const PtoTensor* t,
                                 const int64_t* offsets, const int64_t* shape, int32_t ndim,
                                 const void* a, int64_t a_stride, double s, int32_t scalar_first,
                                 int64_t rows, int64_t cols, const char* where, PtoFailFn fail,
                                 void* ctx);
  // Cross-core pipes between the kernels of a Group's cluster (see PtoPipeIsa below).
  const struct PtoPipeIsa* pipes;
} PtoIsa;

// Per-core on-chip memory: one arena per space, sized like the real memory spaces.
// `fail` lets a kernel abort the run with a message (a runtime check in generated kernel code
// failed); the kernel should return right after calling it. `core_id` is the simulated core.
// `block_idx` and `block_num` describe the task running on the core now: block `block_idx` of
// a launch of `block_num` blocks (pl.tile.get_block_idx / get_block_num; 0 and 1 outside
// pl.spmd). The runtime sets them before each kernel call. `num_cores` is the device's count of
// simulated cores (pl.system.available_cluster_count / available_aiv_count).
//
// `syncall(ctx, core_type, used_cores, where)` is pl.system.syncall: it returns once every block
// of the task's launch has called it (as many times), so no block passes before all arrive.
// `core_type` is a PtoSyncallCoreType; `used_cores` is -1 for the hard form, else the soft
// form's participant count (0: the launch's block count). It returns 0 after reporting through
// `fail` (naming `where`) when the launch cannot meet there: more blocks than cores (they could
// not all run at once), a participant count other than the launch's, another block that
// returned without arriving, or a run that is failing; the kernel then returns.
typedef struct PtoCoreMemory {
  uint8_t* space[PTO_NUM_SPACES];
  int64_t capacity[PTO_NUM_SPACES];
  int32_t core_id;
  void* ctx;
  PtoFailFn fail;
  const PtoIsa* isa;
  int32_t block_idx;
  int32_t block_num;
  int32_t num_cores;
  int32_t (*syncall)(void* ctx, int32_t core_type, int32_t used_cores, const char* where);
  // Nonzero once the run must stop: its time limit passed, Ctrl-C, or another task failed.
  // Generated code reads it (relaxed) at every loop back-edge and then calls `fail` and returns,
  // so that a loop that never ends can still be stopped in the caller's process. Never null.
  const uint8_t* stop;
  // pl.tile.get_subblock_idx(): the AIV lane the kernel runs as; 0 but in the second AIV lane of
  // a Group's cluster (PtoPipeIsa::run_cluster).
  int32_t subblock_idx;
} PtoCoreMemory;

// The participant set of pl.system.syncall (its core_type=): on the CPU device a block is one
// participant whatever its kind.
enum PtoSyncallCoreType { PTO_SYNCALL_MIX = 0, PTO_SYNCALL_AIV_ONLY = 1, PTO_SYNCALL_AIC_ONLY = 2 };

// A kernel (one InCore function) runs on one simulated core.
typedef void (*PtoKernelFn)(const PtoArg* args, PtoCoreMemory* mem);

// Cross-core pipes on the CPU device (PyPTO's tpush / tpop / tfree): the Cube (AIC) and Vector
// (AIV) kernels a Group calls run together as one cluster, connected by bounded FIFOs, one per
// direction of a pipe id and AIV lane. They live in the runtime (src/runtime/cluster_pipes.cpp),
// not in the generated program, so that a program with pipes builds without the C++ thread
// library's headers. Each returns 0 after reporting through the member's `fail`, and the kernel
// then returns.
enum PtoPipeDirection { PTO_PIPE_C2V = 1, PTO_PIPE_V2C = 2 };
enum PtoPipeRole { PTO_PIPE_AIC = 0, PTO_PIPE_AIV = 1 };

// One kernel of a cluster: `lane` is its AIV lane (0 or 1; 0 for the AIC), `reads_lane` whether
// it reads pl.tile.get_subblock_idx() (two lanes that do not would compute alike).
typedef struct PtoClusterMember {
  PtoKernelFn fn;
  const PtoArg* args;
  int32_t role;  // PtoPipeRole
  int32_t lane;
  const char* kernel;
  int32_t reads_lane;
} PtoClusterMember;

typedef struct PtoPipeIsa {
  // aic_initialize_pipe / aiv_initialize_pipe: opens the member's ends of pipe `id` in the
  // directions of `dir_mask`, with the slot counts it gives each direction.
  int32_t (*init)(PtoCoreMemory* mem, int32_t dir_mask, int64_t c2v_slots, int64_t v2c_slots,
                  int64_t id, const char* where);
  // tpush_to_aiv / tpush_to_aic of a rows x cols tile of `elem`-byte elements, valid in
  // [0, valid_rows) x [0, valid_cols); `split` 1 (UP_DOWN) / 2 (LEFT_RIGHT) halves it between
  // the AIV lanes. Waits for a free slot.
  int32_t (*push)(PtoCoreMemory* mem, int32_t dir, int64_t id, int32_t split, const void* tile,
                  int64_t rows, int64_t cols, int32_t elem, int64_t valid_rows,
                  int64_t valid_cols, int64_t slot_size, const char* op, const char* where);
  // tpop_from_aic / tpop_from_aiv into a rows x cols tile; its valid region comes back, within
  // [0, want_rows) x [0, want_cols) of the pushed tile when want_rows >= 0.
  int32_t (*pop)(PtoCoreMemory* mem, int32_t dir, int64_t id, int32_t split, void* tile,
                 int64_t rows, int64_t cols, int32_t elem, int64_t* valid_rows,
                 int64_t* valid_cols, int64_t want_rows, int64_t want_cols, const char* op,
                 const char* where);
  // tfree_to_aic / tfree_to_aiv: the oldest slot the member popped is free again.
  int32_t (*free_slot)(PtoCoreMemory* mem, int32_t dir, int64_t id, const char* op,
                       const char* where);
  // Runs the members together, the first on this thread with `mem`, each other on a thread of
  // its own with tile memory of its own; a failure of any is reported through mem->fail.
  void (*run_cluster)(PtoCoreMemory* mem, const char* group, const PtoClusterMember* members,
                      int32_t n, int32_t lanes);
} PtoPipeIsa;

// A task handle: the task's index in the run plus one, so that 0 (zeroed memory, a TaskId array
// before its slots are set, PyPTO's `None`) names no task.
typedef int64_t PtoTaskHandle;
#define PTO_NO_TASK 0

// A dispatch predicate (PyPTO's `predicate=(tensor[i, j] > 0)`): the element at `element`, of
// type `dtype`, compared with `target` by `op` (PtoCmpType) when the task's dependencies are
// done. False: the task is retired without running, and its successors are released as usual.
typedef struct PtoTaskPredicate {
  const void* element;
  int32_t dtype;
  int32_t op;
  int64_t target;
} PtoTaskPredicate;

// What a submit adds to the dependencies the runtime infers from the arguments: explicit
// predecessors (`deps`, handles; PTO_NO_TASK entries are ignored) and a predicate (or null).
// `block_num` > 1 makes the submit an SPMD launch (pl.spmd): the kernel runs as that many tasks,
// block 0 .. block_num - 1, which share the launch's dependencies and do not wait for each
// other; the handle returned names the whole launch (its successors wait for every block).
// 0 (a zeroed field) means one block; a negative count is rejected.
typedef struct PtoSubmitOptions {
  const PtoTaskHandle* deps;
  int32_t ndeps;
  const PtoTaskPredicate* predicate;
  int32_t block_num;
} PtoSubmitOptions;

// Callbacks the runtime provides to the orchestration. `create_tensor` allocates a zeroed
// intermediate DDR tensor; `submit` enqueues one task (the runtime copies `args`, infers its
// dependencies from the tensor arguments and may start it at once). `submit_task` does the same
// with options and returns the task's handle; with `fn` null it submits a task that runs nothing
// (a barrier: its dependencies only). `set_manual_scope(ctx, 1)` starts a manual scope: until
// `set_manual_scope(ctx, 0)`, submitted tasks wait for their explicit dependencies only (their
// argument accesses are still recorded for the tasks after the scope). `fail` aborts the run with a
// message (e.g. a shape check in generated code failed). `isa` serves the checks and copies.
typedef struct PtoRuntimeApi {
  void* ctx;
  PtoTensor (*create_tensor)(void* ctx, int32_t dtype, int32_t ndim, const int64_t* shape);
  void (*submit)(void* ctx, const char* kernel_name, PtoKernelFn fn, const PtoArg* args,
                 int32_t nargs);
  PtoFailFn fail;
  const PtoIsa* isa;
  PtoTaskHandle (*submit_task)(void* ctx, const char* kernel_name, PtoKernelFn fn,
                               const PtoArg* args, int32_t nargs, const PtoSubmitOptions* options);
  void (*set_manual_scope)(void* ctx, int32_t manual);
  // The device's count of simulated cores (pl.system.available_cluster_count in an
  // orchestration: the widest launch whose blocks all run at once).
  int32_t num_cores;
  // The run's stop flag, as PtoCoreMemory::stop: polled by the orchestration's loops too.
  const uint8_t* stop;
  // Blocks until the task (or the launch) `task` names is done: the orchestration reads what it
  // wrote, such as the scalar a kernel returns. 1 when done; 0 when the run fails (or `task` is
  // PTO_NO_TASK, what a submit of a failing run returns), after which the orchestration returns.
  int32_t (*wait_task)(void* ctx, PtoTaskHandle task);
} PtoRuntimeApi;

// Exported by every generated program library:
//   int32_t pto_abi_version(void);  -> PTO_ABI_VERSION
//   int32_t pto_orchestrate(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams);
//     runs the orchestration function; returns 0 on success. `params` follow the orchestration
//     function's parameter order.
//   void pto_core_memory_extent(int64_t extent[PTO_NUM_SPACES]);
//     per core memory space, how many bytes from its start the program's kernels can write (the
//     runtime clears only those between runs). Optional: without it, every space is cleared.
typedef int32_t (*PtoAbiVersionFn)(void);
typedef void (*PtoCoreMemoryExtentFn)(int64_t extent[PTO_NUM_SPACES]);
typedef int32_t (*PtoOrchestrateFn)(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams);

#ifdef __cplusplus
}
#endif

#endif  // PYPTO_DEVICE_PTO_ABI_H
