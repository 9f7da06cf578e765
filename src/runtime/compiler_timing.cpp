// The host compiler's own timing report, read (compiler_timing.h).
#include "compiler_timing.h"

#include <cstdlib>
#include <sstream>
#include <vector>

namespace pypto::runtime::detail {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

// A row of -ftime-report's table: " phase parsing     :   0.02 ( 25%)   0.01 ( 50%)   0.04 ( 31%)
// 1877k ( 38%)": name, then usr, sys and wall, each with its share (the TOTAL row has none).
// Returns the wall time.
bool table_row(const std::string& line, std::string& name, double& wall) {
  const size_t colon = line.find(" : ");
  if (colon == std::string::npos) return false;
  name = trimmed(line.substr(0, colon));
  std::istringstream fields(line.substr(colon + 3));
  std::vector<double> times;
  std::string token;
  while (times.size() < 3 && fields >> token) {
    if (token.front() == '(' || token.back() == ')') continue;  // a share: "(", "25%)", "(100%)"
    char* end = nullptr;
    const double value = std::strtod(token.c_str(), &end);
    if (end == token.c_str() || *end != '\0') return false;
    times.push_back(value);
  }
  if (times.size() < 3) return false;
  wall = times[2];
  return true;
}

}  // namespace

std::vector<std::string> compiler_timing_flags(const std::string& identity) {
  // GCC's --version names its copyright holder; clang's names itself.
  if (identity.find("Free Software Foundation") == std::string::npos) return {};
  return {"-ftime-report", "-time"};
}

std::vector<CompilerPhase> take_compiler_timing(std::string& output) {
  std::vector<CompilerPhase> cc1plus, programs;
  std::string kept;
  std::istringstream lines(output);
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    std::string name;
    double seconds = 0;
    if (starts_with(line, "Time variable ")) {
      in_table = true;
      continue;
    }
    if (in_table) {
      if (!table_row(line, name, seconds)) {
        in_table = false;  // the table ends; this line is the compiler's again
      } else {
        if (name == "TOTAL") in_table = false;
        // The phases partition cc1plus's time; the other rows (passes) are parts of them.
        if (starts_with(name, "phase ") && seconds > 0)
          cc1plus.push_back({"cc1plus " + name.substr(6), seconds});
        continue;
      }
    }
    if (starts_with(line, "# ")) {  // -time: "# cc1plus 0.05 0.04" (user, system)
      std::istringstream fields(line.substr(2));
      std::string program;
      double user = 0, system = 0;
      if (fields >> program >> user >> system) {
        if (program != "cc1plus" && user + system > 0)
          programs.push_back({program == "collect2" ? "collect2 (link)" : program, user + system});
        continue;
      }
    }
    if (trimmed(line).empty() && kept.empty()) continue;  // the blank line before the table
    kept += line + "\n";
  }
  if (!output.empty() && output.back() != '\n' && !kept.empty()) kept.pop_back();
  output = kept;
  cc1plus.insert(cc1plus.end(), programs.begin(), programs.end());
  return cc1plus;
}

}  // namespace pypto::runtime::detail
