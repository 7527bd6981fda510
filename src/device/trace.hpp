// The recorder behind lathe/trace.hpp: what ran, where and when, as Chrome trace events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lathe/trace.hpp"

namespace lathe::detail {

/// Nanoseconds on the trace's clock.
int64_t trace_now();

/// What the recorder notes of one kernel run beside its name and times.
struct KernelRunInfo {
  int64_t flops = 0;
  int64_t bytes = 0;
  std::vector<std::string> labels;  // the nodes it computes
  std::string opts;                 // its optimizer actions
};

/// A kernel run on the calling thread's lane, with counters of its work.
void trace_kernel(const std::string& name, int64_t start, int64_t end, const KernelRunInfo& info);
/// One core's share of a kernel, on the calling (worker) thread's lane.
void trace_core(const char* name, int64_t start, int64_t end);

/// The kernel the calling thread is launching now (the CPU program names its cores' slices by
/// it); null when none.
const char*& current_kernel();

}  // namespace lathe::detail
