#include <gtest/gtest.h>

#include "ir/symbolic.hpp"
#include "lathe/uop.hpp"

namespace lathe {
namespace {

void expect_bounds(const UOpPtr& u, int64_t lo, int64_t hi) {
  EXPECT_EQ(u->vmin(), lo) << print_graph(u);
  EXPECT_EQ(u->vmax(), hi) << print_graph(u);
}

TEST(Bounds, Leaves) {
  expect_bounds(UOp::index_const(7), 7, 7);
  expect_bounds(UOp::variable("n", 2, 9), 2, 9);
  expect_bounds(UOp::range(UOp::index_const(16), 0), 0, 15);
  expect_bounds(UOp::range(UOp::variable("n", 1, 64), 0), 0, 63);
  expect_bounds(UOp::const_(dtypes::bool_, true), 1, 1);
  expect_bounds(UOp::make(Ops::BIND, dtypes::index, {UOp::variable("n", 1, 8), UOp::index_const(3)}), 1, 8);
}

TEST(Bounds, AnEmptyLoopIsNotTheConstantZero) {
  UOpPtr empty = UOp::range(UOp::index_const(0), 0);
  EXPECT_NE(simplify(empty * 5 + 1), UOp::index_const(1));  // its body must stay inside the loop
  UOpPtr once = UOp::range(UOp::index_const(1), 1);
  EXPECT_EQ(simplify(once * 5 + 1), UOp::index_const(1));  // one trip: index 0
  UOpPtr maybe = UOp::range(UOp::variable("n", 0, 1), 2);  // zero or one trip
  EXPECT_NE(simplify(maybe * 5), UOp::index_const(0));
}

TEST(Bounds, Arithmetic) {
  UOpPtr x = UOp::variable("x", -3, 5);
  UOpPtr y = UOp::variable("y", 2, 4);
  expect_bounds(x + y, -1, 9);
  expect_bounds(x - y, -7, 3);
  expect_bounds(x * y, -12, 20);
  expect_bounds(x * -2, -10, 6);
  expect_bounds(-x, -5, 3);
  expect_bounds(idiv(x, y), -1, 2);  // truncation: -3/2 = -1, 5/2 = 2
  expect_bounds(x % y, -3, 3);
  expect_bounds(y % 3, 0, 2);
  expect_bounds(max(x, y), 2, 5);
  expect_bounds(min(x, y), -3, 4);
}

TEST(Bounds, ComparisonsDecidedByRanges) {
  UOpPtr x = UOp::variable("x", 0, 5);
  UOpPtr y = UOp::variable("y", 6, 9);
  expect_bounds(lt(x, y), 1, 1);
  expect_bounds(lt(y, x), 0, 0);
  expect_bounds(lt(x, UOp::index_const(3)), 0, 1);
  expect_bounds(ne(x, y), 1, 1);
  expect_bounds(eq(x, y), 0, 0);
  expect_bounds(where(lt(x, y), x, y), 0, 5);
  expect_bounds(where(lt(x, UOp::index_const(3)), x, y), 0, 9);
}

TEST(Bounds, OverflowFallsBackToTheDtypeRange) {
  UOpPtr x = UOp::make(Ops::DEFINE_VAR, dtypes::int32, {}, VarArg{"x", 0, 2000000000});
  UOpPtr s = x + UOp::const_(dtypes::int32, 2000000000);
  expect_bounds(s, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  UOpPtr big = UOp::variable("big", 0, std::numeric_limits<int64_t>::max());
  expect_bounds(big * 2, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
}

TEST(Bounds, DivisionByARangeContainingZeroIsUnknown) {
  UOpPtr x = UOp::variable("x", 0, 5);
  UOpPtr z = UOp::variable("z", -1, 1);
  expect_bounds(idiv(x, z), std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
}

TEST(Bounds, Casts) {
  UOpPtr x = UOp::variable("x", 0, 300);
  expect_bounds(cast(x, dtypes::int32), 0, 300);
  expect_bounds(cast(x, dtypes::uint8), 0, 255);  // may wrap: whole range
  expect_bounds(cast(UOp::variable("p", 1, 4), dtypes::bool_), 1, 1);
}

}  // namespace
}  // namespace lathe
