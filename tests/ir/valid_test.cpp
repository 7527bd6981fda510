#include <gtest/gtest.h>

#include "ir/eval.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

UOpPtr buf() { return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 48), {}, int64_t{1}); }
UOpPtr gated_index(const UOpPtr& offset, const UOpPtr& gate) { return UOp::make(Ops::INDEX, buf()->dtype(), {buf(), offset, gate}); }
UOpPtr load(const UOpPtr& index) { return UOp::make(Ops::LOAD, dtypes::float32, {index}); }

// A clause `r + rest < c` bounds r by c - rest; where r sits inside the rest too (r + r / 2 < c)
// it bounds no loop alone.
TEST(BoundOn, AClauseBoundsItsLoopOnlyWhereTheRestDoesNotReadIt) {
  UOpPtr r = UOp::range(UOp::index_const(40), 0), j = UOp::range(UOp::index_const(8), 1);
  std::optional<GateClause> plain = as_clause(lt(r + j * 3, 30));
  ASSERT_TRUE(plain.has_value());
  std::optional<LoopBound> b = bound_on(*plain, r);
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->lower);
  EXPECT_EQ(simplify(b->value), simplify(UOp::index_const(30) - j * 3));
  std::optional<GateClause> inside = as_clause(lt(r + idiv(r, UOp::index_const(2)), 30));
  ASSERT_TRUE(inside.has_value());
  EXPECT_FALSE(bound_on(*inside, r).has_value());
}

TEST(SimplifyValid, GateBoundsFoldTheAddress) {
  // The second half of a concatenation over 96: x[(i - 48) % 48] read where i >= 48.
  UOpPtr i = UOp::range(UOp::index_const(96), 0);
  UOpPtr gate = simplify(logical_not(lt(i, 48)));
  UOpPtr idx = gated_index(simplify((i - 48) % 48), gate);
  UOpPtr out = simplify_valid(idx);
  EXPECT_EQ(out->src(1), simplify(i - 48));
  EXPECT_EQ(out->src(2), gate);  // the gate itself stays: the load must not happen elsewhere
}

TEST(SimplifyValid, UpperBoundsFoldToo) {
  UOpPtr i = UOp::range(UOp::index_const(100), 0);
  UOpPtr gate = lt(i, 10);
  UOpPtr idx = gated_index(simplify(idiv(i, 10) * 7 + i % 10), gate);
  EXPECT_EQ(simplify_valid(idx)->src(1), i);
}

// A 3x3 window over a padded 56x56 image stored flat: row y + ky - 1 and column x + kx - 1 are in
// range where the gate holds, so the div/mod a reshape left on the flat offset folds away.
TEST(SimplifyValid, GatedSumsFoldTheAddress) {
  UOpPtr y = UOp::range(UOp::index_const(56), 0), x = UOp::range(UOp::index_const(56), 1);
  UOpPtr k = UOp::range(UOp::index_const(9), 2);
  UOpPtr row = simplify(y + idiv(k, 3)), col = simplify(x + k % 3);
  UOpPtr gate = simplify(logical_and(logical_and(logical_not(lt(row, 1)), lt(row, 57)), logical_and(logical_not(lt(col, 1)), lt(col, 57))));
  UOpPtr flat = simplify(row * 56 + col - 57);
  UOpPtr offset = simplify(idiv(flat, 56) % 56 * 56 + flat % 56);  // a reshape to (56, 56) and back
  UOpPtr out = simplify_valid(gated_index(offset, gate));
  EXPECT_EQ(out->src(1), flat) << print_graph(out->src(1));
}

TEST(SimplifyValid, UngatedAndUnboundedAddressesAreLeftAlone) {
  UOpPtr i = UOp::range(UOp::index_const(96), 0);
  UOpPtr plain = UOp::make(Ops::INDEX, buf()->dtype(), {buf(), simplify((i - 48) % 48)});
  EXPECT_EQ(simplify_valid(plain), plain);
  UOpPtr j = UOp::range(UOp::index_const(7), 1);
  UOpPtr other = gated_index(simplify((i - 48) % 48), lt(j, 3));  // the gate says nothing about i
  EXPECT_EQ(simplify_valid(other), other);
}

TEST(SimplifyValid, WhereRepeatingTheLoadsGateIsTheLoad) {
  UOpPtr i = UOp::range(UOp::index_const(96), 0);
  UOpPtr gate = lt(i, 48);
  UOpPtr ld = load(gated_index(i, gate));
  UOpPtr zero = UOp::const_(dtypes::float32, 0.0);
  EXPECT_EQ(simplify_valid(where(gate, ld, zero)), ld);
  UOpPtr one = UOp::const_(dtypes::float32, 1.0);
  EXPECT_EQ(simplify_valid(where(gate, ld, one)), where(gate, ld, one));  // 1 where the gate fails: kept
  UOpPtr other = lt(i, 40);
  EXPECT_EQ(simplify_valid(where(other, ld, zero)), where(other, ld, zero));
}

// A WHERE whose condition is one of the load's gate's leaves (the load is gated by more) is the
// load: where the condition fails, so does the gate, and the load reads 0.
TEST(SimplifyValid, WhereOnPartOfTheLoadsGateIsTheLoad) {
  UOpPtr i = UOp::range(UOp::index_const(96), 0), j = UOp::range(UOp::index_const(7), 1);
  UOpPtr piece = lt(i, 48), mask = lt(j, 3);
  UOpPtr ld = load(gated_index(i, logical_and(piece, mask)));
  UOpPtr zero = UOp::const_(dtypes::float32, 0.0);
  EXPECT_EQ(simplify_valid(where(mask, where(piece, ld, zero), zero)), ld);
}

// Each leaf of a gate is simplified under the others: Swin's shifted-window mask on the third
// piece of a concatenation over 1536 channels (768 <= c < 1152) divides an offset that is only
// non-negative inside that piece; there its divisions fold to the window's row and column, so a
// vector of channels has one gate for all its lanes. Leaves that compare one expression (its
// lower and upper bound) do not stand in for each other.
TEST(SimplifyValid, EachGateLeafIsSimplifiedUnderTheOthers) {
  UOpPtr a = UOp::range(UOp::index_const(7), 0), b = UOp::range(UOp::index_const(7), 1), c = UOp::range(UOp::index_const(1536), 2);
  UOpPtr piece = simplify(logical_and(logical_not(lt(c, 768)), lt(c, 1152)));
  UOpPtr flat = simplify(a * 2688 + b * 384 + c - 768);
  UOpPtr window = simplify(idiv(idiv(flat, 384) % 7 * 768 + idiv(flat, 2688) % 7 * 5376 + flat % 384, 384) % 14);
  UOpPtr mask = simplify(logical_and(logical_not(lt(window, 0)), lt(window, 13)));
  UOpPtr out = simplify_valid(gated_index(simplify(c - 384), logical_and(piece, mask)));
  ASSERT_EQ(out->src().size(), 3u);
  std::vector<UOpPtr> leaves = and_leaves(out->src(2));
  for (const UOpPtr& leaf : leaves) {
    std::optional<GateClause> clause = as_clause(leaf);
    ASSERT_TRUE(clause.has_value()) << print_graph(leaf);
    bool bounds_c = clause->x == c;
    EXPECT_TRUE(bounds_c || !varies_with(leaf, c.get())) << "a window leaf still reads the channel: " << print_graph(leaf);
  }
  // Every (a, b, c) the gate lets through, and only those, still pass.
  for (int64_t av = 0; av < 7; ++av)
    for (int64_t bv = 0; bv < 7; ++bv)
      for (int64_t cv = 0; cv < 1536; cv += 37) {
        Substitution at{{a.get(), UOp::index_const(av)}, {b.get(), UOp::index_const(bv)}, {c.get(), UOp::index_const(cv)}};
        EXPECT_EQ(evaluate_int(substitute(out->src(2), at)), evaluate_int(substitute(logical_and(piece, mask), at))) << av << " " << bv << " " << cv;
      }
}

}  // namespace
}  // namespace lathe
