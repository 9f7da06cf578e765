// pld.tensor's built-in collectives (PtoIsa::comm_collective): allreduce, allgather,
// reduce_scatter, broadcast, all_to_all and all_to_all_v, run by every rank of a multi-rank run
// over its window buffers. The data moves through peer views of the windows (what
// pld.tile.remote_load / remote_store use) and the ranks meet through the signal's cells with
// the same notify and wait instructions a kernel calls itself.
//
// The signal protocol is a self-clearing credit barrier: a call counts generations g = 1, 2, ...
// and at generation g every rank adds 1 to its cell (its rank) on every peer and waits until its
// own cell of every peer holds >= g. Once a call has seen all its credits, each rank subtracts
// them from its own cells. Adds commute, so the cells are zero again when every rank is done and
// the next call on the same signal starts at generation 1 too: the signal is reusable across
// back-to-back calls. (A peer's next call can only add to a cell after this rank has passed its
// last wait of the call, so no wait is satisfied by a credit of a later call.)
//
// Schedules (every collective has a "ready" generation before it reads or writes a peer's window
// and a "done" generation before a rank may change what the peers read):
//   allreduce       ready; reduce every rank's target (in rank order, so that every rank computes
//                   the same bits); done; write the result into the own target
//   reduce_scatter  ready; reduce row `rank` of every rank's target; done; write it
//   broadcast       ready; copy the root's target into the own; done
//   allgather       ready; push the input into row `rank` of every rank's target; done
//   all_to_all      ready; push input row d into row `rank` of rank d's target; done
//   barrier         (a host orchestrator's pld.tensor.barrier) one generation
//   all_to_all_v    ready; push input rows [d*M, d*M+M) into rows [rank*M, ...) of rank d's
//                   target and set rank d's recv_counts[rank, 0] = min(send_counts[d], M); done
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "comm_isa.h"
#include "comm_remote.h"
#include "pypto/ir/types.h"
#include "pypto/support/float16.h"

namespace pypto::runtime::comm_isa {
namespace {

// The elements of a view, in row-major order: their element offsets from its base.
std::vector<int64_t> element_offsets(const PtoTensor& t) {
  int64_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) count *= t.shape[d];
  std::vector<int64_t> out;
  if (count <= 0) return out;
  out.reserve(static_cast<size_t>(count));
  int64_t index[PTO_MAX_DIMS] = {0, 0, 0, 0};
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = t.offset;
    for (int32_t d = 0; d < t.ndim; ++d) offset += index[d] * t.strides[d];
    out.push_back(offset);
    for (int32_t d = t.ndim; d-- > 0;) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Rows [first, first + count) of a view (along its first dimension).
PtoTensor rows_of(const PtoTensor& t, int64_t first, int64_t count) {
  PtoTensor r = t;
  r.offset += first * t.strides[0];
  r.shape[0] = count;
  return r;
}

double load_value(int32_t dtype, const uint8_t* p) {
  switch (dtype) {
    case PTO_FP32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case PTO_FP16:
    case PTO_BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return dtype == PTO_FP16 ? support::f16_to_f32(h) : support::bf16_to_f32(h);
    }
    default:
      return 0;
  }
}

void store_value(int32_t dtype, uint8_t* p, double v) {
  if (dtype == PTO_FP32) {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else {
    const uint16_t h = dtype == PTO_FP16 ? support::f32_to_f16(static_cast<float>(v))
                                         : support::f32_to_bf16(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  }
}

double combine(int32_t op, double acc, double v) {
  switch (op) {
    case PTO_REDUCE_MAX:
      return std::max(acc, v);
    case PTO_REDUCE_MIN:
      return std::min(acc, v);
    case PTO_REDUCE_PROD:
      return acc * v;
    default:
      return acc + v;
  }
}

// One call of a collective on this rank.
class Collective {
 public:
  Collective(const PtoCollective& c, const char* where, PtoFailFn fail, void* ctx)
      : c_(c), where_(where), fail_(fail), ctx_(ctx), me_(rank()), n_(nranks()) {}

  int32_t run() {
    if (!check()) return 0;
    if (n_ == 1 && c_.kind != PTO_ALL_TO_ALL_V) return 1;  // nothing to exchange
    switch (c_.kind) {
      case PTO_ALLREDUCE:
        return reduce(*c_.target, [&](int) { return *c_.target; });
      case PTO_REDUCE_SCATTER: {
        const int64_t rows = c_.target->shape[0] / n_;
        return reduce(rows_of(*c_.target, me_ * rows, rows),
                      [&](int) { return rows_of(*c_.target, me_ * rows, rows); });
      }
      case PTO_BROADCAST:
        return broadcast();
      case kHostBarrier:
        return barrier(1) && clear() ? 1 : 0;
      default:
        return push();
    }
  }

 private:
  bool failure(const std::string& message) {
    fail_(ctx_, (std::string(where_) + ": rank " + std::to_string(me_) + ": " + message).c_str());
    return false;
  }

  bool check() {
    const PtoTensor& s = *c_.signal;
    if (c_.signal_dim >= s.ndim || s.shape[c_.signal_dim] < n_) {
      return failure("the signal needs a cell per rank (" + std::to_string(n_) +
                     ") along its dimension " + std::to_string(c_.signal_dim) +
                     "; give it shape [nranks, 1] (mode=\"ring\": [2 * (nranks - 1), nranks])");
    }
    const PtoTensor& t = *c_.target;
    if ((c_.kind == PTO_REDUCE_SCATTER || c_.kind == PTO_ALLGATHER || c_.kind == PTO_ALL_TO_ALL ||
         c_.kind == PTO_ALL_TO_ALL_V) &&
        t.shape[0] % n_ != 0) {
      return failure("the first dimension of the target (" + std::to_string(t.shape[0]) +
                     ") must be a multiple of the rank count " + std::to_string(n_));
    }
    if (c_.kind == PTO_ALLGATHER && t.shape[0] != n_) {
      return failure("the target of allgather must have one row per rank (" + std::to_string(n_) +
                     "), it has " + std::to_string(t.shape[0]));
    }
    if (c_.kind == PTO_BROADCAST && (c_.root < 0 || c_.root >= n_)) {
      return failure("root=" + std::to_string(c_.root) + " is not a rank of the run (0.." +
                     std::to_string(n_ - 1) + ")");
    }
    return true;
  }

  // The signal cell this rank owns on every peer, or peer p's cell here.
  std::vector<int64_t> cell(int64_t owner) const {
    std::vector<int64_t> offsets(static_cast<size_t>(c_.signal->ndim), 0);
    offsets[static_cast<size_t>(c_.signal_dim)] = owner;
    return offsets;
  }

  bool add_credit(int64_t on_rank, int64_t cell_of, int64_t value) {
    const std::vector<int64_t> offs = cell(cell_of);
    return notify(c_.signal, offs.data(), c_.signal->ndim, on_rank, value, 0, where_, fail_,
                  ctx_) != 0;
  }

  // Generation `g` of the credit barrier.
  bool barrier(int64_t g) {
    for (int64_t p = 0; p < n_; ++p)
      if (p != me_ && !add_credit(p, me_, 1)) return false;
    for (int64_t p = 0; p < n_; ++p) {
      if (p == me_) continue;
      const std::vector<int64_t> offs = cell(p);
      if (!wait(c_.signal, offs.data(), c_.signal->ndim, g, 1, where_, fail_, ctx_)) return false;
    }
    generations_ = g;
    return true;
  }

  // Takes this call's credits back out of this rank's cells: the signal is zero again.
  bool clear() {
    for (int64_t p = 0; p < n_; ++p)
      if (p != me_ && !add_credit(me_, p, -generations_)) return false;
    return true;
  }

  bool peer(const PtoTensor& local, int64_t p, PtoTensor* out) {
    if (p == me_) {
      *out = local;
      return true;
    }
    return peer_view(out, &local, p, where_, fail_, ctx_) != 0;
  }

  static uint8_t* at(const PtoTensor& t, int64_t offset) {
    return static_cast<uint8_t*>(t.base) +
           offset * ir::dtype_bytes(static_cast<ir::DataType>(t.dtype));
  }

  // Copies `src` (any view) into `dst` element by element; they have the same element count.
  // A remote view (a peer reached only by copies, comm_remote.h) moves through a dense copy.
  static void copy(const PtoTensor& dst, const PtoTensor& src) {
    const size_t elem = static_cast<size_t>(ir::dtype_bytes(static_cast<ir::DataType>(src.dtype)));
    const bool from_peer = comm_remote::is_remote(src), to_peer = comm_remote::is_remote(dst);
    if (from_peer || to_peer) {
      const std::vector<int64_t> local = element_offsets(from_peer ? dst : src);
      std::vector<uint8_t> dense(local.size() * elem);
      if (to_peer) {
        for (size_t i = 0; i < local.size(); ++i)
          std::memcpy(&dense[i * elem], at(src, local[i]), elem);
        comm_remote::write_view(dst, dense.data());
      } else {
        comm_remote::read_view(src, dense.data());
        for (size_t i = 0; i < local.size(); ++i)
          std::memcpy(at(dst, local[i]), &dense[i * elem], elem);
      }
      return;
    }
    const std::vector<int64_t> from = element_offsets(src), to = element_offsets(dst);
    for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
      std::memcpy(at(dst, to[i]), at(src, from[i]), elem);
    }
  }

  // allreduce and reduce_scatter: `mine` is where this rank's result goes; `region(p)` the
  // region of rank p's window that is reduced into it.
  template <typename Region>
  int32_t reduce(const PtoTensor& mine, Region region) {
    if (!barrier(1)) return 0;
    const std::vector<int64_t> dst = element_offsets(mine);
    std::vector<double> acc(dst.size());
    for (int64_t p = 0; p < n_; ++p) {
      PtoTensor remote;
      if (!peer(region(static_cast<int>(p)), p, &remote)) return 0;
      if (comm_remote::is_remote(remote)) {  // a dense copy of the peer's region
        const size_t elem =
            static_cast<size_t>(ir::dtype_bytes(static_cast<ir::DataType>(remote.dtype)));
        std::vector<uint8_t> dense(acc.size() * elem);
        comm_remote::read_view(remote, dense.data());
        remote =
            PtoTensor{dense.data(), 0, 1, remote.dtype, {static_cast<int64_t>(acc.size())}, {1}};
        for (size_t i = 0; i < acc.size(); ++i) {
          const double v = load_value(remote.dtype, at(remote, static_cast<int64_t>(i)));
          acc[i] = p == 0 ? v : combine(c_.reduce_op, acc[i], v);
        }
        continue;
      }
      const std::vector<int64_t> src = element_offsets(remote);
      for (size_t i = 0; i < src.size() && i < acc.size(); ++i) {
        const double v = load_value(remote.dtype, at(remote, src[i]));
        acc[i] = p == 0 ? v : combine(c_.reduce_op, acc[i], v);
      }
    }
    if (!barrier(2)) return 0;  // every rank has read this rank's data
    for (size_t i = 0; i < dst.size(); ++i) store_value(mine.dtype, at(mine, dst[i]), acc[i]);
    return clear() ? 1 : 0;
  }

  int32_t broadcast() {
    if (!barrier(1)) return 0;
    if (me_ != c_.root) {
      PtoTensor root;
      if (!peer(*c_.target, c_.root, &root)) return 0;
      copy(*c_.target, root);
    }
    if (!barrier(2)) return 0;  // the root's data may change again
    return clear() ? 1 : 0;
  }

  // allgather, all_to_all, all_to_all_v: every rank writes its blocks into the peers' targets.
  int32_t push() {
    if (n_ > 1 && !barrier(1)) return 0;  // every target may be overwritten
    const int64_t block = c_.target->shape[0] / n_;
    for (int64_t d = 0; d < n_; ++d) {
      PtoTensor dest;
      if (!peer(rows_of(*c_.target, me_ * block, block), d, &dest)) return 0;
      if (c_.kind == PTO_ALLGATHER) {
        copy(dest, *c_.input);
      } else {
        copy(dest, rows_of(*c_.input, d * block, block));
      }
      if (c_.kind == PTO_ALL_TO_ALL_V && !publish_count(d, block)) return 0;
    }
    if (n_ > 1 && !barrier(2)) return 0;  // every block has arrived
    return n_ > 1 && !clear() ? 0 : 1;
  }

  // all_to_all_v: recv_counts[me, 0] of rank d = the rows of block d that are valid.
  bool publish_count(int64_t d, int64_t block) {
    const PtoTensor& counts = *c_.send_counts;
    int64_t offset = counts.offset + d * counts.strides[0];
    int32_t sent = 0;
    std::memcpy(&sent, at(counts, offset), 4);
    const int64_t valid = std::clamp<int64_t>(sent, 0, block);
    std::vector<int64_t> offs(static_cast<size_t>(c_.recv_counts->ndim), 0);
    offs[0] = me_;
    return notify(c_.recv_counts, offs.data(), c_.recv_counts->ndim, d, valid, 1, where_, fail_,
                  ctx_) != 0;
  }

  const PtoCollective& c_;
  const char* where_;
  PtoFailFn fail_;
  void* ctx_;
  int64_t me_, n_;
  int64_t generations_ = 0;
};

}  // namespace

int32_t collective(const PtoCollective* c, const char* where, PtoFailFn fail, void* ctx) noexcept {
  try {
    return Collective(*c, where, fail, ctx).run();
  } catch (const std::exception& e) {
    fail(ctx, (std::string(where) + ": " + e.what()).c_str());
    return 0;
  }
}

}  // namespace pypto::runtime::comm_isa
