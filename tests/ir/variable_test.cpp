#include <gtest/gtest.h>

#include "lathe/error.hpp"
#include "lathe/variable.hpp"

namespace lathe {
namespace {

TEST(Variable, BoundsAndBinding) {
  Variable n("n", 1, 64);
  EXPECT_EQ(n.name(), "n");
  EXPECT_EQ(n.uop()->op(), Ops::DEFINE_VAR);
  SInt b = n.bind(10);
  EXPECT_FALSE(b.is_static());
  EXPECT_EQ(b.min(), 1);
  EXPECT_EQ(b.max(), 64);
  EXPECT_EQ(b.uop()->op(), Ops::BIND);
  EXPECT_EQ(b.to_string(), "n=10");
  EXPECT_THROW(n.bind(0), Error);
  EXPECT_THROW(n.bind(65), Error);
  EXPECT_THROW(Variable("", 0, 1), Error);
  EXPECT_THROW(Variable("m", 2, 1), Error);
  try {
    n.check(100);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'n' = 100 is outside its bounds [1, 64]"), std::string::npos) << e.what();
  }
}

TEST(SInt, StaticAndSymbolicArithmetic) {
  SInt a = 6, b = 7;
  EXPECT_TRUE((a * b).is_static());
  EXPECT_EQ((a * b).value(), 42);
  EXPECT_EQ((a + b - SInt(3)).value(), 10);
  Variable n("n", 2, 9);
  SInt s = SInt(n) * 4 + 1;
  EXPECT_FALSE(s.is_static());
  EXPECT_EQ(s.min(), 9);
  EXPECT_EQ(s.max(), 37);
  EXPECT_THROW(s.value(), Error);
  EXPECT_TRUE(SInt(n) * 4 + 1 == s);                 // same expression, same canonical node
  EXPECT_FALSE(SInt(n) * 4 == s);
  EXPECT_TRUE((SInt(n) - SInt(n)).is_static());      // simplifies to the constant 0
  EXPECT_EQ((SInt(n) - SInt(n)).value(), 0);
  EXPECT_EQ(SInt(5).uop(), UOp::index_const(5));
}

TEST(SInt, ValueAtGivenVariablesOrTheBoundOnes) {
  Variable n("n", 1, 64), m("m", 1, 8);
  SInt s = SInt(n) * 4 + SInt(m);
  EXPECT_EQ(s.value_at({{"n", 3}, {"m", 2}}), 14);
  EXPECT_THROW(s.value_at({{"n", 3}}), Error);  // m has no value: named, not guessed
  SInt bound = n.bind(10) * 2;
  EXPECT_EQ(bound.value_at({}), 20);
  EXPECT_EQ(bound.value_at({{"n", 7}}), 14);
  EXPECT_EQ(SInt(5).value_at({{"n", 1}}), 5);
}

}  // namespace
}  // namespace lathe
