// step_along: how far an index expression moves when a loop steps by one. Affine expressions are
// read off the graph; anything else is the simplified difference of two positions. Every answer
// is checked against the expression evaluated at each position of the loop.
#include <gtest/gtest.h>

#include <optional>

#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"

namespace lathe {
namespace {

// The step of x along r found by evaluating x at every position of r and every value of `other`
// (nothing when it differs between positions).
std::optional<int64_t> stepped(const UOpPtr& x, const UOpPtr& r, const UOpPtr& other) {
  std::optional<int64_t> step;
  for (int64_t v = other->vmin(); v <= other->vmax(); ++v)
    for (int64_t i = 0; i + 1 < r->src(0)->vmax(); ++i) {
      auto at = [&](int64_t p) {
        UOpPtr e = simplify(substitute(x, {{r.get(), UOp::index_const(p)}, {other.get(), UOp::index_const(v)}}));
        EXPECT_TRUE(e->is_const()) << to_string(*e);
        return const_as_int(e->const_value());
      };
      int64_t d = at(i + 1) - at(i);
      if (step && *step != d) return std::nullopt;
      step = d;
    }
  return step.value_or(0);
}

struct StepCase {
  const char* name;
  UOpPtr x;
  std::optional<int64_t> expected;
};

TEST(StepAlong, AgreesWithTheExpressionAtEveryPosition) {
  UOpPtr r = UOp::range(UOp::index_const(7), 0);
  UOpPtr s = UOp::variable("s", 0, 5);
  const StepCase cases[] = {
      {"the loop itself", r, 1},
      {"a multiple plus a constant", r * 4 + 7, 4},
      {"constant first", 3 * r, 3},
      {"sums of multiples with another variable", (r * 3 + s * 5) * 2 - r, 5},
      {"a negation", -(r * 6) + s, -6},
      {"a difference the wrong way round", s - r * 2, -2},
      {"not varying", s * 9 + 1, 0},
      {"a multiple of a product with another variable", r * s, std::nullopt},
      {"a square", r * r, std::nullopt},
      {"a division that steps evenly", idiv(r * 4, 2) + s, 2},
      {"a division that does not", idiv(r, 2), std::nullopt},
      {"a remainder", (r + s) % 3, std::nullopt},
  };
  for (const StepCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(step_along(c.x, r), c.expected);
    EXPECT_EQ(stepped(c.x, r, s), c.expected);
  }
}

TEST(StepAlong, ALoopThatRunsOnceDoesNotStep) {
  UOpPtr once = UOp::range(UOp::index_const(1), 0);
  EXPECT_EQ(step_along(once * 8, once), 0);
}

TEST(StepAlong, AReductionOverTheLoopDoesNotVaryWithIt) {
  UOpPtr r = UOp::range(UOp::index_const(5), 0);
  UOpPtr q = UOp::range(UOp::index_const(5), 1);
  UOpPtr total = UOp::make(Ops::REDUCE, dtypes::index, {r * 2 + q, r}, Ops::ADD);
  EXPECT_EQ(step_along(total * 3, r), 0);
  EXPECT_EQ(step_along(total * 3 + r, r), 1);
}

// Inside the loops, a clamped index (a padded or PADTO'd loop's edge) steps as its affine part
// does, where step_along, asked for one step across the whole range, has none.
TEST(StepInside, StepsAwayFromTheClampsAtTheEdges) {
  UOpPtr r = UOp::range(UOp::index_const(9), 0);
  UOpPtr k = UOp::range(UOp::index_const(3), 1);
  UOpPtr clamped = min(max(r * 6 + k - 1, UOp::index_const(0)), UOp::index_const(50));
  EXPECT_EQ(step_along(clamped, r), std::nullopt);
  EXPECT_EQ(step_inside(clamped, r, {r, k}), 6);
  EXPECT_EQ(step_inside(clamped, k, {r, k}), 1);
  EXPECT_EQ(step_inside(r * 4 + k * 5, r, {r, k}), 4) << "an affine index: step_along's answer";
  EXPECT_EQ(step_inside(r * k, r, {r, k}), 1) << "a product: its step with k at its second position";
  EXPECT_EQ(step_inside(r * 8, UOp::range(UOp::index_const(2), 2), {r}), 0) << "a loop of two positions";
  EXPECT_EQ(step_inside(r * r, r, {r, k}), 3) << "r's square: its difference from the second position to the third";
  UOpPtr s = UOp::variable("s", 0, 5);
  EXPECT_EQ(step_inside(r * s, r, {r, k}), std::nullopt) << "a variable no loop fixes";
}

}  // namespace
}  // namespace lathe
