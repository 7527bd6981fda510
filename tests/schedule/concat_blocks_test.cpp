// A join of convolutions' channels is joined in channel blocks of the Target the schedule is
// planned for (schedule/concat_blocks.hpp): each piece stored in blocks by its own kernel; other
// joins are left as they are. Values are the plain join's at every width.
#include <gtest/gtest.h>

#include "schedule/layout_copies.hpp"
#include "tensor/tap_groups.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::copies;
using test::planned_for;
using test::run;

// A 1x1 convolution of a computed 8-channel 5 x 3 image to `out` channels, with a relu: computed
// by a kernel of its own (too small for its input to be stored in blocks for it).
Tensor convolved(int64_t out, uint64_t seed) {
  Tensor in = test::f32(test::data(8 * 15, 40), {1, 8, 5, 3}) * 2.0f;
  return in.conv2d(test::f32(test::data(static_cast<size_t>(out * 8), seed), {out, 8, 1, 1})).relu();
}

// The layout copies of the 5 x 3 image's channels the schedule of `y` stores (not the filters').
std::vector<Shape> image_copies(const Tensor& y, int lanes) {
  std::vector<Shape> out;
  for (const auto& [shape, dtype] : copies(y, planned_for(lanes)))
    if (shape.size() == 5 && shape[2] == 5 && shape[3] == 3) out.push_back(shape);
  return out;
}

// The values of `t`, computed now, as stored data.
Tensor stored(const Tensor& t) { return test::f32(t.to_vector<float>(), t.shape()); }

std::vector<double> plain_join(const Tensor& a, const Tensor& b) {
  std::vector<float> v = Tensor::cat({stored(a), stored(b)}, 1).to_vector<float>();
  return std::vector<double>(v.begin(), v.end());
}

// 16 and 32 channels: each convolution stores its piece in blocks, and the join is of blocks, at 4,
// 8 and 16 lanes: of a 64-byte line where it divides every piece, else of the plan's lanes (8 and
// 16 channels at 8 lanes).
TEST(ConcatBlocks, ConvolutionsChannelsAreJoinedInBlocks) {
  Tensor a = convolved(16, 41), b = convolved(32, 42);
  Tensor y = Tensor::cat({a, b}, 1);
  std::vector<double> want = plain_join(a, b);
  for (int lanes : {4, 8, 16}) {
    // Each piece fills whole 64-byte lines (16 float32s): the join is stored in lines at every width.
    EXPECT_EQ(image_copies(y, lanes), (std::vector<Shape>{{1, 1, 5, 3, 16}, {1, 2, 5, 3, 16}})) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-5, 1e-5) << lanes << " lanes";
  }
  Tensor narrow = convolved(8, 48);
  Tensor z = Tensor::cat({narrow, a}, 1);
  EXPECT_EQ(image_copies(z, 8), (std::vector<Shape>{{1, 1, 5, 3, 8}, {1, 2, 5, 3, 8}}));
  EXPECT_ALLCLOSE(run(z, 8), plain_join(narrow, a), 1e-5, 1e-5);
}

// A join of pieces that a cache line does not all divide (24 and 40 channels) is joined in blocks of
// the lanes, and a convolution over it reads it so, though a line divides the 64 channels it reads:
// no copy of the join into lines (it had one before the reader took the join's blocks).
TEST(ConcatBlocks, AConvolutionReadsAJoinInTheBlocksItIsIn) {
  Tensor a = convolved(24, 51), b = convolved(40, 52);
  Tensor joined = Tensor::cat({a, b}, 1);
  auto w = test::data(32 * 64 * 9, 53);
  Tensor y = joined.conv2d(test::f32(w, {32, 64, 3, 3}), std::nullopt, {1, 1}, {1, 1});
  // The pieces and the join they are written into (schedule/concat_in_place), all of 8: none of 16.
  EXPECT_EQ(image_copies(y, 8), (std::vector<Shape>{{1, 3, 5, 3, 8}, {1, 5, 5, 3, 8}, {1, 8, 5, 3, 8}}));
  std::vector<float> x = joined.to_vector<float>();
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, w, {}, test::ConvArgs{.n = 1, .c = 64, .h = 5, .w = 3, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}}, oh, ow);
  EXPECT_ALLCLOSE(run(y, 8), want, 1e-4, 1e-4);
}

// Left as they are: a piece no block width divides (12 channels at 8 lanes), a piece computed
// elementwise (its copy would only move into that kernel), a join along another axis, and a
// scalar Target.
TEST(ConcatBlocks, OtherJoinsAreLeftAsTheyAre) {
  Tensor a = convolved(16, 43), odd = convolved(12, 44);
  EXPECT_TRUE(image_copies(Tensor::cat({a, odd}, 1), 8).empty());
  Tensor elementwise = test::f32(test::data(16 * 15, 45), {1, 16, 5, 3}) * 3.0f;
  EXPECT_TRUE(image_copies(Tensor::cat({a, elementwise}, 1), 8).empty());
  EXPECT_TRUE(image_copies(Tensor::cat({a, convolved(16, 46)}, 2), 8).empty());
  EXPECT_TRUE(image_copies(Tensor::cat({a, convolved(16, 47)}, 1), 1).empty());
  // A lateral convolution plus a padded, upsampled coarser one (an FPN's top-down sum): the
  // upsampling's repeat is no part, its reader fuses it.
  Tensor coarse = convolved(16, 50).shrink({{0, 1}, {0, 16}, {0, 2}, {0, 3}});
  Tensor up = coarse.reshape({1, 16, 2, 1, 3}).expand({1, 16, 2, 2, 3}).reshape({1, 16, 4, 3}).pad({{0, 0}, {0, 0}, {0, 1}, {0, 0}});
  EXPECT_TRUE(image_copies(a + up, 8).empty());
  Tensor y = Tensor::cat({a, odd}, 1);
  EXPECT_ALLCLOSE(run(y, 8), plain_join(a, odd), 1e-5, 1e-5);
}

// A convolution whose side taps read the image at few output positions (an atrous pyramid's rate
// 12 on a 14 x 14 map) is a sum of 9 parts, one per group of taps (prepare's tap-group rule): the 8 parts
// added to the centre one's kernel are stored in channel blocks of the plan's lanes (2 x 2, 2 x 14
// and 14 x 2 positions each), at 8 and 16 lanes; the values are the plain loops'.
TEST(ConcatBlocks, PartsAddedToAConvolutionAreStoredInBlocks) {
  test::ConvArgs a{.n = 1, .c = 64, .h = 14, .w = 14, .o = 128, .kh = 3, .kw = 3, .padding = {12, 12}, .dilation = {12, 12}};
  auto x = test::data(64 * 14 * 14, 48), w = test::data(128 * 64 * 9, 49);
  Tensor y = (test::f32(x, {1, 64, 14, 14}) * 2.0f).conv2d(test::f32(w, {128, 64, 3, 3}), std::nullopt, {1, 1}, {12, 12}, {12, 12});
  for (float& v : x) v *= 2.0f;
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, w, {}, a, oh, ow);
  for (int lanes : {8, 16}) {
    // The parts are the plan's prepare's choice (tensor/tap_groups.hpp), made here as it makes them.
    ScheduleContext context = planned_for(lanes);
    context.target.threads = 1;  // the parts pay on one core at either width
    Tensor split(detail::tap_groups_where_they_pay({y.uop()}, context.target)[0], y.shape());
    int64_t parts = 0;
    for (const auto& [shape, dtype] : copies(split, context))
      parts += shape.size() == 5 && shape[1] == 128 / lanes && shape[4] == lanes && shape[2] * shape[3] < 14 * 14;
    EXPECT_EQ(parts, 8) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4) << lanes << " lanes";
  }
}

// A sum that shares its terms (t + t, sixty times over) is no join and no sum of parts, and is
// scheduled at once: the rule does not walk each path of the shared graph (2^60 of them).
TEST(ConcatBlocks, ASumOfSharedTermsIsScheduledAtOnce) {
  Tensor t = convolved(16, 51);
  for (int i = 0; i < 60; ++i) t = t + t;
  EXPECT_TRUE(image_copies(t, 8).empty());
}

}  // namespace
}  // namespace lathe
