// The in-memory cache of compiled runs: see compiled_run_cache.h.
#include "compiled_run_cache.h"

#include <filesystem>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "pypto/ir/structural_equal.h"

namespace pypto::driver::detail {

namespace {

struct Key {
  std::uint64_t hash = 0;
  int strategy = 0;
  bool dump_passes = false;
  std::string platform;
  std::string output_dir;    // as requested: empty for the default folder
  std::string binary_cache;  // the directory and compiler a build would use
  bool operator==(const Key& o) const {
    return hash == o.hash && strategy == o.strategy && dump_passes == o.dump_passes &&
           platform == o.platform && output_dir == o.output_dir && binary_cache == o.binary_cache;
  }
};

Key key_of(const ir::Program& program, const CompileOptions& options,
           const std::string& cache_dir) {
  runtime::BuildOptions build;
  build.cache_dir = cache_dir;
  const std::filesystem::path dir =
      cache_dir.empty() ? runtime::default_cache_dir() : std::filesystem::path(cache_dir);
  Key key;
  key.hash = ir::structural_hash(program);
  key.strategy = static_cast<int>(options.strategy);
  key.dump_passes = options.dump_passes;
  key.platform = options.platform;
  key.output_dir = options.output_dir;
  key.binary_cache = dir.string() + "\n" + runtime::resolve_compiler(build);
  return key;
}

// The library file as it was when an entry was made: size and modification time.
struct FileStamp {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type mtime;
  bool operator==(const FileStamp& o) const { return size == o.size && mtime == o.mtime; }
};

std::optional<FileStamp> stamp_of(const std::filesystem::path& path) {
  std::error_code ec;
  FileStamp s;
  s.size = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  s.mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return std::nullopt;
  return s;
}

struct Entry {
  Key key;
  std::shared_ptr<const CompiledRun> run;
  std::optional<FileStamp> library;
};

// Structurally equal programs from different source text (another file, other lines) would
// report errors at the first one's lines: only the same source counts.
bool same_source(const ir::Program& a, const ir::Program& b) {
  if (a.source == b.source) return true;
  if (!a.source || !b.source) return false;
  return a.source->file_name == b.source->file_name &&
         a.source->line_offset == b.source->line_offset && a.source->text == b.source->text;
}

struct Cache {
  std::mutex mutex;
  std::list<Entry> entries;  // most recent first
};

Cache& cache() {
  // Never destroyed: an exit that runs static destructors while another thread runs a program
  // must not unload its library.
  static Cache* const instance = new Cache();
  return *instance;
}

}  // namespace

std::shared_ptr<const CompiledRun> find_compiled_run(const ir::ProgramPtr& program,
                                                     const CompileOptions& options,
                                                     const std::string& cache_dir) {
  const Key key = key_of(*program, options, cache_dir);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
    if (!(it->key == key)) continue;
    const CompiledRun& run = *it->run;
    if (run.program != program &&
        (!ir::structural_equal(*run.program, *program) || !same_source(*run.program, *program))) {
      continue;
    }
    // A folder asked for is reused as it is; a default one is new for each run.
    std::error_code ec;
    const bool sources =
        options.output_dir.empty() ||
        std::filesystem::exists(std::filesystem::path(run.compiled.output_dir) / "program.cpp", ec);
    const std::optional<FileStamp> now = stamp_of(run.built.library);
    if (!sources || !it->library || !now || !(*now == *it->library)) {
      c.entries.erase(it);
      return nullptr;
    }
    c.entries.splice(c.entries.begin(), c.entries, it);
    return c.entries.front().run;
  }
  return nullptr;
}

void remember_compiled_run(std::shared_ptr<const CompiledRun> run, const CompileOptions& options,
                           const std::string& cache_dir) {
  Entry entry{key_of(*run->program, options, cache_dir), run, stamp_of(run->built.library)};
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.entries.push_front(std::move(entry));
  while (c.entries.size() > kCompiledRunCacheSize) c.entries.pop_back();
}

}  // namespace pypto::driver::detail
