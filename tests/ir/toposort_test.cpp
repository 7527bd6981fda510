#include <gtest/gtest.h>

#include <unordered_map>

#include "ir/toposort.hpp"

namespace lathe {
namespace {

TEST(Toposort, SourcesComeBeforeUsersAndEachNodeOnce) {
  UOpPtr a = UOp::variable("a", 0, 5);
  UOpPtr b = UOp::variable("b", 0, 5);
  UOpPtr s = a + b;
  UOpPtr root = s * s + a;  // `s` and `a` are shared
  std::vector<UOpPtr> order = toposort(root);
  std::unordered_map<const UOp*, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) EXPECT_TRUE(pos.emplace(order[i].get(), i).second) << "listed twice";
  EXPECT_EQ(order.back(), root);
  for (const UOpPtr& u : order)
    for (const UOpPtr& x : u->src()) EXPECT_LT(pos.at(x.get()), pos.at(u.get()));
  EXPECT_EQ(order.size(), 5u);  // a, b, s, s*s, root
}

TEST(Toposort, GateStopsDescent) {
  UOpPtr a = UOp::variable("a", 0, 5);
  UOpPtr inner = a * 3;
  UOpPtr root = inner + 1;
  auto order = toposort(root, [](const UOp& u) { return u.op() != Ops::MUL; });
  EXPECT_EQ(order.size(), 3u);  // root, inner, const 1: not a, not 3
  EXPECT_EQ(order.back(), root);
}

TEST(Toposort, HundredThousandDeepGraph) {
  UOpPtr acc = UOp::variable("deep", 0, 5);
  for (int i = 0; i < 150000; ++i) acc = acc * 2;
  std::vector<UOpPtr> order = toposort(acc);
  EXPECT_EQ(order.size(), 150002u);  // the variable, the constant 2, and 150000 products
  EXPECT_EQ(order.front()->op() == Ops::DEFINE_VAR || order.front()->op() == Ops::CONST, true);
}

}  // namespace
}  // namespace lathe
