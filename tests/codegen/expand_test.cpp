// The vector pass (codegen/expand): a reduction along the vector axis keeps a vector accumulator
// and combines its lanes at the end by halving the vector (an upper half combined with its lower
// half, a shuffle and one vector op a step), not lane by lane; the values agree with the
// unoptimized kernel for sums and maxima of floats and integers. A load that is contiguous along
// the vector axis under a gate that changes inside the vector (a padded row's edge) is one masked
// vector load.
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
        ProgramSpec p = build_program(test::last_kernel(plan).ast, CRenderer(), {.verify = true, .target = {.threads = 1}, .opts = opts});
        std::multiset<int> widths = widths_of(p.ast, maximum ? Ops::MAX : Ops::ADD, dt);
        for (int w : {8, 4, 2}) EXPECT_EQ(widths.count(w), 1u) << "one combine of " << w << "-lane halves";
        EXPECT_EQ(widths.count(1), 1u) << "the last two lanes";
        if (dt == dtypes::float32) EXPECT_TRUE(test::close(test::run_with(plan, opts, 1), test::reference(plan), 1e-6));
        else EXPECT_TRUE(test::close(test::run_with<int32_t>(plan, opts, 1), test::reference<int32_t>(plan)));
      }
    }
  }
}

// x padded along its columns, times 3, with the columns in vectors of 16: the loads at a row's
// edges are contiguous but their gate changes lane by lane. Each is one vector load with a gate
// per lane; the values agree with plain loops (zero in the padding) for floats and integers.
// 16-bit floats (widened lane by lane) keep their lane loads.
TEST(Expand, AGateThatChangesAlongTheVectorIsAMaskedLoad) {
  struct Case {
    int64_t rows, cols, before, after;
  };
  for (Case c : {Case{4, 13, 2, 1}, Case{1, 30, 1, 1}, Case{3, 45, 2, 1}, Case{5, 3, 7, 6}}) {
    for (DType dt : {dtypes::float32, dtypes::int32, dtypes::float16}) {
      SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols) + " padded " + std::to_string(c.before) + "," +
                   std::to_string(c.after) + " " + dt.name());
      int64_t width = c.cols + c.before + c.after;
      std::vector<float> xv = test::grid_data(static_cast<size_t>(c.rows * c.cols), 5);
      Tensor x = Tensor::from_vector(xv, {c.rows, c.cols}).cast(dt).realize();  // stored as `dt`
      std::vector<float> stored = x.cast(dtypes::float32).to_vector<float>();
      Tensor y = (x.pad({{0, 0}, {c.before, c.after}}) * Tensor::full({}, 3.0, dt)).cast(dtypes::float32);
      ExecutionPlan plan = test::one_kernel_plan(y);
      int64_t axis = test::axis_sized(plan, width);
      ASSERT_GE(axis, 0);
      std::vector<Opt> opts{{OptOp::UPCAST, axis, 16}};
      ProgramSpec p = build_program(test::last_kernel(plan).ast, CRenderer(), {.verify = true, .target = {.threads = 1}, .opts = opts});
      int masked = 0, lanes = 0;
      for (const UOpPtr& u : toposort(p.ast)) {
        if (u->op() != Ops::LOAD || u->src(0)->src(0)->op() != Ops::DEFINE_GLOBAL) continue;
        bool per_lane = u->src(0)->src().size() == 3 && u->src(0)->src(2)->dtype().count() > 1;
        masked += per_lane;
        lanes += u->dtype().count() == 1;
      }
      if (dt == dtypes::float16) {
        EXPECT_EQ(masked, 0) << p.src;
      } else {
        EXPECT_GE(masked, 1) << p.src;
        EXPECT_EQ(lanes, 0) << p.src;
      }
      std::vector<float> want;
      for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t j = 0; j < width; ++j) {
          int64_t col = j - c.before;
          want.push_back(col >= 0 && col < c.cols ? 3.0f * stored[static_cast<size_t>(i * c.cols + col)] : 0.0f);
        }
      EXPECT_TRUE(test::close(test::run_with(plan, opts, 1), want, dt == dtypes::float16 ? 1e-2 : 1e-6));
    }
  }
}

// exp(x - max(x)) over rows, in one kernel: the max reduces along its columns in vectors, and
// the row it stores after it is a second vector axis (the stores, the loads of x and the exp
// are vectors of 16, not 16 scalar copies). Values agree with the unoptimized kernel, for row
// lengths the tail's vectors divide and rows of one vector.
TEST(Expand, WhatIsStoredAfterAReductionAlongTheVectorAxisIsVectorizedAlongItsOwnAxis) {
  for (int64_t cols : {16, 64, 96}) {
    SCOPED_TRACE(std::to_string(cols) + " columns");
    Tensor x = Tensor::from_vector(test::grid_data(7 * cols, 4), {7, cols});
    Tensor y = (x - x.max({1}, true)).exp();
    ExecutionPlan plan = test::one_kernel_plan(y);
    int64_t k = test::axis_sized(plan, cols, true), j = test::axis_sized(plan, cols, false);
    ASSERT_GE(k, 0);
    ASSERT_GE(j, 0);
    std::vector<Opt> opts{{OptOp::UNROLL, k, 16}, {OptOp::UPCAST, j, 16}};
    ProgramSpec p = build_program(test::last_kernel(plan).ast, CRenderer(), {.verify = true, .target = {.threads = 1}, .opts = opts});
    std::multiset<int> stores, maxes;
    for (const UOpPtr& u : toposort(p.ast)) {
      if (u->op() == Ops::STORE) stores.insert(u->src(1)->dtype().count());
      if (u->op() == Ops::MAX && u->dtype().scalar() == dtypes::float32) maxes.insert(u->dtype().count());
    }
    ASSERT_FALSE(stores.empty());
    EXPECT_EQ(stores.count(16), stores.size()) << "every store of 16 lanes\n" << p.src;
    EXPECT_GE(maxes.count(16), 1u) << "the max accumulates in vectors";
    EXPECT_TRUE(test::close(test::run_with(plan, opts, 1), test::reference(plan), 1e-6));
  }
}

}  // namespace
}  // namespace lathe
