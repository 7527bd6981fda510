#include <gtest/gtest.h>

#include "lathe/uop.hpp"

namespace lathe {
namespace {

TEST(Print, GraphIsOneNumberedLinePerNodeSourcesFirst) {
  UOpPtr n = UOp::variable("n", 1, 64);
  UOpPtr root = lt(n * 4, UOp::index_const(100));
  EXPECT_EQ(print_graph(root),
            "%0 = DEFINE_VAR index \"n\" [1, 64]\n"
            "%1 = CONST index 4\n"
            "%2 = MUL index (%0, %1)\n"
            "%3 = CONST index 100\n"
            "%4 = CMPLT bool (%2, %3)\n");
}

TEST(Print, NodeShowsOpDtypeAndArg) {
  EXPECT_EQ(to_string(*UOp::const_(dtypes::float32, 0.5)), "CONST float32 0.5");
  EXPECT_EQ(to_string(*UOp::const_(dtypes::float32, 2.0)), "CONST float32 2.0");
  EXPECT_EQ(to_string(*UOp::const_(dtypes::bool_, true)), "CONST bool true");
  auto r =
      UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {UOp::const_(dtypes::float32, 1.0)}, ReduceArg{Ops::ADD, {0, 1}});
  EXPECT_EQ(to_string(*r), "REDUCE_AXIS float32 ADD axes (0, 1) (1 src)");
  EXPECT_EQ(to_string(*UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, int64_t{2})),
            "DEFINE_GLOBAL float32*[global] 2");
}

TEST(Print, DeepGraphPrints) {
  UOpPtr acc = UOp::variable("p", 0, 5);
  for (int i = 0; i < 100000; ++i) acc = acc + 1;
  std::string s = print_graph(acc);
  EXPECT_NE(s.find("%100001 = ADD index (%100000, %1)"), std::string::npos);
}

}  // namespace
}  // namespace lathe
