// Running one kernel with chosen optimizer actions beside the unoptimized kernel, on the same
// buffers: the reference every action and heuristic is checked against.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "codegen/pipeline.hpp"
#include "lathe/lathe.hpp"
#include "opt/action.hpp"
#include "opt/heuristic.hpp"
#include "runtime/compile_kernel.hpp"

namespace lathe::test {

/// The unoptimized plan of `t`, run once. Its last kernel computes `t`; any before it prepare
/// that kernel's inputs (a convolution's padded input and weight layout), kept in buffers of their
/// own after execute() so the last kernel can run again on them.
inline ExecutionPlan one_kernel_plan(const Tensor& t) {
  ExecutionPlan plan =
      Tensor::prepare({t}, PrepareOptions{.optimize = false, .threads = 1, .share_memory = false, .poison = false});
  if (plan.prepared_kernels().empty()) ADD_FAILURE() << "the plan has no kernel";
  plan.execute();
  return plan;
}

/// The kernel of `plan` that computes its output.
inline const PreparedKernel& last_kernel(const ExecutionPlan& plan) { return *plan.prepared_kernels().back(); }

/// The kernel's loops as the optimizer sees them.
inline std::vector<Loop> loops_of(const ExecutionPlan& plan) {
  return kernel_loops(optimizer_input(last_kernel(plan).ast));
}

/// The axis of the kernel's loop of `size` (an output loop, or a reduction's); -1 when none.
inline int64_t axis_sized(const ExecutionPlan& plan, int64_t size, bool reduce = false) {
  for (const Loop& l : loops_of(plan))
    if (l.size == size && l.reduce == reduce) return l.axis;
  return -1;
}

/// The output of `plan`'s kernel compiled with `opts` (on `threads` threads), its output buffer
/// first filled with NaN so nothing of the earlier run survives.
template <class T = float>
std::vector<T> run_with(const ExecutionPlan& plan, const std::vector<Opt>& opts, int threads = 2) {
  const PreparedKernel& k = last_kernel(plan);
  auto kernel = compile_kernel(k.ast, plan.device(), PrepareOptions{.threads = threads, .verify = true}, opts);
  Buffer out = *plan.output_buffer();
  std::vector<unsigned char> poison(out.nbytes(), 0xff);
  if (!poison.empty()) out.copyin(poison.data(), poison.size());
  launch_on(*kernel, k);
  return out.to_vector<T>();
}

/// Expects `opts` on `plan`'s kernel to be refused with an OptError whose message says `why`.
inline void expect_refused(const ExecutionPlan& plan, const std::vector<Opt>& opts, const std::string& why) {
  try {
    run_with(plan, opts);
    ADD_FAILURE() << to_string(opts) << " was accepted";
  } catch (const OptError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

/// The unoptimized plan's own output: its kernels as prepared (not through run_with), run again.
template <class T = float>
std::vector<T> reference(const ExecutionPlan& plan) {
  plan.execute();
  return plan.output_buffer()->to_vector<T>();
}

/// Equal within `rtol` relative to the largest magnitude of `want` (exact for integers).
template <class T>
::testing::AssertionResult close(const std::vector<T>& got, const std::vector<T>& want, double rtol = 1e-5) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, want " << want.size();
  double scale = 1;
  for (const T& w : want) {
    // The inputs are finite: a NaN in the reference means it was never written.
    if (std::isnan(static_cast<double>(w))) return ::testing::AssertionFailure() << "the reference holds NaN";
    scale = std::max(scale, std::abs(static_cast<double>(w)));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(g) != std::isnan(w) || std::abs(g - w) > rtol * scale)
      return ::testing::AssertionFailure() << "at " << i << ": " << g << ", want " << w;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace lathe::test
