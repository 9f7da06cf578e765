#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "pto_abi.h"

namespace pypto::runtime {

// A loaded program library (the output of build_library): checked for the device ABI version
// and resolved once, then run any number of times. Unloaded (dlclose) when the last reference
// goes away.
class ProgramLibrary {
 public:
  // Loads a library built by build_library: its bytes must match the digest recorded next to
  // it (see src/runtime/library_file.h), else nothing of it runs. Throws ExecutionError(Kind::Load)
  // saying what is wrong with the file, with dlerror()'s text, or naming the missing symbol or
  // the ABI version mismatch.
  static std::shared_ptr<const ProgramLibrary> load(const std::filesystem::path& path);

  ProgramLibrary(const ProgramLibrary&) = delete;
  ProgramLibrary& operator=(const ProgramLibrary&) = delete;
  ~ProgramLibrary();

  const std::filesystem::path& path() const { return path_; }
  PtoOrchestrateFn orchestrate() const { return orchestrate_; }
  // Per core memory space, how many bytes from its start the program's kernels can write (its
  // pto_core_memory_extent; every space whole for a library that does not export one).
  const std::array<int64_t, PTO_NUM_SPACES>& core_memory_extent() const {
    return core_memory_extent_;
  }

  // The order of its load among the libraries loaded in this process (1, 2, ...). A process
  // forked after latest_load_generation() returned g has a copy of every library of generation
  // g or less (the device server of isolated runs uses the ones it has: device_server.h).
  uint64_t load_generation() const { return generation_; }
  static uint64_t latest_load_generation();

  // Maps the pages of the library's loaded segments (its code, constants and data) into this
  // process's page tables in one call per segment, rather than a page fault at a time when a
  // launch first reaches each part. For a process forked after the library was loaded (an
  // isolated run's device process): fork() copies no page-table entries for file-backed code,
  // and the first launch's orchestration took its first two page faults there. Best effort:
  // kernels older than 5.14 leave the pages to fault in. Only system calls: safe in a child
  // forked from a process with other threads (the segments were found when it was loaded).
  void map_pages() const noexcept;

 private:
  // Page-aligned start and length of one loaded segment.
  struct Segment {
    uintptr_t start;
    size_t bytes;
  };

  ProgramLibrary(std::filesystem::path path, void* handle, PtoOrchestrateFn orchestrate);

  std::filesystem::path path_;
  void* handle_;
  PtoOrchestrateFn orchestrate_;
  std::array<int64_t, PTO_NUM_SPACES> core_memory_extent_;
  uint64_t generation_ = 0;
  std::vector<Segment> segments_;
};

}  // namespace pypto::runtime
