#pragma once

#include <filesystem>
#include <memory>

#include "pto_abi.h"

namespace pypto::runtime {

// A loaded program library (the output of build_library): checked for the device ABI version
// and resolved once, then run any number of times. Unloaded (dlclose) when the last reference
// goes away.
class ProgramLibrary {
 public:
  // Throws ExecutionError(Kind::Load) with dlerror()'s text, or naming the missing symbol or the
  // ABI version mismatch.
  static std::shared_ptr<const ProgramLibrary> load(const std::filesystem::path& path);

  ProgramLibrary(const ProgramLibrary&) = delete;
  ProgramLibrary& operator=(const ProgramLibrary&) = delete;
  ~ProgramLibrary();

  const std::filesystem::path& path() const { return path_; }
  PtoOrchestrateFn orchestrate() const { return orchestrate_; }

 private:
  ProgramLibrary(std::filesystem::path path, void* handle, PtoOrchestrateFn orchestrate)
      : path_(std::move(path)), handle_(handle), orchestrate_(orchestrate) {}

  std::filesystem::path path_;
  void* handle_;
  PtoOrchestrateFn orchestrate_;
};

}  // namespace pypto::runtime
