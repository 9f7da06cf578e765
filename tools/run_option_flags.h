// The command-line flags of the run options: one per row of the option table
// (pypto/driver/run_config.def) that names the command, so that `pypto run`, `pypto compile` and
// `pypto sweep` spell, check, document and default every option as the API does.
#pragma once

#include <CLI/CLI.hpp>

#include "pypto/driver/run_config.h"

namespace pypto::tools {

// Adds to `command` a flag for every option whose `where` has the bit `on` (driver::kOnRun,
// kOnCompile, kOnSweep), bound to the field of `config`: --<name> (and the option's aliases), a
// number checked against the option's range, a bool as --<name> / --no-<name>. The help text is
// the option's doc with its range, default (the value `config` holds when called: a command may
// default differently, and says so) and environment variable.
void add_run_option_flags(CLI::App* command, driver::RunConfig& config, unsigned on);

}  // namespace pypto::tools
