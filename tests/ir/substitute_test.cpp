// rebuild() and the Rebuilt map it records (ir/substitute.hpp): which nodes changed, what is in
// their place, and two passes chained.
#include <gtest/gtest.h>

#include "ir/label.hpp"
#include "ir/substitute.hpp"

namespace lathe {
namespace {

// A swap that makes every reader of `from` read `to`.
SourceSwap replacing(const UOpPtr& from, const UOpPtr& to) {
  return [from, to](const UOp&, const UOpPtr& source, const UOpPtr& source_now) { return source == from ? to : source_now; };
}

TEST(Rebuild, RecordsTheNodesAboveAChangeAndNothingElse) {
  UOpPtr a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9), c = UOp::variable("c", 0, 9);
  UOpPtr left = a + 1, right = b * 2, root = left + right;
  add_label(root, "sum");
  Rebuilt rebuilt;
  std::vector<UOpPtr> out = rebuild({root, right}, replacing(b, c), &rebuilt);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], left + c * 2);
  EXPECT_EQ(out[1], c * 2);
  EXPECT_EQ(rebuilt.now(root), out[0]);
  EXPECT_EQ(rebuilt.now(right), out[1]);
  EXPECT_EQ(rebuilt.now(left), left) << "nothing under it changed";
  EXPECT_EQ(rebuilt.map().size(), 2u) << "root and right; not the SINK rebuild() makes";
  EXPECT_EQ(labels_of(*out[0]), std::vector<std::string>{"sum"});
}

TEST(Rebuild, ChainedPassesMapTheFirstGraphsNodesToTheLast) {
  UOpPtr a = UOp::variable("a", 0, 9), b = UOp::variable("b", 0, 9), c = UOp::variable("c", 0, 9), d = UOp::variable("d", 0, 9);
  UOpPtr mid = a + b, root = mid * 3, other = b - 1;
  Rebuilt first, second;
  std::vector<UOpPtr> once = rebuild({root, other}, replacing(a, c), &first);  // mid and root rebuilt
  std::vector<UOpPtr> twice = rebuild(once, replacing(b, d), &second);        // those again, and other
  first.then(second);
  EXPECT_EQ(first.now(root), twice[0]);
  EXPECT_EQ(first.now(mid), c + d);
  EXPECT_EQ(first.now(other), d - 1) << "a node only the second pass rebuilt";
  EXPECT_EQ(first.now(b), b) << "a replaced source is not rebuilt: its readers are";
  Rebuilt none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.now(root), root);
}

}  // namespace
}  // namespace lathe
