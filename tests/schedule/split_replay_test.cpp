// A reader's views replayed over a node split in blocks (schedule/split_replay.hpp) read the same
// values as the views over the node itself, and the split lands where the block's elements are;
// views that cut, pad or mix the split axis are not replayed.
#include <gtest/gtest.h>

#include "schedule/shape.hpp"
#include "schedule/split_replay.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The views from `top` down to `base` (top first), and the graph's shapes and sizes.
struct Chain {
  std::vector<UOpPtr> steps;
  std::unordered_map<const UOp*, Shape> shapes;
  std::unordered_map<const UOp*, SymDims> dims;
  Chain(const Tensor& top, const Tensor& base) {
    for (UOpPtr u = top.uop(); u != base.uop(); u = u->src(0)) steps.push_back(u);
    UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, {top.uop()});
    shapes = graph_shapes(sink);
    dims = graph_sym_shapes(sink, shapes);
  }
  SplitReplay replay() const { return SplitReplay(shapes, dims); }
};

// A 16-channel image's windows with padding (as conv2d takes them), grouped 2 x 8: the channel
// axis split in blocks of 4 lands on the group's channels, and the views over the split image,
// merged back, read the same values.
TEST(SplitReplay, AWindowedGroupedViewReadsTheSameValues) {
  Tensor x = test::f32(test::data(2 * 16 * 5 * 3, 1), {2, 16, 5, 3}) * 2.0f;
  Tensor view = x.pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).windows({3, 3}, Window{}).reshape({2, 2, 1, 8, 5, 3, 3, 3});
  Chain c(view, x);
  std::optional<Replayed> where = c.replay().chain(c.steps, 1, 4, nullptr);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->axis, 3u);  // the group's 8 channels, as (2, 4)
  Tensor split = x.reshape({2, 4, 4, 5, 3});
  std::optional<Replayed> built = c.replay().chain(c.steps, 1, 4, split.uop());
  ASSERT_TRUE(built.has_value());
  Tensor replayed(built->node, Shape{2, 2, 1, 2, 4, 5, 3, 3, 3});
  EXPECT_EQ(replayed.reshape(view.shape()).to_vector<float>(), view.to_vector<float>());
}

// A flip (as a transposed convolution's filter takes) of the split axis reverses both its parts,
// and of another axis keeps it: each reads the same values over the split node.
TEST(SplitReplay, AFlipReadsTheSameValues) {
  Tensor x = test::f32(test::data(12 * 3 * 2, 3), {12, 3, 2}) * 2.0f;
  for (std::vector<int64_t> axes : std::vector<std::vector<int64_t>>{{0}, {1, 2}, {0, 2}}) {
    Tensor view = x.flip(axes).permute({1, 0, 2});
    Chain c(view, x);
    std::optional<Replayed> built = c.replay().chain(c.steps, 0, 4, x.reshape({3, 4, 3, 2}).uop());
    ASSERT_TRUE(built.has_value());
    EXPECT_EQ(built->axis, 1u);  // the block index; its lanes the axis after
    Tensor replayed(built->node, Shape{3, 3, 4, 2});
    EXPECT_EQ(replayed.reshape(view.shape()).to_vector<float>(), view.to_vector<float>()) << axes.size();
  }
}

// Views that cut the split axis, pad it, mix its blocks or merge it outside another axis are not
// replayed; a merge that keeps it innermost, and a permutation, are.
TEST(SplitReplay, ViewsThatBreakTheBlocksAreNotReplayed) {
  Tensor x = test::f32(test::data(2 * 16 * 3, 2), {2, 16, 3}) * 2.0f;
  auto replays = [&](const Tensor& view, size_t axis, int64_t b) {
    Chain c(view, x);
    return c.replay().chain(c.steps, axis, b, nullptr).has_value();
  };
  EXPECT_FALSE(replays(x.shrink({{0, 2}, {0, 12}, {0, 3}}), 1, 4));
  EXPECT_FALSE(replays(x.pad({{0, 0}, {1, 0}, {0, 0}}), 1, 4));
  EXPECT_FALSE(replays(x.reshape({2, 8, 2, 3}).permute({0, 2, 1, 3}).reshape({2, 16, 3}), 1, 4));  // a shuffle
  EXPECT_FALSE(replays(x.reshape({2, 16, 3}).permute({0, 2, 1}), 1, 3));                         // 3 does not divide 16
  EXPECT_FALSE(replays(x.permute({1, 0, 2}).reshape({32, 3}), 1, 4));  // channels outside the batch: blocks 2 apart
  EXPECT_TRUE(replays(x.reshape({32, 3}), 1, 4));                        // channels inside the batch: whole blocks
  EXPECT_TRUE(replays(x.permute({2, 0, 1}), 1, 8));
}

}  // namespace
}  // namespace lathe
