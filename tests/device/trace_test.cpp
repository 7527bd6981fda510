// Chrome traces: valid JSON with one kernel slice per kernel run, each core's share of a
// threaded kernel on a worker's lane, counters of each kernel's work, and LATHE_TRACE for a whole
// program.
#include "lathe/trace.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

using Json = nlohmann::json;

Json read_json(const std::string& path) {
  std::ifstream f(path);
  return Json::parse(f);  // throws on anything that is not JSON
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".json")).string();
}

TEST(Trace, OneSlicePerKernelRunWithWorkCountersAndLabels) {
  Tensor x = Tensor::rand({512, 1031}, 1);  // large enough to be split across threads
  x.realize();
  Tensor h = (x.exp() * 2.0f).label("scale").contiguous();
  Tensor y = (h.sum({1}) + 1.0f).label("row sums");
  ExecutionPlan plan = Tensor::prepare({y}, PrepareOptions{.threads = 2});
  plan.execute();
  std::string path = temp_path("lathe_trace");
  start_trace(path);
  EXPECT_TRUE(tracing());
  for (int run = 0; run < 3; ++run) plan.execute();
  size_t runs = stop_trace();
  EXPECT_FALSE(tracing());
  std::vector<const PreparedKernel*> kernels;
  for (const PreparedKernel* k : plan.prepared_kernels())
    if (!k->constant) kernels.push_back(k);
  ASSERT_GE(kernels.size(), 2u);
  EXPECT_EQ(runs, 3 * kernels.size());

  Json trace = read_json(path);
  std::map<std::string, int> slices;
  std::set<std::string> traced_nodes;
  std::set<int> kernel_lanes, core_lanes, named_lanes;
  size_t counters = 0;
  for (const Json& e : trace.at("traceEvents")) {
    std::string ph = e.at("ph");
    if (ph == "X" && e.at("cat") == "kernel") {
      ++slices[e.at("name")];
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
      EXPECT_GE(e.at("ts").get<double>(), 0.0);
      EXPECT_TRUE(e.at("args").contains("flops") && e.at("args").contains("bytes") && e.at("args").contains("opts"));
      for (const Json& n : e.at("args").at("nodes")) traced_nodes.insert(n.get<std::string>());
      kernel_lanes.insert(e.at("tid").get<int>());
    } else if (ph == "X" && e.at("cat") == "core") {
      core_lanes.insert(e.at("tid").get<int>());
    } else if (ph == "C") {
      ++counters;
    } else if (ph == "M" && e.at("name") == "thread_name") {
      named_lanes.insert(e.at("tid").get<int>());
    }
  }
  for (const PreparedKernel* k : kernels) {
    int times = 0;
    for (const PreparedKernel* other : kernels) times += other->kernel->entry_point == k->kernel->entry_point;
    EXPECT_EQ(slices[k->kernel->entry_point], 3 * times) << k->kernel->entry_point;
  }
  EXPECT_EQ(counters, 2 * runs);  // a kernel's work at its start, zero at its end
  EXPECT_EQ(kernel_lanes.size(), 1u);  // one thread launched them all
  EXPECT_FALSE(core_lanes.empty());    // the threaded kernel's shares
  for (int lane : kernel_lanes) EXPECT_TRUE(named_lanes.count(lane));
  for (int lane : core_lanes) EXPECT_TRUE(named_lanes.count(lane));
  // The trace's slices name what each kernel computes.
  EXPECT_TRUE(traced_nodes.count("scale"));
  EXPECT_TRUE(traced_nodes.count("row sums"));
  std::filesystem::remove(path);
}

// Each trace numbers its lanes afresh: the threads of a second trace are all named in it.
TEST(Trace, ASecondTraceNamesItsOwnLanes) {
  Tensor x = Tensor::rand({256, 1031}, 2);
  x.realize();
  ExecutionPlan plan = Tensor::prepare({(x * 3.0f).sum({1})}, PrepareOptions{.threads = 2});
  std::string path = temp_path("lathe_trace_again");
  for (int trace = 0; trace < 2; ++trace) {
    start_trace(path);
    plan.execute();
    EXPECT_EQ(stop_trace(), plan.prepared_kernels().size());
    std::set<int> used, named;
    Json events = read_json(path).at("traceEvents");
    for (const Json& e : events) {
      if (e.at("ph") == "X") used.insert(e.at("tid").get<int>());
      if (e.at("ph") == "M" && e.at("name") == "thread_name") named.insert(e.at("tid").get<int>());
    }
    EXPECT_FALSE(used.empty());
    EXPECT_EQ(used, named) << "trace " << trace;
  }
  std::filesystem::remove(path);
}

TEST(Trace, ABadPathIsAnErrorThatNamesIt) {
  try {
    start_trace("/nonexistent-dir/trace.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/trace.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(tracing());
  EXPECT_EQ(stop_trace(), 0u);  // nothing was being recorded
}

TEST(Trace, LatheTraceRecordsAWholeProgram) {
  std::string path = temp_path("lathe_env_trace");
  std::string out_path = path + ".out";
  std::string cmd = "LATHE_TRACE=" + path + " " LATHE_CLI " run --iters 3 > " + out_path + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream out_file(out_path);
  std::string out{std::istreambuf_iterator<char>(out_file), {}};
  size_t at = out.find("kernels: ");
  ASSERT_NE(at, std::string::npos) << out;
  size_t kernels = std::stoul(out.substr(at + 9));
  Json trace = read_json(path);
  size_t slices = 0;
  for (const Json& e : trace.at("traceEvents")) slices += e.at("ph") == "X" && e.at("cat") == "kernel";
  // Every kernel of the built-in model in each of the three runs, and at most its prepare-time
  // work besides.
  EXPECT_GE(slices, 3 * kernels);
  EXPECT_LT(slices, 4 * kernels);
  std::filesystem::remove(out_path);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace lathe
