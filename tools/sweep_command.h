// `pypto sweep`: run programs over a grid of module constants. The command line is parsed and
// checked here, on the tool's parser like every other command (usage errors exit 2 before any
// job starts); the sweep itself is the Python package's (pypto.sweep, on Dask), which this
// command runs with the checked request (`python3 -m pypto.sweep --request JSON`).
#pragma once

#include <CLI/CLI.hpp>

namespace pypto::tools {

// Adds the `sweep` subcommand to `app`; run_sweep_command() runs it once parsed.
CLI::App* add_sweep_command(CLI::App& app);
int run_sweep_command();

}  // namespace pypto::tools
