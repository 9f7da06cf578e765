// The option table (pypto/driver/run_config.def): its rows as data, the range checks, and the
// environment as a source of defaults only.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

#include "pypto/driver/run_config.h"
#include "pypto/support/environment.h"

namespace pypto::driver {
namespace {

// Sets an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST(RunConfigTable, RowsAreTheFieldsInOrderWithUniqueFlagsAndDocs) {
  std::set<std::string> names;
  std::set<std::string> flags;
  for (const RunOption& option : run_options()) {
    EXPECT_TRUE(names.insert(option.name).second) << option.name;
    EXPECT_TRUE(flags.insert(option.flag()).second) << option.flag();
    EXPECT_NE(std::string(option.doc), "") << option.name;
  }
  ASSERT_NE(find_run_option("timeout"), nullptr);
  EXPECT_EQ(find_run_option("timeout")->flag(), "--timeout");
  EXPECT_EQ(find_run_option("work_dir")->flag(), "--work-dir");
  EXPECT_EQ(find_run_option("no_such_option"), nullptr);
  EXPECT_EQ(option_range_text(*find_run_option("timeout")), "0.001 to 86400 s");
  EXPECT_EQ(option_range_text(*find_run_option("rtol")), ">= 0");
  EXPECT_EQ(option_value_text(*find_run_option("rtol"), RunConfig{}), "1e-05");
}

TEST(RunConfigTable, EveryEnvironmentVariableIsListed) {
  std::set<std::string> listed;
  for (const support::EnvironmentVariableInfo& info : support::environment_variables()) {
    listed.insert(info.name);
  }
  for (const RunOption& option : run_options()) {
    if (*option.environment) {
      EXPECT_TRUE(listed.count(option.environment)) << option.name;
    }
  }
  EXPECT_THROW(support::read_environment("PYPTO_NOT_A_VARIABLE"), std::logic_error);
}

TEST(RunConfigTable, ConfigErrorNamesTheFieldAndItsRange) {
  EXPECT_EQ(config_error(RunConfig{}), "");
  RunConfig config;
  config.timeout = 0;
  EXPECT_EQ(config_error(config), "RunConfig.timeout=0 is out of range: give 0.001 to 86400 s");
  config = RunConfig{};
  config.keep_outputs = -1;  // unset: allowed
  config.workers = 257;
  EXPECT_EQ(config_error(config),
            "RunConfig.workers=257 is out of range: give 1 to 256 cores, or leave it unset for "
            "the default");
  config = RunConfig{};
  config.platform = "tpu";
  EXPECT_NE(config_error(config).find("unknown platform 'tpu'"), std::string::npos);
}

TEST(RunConfigTable, EnvironmentGivesDefaultsForUnsetOptionsOnly) {
  ScopedEnv cache("PYPTO_CACHE_DIR", "/from/the/environment");
  ScopedEnv keep("PYPTO_KEEP_OUTPUTS", "3");
  RunConfig resolved = with_environment_defaults(RunConfig{});
  EXPECT_EQ(resolved.cache_dir, "/from/the/environment");
  EXPECT_EQ(resolved.keep_outputs, 3);
  RunConfig given;
  given.cache_dir = "/given";
  given.keep_outputs = 0;
  resolved = with_environment_defaults(given);
  EXPECT_EQ(resolved.cache_dir, "/given");
  EXPECT_EQ(resolved.keep_outputs, 0);
}

TEST(RunConfigTable, AMalformedVariableNamesItselfAndWhatToGive) {
  ScopedEnv keep("PYPTO_KEEP_OUTPUTS", "many");
  try {
    with_environment_defaults(RunConfig{});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "PYPTO_KEEP_OUTPUTS='many' is not valid for keep_outputs: give an integer, 0 to "
              "1000000 folders");
  }
}

}  // namespace
}  // namespace pypto::driver
