#include <gtest/gtest.h>

#include "ir/pattern.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

UOpPtr x_of(const Match& m) { return m["x"]; }

TEST(Pattern, RuleReadsLikeTheRewrite) {
  PatternMatcher pm({
      {UPat::var("x") + 0, [](const Match& m) { return m["x"]; }},  // x + 0 -> x
  });
  UOpPtr a = UOp::variable("a", 0, 9);
  EXPECT_EQ(pm.rewrite(a + 0), a);
  EXPECT_EQ(pm.rewrite(0 + a), a);  // ADD is commutative: sources match in any order
  EXPECT_EQ(pm.rewrite(a + 1), nullptr);
  EXPECT_EQ(pm.rewrite(a * 0), nullptr);
}

TEST(Pattern, ConstantValueMatchesAcrossDtypes) {
  PatternMatcher pm({{UPat::var("x") * 1, x_of}});
  UOpPtr f = UOp::make(Ops::DEFINE_VAR, dtypes::int32, {}, VarArg{"f", 0, 3});
  EXPECT_EQ(pm.rewrite(f * UOp::const_(dtypes::int32, 1)), f);
  UOpPtr g =
      UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, int64_t{0})});
  EXPECT_EQ(pm.rewrite(g * UOp::const_(dtypes::float32, 1.0)), g);
  EXPECT_EQ(pm.rewrite(g * UOp::const_(dtypes::float32, 1.5)), nullptr);
}

TEST(Pattern, RepeatedNameMustBindTheSameNode) {
  PatternMatcher pm({{max(UPat::var("x"), UPat::var("x")), x_of}});
  UOpPtr a = UOp::variable("a", 0, 9);
  UOpPtr b = UOp::variable("b", 0, 9);
  EXPECT_EQ(pm.rewrite(max(a, a)), a);
  EXPECT_EQ(pm.rewrite(max(a, b)), nullptr);
}

TEST(Pattern, OrderedSourcesOfNonCommutativeOps) {
  PatternMatcher pm({{UPat::var("x") - UPat::cnst(0), x_of}});
  UOpPtr a = UOp::variable("a", 0, 9);
  EXPECT_EQ(pm.rewrite(a - 0), a);
  EXPECT_EQ(pm.rewrite(UOp::index_const(0) - a), nullptr);
}

TEST(Pattern, AnyOrderTriesEveryPermutation) {
  // WHERE is not commutative, but src_any_order asks for permutations explicitly.
  PatternMatcher pm({{UPat(Ops::WHERE).src_any_order({UPat::cvar("c"), UPat::var("x", dtypes::bool_), UPat::var("y")}),
                      [](const Match& m) { return m["c"]; }}});
  UOpPtr cond = lt(UOp::variable("a", 0, 9), UOp::variable("b", 0, 9));
  UOpPtr three = UOp::index_const(3);
  UOpPtr v = UOp::variable("v", 0, 9);
  EXPECT_EQ(pm.rewrite(where(cond, three, v)), three);
  EXPECT_EQ(pm.rewrite(where(cond, v, three)), three);
  EXPECT_EQ(pm.rewrite(where(cond, v, v)), nullptr);
}

TEST(Pattern, DtypeOpSetArgAndEachSource) {
  UOpPtr a = UOp::variable("a", 0, 9);
  UOpPtr i32 = UOp::make(Ops::DEFINE_VAR, dtypes::int32, {}, VarArg{"i", 0, 9});
  PatternMatcher by_dtype({{UPat({Ops::ADD, Ops::MUL}).named("x").dtype(dtypes::int32), x_of}});
  EXPECT_NE(by_dtype.rewrite(i32 + i32), nullptr);
  EXPECT_NE(by_dtype.rewrite(i32 * i32), nullptr);
  EXPECT_EQ(by_dtype.rewrite(a + a), nullptr);
  EXPECT_EQ(by_dtype.rewrite(i32 - i32), nullptr);

  PatternMatcher by_arg({{UPat(Ops::DEFINE_VAR).named("x").arg(VarArg{"a", 0, 9}), x_of}});
  EXPECT_EQ(by_arg.rewrite(a), a);
  EXPECT_EQ(by_arg.rewrite(i32), nullptr);

  PatternMatcher each({{UPat(Ops::SINK).named("x").each_src(UPat(Ops::CONST)), x_of}});
  UOpPtr all_const =
      UOp::make(Ops::SINK, dtypes::void_, {UOp::index_const(1), UOp::index_const(2), UOp::index_const(3)});
  UOpPtr mixed = UOp::make(Ops::SINK, dtypes::void_, {UOp::index_const(1), a});
  EXPECT_EQ(each.rewrite(all_const), all_const);
  EXPECT_EQ(each.rewrite(mixed), nullptr);
}

TEST(Pattern, SourceCountMustMatchUnlessAnyLen) {
  UOpPtr s3 = UOp::make(Ops::SINK, dtypes::void_, {UOp::index_const(1), UOp::index_const(2), UOp::index_const(3)});
  PatternMatcher exact({{UPat(Ops::SINK).named("x").src({UPat::cvar("c")}), x_of}});
  PatternMatcher prefix({{UPat(Ops::SINK).named("x").src({UPat::cvar("c")}).allow_any_len(), x_of}});
  EXPECT_EQ(exact.rewrite(s3), nullptr);
  EXPECT_EQ(prefix.rewrite(s3), s3);
}

TEST(Pattern, CallbackMayDeclineAndTheNextRuleRuns) {
  PatternMatcher pm({
      {UPat::var("x") + UPat::cvar("c"), [](const Match& m) { return m.i("c") > 5 ? m["x"] : nullptr; }},
      {UPat::var("x") + UPat::cvar("c"), [](const Match& m) { return m["c"]; }},
  });
  UOpPtr a = UOp::variable("a", 0, 9);
  EXPECT_EQ(pm.rewrite(a + 7), a);
  EXPECT_EQ(pm.rewrite(a + 2), UOp::index_const(2));
}

TEST(Pattern, MatchersComposeByConcatenation) {
  PatternMatcher add0({{UPat::var("x") + 0, x_of}});
  PatternMatcher mul1({{UPat::var("x") * 1, x_of}});
  PatternMatcher both = add0 + mul1;
  UOpPtr a = UOp::variable("a", 0, 9);
  EXPECT_EQ(both.size(), 2u);
  EXPECT_EQ(both.rewrite(a + 0), a);
  EXPECT_EQ(both.rewrite(a * 1), a);
  EXPECT_EQ(add0.rewrite(a * 1), nullptr);
}

TEST(Pattern, ContextReachesTheCallback) {
  int calls = 0;
  PatternMatcher pm({{UPat(Ops::DEFINE_VAR).named("x"), [](const Match& m) {
                        ++m.ctx<int>();
                        return nullptr;
                      }}});
  pm.rewrite(UOp::variable("a", 0, 9), &calls);
  EXPECT_EQ(calls, 1);
}

TEST(Pattern, UnknownNameIsAnInternalError) {
  PatternMatcher pm({{UPat::var("x") + 0, [](const Match& m) { return m["y"]; }}});
  EXPECT_THROW(pm.rewrite(UOp::variable("a", 0, 9) + 0), InternalError);
}

}  // namespace
}  // namespace lathe
