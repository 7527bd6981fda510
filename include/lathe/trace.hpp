// Chrome traces of plan execution: every kernel run as a slice on the lane of the thread that
// launched it, each core's share of a threaded kernel on its worker's lane, and counters of the
// FLOPs and bytes each kernel moves. The file opens in Perfetto (ui.perfetto.dev) and
// chrome://tracing. LATHE_TRACE=FILE records one for a whole program, written when it exits.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace lathe {

/// Starts recording into `path` (created now, so a bad path throws Error at once). A trace
/// already being recorded is written first.
void start_trace(const std::string& path);
/// Writes the trace and stops recording; returns how many kernel runs it holds (0 when none was
/// being recorded). Throws Error naming the file when it cannot be written.
size_t stop_trace();
namespace detail {
/// Set while a trace is recorded (trace.cpp); read once per launch.
extern std::atomic<bool> trace_on;
}  // namespace detail

/// Whether a trace is being recorded: one relaxed load, cheap enough for every kernel launch.
inline bool tracing() { return detail::trace_on.load(std::memory_order_relaxed); }

}  // namespace lathe
