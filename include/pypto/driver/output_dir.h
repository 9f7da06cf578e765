// The output directory of a compile or a run, and writing the generated files into it.
//
//   <out>/passes_dump/           IR after each pass (when dumping)
//   <out>/kernels/<f>.cpp        one per InCore function
//   <out>/orchestration/<f>.cpp  one per Orchestration function
//   <out>/program.cpp            the translation unit built into the program library
//   <out>/kernel_config.json     manifest
//   <out>/data/{in,out}/*.npy    a run's inputs and expected outputs
//   <out>/report/pipeline_profile.{txt,json}  when profiling
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pypto::driver {

// The output directory (or a file in it) cannot be created or written. The message names the
// path, the reason and what to do.
class CompileOutputError : public std::runtime_error {
 public:
  CompileOutputError(const std::string& message, std::filesystem::path path)
      : std::runtime_error(message), path_(std::move(path)) {}
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// ${PYPTO_PROG_BUILD_DIR:-build_output}/<program_name>_<YYYYmmdd_HHMMSS_micro>.
std::filesystem::path default_output_dir(const std::string& program_name);

// How many default output directories to keep per program: `configured` when it is set
// (>= 0), else $PYPTO_KEEP_OUTPUTS, else 0. 0 keeps them all, as PyPTO does (its compile never
// removes an output directory). Throws std::invalid_argument for a malformed variable.
int keep_outputs(int configured);

// A claim on an output directory that retention honours, across processes: while any process
// holds a lease on a directory, remove_old_output_dirs() (in this process or another) leaves it.
// The lease is a shared flock() on `.<dirname>.lease` beside the directory, taken before the
// directory is created; retention takes the same lock exclusively, without waiting, before it
// removes a directory, and removes the lock file after it. The last lease on a folder removes
// its lock file when released; a process that dies drops its lease (the file stays until the
// folder is removed).
class OutputDirLease {
 public:
  OutputDirLease() = default;
  // Takes the lease on `dir` (creating its parent folder and the lock file; not `dir`). Waits
  // while retention is removing an old `dir` of that name. Without a lease (the parent cannot be
  // written) the result holds none: the directory is then used unprotected, as before leases.
  static OutputDirLease acquire(const std::filesystem::path& dir);
  ~OutputDirLease();
  OutputDirLease(OutputDirLease&& other) noexcept;
  OutputDirLease& operator=(OutputDirLease&& other) noexcept;
  OutputDirLease(const OutputDirLease&) = delete;
  OutputDirLease& operator=(const OutputDirLease&) = delete;

  bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;  // the lock file
};

// `.<dirname>.lease` beside `dir`.
std::filesystem::path output_dir_lease_path(const std::filesystem::path& dir);

// True for a name retention may remove: <program>_<YYYYmmdd_HHMMSS_micro>.
bool is_default_output_dir_name(const std::string& name);

// Removes the oldest default output directories of `program_name` (the siblings of `new_dir`
// named <program_name>_<YYYYmmdd_HHMMSS_micro>) so that `keep` remain, `new_dir` among them.
// `keep` 0 removes nothing. Folders named otherwise, and files, are never touched; a folder
// that cannot be removed is left (retention is housekeeping, not part of the compile), and so is
// a folder another run holds a lease on (OutputDirLease): it does not count against `keep`
// either, so concurrent runs keep their folders and the rest is trimmed later.
void remove_old_output_dirs(const std::filesystem::path& new_dir, const std::string& program_name,
                            int keep);

// Creates `dir` (and its parents) and checks that files can be created in it.
// Throws CompileOutputError.
void prepare_output_dir(const std::filesystem::path& dir);

// A file to write, relative to the output directory.
struct OutputFile {
  std::string relative_path;  // "kernels/add_kernel.cpp"
  std::string contents;
};

// Writes every file under `dir`, each atomically (support::write_file_atomically). When one
// write fails, the files this call already wrote are removed before CompileOutputError is
// thrown.
void write_output_files(const std::filesystem::path& dir, const std::vector<OutputFile>& files);

}  // namespace pypto::driver
