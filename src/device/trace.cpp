#include "device/trace.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {

std::atomic<bool> detail::trace_on{false};

namespace {

using Json = nlohmann::json;

struct Recorder {
  std::mutex mu;
  std::string path;
  std::chrono::steady_clock::time_point t0;
  Json events = Json::array();
  size_t kernels = 0;
  int lanes = 0;
  uint64_t generation = 0;  // one per start_trace: lanes are numbered afresh in each trace
};

Recorder& recorder() {
  static Recorder* r = new Recorder;  // outlives the exit handler that writes LATHE_TRACE's file
  return *r;
}

double micros(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// The calling thread's lane in this trace, given on its first event; `r.mu` is held.
int lane(Recorder& r) {
  thread_local int mine = -1;
  thread_local uint64_t of_trace = 0;
  if (of_trace != r.generation) {
    mine = r.lanes++;
    of_trace = r.generation;
  }
  return mine;
}

void name_lanes(Recorder& r) {
  r.events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "lathe"}}}});
  for (int l = 0; l < r.lanes; ++l)
    r.events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", l}, {"args", {{"name", "thread " + std::to_string(l)}}}});
}

// LATHE_TRACE=FILE: a trace of the whole program, written at exit.
const bool kFromEnvironment = [] {
  std::optional<std::string> path = settings::text("LATHE_TRACE");
  if (!path) return false;
  try {
    start_trace(*path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lathe: LATHE_TRACE: %s\n", e.what());
    return false;
  }
  std::atexit([] {
    try {
      stop_trace();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lathe: LATHE_TRACE: %s\n", e.what());
    }
  });
  return true;
}();

}  // namespace

void start_trace(const std::string& path) {
  if (tracing()) stop_trace();
  if (!std::ofstream(path)) throw Error("cannot write the trace file '" + path + "'");
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  r.path = path;
  r.events = Json::array();
  r.kernels = 0;
  r.lanes = 0;
  ++r.generation;
  r.t0 = std::chrono::steady_clock::now();
  detail::trace_on.store(true);
}

size_t stop_trace() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!detail::trace_on.exchange(false)) return 0;
  name_lanes(r);
  Json trace = {{"traceEvents", std::move(r.events)}, {"displayTimeUnit", "ns"}};
  r.events = Json::array();
  std::ofstream out(r.path);
  out << trace.dump() << "\n";
  if (!out) throw Error("cannot write the trace file '" + r.path + "'");
  return r.kernels;
}

namespace detail {

int64_t trace_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - recorder().t0).count();
}

void trace_kernel(const std::string& name, int64_t start, int64_t end, const KernelRunInfo& info) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!detail::trace_on.load()) return;
  int tid = lane(r);
  r.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 1}, {"tid", tid}, {"ts", micros(start)},
                      {"dur", micros(end - start)},
                      {"args", {{"flops", info.flops}, {"bytes", info.bytes}, {"nodes", info.labels}, {"opts", info.opts}}}});
  r.events.push_back({{"ph", "C"}, {"name", "work"}, {"pid", 1}, {"ts", micros(start)}, {"args", {{"flops", info.flops}, {"bytes", info.bytes}}}});
  r.events.push_back({{"ph", "C"}, {"name", "work"}, {"pid", 1}, {"ts", micros(end)}, {"args", {{"flops", 0}, {"bytes", 0}}}});
  ++r.kernels;
}

void trace_core(const char* name, int64_t start, int64_t end) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!detail::trace_on.load()) return;
  r.events.push_back({{"ph", "X"}, {"cat", "core"}, {"name", name}, {"pid", 1}, {"tid", lane(r)}, {"ts", micros(start)},
                      {"dur", micros(end - start)}});
}

const char*& current_kernel() {
  thread_local const char* name = nullptr;
  return name;
}

}  // namespace detail
}  // namespace lathe
