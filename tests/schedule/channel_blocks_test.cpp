// A large convolution's input is stored as the Target the schedule is planned for wants it
// (schedule/channel_blocks.hpp): in channel blocks of its lanes, padded, or as it is; the values
// are the plain loops' at every width.
#include <gtest/gtest.h>

#include "schedule/blocks.hpp"
#include "schedule/channel_blocks.hpp"
#include "schedule/layout_copies.hpp"
#include "tensor/transposed_phases.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::ConvArgs;
using test::copies;
using test::planned_for;
using test::run;

// The input's copies among the schedule's layout copies: (N, C/B, H, W, B) of the h x w image (a
// filter's copy ends with its taps and blocks).
std::vector<Shape> input_copies(const Tensor& y, int lanes, int64_t h, int64_t w) {
  std::vector<Shape> out;
  for (const auto& [shape, dtype] : copies(y, planned_for(lanes)))
    if (shape.size() == 5 && shape[2] == h && shape[3] == w) out.push_back(shape);
  return out;
}

// The channel block a convolution's input of `channels` channels is stored in at `lanes` lanes (a
// cache line or the lanes: tests/schedule/blocks_test.cpp checks which).
int64_t block_for(int lanes, int64_t channels) { return blocks_for(planned_for(lanes).target).convolution_input(channels); }

// The padded copies the schedule stores: CONTIGUOUS(PAD(x)), their shapes.
std::vector<Shape> padded_copies(const Tensor& y, int lanes) {
  Schedule s = test::scheduled({y}, planned_for(lanes));
  std::vector<Shape> out;
  for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, s.outputs)))
    if (u->op() == Ops::CONTIGUOUS && !is_layout_copy(*u) && u->src(0)->op() == Ops::PAD) out.push_back(s.shapes.at(u.get()));
  return out;
}

struct Conv {
  ConvArgs a;
  std::vector<float> x, w;
  Tensor input, y;
  std::vector<double> want;
  int64_t oh = 0, ow = 0;  // the output's size
  explicit Conv(ConvArgs args, uint64_t seed) : a(args) {
    x = test::data(static_cast<size_t>(a.n * a.c * a.h * a.w), seed);
    w = test::data(static_cast<size_t>(a.o * (a.c / a.groups) * a.kh * a.kw), seed + 1);
    input = test::f32(x, {a.n, a.c, a.h, a.w});
    if (a.computed) input = input * 2.0f;
    y = input.conv2d(test::f32(w, {a.o, a.c / a.groups, a.kh, a.kw}), std::nullopt, a.stride, a.padding, a.dilation, a.groups);
    std::vector<float> xs = x;
    if (a.computed)
      for (float& v : xs) v *= 2.0f;
    want = test::conv_ref(xs, w, {}, a, oh, ow);
  }
};

// A computed input whose groups' channels fill whole blocks (of a cache line or the plan's lanes) is
// stored in them, (N, C/B, H, W, B); where they do not (8 channels a group at 16 lanes) it is read
// as it is. Odd
// sizes (a 13 x 7 image, stride 2) and each width compute the plain loops' values.
TEST(ChannelBlocks, AGroupsChannelsFillingWholeBlocksAreStoredInThem) {
  for (int64_t groups : {1, 2, 4}) {
    Conv c(ConvArgs{.n = 2, .c = 32, .h = 13, .w = 7, .o = 32, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1},
                    .groups = groups, .computed = true},
           static_cast<uint64_t>(groups));
    for (int lanes : {4, 8, 16}) {
      std::vector<Shape> want_copies;
      int64_t b = block_for(lanes, 32 / groups);
      if ((32 / groups) % b == 0) want_copies.push_back({2, 32 / b, 13, 7, b});
      EXPECT_EQ(input_copies(c.y, lanes, c.a.h, c.a.w), want_copies) << groups << " groups, " << lanes << " lanes";
      EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4) << groups << " groups, " << lanes << " lanes";
    }
  }
}

// A group of few input channels (4: the gates a tile keeps per pixel cost more than their
// multiply-adds) reads a padded copy of its input, with no gate, at every width, even where 4
// lanes would hold its channels in one block.
TEST(ChannelBlocks, FewInputChannelsReadAPaddedCopy) {
  Conv c(ConvArgs{.n = 1, .c = 4, .h = 11, .w = 9, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 7);
  for (int lanes : {4, 8, 16}) {
    EXPECT_EQ(padded_copies(c.y, lanes), (std::vector<Shape>{{1, 4, 13, 11}})) << lanes << " lanes";
    EXPECT_TRUE(input_copies(c.y, lanes, c.a.h, c.a.w).empty()) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4) << lanes << " lanes";
  }
}

// A convolution written as plain math (windows of a computed input times a filter, summed over
// the channels and taps), as any front end may build it, reads its input stored in channel blocks
// as conv2d's does: the schedule, not the front end, decides that a large convolution's input is
// stored (store_convolution_inputs: one CONTIGUOUS over it, however many convolutions read it,
// through whichever windows; under an integer convolution's widening casts too). A product of
// matrices over computed operands gets none: the realize rule decides for it.
TEST(ChannelBlocks, AConvolutionWrittenAsPlainMathReadsAStoredInput) {
  int64_t n = 1, c = 32, h = 11, w = 9, o = 32;
  Conv ref(ConvArgs{.n = n, .c = c, .h = h, .w = w, .o = o, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 21);
  Tensor x = test::f32(ref.x, {n, c, h, w}) * 2.0f;
  Tensor windows = x.windows({3, 3}, Window{.stride = {1, 1}, .padding = {{1, 1}, {1, 1}}});  // (N, C, H, W, 3, 3)
  Tensor filter = test::f32(ref.w, {o, c, 3, 3});
  Tensor y = (windows.reshape({n, 1, c, h, w, 3, 3}) * filter.reshape({1, o, c, 1, 1, 3, 3})).sum({2, 5, 6});
  for (int lanes : {8, 16}) {
    int64_t b = block_for(lanes, c);
    EXPECT_EQ(input_copies(y, lanes, h, w), (std::vector<Shape>{{n, c / b, h, w, b}})) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), ref.want, 1e-4, 1e-4) << lanes << " lanes";
  }
  auto stores = [](const std::vector<UOpPtr>& outputs) {
    std::vector<UOpPtr> out;
    for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, outputs)))
      if (u->op() == Ops::CONTIGUOUS) out.push_back(u);
    return out;
  };
  Tensor valid = x.windows({3, 3}, Window{.stride = {1, 1}});  // unpadded: other views of x
  Tensor second = (valid.reshape({n, 1, c, h - 2, w - 2, 3, 3}) * filter.reshape({1, o, c, 1, 1, 3, 3})).sum({2, 5, 6});
  std::vector<UOpPtr> stored = stores(store_convolution_inputs({y.uop(), second.uop()}));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0]->src(0), x.uop());
  std::vector<UOpPtr> product{((x.reshape({n * c, h * w}) + 1.0f).matmul(test::f32(ref.x, {h * w, n * c}) * 2.0f)).uop()};
  EXPECT_EQ(store_convolution_inputs(product), product);
  // An int8 convolution, whose products conv2d widens to int32 above the windows: its computed
  // input is stored too; the values are the float convolution's of the same small integers.
  Tensor xi = (x * 4.0f).cast(dtypes::int8), wi = (filter * 8.0f).cast(dtypes::int8);
  Tensor yi = xi.conv2d(wi, std::nullopt, {1, 1}, {1, 1});
  std::vector<UOpPtr> int_stored = stores(store_convolution_inputs({yi.uop()}));
  ASSERT_EQ(int_stored.size(), 1u);
  EXPECT_EQ(int_stored[0]->src(0), xi.uop());
  Tensor yf = xi.cast(dtypes::float32).conv2d(wi.cast(dtypes::float32), std::nullopt, {1, 1}, {1, 1});
  EXPECT_EQ(yi.cast(dtypes::float32).to_vector<float>(), yf.to_vector<float>());
}

// One input channel, a graph's input (a super-resolution network's luminance): a padded copy too.
TEST(ChannelBlocks, OneStoredInputChannelReadsAPaddedCopy) {
  Conv c(ConvArgs{.n = 1, .c = 1, .h = 13, .w = 9, .o = 64, .kh = 5, .kw = 5, .padding = {2, 2}}, 8);
  for (int lanes : {8, 16}) {
    EXPECT_EQ(padded_copies(c.y, lanes), (std::vector<Shape>{{1, 1, 17, 13}})) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4) << lanes << " lanes";
  }
}

// Many multiply-adds per input element (256 output channels x 9 taps) make the padded copy
// cheap beside the convolution: it is read with no gate, unblocked.
TEST(ChannelBlocks, ManyMultiplyAddsPerElementReadAPaddedCopy) {
  Conv c(ConvArgs{.n = 1, .c = 16, .h = 5, .w = 7, .o = 256, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 9);
  EXPECT_EQ(padded_copies(c.y, 8), (std::vector<Shape>{{1, 16, 7, 9}}));
  EXPECT_TRUE(input_copies(c.y, 8, c.a.h, c.a.w).empty());
  EXPECT_ALLCLOSE(run(c.y, 8), c.want, 1e-4, 1e-4);
}

// Output channels too few or too odd for a block of their own (27: ESPCN's last layer, 3 x 3 x 3
// for a pixel shuffle) leave a kernel's vectors to run along the pixels: the input, whose channels
// would fill blocks, is read from a padded copy instead, with no gate (8 and 16 lanes; at 4, 27
// channels padded to 28 have a block, and the input is stored in blocks); an odd image (11 x 19)
// computes the plain loops' values.
TEST(ChannelBlocks, OutputChannelsWithNoBlockReadAPaddedCopy) {
  Conv c(ConvArgs{.n = 1, .c = 32, .h = 11, .w = 19, .o = 27, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 17);
  for (int lanes : {4, 8, 16}) {
    bool no_block = blocks_for(planned_for(lanes).target).stored(27) == 0;
    EXPECT_EQ(no_block, lanes != 4) << lanes << " lanes";
    std::vector<Shape> want = no_block ? std::vector<Shape>{{1, 32, 13, 21}} : std::vector<Shape>{};
    EXPECT_EQ(padded_copies(c.y, lanes), want) << lanes << " lanes";
    EXPECT_EQ(input_copies(c.y, lanes, c.a.h, c.a.w).empty(), no_block) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4) << lanes << " lanes";
  }
  // 32 output channels have their blocks: the input is stored in channel blocks, not padded.
  Conv blocked(ConvArgs{.n = 1, .c = 32, .h = 11, .w = 19, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 18);
  EXPECT_TRUE(padded_copies(blocked.y, 8).empty());
  EXPECT_EQ(input_copies(blocked.y, 8, 11, 19).size(), 1u);
}

// A stored input (a buffer: no kernel computes it) is copied into blocks only where each element
// feeds enough multiply-adds: a 1x1 convolution to 16 channels reads it in place, a 3x3 one to 64
// copies it.
TEST(ChannelBlocks, AStoredInputIsCopiedIntoBlocksWhereItIsReadOften) {
  Conv light(ConvArgs{.n = 1, .c = 16, .h = 9, .w = 9, .o = 32, .kh = 1, .kw = 1}, 11);
  Conv heavy(ConvArgs{.n = 1, .c = 16, .h = 9, .w = 9, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}}, 13);
  for (int lanes : {8, 16}) {
    EXPECT_TRUE(input_copies(light.y, lanes, 9, 9).empty()) << lanes << " lanes";
    EXPECT_EQ(input_copies(heavy.y, lanes, 9, 9), (std::vector<Shape>{{1, 1, 9, 9, 16}})) << lanes << " lanes: one line";
    EXPECT_ALLCLOSE(run(light.y, lanes), light.want, 1e-4, 1e-4);
    EXPECT_ALLCLOSE(run(heavy.y, lanes), heavy.want, 1e-4, 1e-4);
  }
}

// A small convolution (fewer multiply-adds per output pixel than the filter rule's price) reads
// its input as it is; with no lanes (a scalar Target) nothing is stored in blocks, but a padded
// copy still is where it pays.
TEST(ChannelBlocks, ASmallConvolutionOrAScalarTargetKeepsTheInputsLayout) {
  Conv small(ConvArgs{.n = 1, .c = 8, .h = 6, .w = 6, .o = 8, .kh = 1, .kw = 1, .computed = true}, 15);
  EXPECT_TRUE(input_copies(small.y, 8, 6, 6).empty());
  EXPECT_TRUE(padded_copies(small.y, 8).empty());
  Conv few(ConvArgs{.n = 1, .c = 4, .h = 5, .w = 5, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 17);
  ScheduleContext scalar = planned_for(1);
  Schedule s = test::scheduled({few.y}, scalar);
  size_t layout = 0, padded = 0;
  for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, s.outputs))) {
    layout += is_layout_copy(*u);
    padded += u->op() == Ops::CONTIGUOUS && !is_layout_copy(*u) && u->src(0)->op() == Ops::PAD;
  }
  EXPECT_EQ(layout, 0u);
  EXPECT_EQ(padded, 1u);
}

// A batch of symbolic size is stored in blocks too (the split's sizes carry the variable), or
// padded, and each bound batch computes the plain loops' values.
TEST(ChannelBlocks, ASymbolicBatchIsStoredInBlocks) {
  ConvArgs a{.n = 4, .c = 16, .h = 7, .w = 5, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}};
  auto x = test::data(static_cast<size_t>(a.n * a.c * a.h * a.w), 19), w = test::data(static_cast<size_t>(a.o * a.c * a.kh * a.kw), 20);
  Variable n("n", 1, 4);
  Tensor input = test::f32(x, {4, 16, 7, 5}).shrink({{0, n.bind(4)}, {0, 16}, {0, 7}, {0, 5}}) * 2.0f;
  Tensor y = input.conv2d(test::f32(w, {32, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1});
  EXPECT_EQ(input_copies(y, 8, 7, 5), (std::vector<Shape>{{4, 1, 7, 5, 16}}));
  for (float& v : x) v *= 2.0f;
  int64_t oh = 0, ow = 0;
  std::vector<double> ref = test::conv_ref(x, w, {}, a, oh, ow);
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse("8")});
  for (int64_t batch : {1, 3}) {
    plan.execute_with_vars({{"n", batch}});
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    got.resize(static_cast<size_t>(batch * 32 * oh * ow));
    EXPECT_ALLCLOSE(got, std::vector<double>(ref.begin(), ref.begin() + batch * 32 * oh * ow), 1e-4, 1e-4) << batch;
  }
  // A 3-channel stem over the same batch reads a padded copy (its padding symbolic along the batch).
  ConvArgs s{.n = 4, .c = 3, .h = 7, .w = 5, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}};
  auto sx = test::data(static_cast<size_t>(s.n * s.c * s.h * s.w), 21), sw = test::data(static_cast<size_t>(s.o * s.c * s.kh * s.kw), 22);
  Tensor stem = (test::f32(sx, {4, 3, 7, 5}).shrink({{0, n.bind(4)}, {0, 3}, {0, 7}, {0, 5}}) * 2.0f)
                    .conv2d(test::f32(sw, {64, 3, 3, 3}), std::nullopt, {1, 1}, {1, 1});
  EXPECT_EQ(padded_copies(stem, 8), (std::vector<Shape>{{4, 3, 9, 7}}));
  for (float& v : sx) v *= 2.0f;
  std::vector<double> stem_ref = test::conv_ref(sx, sw, {}, s, oh, ow);
  ExecutionPlan stem_plan = Tensor::prepare({stem}, {.threads = 1, .shape = TargetShape::parse("8")});
  stem_plan.execute_with_vars({{"n", 2}});
  std::vector<float> got = stem_plan.output_buffer()->to_vector<float>();
  got.resize(static_cast<size_t>(2 * 64 * oh * ow));
  EXPECT_ALLCLOSE(got, std::vector<double>(stem_ref.begin(), stem_ref.begin() + 2 * 64 * oh * ow), 1e-4, 1e-4);
}

// A max pool reads a computed input in channel blocks of the plan's lanes, or half of them where
// a whole register does not divide the channels (24 at 16 lanes: 8), its padding read through on
// the blocks; odd sizes (9 x 7, stride 2) compute the plain loops' values at every width.
TEST(ChannelBlocks, AMaxPoolReadsAComputedInputInBlocks) {
  auto x = test::data(2 * 24 * 9 * 7, 23);
  Tensor y = (test::f32(x, {2, 24, 9, 7}) * 2.0f).max_pool2d({3, 3}, std::pair<int64_t, int64_t>{2, 2}, {1, 1});
  for (float& v : x) v *= 2.0f;
  std::vector<double> want = test::pool_ref(x, 2 * 24, 9, 7, 3, 3, 2, 2, 1, 1, true);
  for (int lanes : {4, 8, 16}) {
    int64_t block = lanes == 4 ? 4 : 8;
    EXPECT_EQ(input_copies(y, lanes, 9, 7), (std::vector<Shape>{{2, 24 / block, 9, 7, block}})) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 0, 0) << lanes << " lanes";
  }
}

// A stored input (a buffer) is pooled as it is, and neither a softmax's maximum nor a global
// pool's (over the input's own axes, not a window's taps) is a pool.
TEST(ChannelBlocks, OnlyAWindowsMaximumOfAComputedInputIsPooledInBlocks) {
  Tensor stored = test::f32(test::data(16 * 5 * 5, 25), {1, 16, 5, 5});
  EXPECT_TRUE(copies(stored.max_pool2d({2, 2}), planned_for(8)).empty());
  Tensor computed = stored * 2.0f;
  EXPECT_TRUE(copies(computed.max({2, 3}), planned_for(8)).empty());
  EXPECT_TRUE(copies(computed.reshape({16, 25}).softmax(0), planned_for(8)).empty());
  EXPECT_TRUE(copies(computed.reshape({16, 25}).softmax(1), planned_for(8)).empty());
  // A maximum over a cut of the input's own axis (a masked softmax's first keys) is no pool, and
  // a product summed over the input's own axes (an einsum) is no depthwise convolution.
  EXPECT_TRUE(copies(computed.reshape({1, 16, 25}).shrink({{0, 1}, {0, 16}, {0, 10}}).max({2}), planned_for(8)).empty());
  Tensor scale = test::f32(test::data(16, 26), {1, 16, 1, 1}) * 2.0f;
  EXPECT_TRUE(copies((computed * scale).sum({2, 3}), planned_for(8)).empty());
}

// A depthwise convolution reads its input and its filter in channel blocks of the plan's lanes (or
// half of them: 24 channels at 16 lanes in blocks of 8), (N, C/B, H, W, B) and (C/B, 1, KH, KW, B),
// a stored input too (each tap is one vector load whatever the stride); odd sizes compute the
// plain loops' values at every width.
TEST(ChannelBlocks, ADepthwiseConvolutionReadsInputAndFilterInBlocks) {
  for (bool computed : {true, false}) {
    Conv c(ConvArgs{.n = 2, .c = 24, .h = 9, .w = 7, .o = 24, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .groups = 24,
                    .computed = computed},
           27);
    for (int lanes : {4, 8, 16}) {
      int64_t block = lanes == 4 ? 4 : 8;
      EXPECT_EQ(copies(c.y, planned_for(lanes)),
                (std::vector<std::pair<Shape, DType>>{{{2, 24 / block, 9, 7, block}, dtypes::float32},
                                                      {{24 / block, 1, 3, 3, block}, dtypes::float32}}))
          << lanes << " lanes, computed " << computed;
      EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4) << lanes << " lanes";
    }
  }
}

// Where the views under a reader mix the blocks of the value they read (a channel shuffle: channel
// i of the result is channel (i % 2) * 8 + i / 2 of the value), the shuffled view is what is
// stored in blocks, (N, C/B, H, W, B).
TEST(ChannelBlocks, AChannelShuffleIsStoredInBlocksAfterTheShuffle) {
  auto x = test::data(16 * 6 * 6, 29), w = test::data(16 * 9, 30);
  Tensor shuffled = (test::f32(x, {1, 16, 6, 6}) * 2.0f).reshape({1, 2, 8, 6, 6}).transpose(1, 2).reshape({1, 16, 6, 6});
  Tensor y = shuffled.conv2d(test::f32(w, {16, 1, 3, 3}), std::nullopt, {1, 1}, {1, 1}, {1, 1}, 16);
  EXPECT_EQ(input_copies(y, 8, 6, 6), (std::vector<Shape>{{1, 1, 6, 6, 16}}));
  std::vector<float> xs(x.size());
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t p = 0; p < 36; ++p) xs[static_cast<size_t>(i * 36 + p)] = 2.0f * x[static_cast<size_t>(((i % 2) * 8 + i / 2) * 36 + p)];
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(xs, w, {}, ConvArgs{.n = 1, .c = 16, .h = 6, .w = 6, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 16}, oh, ow);
  EXPECT_ALLCLOSE(run(y, 8), want, 1e-4, 1e-4);
}

// A 1x1 filter with a stride reads a copy of only the pixels it reads, stored in blocks, (N, C/B,
// OH, OW, B): the kernel that computes the input computes just those pixels, and the convolution's
// pixels run as one loop. Where the input is read whole too (a residual block's 3x3 beside its
// strided shortcut), both are stored. A graph's input is copied so too. Odd images (13 x 9, 7 x 4),
// strides of 2 and (2, 3), padding, groups and a batch compute the plain loops' values at every
// width.
TEST(ChannelBlocks, AStridedOneByOneReadsACopyOfThePixelsItReads) {
  auto one_by_one = [](int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, std::pair<int64_t, int64_t> stride,
                       std::pair<int64_t, int64_t> padding, int64_t groups, bool computed = true) {
    ConvArgs a{.n = n, .c = c, .h = h, .w = w, .o = o, .kh = 1, .kw = 1, .groups = groups, .computed = computed};
    a.stride = stride, a.padding = padding;
    return a;
  };
  for (ConvArgs a :
       {one_by_one(1, 64, 13, 9, 64, {2, 2}, {0, 0}, 1), one_by_one(2, 32, 7, 4, 48, {2, 3}, {1, 0}, 1),
        one_by_one(1, 64, 9, 9, 64, {2, 2}, {0, 0}, 2), one_by_one(1, 32, 10, 10, 64, {2, 2}, {0, 0}, 1, false)}) {
    Conv c(a, 50);
    int64_t oh = c.oh, ow = c.ow;
    for (int lanes : {4, 8, 16}) {
      SCOPED_TRACE(std::to_string(a.c) + " channels " + std::to_string(a.h) + "x" + std::to_string(a.w) + ", " +
                   std::to_string(lanes) + " lanes");
      int64_t b = block_for(lanes, a.c / a.groups);
      EXPECT_EQ(input_copies(c.y, lanes, oh, ow), (std::vector<Shape>{{a.n, a.c / b, oh, ow, b}}));
      EXPECT_TRUE(input_copies(c.y, lanes, a.h, a.w).empty());
      EXPECT_ALLCLOSE(run(c.y, lanes), c.want, 1e-4, 1e-4);
    }
  }
  // The input read whole by a 3x3 convolution as well: stored once whole, once strided.
  ConvArgs one{.n = 1, .c = 64, .h = 11, .w = 11, .o = 64, .kh = 1, .kw = 1, .stride = {2, 2}};
  ConvArgs three = one;
  three.kh = three.kw = 3, three.padding = {1, 1};
  std::vector<float> x = test::data(64 * 11 * 11, 51), w1 = test::data(64 * 64, 52), w3 = test::data(64 * 64 * 9, 53);
  Tensor in = test::f32(x, {1, 64, 11, 11}) * 2.0f;
  Tensor y = in.conv2d(test::f32(w1, {64, 64, 1, 1}), std::nullopt, one.stride) +
             in.conv2d(test::f32(w3, {64, 64, 3, 3}), std::nullopt, three.stride, three.padding);
  for (float& v : x) v *= 2.0f;
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, w1, {}, one, oh, ow),
                      by_three = test::conv_ref(x, w3, {}, three, oh, ow);
  for (size_t i = 0; i < want.size(); ++i) want[i] += by_three[i];
  for (int lanes : {4, 8, 16}) {
    int64_t b = block_for(lanes, 64);
    EXPECT_EQ(input_copies(y, lanes, 6, 6), (std::vector<Shape>{{1, 64 / b, 6, 6, b}})) << lanes << " lanes";
    EXPECT_EQ(input_copies(y, lanes, 11, 11), (std::vector<Shape>{{1, 64 / b, 11, 11, b}})) << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4) << lanes << " lanes";
  }
}

// A strided transposed convolution is one convolution per output phase over the same computed
// input (prepare's transposed-convolution rule, applied here for one core as prepare applies it),
// each through the flipped filter's taps: the input is stored in blocks once for all of them (a
// U-Net's 2 x 2 upsampling read it unblocked, 1.7x slower), and the values are the definition's
// (each input element scattered to i * s + k - pad) at every width, with an odd image.
TEST(ChannelBlocks, ATransposedConvolutionsPhasesReadTheInputInBlocks) {
  struct Case {
    int64_t k, s, pad, out_pad;
  };
  for (Case t : {Case{2, 2, 0, 0}, Case{3, 2, 1, 1}}) {
    int64_t n = 1, c = 64, o = 64, h = 17, w = 11;
    std::vector<float> x = test::data(static_cast<size_t>(n * c * h * w), 40), f = test::data(static_cast<size_t>(c * o * t.k * t.k), 41);
    Tensor y = (test::f32(x, {n, c, h, w}) * 2.0f)
                   .conv_transpose2d(test::f32(f, {c, o, t.k, t.k}), std::nullopt, {t.s, t.s}, {t.pad, t.pad}, {t.out_pad, t.out_pad});
    int64_t oh = (h - 1) * t.s + t.k - 2 * t.pad + t.out_pad, ow = (w - 1) * t.s + t.k - 2 * t.pad + t.out_pad;
    ASSERT_EQ(y.shape(), (Shape{n, o, oh, ow}));
    std::vector<double> want(static_cast<size_t>(o * oh * ow), 0.0);
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j)
          for (int64_t oc = 0; oc < o; ++oc)
            for (int64_t ki = 0; ki < t.k; ++ki)
              for (int64_t kj = 0; kj < t.k; ++kj) {
                int64_t r = i * t.s + ki - t.pad, q = j * t.s + kj - t.pad;
                if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
                want[static_cast<size_t>((oc * oh + r) * ow + q)] +=
                    2.0 * x[static_cast<size_t>((ci * h + i) * w + j)] * f[static_cast<size_t>(((ci * o + oc) * t.k + ki) * t.k + kj)];
              }
    for (int lanes : {4, 8, 16}) {
      int64_t b = block_for(lanes, c);
      Target one = planned_for(lanes).target;
      one.threads = 1;
      Tensor phases(detail::transposed_phases_where_they_pay({y.uop()}, one)[0], y.shape());
      ASSERT_NE(phases.uop(), y.uop()) << t.k << "x" << t.k << ", " << lanes << " lanes: the phases pay";
      EXPECT_EQ(input_copies(phases, lanes, h, w), (std::vector<Shape>{{n, c / b, h, w, b}})) << t.k << "x" << t.k << ", " << lanes << " lanes";
      EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4) << t.k << "x" << t.k << ", " << lanes << " lanes";
    }
  }
}

}  // namespace
}  // namespace lathe
