#include <gtest/gtest.h>

#include "ir/rewrite.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

UOpPtr x_of(const Match& m) { return m["x"]; }

const PatternMatcher& identities() {
  static const PatternMatcher pm({
      {UPat::var("x") + 0, x_of},
      {UPat::var("x") * 1, x_of},
  });
  return pm;
}

TEST(GraphRewrite, RewritesNestedNodesToAFixedPoint) {
  UOpPtr a = UOp::variable("a", 0, 9);
  UOpPtr b = UOp::variable("b", 0, 9);
  // ((a + 0) * 1 + 0) * (b * 1): every identity disappears, including ones exposed by others.
  UOpPtr g = ((a + 0) * 1 + 0) * (b * 1);
  EXPECT_EQ(graph_rewrite(g, identities()), a * b);
  EXPECT_EQ(graph_rewrite(g, identities(), nullptr, Direction::TopDown), a * b);
}

TEST(GraphRewrite, UnchangedGraphIsReturnedAsIs) {
  UOpPtr g = UOp::variable("a", 0, 9) * 3 + 2;
  EXPECT_EQ(graph_rewrite(g, identities()), g);
}

TEST(GraphRewrite, SharedNodesAreRewrittenOnce) {
  int calls = 0;
  PatternMatcher count({{UPat(Ops::DEFINE_VAR).named("x"), [](const Match& m) {
                           ++m.ctx<int>();
                           return nullptr;
                         }}});
  UOpPtr a = UOp::variable("a", 0, 9);
  UOpPtr s = a + 1;
  graph_rewrite((s * s) + (s * 2) + a, count, &calls);
  EXPECT_EQ(calls, 1);
}

TEST(GraphRewrite, AMemoRewritesANodeOnceAcrossCalls) {
  int calls = 0;
  PatternMatcher count({{UPat(Ops::DEFINE_VAR).named("x"), [&calls](const Match&) {
                           ++calls;
                           return nullptr;
                         }}});
  UOpPtr a = UOp::variable("a", 0, 9);
  RewriteMemo memo;
  graph_rewrite(a * 2, count, memo);
  graph_rewrite(a + 1, count, memo);
  EXPECT_EQ(calls, 1);
  graph_rewrite(a + 1, count);  // without the memo: rewritten again
  EXPECT_EQ(calls, 2);
  EXPECT_THROW(graph_rewrite(a, identities(), memo), InternalError);
  EXPECT_THROW(graph_rewrite(a, count, memo, Direction::TopDown), InternalError);
}

TEST(GraphRewrite, AMemoKeepsItsNodesAliveUntilItGoes) {
  std::weak_ptr<const UOp> seen;
  {
    RewriteMemo memo;
    {
      UOpPtr g = (UOp::variable("memo_only", 0, 9) + 0) * 1;
      seen = g;
      EXPECT_EQ(graph_rewrite(g, identities(), memo), UOp::variable("memo_only", 0, 9));
    }
    EXPECT_FALSE(seen.expired());  // its address is a key: it must not be reused for another node
  }
  EXPECT_TRUE(seen.expired());
}

// Bottom-up sees rewritten sources; top-down sees the node as built, before its sources change.
TEST(GraphRewrite, DirectionDecidesWhatARuleSees) {
  UOpPtr a = UOp::variable("a", 0, 9);
  PatternMatcher pm({
      {UPat::var("x") + 0, x_of},
      // (y + 0) * 2 -> marker 42, only visible before x + 0 is removed
      {(UPat::var("y") + 0) * 2, [](const Match&) { return UOp::index_const(42); }},
  });
  UOpPtr g = (a + 0) * 2;
  EXPECT_EQ(graph_rewrite(g, pm, nullptr, Direction::BottomUp), a * 2);
  EXPECT_EQ(graph_rewrite(g, pm, nullptr, Direction::TopDown), UOp::index_const(42));
}

TEST(GraphRewrite, HundredThousandDeepGraph) {
  UOpPtr a = UOp::variable("deep", 0, 9);
  UOpPtr g = a;
  for (int i = 0; i < 100000; ++i) g = (g + 0) * 1;
  EXPECT_EQ(graph_rewrite(g, identities()), a);
  EXPECT_EQ(graph_rewrite(g, identities(), nullptr, Direction::TopDown), a);
}

// A rewrite that failed half way leaves a memo as good as before it: the nodes it had begun are
// not taken for unfinished work of the next rewrite (which would report a rule cycle).
TEST(GraphRewrite, AMemoSurvivesAFailedRewrite) {
  bool fail = true;
  PatternMatcher flaky({{UPat(Ops::DEFINE_VAR).named("x"), [&fail](const Match&) -> UOpPtr {
                          if (fail) throw RewriteError("failing once, on purpose");
                          return nullptr;
                        }}});
  UOpPtr a = UOp::variable("a", 0, 9);
  UOpPtr g = (a * 5 + 1) * 2;
  RewriteMemo memo;
  EXPECT_THROW(graph_rewrite(g, flaky, memo), RewriteError);
  fail = false;
  EXPECT_EQ(graph_rewrite(g, flaky, memo), g);
  EXPECT_EQ(graph_rewrite(g + 3, flaky, memo), g + 3);
}

TEST(GraphRewrite, TwoRulesThatUndoEachOtherAreReported) {
  PatternMatcher flip({
      {UPat::var("x") + UPat::cnst(1), [](const Match& m) { return m["x"] + 2; }},
      {UPat::var("x") + UPat::cnst(2), [](const Match& m) { return m["x"] + 1; }},
  });
  UOpPtr g = UOp::variable("a", 0, 9) + 1;
  EXPECT_THROW(graph_rewrite(g, flip), RewriteError);
  EXPECT_THROW(graph_rewrite(g, flip, nullptr, Direction::TopDown), RewriteError);
  try {
    graph_rewrite(g, flip);
  } catch (const RewriteError& e) {
    EXPECT_NE(std::string(e.what()).find("does not converge"), std::string::npos) << e.what();
  }
}

TEST(GraphRewrite, RuleThatContainsItsOwnInputIsReported) {
  // x -> x + 0 followed by x + 0 -> x would loop forever.
  PatternMatcher grow(
      {{UPat(Ops::DEFINE_VAR).named("x"), [](const Match& m) { return m["x"] * 1; }}, {UPat::var("x") * 1, x_of}});
  EXPECT_THROW(graph_rewrite(UOp::variable("a", 0, 9) + 3, grow), RewriteError);
}

TEST(GraphRewrite, UnboundedGrowthIsReported) {
  PatternMatcher grow({{UPat::var("x") + UPat::cvar("c"), [](const Match& m) { return m["x"] + (m.i("c") + 1); }}});
  EXPECT_THROW(graph_rewrite(UOp::variable("a", 0, 9) + 1, grow, nullptr, Direction::TopDown), RewriteError);
  EXPECT_THROW(graph_rewrite(UOp::variable("a", 0, 9) + 1, grow), RewriteError);
}

}  // namespace
}  // namespace lathe
