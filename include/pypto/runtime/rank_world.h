// The processes of a multi-rank run that a launcher started, one rank each (mpirun -n N python
// prog.py): unlike the forked mode (multi_rank.h), no process of ours sees every rank, so each
// runs its own rank and they agree, exchange results and merge profiles through this interface.
// Its one implementation is MPI's (plugins/mpi/mpi_world.cpp), built into a library of its own,
// libpypto_mpi.so, and loaded when a program asks for it, so that neither the core nor the
// Python package needs an MPI installation unless a program runs over MPI.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "pypto/runtime/comm_transport.h"

namespace pypto::runtime {

class RankWorld {
 public:
  virtual ~RankWorld() = default;

  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // The MPI library behind it, for messages ("Open MPI v4.1.4, ...").
  virtual std::string library() const = 0;
  // Collective (every rank calls it): every rank's window of `window_bytes` bytes, zeroed, and
  // this rank's transport between them, until the transport is destroyed (collective too).
  virtual std::unique_ptr<CommTransport> open_windows(size_t window_bytes) = 0;
  // Collective: returns when every rank has called it.
  virtual void barrier() = 0;
  // Collective: `bytes` bytes at `data` of rank `root` into `data` of every rank.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // Collective: every rank's `mine`, in rank order, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

// While it lives, a SIGTERM, which is how mpirun ends the other ranks once one rank failed or
// died, first writes `message` to stderr (then the signal does what it did before), so that each
// rank's end says why next to mpirun's own notice naming the rank that went first.
class TerminationNotice {
 public:
  explicit TerminationNotice(std::string message);
  ~TerminationNotice();
  TerminationNotice(const TerminationNotice&) = delete;
  TerminationNotice& operator=(const TerminationNotice&) = delete;
};

// The MPI world of this process (made once, then shared): libpypto_mpi.so beside the library that
// holds this code (or $PYPTO_MPI_LIBRARY), which initialises MPI with MPI_THREAD_MULTIPLE unless
// it is initialised already (mpi4py does so on import). Throws ExecutionError(Setup) saying what
// is missing: the library (built only where CMake found MPI), MPI itself, or a thread level below
// MPI_THREAD_MULTIPLE (the ranks' kernels call the transport from the device's worker threads).
std::shared_ptr<RankWorld> mpi_world();

}  // namespace pypto::runtime
