// Runtime DFX: the files each switch writes, from runs whose tasks and values are known.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/runtime/dfx.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/task_runtime.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kLength = 8, kHalf = 4;

PtoTensor vector_view(float* base, int64_t offset, int64_t length) {
  PtoTensor t{};
  t.base = base;
  t.offset = offset;
  t.dtype = PTO_FP32;
  t.ndim = 1;
  t.shape[0] = length;
  t.strides[0] = 1;
  return t;
}

PtoArg tensor(int32_t kind, PtoTensor t) {
  PtoArg a{};
  a.kind = kind;
  a.dtype = t.dtype;
  a.tensor = t;
  return a;
}

float& element(const PtoTensor& t, int64_t i) {
  return static_cast<float*>(t.base)[t.offset + i * t.strides[0]];
}

// x *= alpha (inout, then scalar)
void scale_kernel(const PtoArg* args, PtoCoreMemory*) {
  for (int64_t i = 0; i < args[0].tensor.shape[0]; ++i) {
    element(args[0].tensor, i) *= static_cast<float>(args[1].f64);
  }
}
// y = x + 1
void inc_kernel(const PtoArg* args, PtoCoreMemory*) {
  for (int64_t i = 0; i < args[1].tensor.shape[0]; ++i) {
    element(args[1].tensor, i) = element(args[0].tensor, i) + 1.0f;
  }
}

// params: x [8] (inout), y [8] (out), alpha. Tasks 0 and 1 scale the halves of x; task 2, which
// depends on both, writes y = x + 1.
int32_t scale_then_inc(const PtoRuntimeApi* rt, const PtoArg* p, int32_t) {
  auto* x = static_cast<float*>(p[0].tensor.base);
  auto* y = static_cast<float*>(p[1].tensor.base);
  for (int64_t half = 0; half < 2; ++half) {
    PtoArg args[2] = {tensor(PTO_ARG_INOUT, vector_view(x, half * kHalf, kHalf)), p[2]};
    rt->submit(rt->ctx, "scale", &scale_kernel, args, 2);
  }
  PtoArg args[2] = {tensor(PTO_ARG_IN, vector_view(x, 0, kLength)),
                    tensor(PTO_ARG_OUT, vector_view(y, 0, kLength))};
  rt->submit(rt->ctx, "inc", &inc_kernel, args, 2);
  return 0;
}

class RuntimeDfxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pypto-dfx-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    for (int64_t i = 0; i < kLength; ++i) x_[static_cast<size_t>(i)] = static_cast<float>(i);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunStats run(DfxOptions options, int workers = 2) {
    options.dir = dir_;
    DfxRecorder recorder(options, workers);
    TaskRuntime runtime(workers);
    PtoArg alpha{};
    alpha.kind = PTO_ARG_SCALAR;
    alpha.dtype = PTO_FP32;
    alpha.f64 = 3.0;
    RunStats stats = runtime.run(&scale_then_inc,
                                 {tensor(PTO_ARG_INOUT, vector_view(x_.data(), 0, kLength)),
                                  tensor(PTO_ARG_OUT, vector_view(y_.data(), 0, kLength)), alpha},
                                 &recorder);
    recorder.finish(stats);
    return stats;
  }

  std::string read(const fs::path& name) const {
    std::ifstream in(dir_ / name, std::ios::binary);
    EXPECT_TRUE(in) << "missing " << (dir_ / name);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // The float32 values of a 1-D .npy file.
  std::vector<float> read_npy(const fs::path& name) const {
    const std::string bytes = read(name);
    EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
    const size_t header =
        10 + static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]);
    EXPECT_NE(bytes.find("'descr': '<f4'"), std::string::npos);
    std::vector<float> values((bytes.size() - header) / sizeof(float));
    std::memcpy(values.data(), bytes.data() + header, values.size() * sizeof(float));
    return values;
  }

  fs::path dir_;
  std::vector<float> x_ = std::vector<float>(kLength), y_ = std::vector<float>(kLength);
};

TEST_F(RuntimeDfxTest, OnlyTheSwitchedOnFilesAreWritten) {
  DfxOptions options;
  options.dep_gen = true;
  run(options);
  EXPECT_TRUE(fs::exists(dir_ / "dep_graph.json"));
  EXPECT_TRUE(fs::exists(dir_ / "dep_graph.dot"));
  EXPECT_FALSE(fs::exists(dir_ / "swimlane.json"));
  EXPECT_FALSE(fs::exists(dir_ / "pmu.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "args"));
}

TEST_F(RuntimeDfxTest, NothingSwitchedOnWritesNothing) {
  run(DfxOptions{});
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(RuntimeDfxTest, SwimlaneIsAChromeTraceWithOneTrackPerCore) {
  DfxOptions options;
  options.swimlane = true;
  const RunStats stats = run(options, 3);
  const json trace = json::parse(read("swimlane.json"));
  std::map<int, std::string> thread_names;
  std::vector<json> slices;
  int flows = 0;
  for (const json& e : trace.at("traceEvents")) {
    for (const char* key : {"name", "ph", "pid", "tid"}) {
      ASSERT_TRUE(e.contains(key)) << e;
    }
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") thread_names[e["tid"]] = e["args"]["name"];
    if (ph == "X") slices.push_back(e);
    if (ph == "s" || ph == "f") ++flows;
    if (ph != "M") {
      ASSERT_TRUE(e["ts"].is_number()) << e;
    }
  }
  EXPECT_EQ(thread_names,
            (std::map<int, std::string>{{0, "core 0"}, {1, "core 1"}, {2, "core 2"}}));
  ASSERT_EQ(slices.size(), 3u);
  for (size_t i = 0; i < slices.size(); ++i) {
    const TaskRecord& t = stats.tasks[i];
    EXPECT_EQ(slices[i]["name"], t.kernel);
    EXPECT_EQ(slices[i]["tid"], t.worker);
    EXPECT_NEAR(slices[i]["ts"].get<double>(), t.start * 1e6, 1e-3);
    EXPECT_NEAR(slices[i]["dur"].get<double>(), (t.end - t.start) * 1e6, 1e-3);
    EXPECT_EQ(slices[i]["args"]["task"], i);
  }
  EXPECT_EQ(slices[2]["args"]["deps"], json::array({0, 1}));
  EXPECT_EQ(slices[2]["args"]["waited_on"], stats.tasks[2].waited_on);
  EXPECT_EQ(flows, 2);  // one arrow, from the dependency task 2 waited on
}

TEST_F(RuntimeDfxTest, WaitedOnIsTheDependencyThatFinishedLast) {
  const RunStats stats = run(DfxOptions{});
  EXPECT_EQ(stats.tasks[0].waited_on, -1);
  EXPECT_EQ(stats.tasks[1].waited_on, -1);
  const TaskId last = stats.tasks[0].end > stats.tasks[1].end ? 0 : 1;
  EXPECT_EQ(stats.tasks[2].waited_on, last);
  EXPECT_GE(stats.tasks[2].start, stats.tasks[static_cast<size_t>(last)].end);
}

TEST_F(RuntimeDfxTest, DumpArgsWritesInputsBeforeAndOutputsAfterEachTask) {
  DfxOptions options;
  options.dump_args = true;
  // An earlier run's dumps must not survive.
  fs::create_directories(dir_ / "args" / "task_0099_old");
  run(options);
  EXPECT_FALSE(fs::exists(dir_ / "args" / "task_0099_old"));
  // Task 1 scales x[4:8] = 4..7 by 3 in place: its inout argument appears both ways.
  EXPECT_EQ(read_npy("args/task_0001_scale/arg0_in.npy"), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(read_npy("args/task_0001_scale/arg0_out.npy"), (std::vector<float>{12, 15, 18, 21}));
  // Task 2 reads the whole scaled x and writes y = x + 1.
  EXPECT_EQ(read_npy("args/task_0002_inc/arg0_in.npy"),
            (std::vector<float>{0, 3, 6, 9, 12, 15, 18, 21}));
  EXPECT_EQ(read_npy("args/task_0002_inc/arg1_out.npy"),
            (std::vector<float>{1, 4, 7, 10, 13, 16, 19, 22}));
  EXPECT_FALSE(fs::exists(dir_ / "args/task_0002_inc/arg0_out.npy"));  // an input only
  const json manifest = json::parse(read("args/task_0001_scale/args.json"));
  EXPECT_EQ(manifest["task"], 1);
  EXPECT_EQ(manifest["kernel"], "scale");
  EXPECT_EQ(manifest["args"][0]["kind"], "inout");
  EXPECT_EQ(manifest["args"][0]["shape"], json::array({4}));
  EXPECT_EQ(manifest["args"][0]["in"], "arg0_in.npy");
  EXPECT_EQ(manifest["args"][0]["out"], "arg0_out.npy");
  EXPECT_EQ(manifest["args"][1]["kind"], "scalar");
  EXPECT_EQ(manifest["args"][1]["value"], 3.0);
}

// Counters that advance by a fixed amount between two reads, as a machine with a PMU would.
class StepCounters : public PmuCounters {
 public:
  bool read(PmuSample& sample) override {
    sample.cycles = (reads_ + 1) * 1000;
    sample.instructions = (reads_ + 1) * 400;
    ++reads_;
    return true;
  }

 private:
  uint64_t reads_ = 0;
};

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

TEST_F(RuntimeDfxTest, PmuRecordsTheCountersOfEachTask) {
  DfxOptions options;
  options.pmu = true;
  options.pmu_opener = [](std::string&) { return std::make_unique<StepCounters>(); };
  const RunStats stats = run(options);
  const auto rows = csv_rows(read("pmu.csv"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"task", "kernel", "core", "start_us", "end_us",
                                               "cycles", "instructions"}));
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 7u);
    EXPECT_EQ(rows[i][0], std::to_string(i - 1));
    EXPECT_EQ(rows[i][1], stats.tasks[i - 1].kernel);
    EXPECT_EQ(rows[i][2], std::to_string(stats.tasks[i - 1].worker));
    EXPECT_EQ(rows[i][5], "1000");  // one step between the reads around the kernel
    EXPECT_EQ(rows[i][6], "400");
  }
  EXPECT_FALSE(fs::exists(dir_ / "pmu_unavailable.txt"));
}

TEST_F(RuntimeDfxTest, PmuWithoutCountersLeavesThemEmptyAndSaysWhy) {
  DfxOptions options;
  options.pmu = true;
  options.pmu_opener = [](std::string& why) -> std::unique_ptr<PmuCounters> {
    why = "perf_event_open(cycles) failed: No such file or directory";
    return nullptr;
  };
  run(options);
  const auto rows = csv_rows(read("pmu.csv"));
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 7u);
    EXPECT_EQ(rows[i][5], "");
    EXPECT_EQ(rows[i][6], "");
  }
  EXPECT_EQ(read("pmu_unavailable.txt"),
            "No hardware counters in pmu.csv (its cycles and instructions are empty): "
            "perf_event_open(cycles) failed: No such file or directory.\n");
}

TEST_F(RuntimeDfxTest, PerfEventCountersCountOrExplain) {
  // Whatever this machine allows: real counts that grow with work, or a reason.
  std::string why;
  auto counters = open_perf_counters(why);
  if (!counters) {
    EXPECT_NE(why.find("perf_event_open("), std::string::npos) << why;
    return;
  }
  PmuSample before, after;
  ASSERT_TRUE(counters->read(before));
  volatile double sink = 0;
  for (int i = 0; i < 100000; ++i) sink = sink + i * 0.5;
  ASSERT_TRUE(counters->read(after));
  EXPECT_GT(after.instructions - before.instructions, 100000u);
  EXPECT_GT(after.cycles, before.cycles);
}

TEST_F(RuntimeDfxTest, NoPmuVariableForcesTheUnavailablePath) {
  ::setenv(kNoPmuEnv, "1", 1);
  std::string why;
  auto counters = open_perf_counters(why);
  ::unsetenv(kNoPmuEnv);
  EXPECT_EQ(counters, nullptr);
  EXPECT_EQ(why, "hardware counters are switched off by PYPTO_DFX_NO_PMU=1");
}

TEST_F(RuntimeDfxTest, DependencyGraphAsJsonAndDot) {
  DfxOptions options;
  options.dep_gen = true;
  const RunStats stats = run(options);
  const json graph = json::parse(read("dep_graph.json"));
  EXPECT_EQ(graph["num_tasks"], 3);
  ASSERT_EQ(graph["tasks"].size(), 3u);
  EXPECT_EQ(graph["tasks"][2]["kernel"], "inc");
  EXPECT_EQ(graph["tasks"][2]["deps"], json::array({0, 1}));
  ASSERT_EQ(graph["edges"].size(), 2u);
  const TaskId waited = stats.tasks[2].waited_on;
  for (const json& edge : graph["edges"]) {
    EXPECT_EQ(edge["to"], 2);
    EXPECT_EQ(edge["waited_on"], edge["from"] == waited);
  }
  const std::string dot = read("dep_graph.dot");
  EXPECT_EQ(dot.rfind("digraph tasks {\n", 0), 0u);
  EXPECT_NE(dot.find("t2 [label=\"2: inc\\ncore "), std::string::npos) << dot;
  EXPECT_NE(dot.find("t" + std::to_string(waited) + " -> t2 [style=bold];"), std::string::npos);
  EXPECT_NE(dot.find("t" + std::to_string(1 - waited) + " -> t2;"), std::string::npos);
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
}

TEST_F(RuntimeDfxTest, UnwritableFolderIsASetupErrorNamingIt) {
  fs::create_directories(dir_.parent_path());
  std::ofstream(dir_) << "a file where the folder should be";
  DfxOptions options;
  options.swimlane = true;
  options.dir = dir_ / "dfx_outputs";
  try {
    DfxRecorder recorder(options, 1);
    FAIL() << "no error";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Setup);
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("runtime DFX"), std::string::npos) << e.what();
  }
  fs::remove(dir_);
}

}  // namespace
}  // namespace pypto::runtime
