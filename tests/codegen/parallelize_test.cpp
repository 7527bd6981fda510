// Splitting kernels across threads: a grouped reduction (GROUP) against the unoptimized kernel.
#include <gtest/gtest.h>

#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::close;

// A padded convolution's window loops are bounded by the output pixel once its gates become loop
// bounds (codegen/gate_bounds): grouping one of them, or a loop beside them, gives each core loops
// over the pixels of its own, and every bound must follow them there.
TEST(Parallelize, AGroupedReductionWhoseLoopsAreBoundedByTheOutput) {
  Tensor x = test::random_tensor({1, 3, 5, 7}, 3), w = test::random_tensor({2, 3, 3, 3}, 4);
  Tensor y = x.conv2d(w, std::nullopt, {1, 1}, {1, 1});
  ExecutionPlan plan = test::one_kernel_plan(y);
  std::vector<float> want = test::reference(plan);
  int tried = 0;
  for (const Loop& l : test::loops_of(plan)) {
    if (!l.reduce || l.size < 2) continue;
    for (int64_t n : {2, 3}) {
      EXPECT_TRUE(close(test::run_with(plan, {{OptOp::GROUP, l.axis, n}}, 3), want)) << "GROUP(" << l.axis << ", " << n << ")";
      ++tried;
    }
  }
  EXPECT_GE(tried, 4) << "the convolution has window and channel loops to group";
}

}  // namespace
}  // namespace lathe
