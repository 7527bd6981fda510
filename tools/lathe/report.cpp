#include "tools/lathe/report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace lathe::cli {
namespace {

std::string clipped(const std::string& s, size_t width) { return s.size() <= width ? s : s.substr(0, width - 3) + "..."; }

// "a, b, c" up to `width` characters, then "+N more".
std::string joined(const std::vector<std::string>& items, size_t width) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string next = (out.empty() ? "" : ", ") + items[i];
    if (!out.empty() && out.size() + next.size() > width) return out + " +" + std::to_string(items.size() - i) + " more";
    out += next;
  }
  return out;
}

double mb(size_t bytes) { return static_cast<double>(bytes) / 1e6; }

}  // namespace

void print_profile(const ExecutionPlan& plan, int runs) {
  plan.execute();  // runs what was folded again if it is stale, so every profiled run has the same kernels
  std::vector<std::vector<KernelProfile>> all;
  for (int r = 0; r < std::max(1, runs); ++r) all.push_back(plan.execute_profiled());
  std::vector<KernelProfile> prof = all.front();
  for (size_t k = 0; k < prof.size(); ++k) {  // each kernel's median over the runs
    std::vector<std::chrono::nanoseconds> times;
    for (const auto& run : all) times.push_back(run[k].elapsed);
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    prof[k].elapsed = times[times.size() / 2];
  }
  double total_ns = 0;
  WorkCount total;
  for (const KernelProfile& p : prof) total_ns += static_cast<double>(p.elapsed.count()), total += p.work;
  std::printf("profile: median of %zu runs per kernel, in the order execute() runs them\n", all.size());
  std::printf("  %-32s %10s %6s %8s %8s  %-36s %s\n", "kernel", "us", "share", "GFLOP/s", "GB/s", "actions", "nodes");
  for (const KernelProfile& p : prof) {
    std::string opts = p.kernel->opts.empty() ? "-" : p.kernel->opts;
    std::string nodes = p.prepared && !p.prepared->labels.empty() ? joined(p.prepared->labels, 80) : "-";
    std::printf("  %-32s %10.3f %5.1f%% %8.2f %8.2f  %-36s %s\n", clipped(p.kernel->entry_point, 32).c_str(), p.elapsed.count() / 1e3,
                total_ns > 0 ? 100.0 * static_cast<double>(p.elapsed.count()) / total_ns : 0.0, p.gflops(), p.gbps(),
                clipped(opts, 36).c_str(), nodes.c_str());
  }
  std::printf("  %-32s %10.3f %5.1f%% %8.2f %8.2f  (%zu kernels, %.3f GFLOP, %.3f MB)\n", "total", total_ns / 1e3, 100.0,
              total_ns > 0 ? static_cast<double>(total.ops) / total_ns : 0.0, total_ns > 0 ? static_cast<double>(total.mem) / total_ns : 0.0,
              prof.size(), static_cast<double>(total.ops) / 1e9, static_cast<double>(total.mem) / 1e6);
}

void print_memory(const ExecutionPlan& plan) {
  const MemoryStats& m = plan.memory_stats();
  std::printf("memory: intermediates %.3f MB in one arena (%.3f MB as separate buffers, peak live %.3f MB), constants %.3f MB, "
              "inputs and outputs %.3f MB; process peak %.1f MB\n",
              mb(m.arena_bytes), mb(m.intermediate_bytes), mb(m.peak_live_bytes), mb(m.constant_bytes), mb(m.io_bytes),
              peak_resident_mb());
}

double peak_resident_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  return 0.0;
}

std::string memory_json(const ExecutionPlan& plan) {
  const MemoryStats& m = plan.memory_stats();
  return "\"arena_bytes\": " + std::to_string(m.arena_bytes) + ", \"intermediate_bytes\": " + std::to_string(m.intermediate_bytes) +
         ", \"peak_live_bytes\": " + std::to_string(m.peak_live_bytes) + ", \"constant_bytes\": " + std::to_string(m.constant_bytes) +
         ", \"io_bytes\": " + std::to_string(m.io_bytes) + ", \"peak_rss_mb\": " + std::to_string(peak_resident_mb());
}

}  // namespace lathe::cli
