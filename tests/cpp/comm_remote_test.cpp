// Peer views over a transport that reaches the peers' windows only by copies, as the MPI one does
// (src/runtime/comm_remote.h): the instructions kernels get (kernel_isa) move a remote view's
// elements through the transport's read and write, box by box, and refuse what copies cannot do.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/task_runtime.h"
#include "pypto/runtime/tile_isa.h"

namespace pypto::runtime {
namespace {

// Every rank's window in this process's memory, reached only through read and write (which
// count their calls), as a transport between machines would.
class CopyingTransport final : public CommTransport {
 public:
  CopyingTransport(int rank, std::vector<std::vector<uint8_t>>& windows)
      : rank_(rank), windows_(windows) {}
  int rank() const override { return rank_; }
  int nranks() const override { return static_cast<int>(windows_.size()); }
  size_t window_bytes() const override { return windows_[0].size(); }
  uint8_t* local_window() const override { return windows_[rank_].data(); }
  uint8_t* peer_address(int, size_t) const override { return nullptr; }
  void read(int peer, size_t offset, void* dst, size_t bytes) const override {
    ++reads;
    std::memcpy(dst, windows_[peer].data() + offset, bytes);
  }
  void write(int peer, size_t offset, const void* src, size_t bytes) const override {
    ++writes;
    std::memcpy(windows_[peer].data() + offset, src, bytes);
  }
  void notify(int, size_t, int32_t, SignalOp) const override {}
  SignalWait wait(size_t, int32_t, SignalCmp, std::chrono::milliseconds) const override {
    return {};
  }
  void abort(int) const override {}
  int aborted_by() const override { return -1; }

  mutable int reads = 0, writes = 0;

 private:
  int rank_;
  std::vector<std::vector<uint8_t>>& windows_;
};

struct FailureNote {
  std::string message;
  static void fail(void* ctx, const char* message) {
    static_cast<FailureNote*>(ctx)->message = message;
  }
};

float* floats(std::vector<uint8_t>& window) { return reinterpret_cast<float*>(window.data()); }

TEST(RemoteViews, LoadsAndStoresOfAPeersWindowGoThroughTheTransport) {
  std::vector<std::vector<uint8_t>> windows(2, std::vector<uint8_t>(4096, 0));
  CopyingTransport transport(0, windows);
  set_current_transport(&transport, std::chrono::milliseconds(100));
  const PtoIsa& isa = kernel_isa();
  ASSERT_NE(&isa, &tile_isa());
  const int64_t shape[] = {4, 8};
  PtoTensor local = contiguous_tensor(transport.local_window(), PTO_FP32, 2, shape);
  FailureNote note;
  PtoTensor own{}, peer{};
  // The own window stays in place; a peer's is a view the instructions cannot read in place.
  ASSERT_EQ(isa.comm_peer_view(&own, &local, 0, "k", &FailureNote::fail, &note), 1);
  EXPECT_EQ(own.base, local.base);
  ASSERT_EQ(isa.comm_peer_view(&peer, &local, 1, "k", &FailureNote::fail, &note), 1);
  EXPECT_NE(peer.base, local.base);

  // Rows 1 and 2 of rank 1's window: adjacent rows move in one write.
  float tile[16];
  for (int i = 0; i < 16; ++i) tile[i] = 1.0f + static_cast<float>(i);
  const int64_t rows[] = {1, 0}, rows_shape[] = {2, 8};
  ASSERT_EQ(isa.store(&peer, rows, rows_shape, 2, tile, "k", &FailureNote::fail, &note), 1);
  EXPECT_EQ(transport.writes, 1);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(floats(windows[1])[i], i >= 8 && i < 24 ? static_cast<float>(i - 7) : 0.0f) << i;
  }
  EXPECT_EQ(floats(windows[0])[8], 0.0f);  // the own window is untouched

  // A box of columns 2..5 of those rows: one read per row.
  float got[8] = {};
  const int64_t box[] = {1, 2}, box_shape[] = {2, 4};
  ASSERT_EQ(isa.load(got, &peer, box, box_shape, 2, "k", &FailureNote::fail, &note), 1);
  EXPECT_EQ(transport.reads, 2);
  const float want[8] = {3, 4, 5, 6, 11, 12, 13, 14};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], want[i]) << i;
  const void* data = nullptr;
  int64_t row_stride = 0;
  float copy[8] = {};
  ASSERT_EQ(isa.load_view(copy, &peer, box, box_shape, 2, &data, &row_stride, "k",
                          &FailureNote::fail, &note),
            1);
  EXPECT_EQ(data, copy);  // never the peer's memory in place
  EXPECT_EQ(row_stride, 4);

  // A fused "add, then store" into the peer: computed locally, then written.
  float a[8], b[8], scratch[8];
  for (int i = 0; i < 8; ++i) a[i] = 100.0f, b[i] = static_cast<float>(i);
  const int64_t last[] = {3, 0}, last_shape[] = {1, 8};
  ASSERT_EQ(isa.binary_store(PTO_OP_ADD, PTO_FP32, scratch, &peer, last, last_shape, 2, a, 8, b, 8,
                             1, 8, "k", &FailureNote::fail, &note),
            1);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(floats(windows[1])[24 + i], 100.0f + i);

  // A box past the view is refused before anything moves; so is an adding store (copies would
  // lose the peers' concurrent adds).
  const int64_t outside[] = {3, 4};
  const int reads = transport.reads;
  EXPECT_EQ(isa.load(got, &peer, outside, box_shape, 2, "remote_load", &FailureNote::fail, &note),
            0);
  EXPECT_NE(note.message.find("exceed the tensor view of shape [4, 8]"), std::string::npos);
  EXPECT_EQ(transport.reads, reads);
  EXPECT_EQ(isa.store_add(&peer, rows, rows_shape, 2, tile, "put", &FailureNote::fail, &note), 0);
  EXPECT_NE(note.message.find("put: an adding store (atomic=pl.AtomicType.Add) on another "
                              "rank's window is not supported"),
            std::string::npos)
      << note.message;

  set_current_transport(nullptr, std::chrono::milliseconds(100));
  EXPECT_EQ(&kernel_isa(), &tile_isa());
}

}  // namespace
}  // namespace pypto::runtime
