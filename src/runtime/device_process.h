// What the device processes of isolated runs share with the code that runs them: the status page
// a crashed process leaves for its caller, the observer that fills it, the launch loop, and the
// helpers both the forked per-run process (device.cpp) and the kept device server
// (device_server.cpp) use. Internal to src/runtime.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/runtime/device.h"
#include "pypto/runtime/program_library.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime::detail {

// "program '<name>': ", or "" without a name: the start of every error message of a run.
std::string prefix(const ExecuteOptions& options);

// What a crashed child leaves behind for the parent: which kernel each core was running and,
// when the fatal signal could be caught, the thread that received it. Lives in a MAP_SHARED page
// created before the fork. Written with lock-free atomics because a signal handler writes it.
constexpr size_t kKernelNameBytes = 120;
struct CoreSlot {
  std::atomic<int32_t> busy{0};
  char kernel[kKernelNameBytes] = {};
};
struct SharedStatus {
  static constexpr int32_t kNoFault = -2;
  static constexpr int32_t kOrchestration = -1;
  std::atomic<int32_t> fault_thread{kNoFault};  // worker index, or kOrchestration
  std::atomic<int32_t> fault_signal{0};
  // followed by num_workers CoreSlots
  CoreSlot* slots() { return reinterpret_cast<CoreSlot*>(this + 1); }
};
static_assert(std::atomic<int32_t>::is_always_lock_free, "needed across processes and signals");
static_assert(alignof(CoreSlot) <= alignof(SharedStatus), "slots follow the header");

// Bytes of a status page with slots for `num_workers` cores (a multiple of the cache line).
size_t status_page_bytes(int num_workers);

// In a device process: the page its fatal signal handlers note the faulting thread in, and the
// handlers themselves (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS).
void set_fatal_signal_status(SharedStatus* status);
void install_fatal_signal_handlers();

// A byte range the device may write: an output in memory shared with the caller.
struct WritableRange {
  void* data;
  size_t bytes;
};

// Launches the program ExecuteOptions::warmup + rounds times on one runtime (the library and the
// worker threads are set up once), restoring `writable` to its first values and waking the
// cores (`awake`) before each launch after the first. One launch is run_observed as it is. The
// DFX recorder sees the last launch. `status` (a device process): each core's kernel is noted
// there while it runs. `limits` (a run in the caller's process): every launch stops at the same
// deadline.
RunStats launch_rounds(TaskRuntime& runtime, const TaskRuntime::AwakeCores& awake,
                       const ProgramLibrary& program, const std::vector<PtoArg>& params,
                       const std::vector<WritableRange>& writable, const ExecuteOptions& options,
                       SharedStatus* status, const RunLimits* limits);

// A TaskRuntime of `num_workers` cores whose warm-up notes its kernels in `status`.
std::unique_ptr<TaskRuntime> make_observed_runtime(int num_workers, SharedStatus* status);

// Copies `from` into the caller's buffer `to`, skipping chunks that did not change. After fork()
// every page of the parent is copy-on-write protected, so writing a page costs a fault even
// with identical bytes; comparing only reads. Inputs (unchanged) thus cost no faults at all.
void copy_back_changes(uint8_t* to, const uint8_t* from, size_t n);

// Writes all of `text` to `fd`; false when the descriptor fails.
bool write_all(int fd, const std::string& text);

// Where the pages of the ranges map_writable_ranges is given come from.
enum class OutputPages {
  // Private memory of this process (numpy's or calloc's), possibly never touched: a write
  // fault allocates and zeroes each page, so they are mapped for writing.
  Private,
  // Shared memory the caller populated before it forked this process: every page exists and
  // only this process's entries for it are missing. A read populates them as well (the mapping
  // is shared and writable, so an entry made by a read already allows writes), and a read fault
  // on shared memory maps its neighbours in the page cache too, 16 pages per fault, where a
  // write fault maps one: a 64 MiB output took 7.1 ms instead of 15.5-16.5 ms on two threads,
  // and the run took no more faults.
  SharedPopulated,
};

// Outputs often arrive unmapped: fresh zero pages from numpy or calloc in a run in this process,
// and shared pages whose entries fork() did not copy in an isolated one. The device would then
// take one page fault per 4 KiB page it writes (16384 for a 64 MiB tensor), on its worker
// threads; mapping each tensor in one call is several times cheaper. The kernel still maps the
// pages a fault at a time, so the ranges are split between `threads` threads, one slice each (a
// 64 MiB output took 15-16 ms in an isolated run's device process on one thread, when written).
// Best effort: kernels older than 5.14 say EINVAL and the pages fault in as before.
void map_writable_ranges(const std::vector<WritableRange>& ranges, int threads, OutputPages pages);

// `text` with invalid UTF-8 (e.g. from a kernel's fail() message) replaced, so that the caller
// can put the message in JSON (a profile, a sweep's results).
std::string valid_utf8(const std::string& text);

// The child's report reaches the caller as MessagePack: with a record per task, text JSON for
// 4096 tasks took 15-19 ms to write and read back (formatting and parsing every time), and at
// 4 MiB of text (about 40,000 tasks) it no longer fit the captured output at all. A report
// larger than this is refused with a message rather than read without end.
constexpr size_t kMaxReportBytes = size_t{1} << 30;

// Gives back to the kernel the free memory of the heap this process inherited from the caller.
// Every page of that heap is the caller's copy-on-write page, and the runtime's allocations
// during the run (a task's node, arguments and dependency records) come from its free chunks:
// each first write to one of those pages then copies it and, with the cores' threads running
// on other CPUs, interrupts each of them to flush the old entry from its TLB. Once released,
// such a page comes back as a fresh zero page, which needs no flush. The orchestration of 4096
// tasks (64x64 add, two cores) took 16-18 ms of device time instead of 25-31 ms; trimming took
// 0.7 ms, before the threads start. The heap's live chunks stay shared with the caller.
void release_inherited_free_heap();

// The device process's own time limit (alarm(2), whole seconds): the caller's, rounded up, plus
// a grace period so that the caller, which reports where the run was, normally kills it first.
unsigned child_time_limit_seconds(std::chrono::milliseconds timeout);

// The kernels the status page says are running ("'k' on core 0, ..."), or "".
std::string running_kernels(SharedStatus* status, int num_workers);
// What a device process that died of signal `sig` was doing, from its status page.
std::string crash_message(SharedStatus* status, int num_workers, int sig);

// Before a fork: the runtimes kept in this process are back from their last tasks (device.cpp).
void settle_kept_runtimes_before_fork();

}  // namespace pypto::runtime::detail
