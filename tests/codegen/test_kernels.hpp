// Kernel ASTs of small tensor graphs, as the scheduler makes them, for codegen tests.
#pragma once

#include <gtest/gtest.h>

#include "ir/symbolic.hpp"
#include "lathe/lathe.hpp"
#include "schedule/schedule.hpp"

namespace lathe::test {

/// The one kernel `t` schedules to (simplified).
inline UOpPtr kernel_ast(const Tensor& t) {
  Schedule s = create_schedule({t.uop()});
  EXPECT_EQ(s.items.size(), 1u);
  return simplify(s.items.at(0).ast);
}

}  // namespace lathe::test
