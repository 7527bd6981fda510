#include <gtest/gtest.h>

#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"

namespace lathe {
namespace {

UOpPtr var(const char* name, int64_t lo, int64_t hi) { return UOp::variable(name, lo, hi); }
UOpPtr c(int64_t v) { return UOp::index_const(v); }

// `expected` is simplified too: the check is that both reach the same canonical node.
#define EXPECT_SIMPLIFIES(expr, expected)                                                       \
  do {                                                                                          \
    UOpPtr got_ = simplify(expr);                                                               \
    UOpPtr want_ = simplify(expected);                                                          \
    EXPECT_EQ(got_, want_) << "got:\n" << print_graph(got_) << "want:\n" << print_graph(want_); \
  } while (0)

TEST(Symbolic, ConstantFolding) {
  EXPECT_SIMPLIFIES(c(3) * c(4) + c(5), c(17));
  EXPECT_SIMPLIFIES(idiv(c(-7), c(2)), c(-3));  // truncates toward zero, as C does
  EXPECT_SIMPLIFIES(c(-7) % c(2), c(-1));
  EXPECT_SIMPLIFIES(max(c(-7), c(2)), c(2));
  EXPECT_SIMPLIFIES(UOp::const_(dtypes::float32, 1.5) + UOp::const_(dtypes::float32, 2.25),
                    UOp::const_(dtypes::float32, 3.75));
  EXPECT_SIMPLIFIES(cast(UOp::const_(dtypes::int32, 300), dtypes::uint8), UOp::const_(dtypes::uint8, 44));
  // Division by zero is undefined: left alone, never folded.
  UOpPtr div0 = idiv(c(1), c(0));
  EXPECT_SIMPLIFIES(div0, div0);
}

TEST(Symbolic, Identities) {
  UOpPtr x = var("x", 0, 9);
  EXPECT_SIMPLIFIES(x + 0, x);
  EXPECT_SIMPLIFIES(x * 1, x);
  EXPECT_SIMPLIFIES(x * 0, c(0));
  EXPECT_SIMPLIFIES(idiv(x, 1), x);
  EXPECT_SIMPLIFIES(x % 1, c(0));
  EXPECT_SIMPLIFIES(x - x, c(0));
  EXPECT_SIMPLIFIES(max(x, x), x);
  UOpPtr f =
      UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, int64_t{0})});
  EXPECT_SIMPLIFIES(f * UOp::const_(dtypes::float32, 0.0), f * UOp::const_(dtypes::float32, 0.0));  // NaN * 0 != 0
  EXPECT_SIMPLIFIES(f + UOp::const_(dtypes::float32, 0.0), f);
}

// x * (1 / y) divides where y is computed from x (a SiLU), and keeps its multiply where 1 / y may be
// computed once for many x: from a reduction of x (a softmax's sum) or from something else.
TEST(Symbolic, AMultiplyByTheReciprocalOfAnExpressionOfItsOperandDivides) {
  auto global = [](int64_t slot) { return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, slot); };
  UOpPtr r = UOp::range(c(7), 0);
  UOpPtr x = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32.ptr(), {global(0), r})});
  UOpPtr one = UOp::const_(dtypes::float32, 1.0);
  auto sigmoid_denominator = [&](const UOpPtr& v) { return one + UOp::alu(Ops::EXP2, {UOp::alu(Ops::NEG, {v})}); };
  UOpPtr y = sigmoid_denominator(x);
  UOpPtr silu = simplify(x * UOp::alu(Ops::FDIV, {one, y}));
  EXPECT_EQ(silu->op(), Ops::FDIV);
  EXPECT_EQ(silu, simplify(UOp::alu(Ops::FDIV, {x, y})));

  UOpPtr sum = UOp::make(Ops::REDUCE, dtypes::float32, {x, r}, Ops::ADD);
  UOpPtr normalized = simplify(x * UOp::alu(Ops::FDIV, {one, sum}));
  EXPECT_EQ(normalized->op(), Ops::MUL);

  UOpPtr gate =
      UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, dtypes::float32.ptr(), {global(1), c(0)})});
  UOpPtr gated = simplify(x * UOp::alu(Ops::FDIV, {one, sigmoid_denominator(gate)}));
  EXPECT_EQ(gated->op(), Ops::MUL);
}

TEST(Symbolic, TermCollection) {
  UOpPtr x = var("x", 0, 9);
  UOpPtr y = var("y", 0, 9);
  EXPECT_SIMPLIFIES(x * 2 + x * 3, x * 5);
  EXPECT_SIMPLIFIES(x + x, x * 2);
  EXPECT_SIMPLIFIES((x + 3) + (y + 4) - x, y + 7);
  EXPECT_SIMPLIFIES((x + y) * 3 - y * 3, x * 3);
  EXPECT_SIMPLIFIES((x * 2) * 3, x * 6);
  EXPECT_SIMPLIFIES(2 * x, x * 2);
  // Canonical order: the same sum built two ways is one node.
  EXPECT_EQ(simplify(x + y + 1), simplify(1 + y + x));
  EXPECT_EQ(simplify(x * y), simplify(y * x));
}

TEST(Symbolic, DivModByConstantsUseBounds) {
  UOpPtr x = var("x", 0, 9);
  UOpPtr y = var("y", 0, 3);
  EXPECT_SIMPLIFIES(idiv(x * 4 + y, 4), x);  // 0 <= y < 4
  EXPECT_SIMPLIFIES((x * 4 + y) % 4, y);
  EXPECT_SIMPLIFIES(idiv(x * 8 + y + 5, 4), x * 2 + idiv(y + 5, 4));
  EXPECT_SIMPLIFIES(idiv(y, 4), c(0));
  EXPECT_SIMPLIFIES(y % 4, y);
  EXPECT_SIMPLIFIES(idiv(x * 6 + 4, 2), x * 3 + 2);
  EXPECT_SIMPLIFIES(idiv(idiv(x, 2), 3), idiv(x, 6));
  EXPECT_SIMPLIFIES((x % 12) % 4, x % 4);
  EXPECT_SIMPLIFIES(idiv(x, 3) * 3 + x % 3, x);  // what a reshape round trip leaves
  EXPECT_SIMPLIFIES((x * 6 + 4) % 4, (x * 3 + 2) % 2 * 2);
}

TEST(Symbolic, DivModFoldAPartialCommonFactor) {
  UOpPtr a = var("a", 0, 20);
  UOpPtr b = var("b", 0, 31);
  // 32a + b with 0 <= b < 32: dividing by 96 only looks at a.
  EXPECT_SIMPLIFIES(idiv(a * 32 + b, 96), idiv(a, 3));
  EXPECT_SIMPLIFIES((a * 32 + b) % 96, (a % 3) * 32 + b);
  EXPECT_SIMPLIFIES(idiv(a * 32 + b + 64, 96), idiv(a + 2, 3));
  // b may reach 32 here: nothing folds.
  UOpPtr wide = var("w", 0, 32);
  EXPECT_EQ(simplify(idiv(a * 32 + wide, 96)), idiv(a * 32 + wide, 96));
}

TEST(Symbolic, ReshapeChainsRecombine) {
  UOpPtr x = var("x", 0, 10000);
  // Three levels of a reshape's div/mod, as a split of 196 = 14 x 14 leaves them.
  EXPECT_SIMPLIFIES(idiv(x, 196) * 196 + (idiv(x, 14) % 14) * 14 + x % 14, x);
  EXPECT_SIMPLIFIES((idiv(x, 196) * 196 + (idiv(x, 14) % 14) * 14 + x % 14) % 14, x % 14);
  EXPECT_SIMPLIFIES(idiv(x % 196, 14), idiv(x, 14) % 14);
  UOpPtr v = var("v", 1, 56);
  EXPECT_SIMPLIFIES((v + 55) % 56, v - 1);  // the quotient is 1 for every v
  EXPECT_SIMPLIFIES(idiv(x, 6) * 12 + (idiv(x, 2) % 3) * 4, idiv(x, 2) * 4);
}

TEST(Symbolic, DivModOfPossiblyNegativeValuesKeepTruncation) {
  UOpPtr x = var("xn", -9, 9);
  UOpPtr y = var("y", 0, 3);
  // (x*4 + y) / 4 == x only when x >= 0: for x = -1, y = 1, (-3) / 4 == 0.
  UOpPtr e = idiv(x * 4 + y, 4);
  EXPECT_NE(simplify(e), x);
}

TEST(Symbolic, ComparisonsFromBounds) {
  UOpPtr x = var("x", 0, 9);
  UOpPtr t = UOp::const_(dtypes::bool_, true);
  UOpPtr f = UOp::const_(dtypes::bool_, false);
  EXPECT_SIMPLIFIES(lt(x, 10), t);
  EXPECT_SIMPLIFIES(lt(x, 0), f);
  EXPECT_SIMPLIFIES(lt(x + 5, 3), f);
  EXPECT_SIMPLIFIES(lt(x + 5, 8), lt(x, 3));
  EXPECT_SIMPLIFIES(lt(x * 4, 10), lt(x, 3));  // 4x < 10  <=>  x < 3
  EXPECT_SIMPLIFIES(ne(x, c(20)), t);
  EXPECT_SIMPLIFIES(lt(x, x), f);
}

// y / d < c is y < c*d for c >= 1, whatever y's sign (truncation makes a negative y / d at most
// 0): the gate a merged loop leaves (ir/merge_loops). Checked value by value.
TEST(Symbolic, ComparingAQuotientComparesItsDividend) {
  UOpPtr y = var("yq", -40, 40);
  EXPECT_SIMPLIFIES(lt(idiv(y, 8), 3), lt(y, 24));
  for (int64_t k : {-2, 0, 1, 3}) {
    UOpPtr e = simplify(lt(idiv(y, 8), k));
    for (int64_t v = -40; v <= 40; ++v) {
      UOpPtr at = simplify(substitute(e, {{y.get(), c(v)}}));
      ASSERT_TRUE(at->is_const()) << print_graph(at);
      EXPECT_EQ(at->vmin() != 0, (v / 8) < k) << v << " / 8 < " << k;
    }
  }
}

// In a narrow integer type the rewritten bound must be a value of that type: int8 y / 64 < 2 holds
// for every y, and y < 128 would wrap to y < -128 (and c - k likewise).
TEST(Symbolic, ABoundANarrowIntegerCannotHoldIsNotWritten) {
  UOpPtr y = UOp::variable("y8", -128, 127, dtypes::int8);
  auto i8 = [](int64_t v) { return UOp::const_(dtypes::int8, v); };
  for (UOpPtr e : {lt(idiv(y, i8(64)), i8(2)), lt(y + i8(-100), i8(30))}) {
    UOpPtr s = simplify(e);
    for (int64_t v = -128; v <= 127; ++v) {
      UOpPtr want = simplify(substitute(e, {{y.get(), i8(v)}})), got = simplify(substitute(s, {{y.get(), i8(v)}}));
      ASSERT_TRUE(want->is_const() && got->is_const()) << print_graph(got);
      EXPECT_EQ(got->vmin(), want->vmin()) << v << " in " << print_graph(s);
    }
  }
}

TEST(Symbolic, WhereAndMinMax) {
  UOpPtr x = var("x", 0, 9);
  UOpPtr y = var("y", 20, 30);
  EXPECT_SIMPLIFIES(where(lt(x, 10), x, y), x);
  EXPECT_SIMPLIFIES(where(lt(x, 3), y, y), y);
  EXPECT_SIMPLIFIES(max(x, y), y);
  EXPECT_SIMPLIFIES(min(x, y), x);
  EXPECT_SIMPLIFIES(max(x, c(0)), x);
  EXPECT_SIMPLIFIES(min(x, c(9)), x);
}

TEST(Symbolic, Booleans) {
  UOpPtr b = lt(var("x", 0, 9), var("y", 0, 9));
  UOpPtr t = UOp::const_(dtypes::bool_, true);
  UOpPtr f = UOp::const_(dtypes::bool_, false);
  EXPECT_SIMPLIFIES(logical_and(b, t), b);
  EXPECT_SIMPLIFIES(logical_and(b, f), f);
  EXPECT_SIMPLIFIES(logical_or(b, f), b);
  EXPECT_SIMPLIFIES(logical_or(b, t), t);
  EXPECT_SIMPLIFIES(logical_not(logical_not(b)), b);
}

// simplify under a SimplifyMemo holds what it saw until the outermost memo on the thread goes; an
// inner one adds nothing (what it saw is the outer one's).
TEST(Symbolic, AMemoHoldsItsNodesUntilTheOutermostGoes) {
  std::weak_ptr<const UOp> seen;
  {
    SimplifyMemo outer;
    {
      SimplifyMemo inner;
      UOpPtr g = (UOp::variable("memo_x", 0, 9) + 3) * 2 - 6;
      seen = g;
      EXPECT_EQ(simplify(g), UOp::variable("memo_x", 0, 9) * 2);
    }
    EXPECT_FALSE(seen.expired());
  }
  EXPECT_TRUE(seen.expired());
  UOpPtr g = (UOp::variable("memo_x", 0, 9) + 3) * 2 - 6;  // without a memo: nothing is held
  seen = g;
  EXPECT_EQ(simplify(g), UOp::variable("memo_x", 0, 9) * 2);
  g.reset();
  EXPECT_TRUE(seen.expired());
}

}  // namespace
}  // namespace lathe
