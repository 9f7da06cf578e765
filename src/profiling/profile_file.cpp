// Rebuilds a Report from its JSON document, checking every field it uses.
#include "pypto/profiling/profile_file.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace pypto::profiling {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw ProfileFormatError(where + ": " + what +
                           ". Expected a compile profile as written by to_json() or "
                           "write_report() (pipeline_profile.json).");
}

double number(const json& node, const char* key, const std::string& where) {
  auto it = node.find(key);
  if (it == node.end()) bad(where, std::string("'") + key + "' is missing");
  if (!it->is_number()) bad(where, std::string("'") + key + "' is not a number");
  return it->get<double>();
}

double optional_number(const json& node, const char* key, double fallback,
                       const std::string& where) {
  auto it = node.find(key);
  if (it == node.end()) return fallback;
  if (!it->is_number()) bad(where, std::string("'") + key + "' is not a number");
  return it->get<double>();
}

bool optional_flag(const json& node, const char* key, const std::string& where) {
  auto it = node.find(key);
  if (it == node.end()) return false;
  if (!it->is_boolean()) bad(where, std::string("'") + key + "' is not true or false");
  return it->get<bool>();
}

std::int64_t integer(const json& node, const char* key, const std::string& where) {
  auto it = node.find(key);
  if (it == node.end()) bad(where, std::string("'") + key + "' is missing");
  if (!it->is_number_integer()) bad(where, std::string("'") + key + "' is not an integer");
  // An unsigned value above INT64_MAX would wrap around in get<std::int64_t>().
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
    bad(where, std::string("'") + key + "' is out of range");
  }
  return it->get<std::int64_t>();
}

// `cursor`: where a stage without "start" begins (after its previous sibling). `depth`: 1 for a
// top-level stage. Files were depth-checked while parsing (read_profile_file); the check here
// bounds the recursion for documents handed over directly, and keeps `where` (which grows with
// the depth) short.
ReportStage stage_from_json(const json& node, const std::string& where, double& cursor,
                            std::uint64_t parent_thread, int depth) {
  if (depth > kMaxStageDepth) {
    bad(where, "stages nest more than " + std::to_string(kMaxStageDepth) + " levels deep");
  }
  if (!node.is_object()) bad(where, "a stage is not an object");
  ReportStage stage;
  auto name = node.find("name");
  if (name == node.end() || !name->is_string()) bad(where, "'name' is missing or not a string");
  stage.name = name->get<std::string>();
  stage.seconds = number(node, "seconds", where);
  if (stage.seconds < 0.0) bad(where, "'seconds' is negative");
  stage.start = optional_number(node, "start", cursor, where);
  cursor = stage.end();
  stage.untracked = optional_number(node, "untracked_seconds", 0.0, where);
  stage.failed = optional_flag(node, "failed", where);
  stage.parallel = optional_flag(node, "parallel", where);
  stage.open = optional_flag(node, "open", where);
  stage.thread = parent_thread;
  if (auto it = node.find("thread"); it != node.end()) {
    if (!it->is_number_unsigned()) bad(where, "'thread' is not a thread id");
    stage.thread = it->get<std::uint64_t>();
  }
  if (node.contains("count")) {
    stage.count = integer(node, "count", where);
    if (stage.count < 1) bad(where, "'count' is less than 1");
  }
  if (node.contains("median_seconds")) {
    stage.repeat = ReportStage::Spread{number(node, "min_seconds", where),
                                       number(node, "median_seconds", where),
                                       number(node, "max_seconds", where)};
  }
  if (auto it = node.find("error"); it != node.end()) {
    if (!it->is_string()) bad(where, "'error' is not a string");
    stage.error = it->get<std::string>();
  }
  if (node.contains("rss_bytes")) {
    stage.memory =
        StageMemory{integer(node, "rss_bytes", where), integer(node, "rss_growth_bytes", where)};
  }
  if (auto it = node.find("device"); it != node.end()) {
    try {
      stage.device = std::make_shared<const DeviceTimeline>(device_timeline_from_json(*it));
    } catch (const std::invalid_argument& e) {
      bad(where, std::string("'device': ") + e.what());
    }
  }
  if (auto it = node.find("pass"); it != node.end()) {
    if (!it->is_object()) bad(where, "'pass' is not an object");
    stage.pass = PassStats{integer(*it, "ir_size_before", where + ".pass"),
                           integer(*it, "ir_size_after", where + ".pass"),
                           optional_flag(*it, "changed", where + ".pass")};
  }
  auto children = node.find("children");
  if (children == node.end() || !children->is_array()) {
    bad(where, "'children' is missing or not a list");
  }
  double child_cursor = stage.start;
  double covered = 0.0;
  for (std::size_t i = 0; i < children->size(); ++i) {
    stage.children.push_back(stage_from_json((*children)[i],
                                             where + ".children[" + std::to_string(i) + "]",
                                             child_cursor, stage.thread, depth + 1));
    covered += stage.children.back().seconds;
  }
  stage.self_seconds =
      optional_number(node, "self_seconds", std::max(0.0, stage.seconds - covered), where);
  return stage;
}

}  // namespace

Report report_from_json(const json& document, const std::string& where) {
  if (!document.is_object()) bad(where, "the document is not a JSON object");
  Report report;
  report.total_seconds = number(document, "total_seconds", where);
  report.untracked_seconds = optional_number(document, "untracked_seconds", 0.0, where);
  if (auto threads = document.find("threads"); threads != document.end()) {
    if (!threads->is_array()) bad(where, "'threads' is not a list");
    for (const json& thread : *threads) {
      if (!thread.is_object() || !thread.contains("id") || !thread["id"].is_number_unsigned() ||
          !thread.contains("name") || !thread["name"].is_string()) {
        bad(where + ".threads", "each thread needs an 'id' (integer) and a 'name' (string)");
      }
      report.threads.push_back(
          {thread["id"].get<std::uint64_t>(), thread["name"].get<std::string>()});
    }
  }
  if (auto metadata = document.find("metadata"); metadata != document.end()) {
    if (!metadata->is_object()) bad(where, "'metadata' is not an object");
    for (const auto& [key, value] : metadata->items()) {
      if (!value.is_string()) bad(where + ".metadata." + key, "the value is not text");
      report.metadata.emplace_back(key, value.get<std::string>());
    }
  }
  const std::uint64_t main_thread = report.threads.empty() ? 0 : report.threads.front().id;
  auto stages = document.find("stages");
  if (stages == document.end() || !stages->is_array()) {
    bad(where, "'stages' is missing or not a list");
  }
  double cursor = 0.0;
  for (std::size_t i = 0; i < stages->size(); ++i) {
    report.stages.push_back(stage_from_json(
        (*stages)[i], where + ": stages[" + std::to_string(i) + "]", cursor, main_thread, 1));
  }
  return report;
}

namespace {

// The file's bytes, at most kMaxProfileFileBytes of them. Read in chunks rather than sized by
// stat(): pipes and devices (/dev/stdin, /dev/zero) report no size.
std::string read_bounded(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ProfileFormatError("cannot read the profile file '" + path.string() +
                             "': no such file or not readable. Pass the path of a "
                             "pipeline_profile.json or of a file written by to_json().");
  }
  std::string text;
  constexpr std::size_t kChunk = 1u << 20;
  while (in) {
    const std::size_t old_size = text.size();
    if (old_size > kMaxProfileFileBytes) {
      throw ProfileFormatError("'" + path.string() + "' is larger than the " +
                               std::to_string(kMaxProfileFileBytes >> 20) +
                               " MiB a profile file may have. Pass a profile written by "
                               "to_json() or write_report().");
    }
    text.resize(old_size + kChunk);
    in.read(text.data() + old_size, static_cast<std::streamsize>(kChunk));
    text.resize(old_size + static_cast<std::size_t>(in.gcount()));
    // Every profile is a JSON object: anything else (/dev/zero's NUL bytes, a binary file) is
    // refused after the first chunk instead of after the size limit.
    if (old_size == 0) {
      const std::size_t first = text.find_first_not_of(" \t\r\n");
      if (first != std::string::npos && text[first] != '{') {
        throw ProfileFormatError("'" + path.string() +
                                 "' is not a JSON object (it does not start with '{'). Pass a "
                                 "profile written by to_json() or write_report().");
      }
    }
  }
  if (in.bad()) {
    throw ProfileFormatError("cannot read the profile file '" + path.string() + "': read error.");
  }
  return text;
}

}  // namespace

Report read_profile_file(const std::filesystem::path& path) {
  const std::string text = read_bounded(path);
  // A stage is two JSON levels (its object and its "children" list), under the document's
  // object and its "stages" list; device timelines add three. The parser itself is iterative;
  // refusing deeper input while parsing keeps every later (recursive) step bounded.
  constexpr int kMaxJsonDepth = 2 * kMaxStageDepth + 8;
  const json::parser_callback_t limit_depth = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw ProfileFormatError("'" + path.string() + "' nests deeper than a profile may (" +
                               std::to_string(kMaxStageDepth) +
                               " levels of stages). Pass a profile written by to_json() or "
                               "write_report().");
    }
    return true;
  };
  json document;
  try {
    document = json::parse(text, limit_depth);
  } catch (const json::parse_error& e) {
    // The library's message starts with its own error code; keep only the position.
    throw ProfileFormatError("'" + path.string() + "' is not valid JSON (at byte " +
                             std::to_string(e.byte) +
                             "). Pass a profile written by to_json() or write_report().");
  } catch (const json::exception&) {
    // out_of_range.406: a number such as 1e400 that no double holds.
    throw ProfileFormatError("'" + path.string() +
                             "' holds a number out of the range of a double. Pass a profile "
                             "written by to_json() or write_report().");
  }
  return report_from_json(document, path.string());
}

}  // namespace pypto::profiling
