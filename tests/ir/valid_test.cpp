#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lathe
