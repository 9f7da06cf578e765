#include "pypto/codegen/output_writer.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace pypto::codegen {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, const std::string& reason) {
  throw CompileOutputError(
      "cannot " + what + " '" + path.string() + "': " + reason + " (choose a writable output_dir)",
      path);
}

std::string temp_name(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  return target.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

void write_one(const fs::path& target, const std::string& contents) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) fail("create the directory", target.parent_path(), ec.message());
  std::string tmp = temp_name(target);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("write", target, std::strerror(errno));
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  int saved = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    fail("write", target, std::strerror(saved ? saved : EIO));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail("write", target, ec.message());
  }
}

}  // namespace

void prepare_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("create the output directory", dir, ec.message());
  if (!fs::is_directory(dir, ec)) fail("use the output directory", dir, "not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("write to the output directory", dir, std::strerror(errno));
}

void write_output_files(const fs::path& dir, const std::vector<OutputFile>& files) {
  std::vector<fs::path> written;
  try {
    for (const auto& file : files) {
      fs::path target = dir / file.relative_path;
      write_one(target, file.contents);
      written.push_back(target);
    }
  } catch (...) {
    std::error_code ignored;
    for (const auto& p : written) fs::remove(p, ignored);
    throw;
  }
}

}  // namespace pypto::codegen
