#include <gtest/gtest.h>

#include "ir/symbolic.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

UOpPtr buf() { return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 48), {}, int64_t{1}); }
UOpPtr gated_index(const UOpPtr& offset, const UOpPtr& gate) { return UOp::make(Ops::INDEX, buf()->dtype(), {buf(), offset, gate}); }
UOpPtr load(const UOpPtr& index) { return UOp::make(Ops::LOAD, dtypes::float32, {index}); }

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
