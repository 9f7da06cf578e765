#include "pypto/runtime/binary_cache.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include "compiler_timing.h"
#include "library_file.h"
#include "pypto/profiling/profiler.h"
#include "pypto/runtime/device_headers.h"
#include "pypto/runtime/process.h"
#include "pypto/support/environment.h"
#include "pypto/support/file_io.h"

namespace pypto::runtime {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// Bump when the layout of the cache or the meaning of the key changes.
constexpr std::string_view kKeyVersion = "pypto-binary-cache-v1";

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// Streams length-prefixed fields into XXH3-128, so that ("ab", "c") and ("a", "bc") differ.
class KeyHasher {
 public:
  KeyHasher() : state_(XXH3_createState(), &XXH3_freeState) {
    if (!state_) throw std::bad_alloc();
    XXH3_128bits_reset(state_.get());
  }
  KeyHasher& field(std::string_view bytes) {
    uint64_t n = bytes.size();
    XXH3_128bits_update(state_.get(), &n, sizeof n);
    XXH3_128bits_update(state_.get(), bytes.data(), bytes.size());
    return *this;
  }
  std::string hex() const {
    XXH128_hash_t h = XXH3_128bits_digest(state_.get());
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
  }

 private:
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state_;
};

// The device headers never change while the process runs; hash them once.
const std::string& device_headers_hash() {
  static const std::string hash = [] {
    KeyHasher h;
    for (const auto& header : device_headers()) h.field(header.file_name).field(header.text);
    return h.hex();
  }();
  return hash;
}

// The flags, then the libraries linked after the source, are hashed one field each.
std::string compute_key(std::string_view source, const std::string& compiler,
                        const std::vector<std::string>& flags,
                        const std::vector<std::string>& libraries) {
  KeyHasher h;
  h.field(kKeyVersion).field(source).field(device_headers_hash());
  h.field(compiler).field(compiler_identity(compiler));
  for (const auto& f : flags) h.field(f);
  for (const auto& l : libraries) h.field(l);
  return h.hex();
}

[[noreturn]] void throw_cache_dir_error(const fs::path& dir, const std::string& reason) {
  throw BuildError("cannot use the binary cache directory '" + dir.string() + "': " + reason +
                   "; set PYPTO_CACHE_DIR to a writable directory");
}

// Why `dir` is not a safe cache directory (it must belong to the effective user and be writable
// by nobody else, or anyone could plant a library there), or empty.
std::string unsafe_dir_reason(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (st.st_uid != ::geteuid()) {
    return "owned by uid " + std::to_string(st.st_uid) + " (mode " + mode + "), not by uid " +
           std::to_string(::geteuid());
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return std::string("writable by other users (mode ") + mode + ")";
  }
  return {};
}

// The user's one replacement directory for unsafe cache directories, <tmp>/pypto-cache-<uid>-
// replacement, when it is (or can be made) a directory of the effective user that nobody else may
// write, not reached through a symlink (anyone may create names in /tmp); else empty. One fixed
// directory, so that every fallback does not leave a new one behind, and later processes hit.
fs::path shared_replacement(const fs::path& tmp) {
  const fs::path dir = tmp / ("pypto-cache-" + std::to_string(::geteuid()) + "-replacement");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return {};
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
  return unsafe_dir_reason(dir).empty() ? dir : fs::path();
}

// A private directory for when the configured one is unsafe (shared_replacement, else one only
// this process knows). One per requested directory and process, so that later builds in the
// process still hit.
fs::path private_replacement(const fs::path& requested) {
  static std::mutex mutex;
  static std::unordered_map<std::string, fs::path> replacements;
  std::lock_guard<std::mutex> lock(mutex);
  auto& dir = replacements[requested.string()];
  if (dir.empty()) {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    dir = shared_replacement(tmp);
    if (!dir.empty()) return dir;
    std::string tmpl = (tmp / ("pypto-cache-" + std::to_string(::geteuid()) + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) {  // mode 0700
      throw_cache_dir_error(requested, std::string("it is unsafe and no private replacement "
                                                   "could be made: ") +
                                           std::strerror(errno));
    }
    dir = tmpl;
  }
  return dir;
}

// Creates the cache directory (mode 0700) if needed and returns the directory to use: `dir`
// when it is safe, else a private replacement (with a note saying why).
fs::path ensure_cache_dir(const fs::path& dir, std::vector<std::string>& notes) {
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (ec) throw_cache_dir_error(dir, ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw_cache_dir_error(dir, std::strerror(errno));
  }
  if (!fs::is_directory(dir, ec)) throw_cache_dir_error(dir, "not a directory");
  std::string reason = unsafe_dir_reason(dir);
  if (reason.empty()) return dir;
  fs::path replacement = private_replacement(dir);
  notes.push_back("the binary cache directory '" + dir.string() + "' is " + reason +
                  ", so it was not used; built in the private directory '" + replacement.string() +
                  "' instead (set PYPTO_CACHE_DIR to a directory only you can write)");
  return replacement;
}

// A fresh file next to `final_path` named <final_path>.tmp.XXXXXX<suffix>, created with O_EXCL
// under an unpredictable name (so nothing planted there is followed) and closed again.
fs::path make_temp(const fs::path& final_path, const fs::path& cache_dir,
                   const std::string& suffix = {}) {
  std::string name = final_path.string() + ".tmp.XXXXXX" + suffix;
  int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw_cache_dir_error(cache_dir, std::strerror(errno));
  ::close(fd);
  return name;
}

// A build killed before it cleaned up (SIGKILL, a power cut) leaves its temporary files,
// <name>.tmp.XXXXXX[.cpp]; builders remove those of the effective user older than `age` (longer
// than any build may take, so that none in progress loses its files).
void remove_stale_temporaries(const fs::path& cache_dir, std::chrono::seconds age) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find(".tmp.") == std::string::npos) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > age) ::unlink(it->path().c_str());
  }
}

// Removes a file when it goes out of scope.
class TempFile {
 public:
  explicit TempFile(fs::path path) : path_(std::move(path)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { ::unlink(path_.c_str()); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// The embedded device headers, materialized once per header version in the cache directory.
fs::path ensure_device_headers(const fs::path& cache_dir) {
  fs::path dir = cache_dir / ("include-" + device_headers_hash().substr(0, 16));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw_cache_dir_error(cache_dir, ec.message());
  for (const auto& header : device_headers()) {
    fs::path file = dir / std::string(header.file_name);
    // What the compiler includes must be the embedded text (which the key hashes), whatever
    // happened to the file since it was written.
    std::ifstream in(file, std::ios::binary);
    std::string existing((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in && existing == header.text) continue;
    try {
      support::write_file_atomically(file, header.text);
    } catch (const support::FileError& e) {
      throw_cache_dir_error(cache_dir, e.what());
    }
  }
  return dir;
}

// An exclusive flock() on <key>.lock serializes builders of one key across threads (each opens
// its own file description) and processes; the kernel drops it if the holder dies.
class BuildLock {
 public:
  BuildLock(const fs::path& path, const fs::path& cache_dir) {
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) throw_cache_dir_error(cache_dir, std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        int err = errno;
        ::close(fd_);
        throw_cache_dir_error(cache_dir, std::string("locking: ") + std::strerror(err));
      }
    }
  }
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;
  ~BuildLock() { ::close(fd_); }  // closing releases the lock

 private:
  int fd_ = -1;
};

std::string program_label(const BuildOptions& options) {
  return options.program_name.empty() ? "program" : "program '" + options.program_name + "'";
}

// The compiler's phases as stages under the one open (binary_compilation), one after the other
// from the compiler's start, in the order it ran them, then the rest of the compiler's wall time
// as `<compiler> driver`: what its report does not count (the driver, starting its programs,
// rounding). The report counts hundredths of a second: should the phases add up to more than the
// compiler took, all are scaled down to fit.
void record_compiler_phases(profiling::CompileProfiler& profiler, const std::string& compiler,
                            const std::vector<detail::CompilerPhase>& phases, double started,
                            double ended) {
  double total = 0;
  for (const auto& phase : phases) total += phase.seconds;
  if (total <= 0) return;
  const double scale = std::min(1.0, (ended - started) / total);
  double at = started;
  auto record = [&](std::string name, double end) {
    profiling::StageRecord r;
    r.name = std::move(name);
    r.start = at;
    r.end = at = end;
    profiler.add_stage_record(std::move(r));
  };
  for (const auto& phase : phases) record(phase.name, at + phase.seconds * scale);
  if (ended > at)
    record(fs::path(split_words(compiler).front()).filename().string() + " driver", ended);
}

std::string seconds_text(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

// -fno-exceptions: generated code neither throws nor catches (the runtime's callbacks report
// failures instead, task_runtime.cpp), and without it GCC spent a third of softmax's build on
// exception cleanups: 79 -> 53 ms, against 26 ms for an empty file.
// A program whose generated source is over 1 MiB (about 6,000 statements) is built at -O0: GCC's
// time at -O2 grows with the square of a function's size (a kernel of 10,000 statements took 13 s,
// one of 40,000 150 s and 1 GB), at -O0 linearly (40,000: 15 s). Such kernels are almost all
// calls of the precompiled tile ISA, whose speed the flags do not change.
// -nodefaultlibs: see default_link_libraries().
const std::vector<std::string>& default_build_flags(std::string_view source) {
  static const std::vector<std::string> optimised = {"-O2",   "-fno-exceptions", "-shared",
                                                     "-fPIC", "-std=c++17",      "-nodefaultlibs"};
  static const std::vector<std::string> unoptimised = {
      "-O0", "-fno-exceptions", "-shared", "-fPIC", "-std=c++17", "-nodefaultlibs"};
  return source.size() > kUnoptimisedSourceBytes ? unoptimised : optimised;
}

// Generated code needs the C library only: the device headers include nothing of the C++ library
// (device/pto_tile.h; the cross-core pipes, which need threads, are runtime code). So a default
// build links libc, libm and libgcc's helpers and leaves out libstdc++ and libgcc_s, whose symbol
// tables the linker otherwise reads on every build: 62 -> 40 ms of ffn's link (medians of 25
// interleaved rounds). -z defs makes a reference none of them resolves a build error, not a
// failure to load the library later.
const std::vector<std::string>& default_link_libraries() {
  static const std::vector<std::string> libraries = {"-lm", "-lc", "-lgcc", "-Wl,-z,defs"};
  return libraries;
}

fs::path default_cache_dir() {
  // $PYPTO_CACHE_DIR is RunConfig::cache_dir's default, resolved by the driver (run_config.def).
  // The XDG base directory spec ignores relative paths.
  using support::EnvironmentVariable;
  if (const char* xdg = support::read_environment(EnvironmentVariable::XDG_CACHE_HOME);
      xdg && *xdg == '/') {
    return fs::path(xdg) / "pypto";
  }
  if (const char* home = support::read_environment(EnvironmentVariable::HOME); home && *home) {
    return fs::path(home) / ".cache" / "pypto";
  }
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir && *pw->pw_dir == '/') {
    return fs::path(pw->pw_dir) / ".cache" / "pypto";
  }
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  return (ec ? fs::path("/tmp") : tmp) / ("pypto-cache-" + std::to_string(::geteuid()));
}

std::string resolve_compiler(const BuildOptions& options) {
  if (!options.compiler.empty()) return options.compiler;
  if (const char* cxx = support::read_environment(support::EnvironmentVariable::CXX); cxx && *cxx) {
    return cxx;
  }
  return "c++";
}

const std::string& compiler_identity(const std::string& compiler) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> cache;  // nodes are stable: we hand out refs
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(compiler); it != cache.end()) return it->second;

  const std::string not_found = "C++ compiler '" + compiler +
                                "' not found; set CXX to a C++17 compiler (e.g. CXX=g++ or "
                                "CXX=clang++)";
  std::vector<std::string> argv = split_words(compiler);
  if (argv.empty()) throw BuildError(not_found);
  argv.push_back("--version");
  ProcessResult r;
  try {
    r = run_process(argv, std::chrono::seconds(60));
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::no_such_file_or_directory ||
        e.code() == std::errc::permission_denied || e.code() == std::errc::not_a_directory) {
      throw BuildError(not_found);
    }
    throw BuildError("cannot run C++ compiler '" + compiler + "': " + e.what());
  }
  if (!r.succeeded()) {
    throw BuildError("C++ compiler '" + compiler + "' did not report its version ('" + join(argv) +
                     "' " +
                     (r.timed_out ? std::string("timed out")
                                  : "exited with code " + std::to_string(r.exit_code)) +
                     "): " + r.output + "; set CXX to a C++17 compiler");
  }
  return cache.emplace(compiler, std::move(r.output)).first->second;
}

namespace {

// The flags before the source and the libraries after it: the defaults, or the caller's flags
// alone.
struct CompilerArguments {
  const std::vector<std::string>& flags;
  const std::vector<std::string>& libraries;
};
CompilerArguments compiler_arguments(std::string_view source, const BuildOptions& options) {
  static const std::vector<std::string> none;
  if (!options.flags.empty()) return {options.flags, none};
  return {default_build_flags(source), default_link_libraries()};
}

std::string compute_key(std::string_view source, const std::string& compiler,
                        const CompilerArguments& args) {
  return compute_key(source, compiler, args.flags, args.libraries);
}

}  // namespace

std::string build_cache_key(std::string_view source, const BuildOptions& options) {
  return compute_key(source, resolve_compiler(options), compiler_arguments(source, options));
}

BuildResult build_library(std::string_view source, const BuildOptions& options) {
  const auto start = Clock::now();
  const std::string compiler = resolve_compiler(options);
  const CompilerArguments args = compiler_arguments(source, options);
  BuildResult result;
  // Absolute: a relative directory named "-x..." must not reach the compiler as an option.
  std::error_code absolute_ec;
  fs::path requested_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  requested_dir = fs::absolute(requested_dir, absolute_ec);
  if (absolute_ec) throw_cache_dir_error(requested_dir, absolute_ec.message());
  const fs::path cache_dir = ensure_cache_dir(requested_dir, result.notes);

  result.key = compute_key(source, compiler, args);
  result.library = cache_dir / (result.key + ".so");
  result.source =
      options.source_path.empty() ? cache_dir / (result.key + ".cpp") : options.source_path;
  auto finish = [&](bool hit) {
    result.cache_hit = hit;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };

  auto write_source = [&] {
    try {
      support::write_file_atomically(result.source, source);
    } catch (const support::FileError& e) {
      if (options.source_path.empty()) throw_cache_dir_error(cache_dir, e.what());
      throw BuildError("cannot write the generated source to '" + result.source.string() +
                       "': " + e.reason());
    }
  };
  auto hit = [&] {
    // The caller's copy of the source must show what the library was built from.
    if (!options.source_path.empty()) write_source();
    return finish(true);
  };
  // A cached library counts only when its bytes are the ones recorded at build time.
  std::string damage;
  auto usable = [&] {
    bool missing = false;
    bool ok = library_file::open_verified(result.library, damage, &missing).ok();
    if (missing) damage.clear();
    return ok;
  };

  // The warm path: one hash of the source and one of the library.
  if (usable()) return hit();

  BuildLock lock(cache_dir / (result.key + ".lock"), cache_dir);
  if (usable()) return hit();  // built while we waited
  if (!damage.empty()) {
    result.notes.push_back("the cached library '" + result.library.string() + "' was not used (" +
                           damage + "); it was rebuilt");
    std::error_code ec;
    fs::remove(result.library, ec);
  }

  remove_stale_temporaries(cache_dir, std::chrono::duration_cast<std::chrono::seconds>(
                                          options.timeout + std::chrono::minutes(10)));
  const fs::path include_dir = ensure_device_headers(cache_dir);
  write_source();
  // The compiler reads a private copy of exactly the text that was hashed, not the user's file,
  // which anyone with access to the work directory could change between the two.
  TempFile private_source(make_temp(cache_dir / (result.key + ".cpp"), cache_dir, ".cpp"));
  try {
    support::write_file_atomically(private_source.path(), source);
  } catch (const support::FileError& e) {
    throw_cache_dir_error(cache_dir, e.what());
  }

  TempFile tmp(make_temp(result.library, cache_dir));
  std::vector<std::string> argv = split_words(compiler);
  argv.insert(argv.end(), args.flags.begin(), args.flags.end());
  // While a profiler records, the compiler reports its phases (not part of the key: the library
  // is the same).
  profiling::CompileProfiler* profiler = profiling::CompileProfiler::current();
  std::vector<std::string> timing_flags;
  if (profiler) timing_flags = detail::compiler_timing_flags(compiler_identity(compiler));
  argv.insert(argv.end(), timing_flags.begin(), timing_flags.end());
  argv.insert(argv.end(), {"-I" + include_dir.string(), private_source.path().string()});
  const size_t source_argument = argv.size() - 1;
  argv.insert(argv.end(), args.libraries.begin(), args.libraries.end());
  argv.insert(argv.end(), {"-o", tmp.path().string()});

  ProcessResult r;
  const double compiler_started = profiling::now_seconds();
  try {
    r = run_process(argv, options.timeout);
  } catch (const std::system_error& e) {
    throw BuildError("cannot run C++ compiler '" + compiler + "': " + e.what() +
                     "; set CXX to a C++17 compiler");
  }
  if (!timing_flags.empty()) {
    record_compiler_phases(*profiler, compiler, detail::take_compiler_timing(r.output),
                           compiler_started, profiling::now_seconds());
  }
  // Diagnostics name the file the user can open.
  replace_all(r.output, private_source.path().string(), result.source.string());
  argv[source_argument] = result.source.string();
  if (!r.succeeded()) {
    std::string what = "building " + program_label(options) + " failed: ";
    if (r.timed_out) {
      what +=
          "the C++ compiler timed out after " + seconds_text(options.timeout) + " and was killed";
    } else if (r.term_signal != 0) {
      what += "the C++ compiler was killed by " + describe_signal(r.term_signal);
    } else {
      what += "the C++ compiler exited with code " + std::to_string(r.exit_code);
    }
    what += " compiling " + result.source.string() + "\n";
    if (!r.output.empty()) what += r.output + (r.output.back() == '\n' ? "" : "\n");
    what += "command: " + join(argv);
    throw BuildError(what);
  }
  // The digest goes in first: a library is never visible without the record that vouches for it.
  if (std::string problem =
          library_file::seal(tmp.path(), library_file::digest_path(result.library));
      !problem.empty()) {
    throw BuildError("building " + program_label(options) + " failed: " + problem);
  }
  std::error_code ec;
  fs::rename(tmp.path(), result.library, ec);
  if (ec)
    throw_cache_dir_error(cache_dir, "installing " + result.library.string() + ": " + ec.message());
  result.compiler_output = std::move(r.output);
  return finish(false);
}

}  // namespace pypto::runtime
