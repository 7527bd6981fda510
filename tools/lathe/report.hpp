// What `lathe run` and `lathe bench` print about a plan beside its latency: the per-kernel
// profile and where its memory goes.
#pragma once

#include <string>

#include "lathe/plan.hpp"

namespace lathe::cli {

/// Runs the plan `runs` times with timing and prints one line per kernel (median time, share,
/// GFLOP/s and GB/s from its counted work, its optimizer actions, the ONNX nodes fused into it),
/// then the totals.
void print_profile(const ExecutionPlan& plan, int runs);

/// "memory: ..." — the intermediates' arena beside their sum and peak live set, the constants,
/// the inputs and outputs, the process's peak.
void print_memory(const ExecutionPlan& plan);

/// This process's peak resident memory so far (VmHWM), in MB: its own, without the compiler
/// processes it ran (which /usr/bin/time -v counts in).
double peak_resident_mb();

/// The same as JSON members (with the process's peak) (without braces): "arena_bytes": N, ...
std::string memory_json(const ExecutionPlan& plan);

}  // namespace lathe::cli
