// Peer views over a transport that cannot address the other ranks' windows in place (the MPI
// one: CommTransport::peer_address() is null). Such a view's `base` lies in a range of addresses
// this process reserves without access (one window-sized stretch per rank), so it still names
// the peer and the byte offset, and any instruction that would read it in place faults instead
// of reading wrong memory. The instructions that take a tensor (remote_load, remote_store, put,
// get and the built-in collectives) move its elements through CommTransport::read / write.
#pragma once

#include <cstddef>

#include "pto_abi.h"

namespace pypto::runtime {

class CommTransport;

namespace comm_remote {

// Reserves the range for `transport`'s world when it needs one (peer_address() null), or drops
// the reservation (null transport). Called by set_current_transport. Throws ExecutionError(Setup)
// when the addresses cannot be reserved.
void reserve_for(const CommTransport* transport);
// Where byte `offset` of `peer`'s window is named in the reserved range (null without one).
uint8_t* remote_base(int peer, size_t offset) noexcept;
// Whether `t` is a view of another rank's window in the reserved range.
bool is_remote(const PtoTensor& t) noexcept;
// Copies the elements of remote view `t`, in row-major order, into / from the dense `data`.
void read_view(const PtoTensor& t, void* data);
void write_view(const PtoTensor& t, const void* data);
// The sub-view box [offsets, offsets + shape) of `t` (checked before).
PtoTensor box_view(const PtoTensor& t, const int64_t* offsets, const int64_t* shape) noexcept;
// tile_isa() with the instructions that take a tensor wrapped to move remote views (kernel_isa()
// while the current transport needs them).
const PtoIsa& remote_view_isa();

}  // namespace comm_remote
}  // namespace pypto::runtime
