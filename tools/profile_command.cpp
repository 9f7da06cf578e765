// `pypto profile show|diff|convert|html`: thin callers of the profiling layer's readers and
// formats (profile_file.h, report_diff.h, formats.h).
//
// Exit codes: 0 success, 1 a stage regressed (diff --fail-on-regression) or a file could not be
// read or written, 2 usage error (a missing input file too, as for every command).
#include "profile_command.h"

#include <iostream>
#include <string>

#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/report_diff.h"

namespace pypto::tools {

namespace {

namespace prof = pypto::profiling;

struct ProfileOptions {
  std::string file;
  std::string base;
  std::string now;
  std::string output;
  std::string format;
  bool list = false;
  double min_percent = 0.0;
  prof::DiffOptions diff;
  bool fail_on_regression = false;
  bool diff_html = false;  // diff --html: the page instead of the table
};

ProfileOptions g_options;
CLI::App* g_show = nullptr;
CLI::App* g_diff = nullptr;
CLI::App* g_convert = nullptr;
CLI::App* g_html = nullptr;

int show() {
  prof::Report report = prof::read_profile_file(g_options.file);
  prof::SummaryOptions options;
  options.min_percent = g_options.min_percent;
  std::cout << (g_options.list ? prof::format_summary_list(report, options)
                               : prof::format_summary(report, options));
  return 0;
}

// "wrote FILE", except when the output itself went to standard output (`-o -`).
void report_written() {
  if (g_options.output != "-") std::cout << "wrote " << g_options.output << "\n";
}

int diff() {
  prof::Report base = prof::read_profile_file(g_options.base);
  prof::Report now = prof::read_profile_file(g_options.now);
  prof::ReportDiff result = prof::diff_reports(base, now, g_options.diff);
  if (g_options.diff_html) {
    prof::write_output_file(g_options.output, prof::to_html_diff(result, g_options.diff,
                                                                 g_options.base, g_options.now));
    report_written();
  } else {
    std::cout << prof::format_diff(result, g_options.diff);
  }
  return g_options.fail_on_regression && result.regressed() ? 1 : 0;
}

int convert() {
  prof::Report report = prof::read_profile_file(g_options.file);
  std::string text;
  if (g_options.format == "chrome") {
    text = prof::to_chrome_trace(report);
  } else if (g_options.format == "folded") {
    text = prof::to_folded(report);
  } else {
    text = prof::to_speedscope(report, g_options.file);
  }
  prof::write_output_file(g_options.output, text);
  report_written();
  return 0;
}

int html() {
  prof::Report report = prof::read_profile_file(g_options.file);
  prof::write_output_file(g_options.output,
                          prof::to_html_report(report, "PyPTO compile profile: " + g_options.file));
  report_written();
  return 0;
}

}  // namespace

CLI::App* add_profile_command(CLI::App& app) {
  CLI::App* profile = app.add_subcommand(
      "profile", "Work with compile profile files (pipeline_profile.json, to_json() output)");
  profile->require_subcommand(1);
  profile->footer(
      "Exit codes: 0 success; 1 a profile file could not be read or written, or a stage "
      "regressed (diff --fail-on-regression); 2 usage error (bad option, missing file).");

  g_show = profile->add_subcommand("show", "Print a profile's summary (tree, or list by name)");
  g_show->add_option("file", g_options.file, "Profile JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  g_show->add_flag("--list", g_options.list,
                   "Aggregate by stage name (count, total, self, percent), sorted by self time");
  g_show
      ->add_option("--min-percent", g_options.min_percent,
                   "Hide stages below this percentage of the total")
      ->check(CLI::Range(0.0, 100.0));

  g_diff = profile->add_subcommand("diff", "Compare two profiles stage by stage");
  g_diff->add_option("base", g_options.base, "Baseline profile JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  g_diff->add_option("new", g_options.now, "New profile JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  g_diff
      ->add_option("--threshold", g_options.diff.threshold_percent,
                   "A stage regressed when slower by more than this many percent...")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  g_diff
      ->add_option("--min-seconds", g_options.diff.min_seconds,
                   "...and by at least this many seconds")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  g_diff->add_flag("--fail-on-regression", g_options.fail_on_regression,
                   "Exit with 1 when a stage regressed");
  CLI::Option* diff_html =
      g_diff->add_flag("--html", g_options.diff_html,
                       "Write the comparison as a self-contained HTML page (needs -o)");
  CLI::Option* diff_output = g_diff->add_option("-o,--output", g_options.output,
                                                "Output HTML file; - for standard output");
  diff_output->needs(diff_html);
  diff_html->needs(diff_output);

  g_convert = profile->add_subcommand("convert", "Convert a profile for another tool");
  g_convert->add_option("file", g_options.file, "Profile JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  g_convert
      ->add_option("--to", g_options.format,
                   "chrome (Perfetto, chrome://tracing), folded (flamegraph.pl, inferno) "
                   "or speedscope")
      ->required()
      ->check(CLI::IsMember({"chrome", "folded", "speedscope"}));
  g_convert->add_option("-o,--output", g_options.output, "Output file; - for standard output")
      ->required();

  g_html = profile->add_subcommand(
      "html",
      "Write a self-contained interactive HTML report: timeline (zoom, device cores), "
      "collapsible tree, list view, search");
  g_html->add_option("file", g_options.file, "Profile JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  g_html->add_option("-o,--output", g_options.output, "Output HTML file; - for standard output")
      ->required();
  return profile;
}

int run_profile_command() {
  try {
    if (g_show->parsed()) return show();
    if (g_diff->parsed()) return diff();
    if (g_convert->parsed()) return convert();
    return html();
  } catch (const std::exception& e) {
    // ProfileFormatError and ProfilerError messages name the file, the problem and the remedy.
    std::cerr << "pypto profile: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace pypto::tools
