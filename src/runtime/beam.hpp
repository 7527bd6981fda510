// BEAM search: a kernel's optimization actions chosen by timing candidates on the plan's real
// buffers instead of by the heuristics. Each round extends every surviving action list by one
// action (an upcast or unroll of a loop, a swap of two loops, threads), compiles the new lists
// (one at a time), times them, and keeps the `width` fastest; it stops when a round finds
// nothing faster. The winner is stored on disk under the cache directory, keyed by the kernel's
// structural hash, the device and the compiler's identity (which names the CPU's features), so
// the search is paid once per kernel and machine.
#pragma once

#include <memory>
#include <string>

#include "lathe/kernel.hpp"
#include "lathe/plan.hpp"

namespace lathe {

/// The kernel for `bound.ast` with the fastest actions BEAM finds (or has stored), timed on the
/// buffers `bound` has in its plan. `label` heads the progress line on stderr ("kernel 3/27").
std::shared_ptr<CachedKernel> beam_search(const PreparedKernel& bound, const DeviceSpec& device, const PrepareOptions& options,
                                          int width, const std::string& label);

/// BEAM's width: `options.beam`, else the BEAM environment variable; 0 means off.
int beam_width(const PrepareOptions& options);

}  // namespace lathe
