#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "lathe/uop.hpp"

namespace lathe {
namespace {

std::string run_probe(const char* order) {
  std::string cmd = std::string(LATHE_HASH_PROBE) + " " + order;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::array<char, 64> buf{};
  std::string out;
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  EXPECT_EQ(pclose(p), 0);
  return out;
}

TEST(StructuralHash, SameInEveryProcess) {
  std::string forward = run_probe("forward");
  std::string backward = run_probe("backward");
  ASSERT_EQ(forward.size(), 17u) << forward;  // 16 hex digits and a newline
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(forward, run_probe("forward"));
}

TEST(StructuralHash, DependsOnContentOnly) {
  UOpPtr a = UOp::variable("h", 0, 9);
  uint64_t h1 = (a * 2 + 1)->hash();
  {
    UOpPtr other = UOp::variable("unrelated", 0, 1);  // changes ids, not content
    EXPECT_EQ((UOp::variable("h", 0, 9) * 2 + 1)->hash(), h1);
  }
  EXPECT_NE((a * 2 + 2)->hash(), h1);
  EXPECT_NE((a * 3 + 1)->hash(), h1);
  EXPECT_NE((UOp::variable("h", 0, 8) * 2 + 1)->hash(), h1);
  EXPECT_NE(UOp::const_(dtypes::int32, 1)->hash(), UOp::const_(dtypes::uint32, 1)->hash());
  EXPECT_NE(UOp::const_(dtypes::float32, 1.0)->hash(), UOp::const_(dtypes::float32, 1.0000001)->hash());
  EXPECT_NE(UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, int64_t{0})->hash(),
            UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Local), {}, int64_t{0})->hash());
  // Source order matters: SUB(a, b) is not SUB(b, a).
  UOpPtr b = UOp::variable("k", 0, 9);
  EXPECT_NE((a - b)->hash(), (b - a)->hash());
}

}  // namespace
}  // namespace lathe
