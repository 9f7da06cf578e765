// Writing the generated files of a compile into its output directory.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pypto::codegen {

// The output directory (or a file in it) cannot be created or written. The message names the
// path and the reason.
class CompileOutputError : public std::runtime_error {
 public:
  CompileOutputError(const std::string& message, std::filesystem::path path)
      : std::runtime_error(message), path_(std::move(path)) {}
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

// Creates `dir` (and its parents) and checks that files can be created in it.
// Throws CompileOutputError.
void prepare_output_dir(const std::filesystem::path& dir);

// A file to write, relative to the output directory.
struct OutputFile {
  std::string relative_path;  // "kernels/add_kernel.cpp"
  std::string contents;
};

// Writes every file under `dir`, each through a temporary file and a rename so that no file is
// ever seen half written. When one write fails, the files this call already wrote are removed
// before CompileOutputError is thrown.
void write_output_files(const std::filesystem::path& dir, const std::vector<OutputFile>& files);

}  // namespace pypto::codegen
