// Reading a profile back from its JSON document (pipeline_profile.json, to_json(), to_dict()),
// for the tools that work on profile files (`pypto profile show|diff|convert|html`).
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "pypto/profiling/report.h"

namespace pypto::profiling {

// A profile file that cannot be read or is not a profile. The message names the file, the place
// in the document ("stages[2].children[0]: 'seconds' is missing") and what to do.
class ProfileFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a profile file may hold; beyond these a reader stops with a ProfileFormatError naming the
// limit instead of exhausting memory or the stack. Profiles the compiler writes stay far below
// them: repeated stages are merged (profiler.h), and stages nest a few levels deep.
inline constexpr std::size_t kMaxProfileFileBytes = 256u << 20;  // 256 MiB
inline constexpr int kMaxStageDepth = 200;                       // stages inside stages

// The Report a JSON document describes. Required: "total_seconds" and "stages", each stage with
// "name", "seconds" and "children"; every other key is optional (documents written before a key
// existed still load: a missing "self_seconds" is recomputed, a missing "start" lays stages out
// one after the other). `where` names the document in error messages. Throws ProfileFormatError.
Report report_from_json(const nlohmann::json& document, const std::string& where);

// Reads and parses a profile file: at most kMaxProfileFileBytes, stages nested at most
// kMaxStageDepth deep, numbers in range (a count such as a timeline's "cores" within what a run
// can have). Works on pipes and devices too (`/dev/stdin`). Throws ProfileFormatError.
Report read_profile_file(const std::filesystem::path& path);

}  // namespace pypto::profiling
