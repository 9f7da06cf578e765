// `pypto profile ...`: tools for profile files (pipeline_profile.json, to_json() output).
#pragma once

#include <CLI/CLI.hpp>

namespace pypto::tools {

// Adds the `profile` subcommand and its show/diff/convert/html subcommands to `app`.
// Returns the `profile` subcommand; run_profile_command() runs whichever was parsed.
CLI::App* add_profile_command(CLI::App& app);
int run_profile_command();

}  // namespace pypto::tools
