// Kernel ASTs of small tensor graphs, as the scheduler makes them, for codegen tests.
#pragma once

#include <gtest/gtest.h>

#include "ir/symbolic.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"

namespace lathe::test {

/// The kernel that computes `t` (simplified): the schedule's last. Kernels before it prepare its
/// inputs (a convolution's stored padded input and weight layout).
inline UOpPtr kernel_ast(const Tensor& t) {
  Schedule s = create_schedule({t.uop()}, default_schedule_context());
  for (auto it = s.items.rbegin(); it != s.items.rend(); ++it)
    if (!it->is_view()) return simplify(it->ast);
  ADD_FAILURE() << "no kernel computes the tensor";
  return nullptr;
}

}  // namespace lathe::test
