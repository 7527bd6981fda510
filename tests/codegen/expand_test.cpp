// The vector pass (codegen/expand): a reduction along the vector axis keeps a vector accumulator
// and combines its lanes at the end by halving the vector (an upper half combined with its lower
// half, a shuffle and one vector op a step), not lane by lane; the values agree with the
// unoptimized kernel for sums and maxima of floats and integers.
#include <gtest/gtest.h>

#include <set>

#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "ir/toposort.hpp"
#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The lane counts of `op`'s results of element type `dt` in the lowered kernel.
std::multiset<int> widths_of(const UOpPtr& ast, Ops op, DType dt) {
  std::multiset<int> widths;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == op && u->dtype().scalar() == dt) widths.insert(u->dtype().count());
  return widths;
}

TEST(Expand, AReductionAlongTheVectorAxisCombinesItsLanesByHalves) {
  for (int64_t cols : {16, 64, 80}) {
    for (bool maximum : {false, true}) {
      for (DType dt : {dtypes::float32, dtypes::int32}) {
        SCOPED_TRACE(std::to_string(cols) + (maximum ? " max " : " sum ") + dt.name());
        Tensor x = Tensor::from_vector(test::grid_data(5 * cols, 3), {5, cols}).cast(dt);
        Tensor y = maximum ? x.max({1}) : x.sum({1});
        ExecutionPlan plan = test::one_kernel_plan(y);
        int64_t axis = test::axis_sized(plan, cols, true);
        ASSERT_GE(axis, 0);
        std::vector<Opt> opts{{OptOp::UNROLL, axis, 16}};
        ProgramSpec p = build_program(test::last_kernel(plan).ast, CRenderer(), {.max_threads = 1, .verify = true, .opts = opts});
        std::multiset<int> widths = widths_of(p.ast, maximum ? Ops::MAX : Ops::ADD, dt);
        for (int w : {8, 4, 2}) EXPECT_EQ(widths.count(w), 1u) << "one combine of " << w << "-lane halves";
        EXPECT_EQ(widths.count(1), 1u) << "the last two lanes";
        if (dt == dtypes::float32) EXPECT_TRUE(test::close(test::run_with(plan, opts, 1), test::reference(plan), 1e-6));
        else EXPECT_TRUE(test::close(test::run_with<int32_t>(plan, opts, 1), test::reference<int32_t>(plan)));
      }
    }
  }
}

}  // namespace
}  // namespace lathe
