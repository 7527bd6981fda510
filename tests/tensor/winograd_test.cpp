// Winograd's F(4x4, 3x3) convolution (tensor/winograd) against plain loops in float64: at sizes
// that are not whole tiles, with padding, a bias, a batch, an empty and a symbolic batch, at 8
// and 16 lanes; its error at ResNet-18's widths beside the direct method's; and where the rule
// Tensor::prepare runs (winograd_where_it_pays) chooses it for the plan's Target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "ir/label_computed.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/layout_copies.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"
#include "tensor/tensor_util.hpp"
#include "tensor/winograd.hpp"

namespace lathe {
namespace {

using test::ConvArgs;
using test::conv_ref;
using test::data;
using test::f32;

struct Data {
  std::vector<float> x, w, b;
};

Data data_for(const ConvArgs& a, uint64_t seed) {
  return {data(static_cast<size_t>(a.n * a.c * a.h * a.w), seed), data(static_cast<size_t>(a.o * a.c * 9), seed + 100),
          data(static_cast<size_t>(a.o), seed + 200)};
}

std::optional<Tensor> bias_of(const ConvArgs& a, const Data& d) { return a.bias ? std::optional<Tensor>(f32(d.b, {a.o})) : std::nullopt; }

// A weight a plan reads as a constant (a model's initializer).
Tensor constant(const std::vector<float>& v, Shape shape) {
  Tensor t = f32(v, std::move(shape));
  t.buffer().set_constant();
  return t;
}

// The Target a plan for `lanes` float32 lanes (LATHE_TARGET_SHAPE's sizes for them) on 2 threads has.
Target target_of(int64_t lanes) {
  Target t = Target{}.with(TargetShape::parse(std::to_string(lanes)));
  t.threads = 2;
  return t;
}

// The plain loops' conv(x) + b of `a` (its ReLU) and the same weight's convolution of that ReLU
// without a bias: what the tests of two chained convolutions compute.
struct TwoLayers {
  std::vector<float> relu;
  std::vector<double> second;
};
TwoLayers two_layers_ref(const ConvArgs& a, const Data& d) {
  int64_t oh = 0, ow = 0;
  std::vector<double> first = conv_ref(d.x, d.w, d.b, a, oh, ow);
  TwoLayers r;
  for (double v : first) r.relu.push_back(static_cast<float>(std::max(0.0, v)));
  ConvArgs second = a;
  second.bias = false;
  r.second = conv_ref(r.relu, d.w, {}, second, oh, ow);
  return r;
}

// The largest difference from `ref` over the largest |ref|.
double relative_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::abs(got[i] - ref[i])), scale = std::max(scale, std::abs(ref[i]));
  return scale == 0 ? err : err / scale;
}

// Every size the tiles do not divide, padding of 0, 1 and 2 (a 1x1 image: one tile of padding
// around one pixel), a bias and a batch, at 4, 8 and 16 lanes, by F(4x4) and F(2x2): the values of plain loops. The data are in [-2, 2] and
// the transforms scale a window by up to 100 before the product, so float32 keeps about 1e-5 of
// the largest output (the direct method about 1e-6).
TEST(Winograd, MatchesPlainLoopsAtSizesThatAreNotWholeTiles) {
  const ConvArgs cases[] = {
      {.n = 1, .c = 16, .h = 1, .w = 1, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}},
      {.n = 1, .c = 16, .h = 3, .w = 3, .o = 32, .kh = 3, .kw = 3},
      {.n = 2, .c = 16, .h = 13, .w = 11, .o = 48, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true},
      {.n = 1, .c = 32, .h = 8, .w = 8, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}},
      {.n = 1, .c = 16, .h = 9, .w = 5, .o = 16, .kh = 3, .kw = 3, .padding = {2, 2}, .bias = true},
      {.n = 3, .c = 16, .h = 6, .w = 17, .o = 16, .kh = 3, .kw = 3, .padding = {0, 1}},
      {.n = 1, .c = 16, .h = 5, .w = 6, .o = 24, .kh = 3, .kw = 3, .padding = {1, 1}},  // 16 lanes: U in blocks of 8
  };
  for (int64_t lanes : {4, 8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    uint64_t seed = 10;
    for (const ConvArgs& a : cases) {
      SCOPED_TRACE(std::to_string(lanes) + " lanes, " + std::to_string(a.n) + "x" + std::to_string(a.c) + "x" + std::to_string(a.h) + "x" +
                   std::to_string(a.w) + " -> " + std::to_string(a.o));
      Data d = data_for(a, ++seed);
      int64_t oh = 0, ow = 0;
      std::vector<double> ref = conv_ref(d.x, d.w, d.b, a, oh, ow);
      double scale = 0;
      for (double v : ref) scale = std::max(scale, std::abs(v));
      for (int64_t tile : {4, 2}) {
        Tensor y = detail::winograd_conv2d(f32(d.x, {a.n, a.c, a.h, a.w}), f32(d.w, {a.o, a.c, 3, 3}), bias_of(a, d), a.padding, lanes, tile);
        ASSERT_EQ(y.shape(), (Shape{a.n, a.o, oh, ow})) << "F(" << tile << "x" << tile << ")";
        EXPECT_ALLCLOSE(y.to_vector<float>(), ref, 0, 1e-5 * std::max(scale, 1.0)) << "F(" << tile << "x" << tile << ")";
      }
    }
  }
}

// A convolution over three spatial axes, each frame by F(4x4) or F(2x2) and the taps along depth
// summed in the product (winograd_conv3d), at 4, 8 and 16 lanes: the values of plain loops at
// sizes the tiles do not divide, with a bias, a batch, a stride and a dilation along depth, uneven
// padding, one tap along depth, and one pixel.
TEST(Winograd, ThreeDimensionalMatchesPlainLoops) {
  struct Case {
    int64_t n, c, o;
    test::Geometry g;
    bool bias;
  };
  const Case cases[] = {
      {1, 16, 16, {{5, 7, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {{1, 1}, {1, 1}, {1, 1}}}, true},
      {2, 16, 24, {{6, 5, 4}, {3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {{0, 1}, {0, 2}, {1, 0}}}, false},
      {1, 32, 16, {{7, 3, 6}, {2, 3, 3}, {1, 1, 1}, {2, 1, 1}, {{0, 0}, {1, 1}, {1, 1}}}, true},
      {1, 16, 16, {{4, 6, 5}, {1, 3, 3}, {3, 1, 1}, {1, 1, 1}, {{0, 0}, {1, 1}, {0, 0}}}, false},
      {1, 16, 16, {{1, 1, 1}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {{1, 1}, {1, 1}, {1, 1}}}, true},
  };
  for (int64_t lanes : {4, 8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    uint64_t seed = 110;
    for (const Case& k : cases) {
      const test::Geometry& g = k.g;
      SCOPED_TRACE(std::to_string(lanes) + " lanes, " + std::to_string(k.n) + "x" + std::to_string(k.c) + "x" +
                   std::to_string(g.in[0]) + "x" + std::to_string(g.in[1]) + "x" + std::to_string(g.in[2]) + " -> " +
                   std::to_string(k.o));
      std::vector<float> x = data(static_cast<size_t>(k.n * k.c * g.in[0] * g.in[1] * g.in[2]), ++seed);
      std::vector<float> w = data(static_cast<size_t>(k.o * k.c * g.kernel[0] * 9), ++seed),
                         b = data(static_cast<size_t>(k.o), ++seed);
      std::vector<double> ref = test::conv_nd_ref(x, w, k.bias ? &b : nullptr, k.n, k.c, k.o, 1, g);
      std::vector<int64_t> out = g.out();
      double scale = 0;
      for (double v : ref) scale = std::max(scale, std::abs(v));
      std::optional<Tensor> bias = k.bias ? std::optional<Tensor>(f32(b, {k.o})) : std::nullopt;
      for (int64_t tile : {4, 2}) {
        Tensor y = detail::winograd_conv3d(f32(x, {k.n, k.c, g.in[0], g.in[1], g.in[2]}),
                                           f32(w, {k.o, k.c, g.kernel[0], 3, 3}), bias, {g.stride[0], g.dilation[0]},
                                           {g.padding[0], g.padding[1], g.padding[2]}, lanes, tile);
        ASSERT_EQ(y.shape(), (Shape{k.n, k.o, out[0], out[1], out[2]})) << "F(" << tile << "x" << tile << ")";
        EXPECT_ALLCLOSE(y.to_vector<float>(), ref, 0, 1e-5 * std::max(scale, 1.0))
            << "F(" << tile << "x" << tile << ")";
      }
    }
  }
  EXPECT_THROW(
      detail::winograd_conv3d(Tensor::zeros({1, 8, 4, 6, 6}), Tensor::zeros({8, 8, 3, 5, 5}), std::nullopt, {}, {}, 8),
      ShapeError);
}

// Tensor::conv over three spatial axes, prepared: the rule finds conv2d over the folded input
// (detail::folded_input) and computes it by winograd_conv3d, so no copy of the input KD times its
// size is stored (R3D-18's layer 1 at 8 lanes: 20.6 MB, where the input is 6.4) and the input in
// channel blocks is; with a ReLU and a second convolution reading its output, at stride 1 and at a
// stride of 2 along depth, the values of plain loops at 8 and 16 lanes.
TEST(Winograd, AThreeDimensionalConvolutionTransformsEachFrameOnce) {
  for (int64_t depth_stride : {1, 2}) {
    test::Geometry g{{6, 13, 11}, {3, 3, 3}, {depth_stride, 1, 1}, {1, 1, 1}, {{1, 1}, {1, 1}, {1, 1}}};
    const int64_t c = 32, n = 1;
    std::vector<float> x = data(static_cast<size_t>(n * c * 6 * 13 * 11), 130),
                       w = data(static_cast<size_t>(c * c * 27), 131), b = data(static_cast<size_t>(c), 132);
    for (float& v : w) v *= 0.05f;
    Tensor in = f32(x, {n, c, 6, 13, 11}), weight = constant(w, {c, c, 3, 3, 3});
    Tensor y = in.conv(weight, constant(b, {c}), g.window()).relu();
    std::vector<int64_t> out = g.out();
    test::Geometry second{out, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {{1, 1}, {1, 1}, {1, 1}}};
    Tensor z = y.conv(weight, std::nullopt, second.window());
    std::vector<double> first = test::conv_nd_ref(x, w, &b, n, c, c, 1, g);
    std::vector<float> relu;
    for (double v : first) relu.push_back(static_cast<float>(std::max(0.0, v)));
    std::vector<double> want = test::conv_nd_ref(relu, w, nullptr, n, c, c, 1, second);
    for (int lanes : {8, 16}) {
      SCOPED_TRACE(std::to_string(lanes) + " lanes, depth stride " + std::to_string(depth_stride));
      Tensor chosen(detail::winograd_where_it_pays({z.uop()}, target_of(lanes)).front(), z.shape());  // as prepare asks
      EXPECT_EQ(test::direct_sum_count({chosen.uop()}), 0u);
      const int64_t block = 16;  // a cache line of float32: Blocks::convolution_input at 8 and 16 lanes
      int64_t first_input = 0, second_input = 0;
      for (const auto& [s, dt] : test::copies(chosen, test::planned_for(lanes))) {
        EXPECT_NE(s, (Shape{n * out[0], 3 * c / block, 15, 13, block}))
            << "the folded input (padded), KD times the input";
        first_input += s == Shape{n, c / block, 6, 13, 11, block};
        second_input += s == Shape{n, c / block, out[0], 13, 11, block};
      }
      EXPECT_GE(first_input, 1) << "the first convolution's input in channel blocks";
      EXPECT_GE(second_input, 1) << "the second's";
      std::vector<float> got = test::run(z, lanes);
      EXPECT_ALLCLOSE(got, want, 1e-4, 3e-4);
    }
  }
}

// A tile neither method has is an error that names it, not some other method.
TEST(Winograd, ATileOfNoMethodIsAnError) {
  Tensor x = Tensor::zeros({1, 8, 6, 6}), w = Tensor::zeros({8, 8, 3, 3});
  EXPECT_THROW(detail::winograd_conv2d(x, w, std::nullopt, {1, 1}, 8, 3), Error);
}

// An empty batch gives an empty result; a symbolic one is bound at each run without preparing
// again.
TEST(Winograd, EmptyAndSymbolicBatch) {
  test::ScopedTargetShape shape("8");
  ConvArgs a{.n = 4, .c = 8, .h = 7, .w = 9, .o = 8, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 40);
  Tensor w = f32(d.w, {8, 8, 3, 3});
  Tensor empty = detail::winograd_conv2d(Tensor::zeros({0, 8, 7, 9}), w, f32(d.b, {8}), {1, 1}, 8);
  EXPECT_EQ(empty.shape(), (Shape{0, 8, 7, 9}));
  EXPECT_TRUE(empty.to_vector<float>().empty());

  Variable n("n", 1, 4);
  Tensor x = f32(d.x, {4, 8, 7, 9});
  Tensor y = detail::winograd_conv2d(x.shrink({{0, n.bind(4)}, {0, 8}, {0, 7}, {0, 9}}), w, f32(d.b, {8}), {1, 1}, 8);
  ExecutionPlan plan = y.prepare();
  int64_t oh = 0, ow = 0;
  std::vector<double> ref = conv_ref(d.x, d.w, d.b, a, oh, ow);
  for (int64_t batch : {1, 3}) {
    plan.execute_with_vars({{"n", batch}});
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    got.resize(static_cast<size_t>(batch * 8 * oh * ow));
    EXPECT_ALLCLOSE(got, std::vector<double>(ref.begin(), ref.begin() + batch * 8 * oh * ow), 1e-5, 1e-4) << batch;
  }
}

// At ResNet-18's widths, at 8 and 16 lanes, with activations in [0, 2] and weights scaled as a trained network's
// (variance 2 / fan-in), Winograd's float32 error, by F(4x4) and by F(2x2), stays within 1e-5 of
// the largest output (F(4x4) measured 5e-6 at 256 channels, 6e-6 at 512): below the 1e-4 ONNX
// Runtime's outputs are compared at, and at most 16x the direct method's.
TEST(Winograd, ErrorAtResNetWidthsIsBoundedAgainstFloat64) {
  for (ConvArgs a : {ConvArgs{.n = 1, .c = 64, .h = 28, .w = 28, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}},
                     ConvArgs{.n = 1, .c = 256, .h = 14, .w = 14, .o = 256, .kh = 3, .kw = 3, .padding = {1, 1}},
                     ConvArgs{.n = 2, .c = 512, .h = 7, .w = 7, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}}}) {
    std::vector<float> x = data(static_cast<size_t>(a.n * a.c * a.h * a.w), 60, 0.0, 2.0);
    std::vector<float> w = data(static_cast<size_t>(a.o * a.c * 9), 61, -1.0, 1.0);
    for (float& v : w) v *= static_cast<float>(std::sqrt(6.0 / static_cast<double>(a.c * 9)));
    int64_t oh = 0, ow = 0;
    std::vector<double> ref = conv_ref(x, w, {}, a, oh, ow);
    for (int64_t lanes : {8, 16}) {
      test::ScopedTargetShape shape(std::to_string(lanes));
      SCOPED_TRACE(std::to_string(a.c) + " channels, " + std::to_string(lanes) + " lanes");
      Tensor in = f32(x, {a.n, a.c, a.h, a.w}), wt = f32(w, {a.o, a.c, 3, 3});
      double direct = relative_error(in.conv2d(wt, std::nullopt, {1, 1}, a.padding).to_vector<float>(), ref);
      for (int64_t tile : {4, 2}) {
        double winograd = relative_error(detail::winograd_conv2d(in, wt, std::nullopt, a.padding, lanes, tile).to_vector<float>(), ref);
        EXPECT_LT(winograd, 1e-5) << "F(" << tile << "x" << tile << ")";
        EXPECT_LT(winograd, 16 * std::max(direct, 1e-7)) << "F(" << tile << "x" << tile << "), direct " << direct;
      }
    }
  }
}

// The choice: by cost at ResNet-18's layers, batch 1, at both target shapes (measured: F(4x4)
// 1.5-2x faster at 56x56 to 14x14, 2-3x slower for 512 channels at 7x7, where it reads 38 MB of
// weight for 4 tiles; at a batch of 8 the tiles pay for it), on 2 threads; never for what it does not compute
// (a stride, a dilation, groups, a 5x5 or float16) nor for a weight that is not constant, whose
// transform would run every time, nor with LATHE_WINOGRAD=0.
TEST(Winograd, ChosenByCostAtEveryTargetShape) {
  auto pays = [](int64_t n, int64_t c, int64_t hw, int64_t lanes, bool constant_weight = true, DType dt = dtypes::float32,
                 std::pair<int64_t, int64_t> stride = {1, 1}, std::pair<int64_t, int64_t> dilation = {1, 1}, int64_t groups = 1,
                 int64_t k = 3) {
    Tensor x = Tensor::zeros({n, c, hw, hw}, dt);
    Tensor w = Tensor::zeros({c, c / groups, k, k}).contiguous().realize();
    if (constant_weight) w.buffer().set_constant();
    return detail::winograd_pays(x, w.cast(dt), stride, {1, 1}, dilation, groups, target_of(lanes));
  };
  auto tile = [](int64_t n, int64_t c, int64_t hw, int64_t lanes, int memory = 0) {
    Tensor w = Tensor::zeros({c, c, 3, 3}).contiguous().realize();
    w.buffer().set_constant();
    Target t = target_of(lanes);
    if (memory) t.memory_bytes_per_cycle = memory;
    return detail::winograd_tile(Tensor::zeros({n, c, hw, hw}), w, {1, 1}, {1, 1}, {1, 1}, 1, t);
  };
  for (int64_t lanes : {8, 16}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    EXPECT_EQ(tile(1, 64, 56, lanes), 4);
    EXPECT_EQ(tile(1, 128, 28, lanes), 4);
    EXPECT_EQ(tile(1, 256, 14, lanes), 4);
    // 512 channels at 7x7: F(4x4) reads 36 points of weight for 4 tiles; F(2x2) 16 for 16. At 8
    // lanes a 7-pixel row fills 7 of the direct method's 8 accumulators. Where memory streams 7
    // bytes a cycle a thread, F(4x4)'s product pays for its weight (ResNet-18's three such layers
    // on a Zen 5 held to 8 lanes: 1.56 ms direct, 0.88 by F(2x2), 0.58 by F(4x4)); at 4, a typical
    // AVX2 CPU's, its 38 MB outgrow the L3 and F(2x2) is faster (an AVX2 EPYC: 1.84, 1.12, 1.41 ms;
    // 1024 channels 7.57, 4.51, 5.73), while 256 channels' 9 MB stay in the L3 and F(4x4) wins
    // there (0.44, 0.30, 0.23). At 16 lanes, 7 rows of 2 vectors fill 14 of 16, and F(2x2) pays,
    // F(4x4) does not (0.62, 0.48, 0.52 ms). At 4x4, F(2x2) at 16 lanes (0.25 -> 0.16 ms).
    EXPECT_EQ(tile(1, 512, 7, lanes), 2);
    EXPECT_EQ(tile(1, 1024, 7, lanes), 2);
    EXPECT_EQ(tile(1, 512, 7, lanes, 7), lanes == 8 ? 4 : 2);
    EXPECT_EQ(tile(1, 256, 7, lanes), lanes == 8 ? 4 : 2);
    EXPECT_EQ(tile(2, 512, 7, lanes), 4) << "a batch of 2 (8 tiles): 2.04 ms by F(4x4), 2.29 by F(2x2) at 8 lanes";
    EXPECT_EQ(tile(1, 512, 4, lanes), lanes == 8 ? 0 : 2);
    // Larger images: F(4x4) at 112x112 and at a batch of 8 on 56x56 (3.4 -> 2.5 and 6.0 -> 4.9 ms
    // at 16 lanes), the direct method at 224x224 with 64 channels at 16 lanes (13.5 against 17.5 ms;
    // at 8, F(4x4) 18.5 against 22.6).
    EXPECT_EQ(tile(1, 64, 112, lanes), 4);
    EXPECT_EQ(tile(8, 64, 56, lanes), 4);
    EXPECT_EQ(tile(1, 64, 224, lanes), lanes == 8 ? 4 : 0);
    EXPECT_DOUBLE_EQ(detail::direct_tile_share(7, lanes == 8 ? 8 : 16), 7.0 / 8);
    EXPECT_DOUBLE_EQ(detail::direct_tile_share(56, lanes == 8 ? 8 : 16), 1.0);
    EXPECT_TRUE(pays(8, 512, 7, lanes));
    EXPECT_FALSE(pays(1, 64, 56, lanes, false)) << "a weight that is not constant";
    EXPECT_FALSE(pays(1, 64, 56, lanes, true, dtypes::float16));
    EXPECT_FALSE(pays(1, 64, 56, lanes, true, dtypes::float32, {2, 2}));
    EXPECT_FALSE(pays(1, 64, 56, lanes, true, dtypes::float32, {1, 1}, {2, 2}));
    EXPECT_FALSE(pays(1, 64, 56, lanes, true, dtypes::float32, {1, 1}, {1, 1}, 2));
    EXPECT_FALSE(pays(1, 64, 56, lanes, true, dtypes::float32, {1, 1}, {1, 1}, 1, 5));
    EXPECT_FALSE(pays(1, 8, 4, lanes)) << "one tile: the transforms' kernels cost more than they save";
  }
  ::setenv("LATHE_WINOGRAD", "0", 1);
  EXPECT_FALSE(pays(1, 64, 56, 8)) << "LATHE_WINOGRAD=0";
  ::unsetenv("LATHE_WINOGRAD");
  EXPECT_TRUE(pays(1, 40, 56, 8));
  EXPECT_FALSE(pays(1, 40, 56, 16)) << "40 channels are not whole 16-lane blocks";
  // A transformed input that outgrows the caches many times (ESPCN's 64 -> 32 at 224x224: 29 MB,
  // where the direct method measured 1.7x faster at 16 lanes and about as fast at 8) is left to the
  // direct method; a batch of 8 at 56x56 (14 MB) still pays.
  Tensor narrow = constant(std::vector<float>(32 * 64 * 9, 0.0f), {32, 64, 3, 3});
  for (int64_t lanes : {8, 16})
    EXPECT_FALSE(detail::winograd_pays(Tensor::zeros({1, 64, 224, 224}), narrow, {1, 1}, {1, 1}, {1, 1}, 1, target_of(lanes))) << lanes;
  for (int64_t lanes : {8, 16}) EXPECT_TRUE(pays(8, 64, 56, lanes)) << lanes;
}

// ResNet's last stage (512 channels at 7x7) prepared for 16 lanes through Tensor::conv2d: F(2x2)
// is chosen, and the plan computes the plain loops' values (weights scaled as a trained
// network's).
TEST(Winograd, ASmallImageTakesTheTwoByTwoMethodAtPrepare) {
  test::ScopedTargetShape shape("16");
  ConvArgs a{.n = 1, .c = 512, .h = 7, .w = 7, .o = 512, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 80);
  for (float& v : d.w) v *= static_cast<float>(std::sqrt(3.0 / (512.0 * 9)));
  Tensor w = constant(d.w, {512, 512, 3, 3});
  ASSERT_EQ(detail::winograd_tile(f32(d.x, {1, 512, 7, 7}), w, {1, 1}, {1, 1}, {1, 1}, 1, target_of(16)), 2);
  Tensor y = f32(d.x, {1, 512, 7, 7}).conv2d(w, f32(d.b, {512}), {1, 1}, {1, 1}).relu();
  size_t direct = 0;
  {
    test::ScopedEnv off("LATHE_WINOGRAD", "0");
    direct = test::kernel_count(f32(d.x, {1, 512, 7, 7}).conv2d(w, f32(d.b, {512}), {1, 1}, {1, 1}).relu());
  }
  EXPECT_GE(test::kernel_count(y), direct + 3) << "the transforms and the product";
  int64_t oh = 0, ow = 0;
  std::vector<double> want = conv_ref(d.x, d.w, d.b, a, oh, ow);
  double scale = 0;
  for (double& v : want) v = std::max(0.0, v), scale = std::max(scale, v);
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 0, 1e-5 * std::max(scale, 1.0));
}

// LATHE_WINOGRAD=4 or 2 forces that method on every convolution it can compute, whatever the
// prices say (how bench/winograd_prices.py times each method), and never on one it cannot (a
// stride, a weight that is not constant); the plan still computes the plain loops' values. Any
// other value is an error naming it.
TEST(Winograd, ForcedBySetting) {
  auto tile = [](int64_t c, int64_t hw, bool constant_weight = true, std::pair<int64_t, int64_t> stride = {1, 1}) {
    Tensor w = Tensor::zeros({c, c, 3, 3}).contiguous().realize();
    if (constant_weight) w.buffer().set_constant();
    return detail::winograd_tile(Tensor::zeros({1, c, hw, hw}), w, stride, {1, 1}, {1, 1}, 1, target_of(16));
  };
  ASSERT_EQ(tile(512, 7), 2) << "by cost";
  ASSERT_EQ(tile(64, 56), 4) << "by cost";
  {
    test::ScopedEnv four("LATHE_WINOGRAD", "4");
    EXPECT_EQ(tile(512, 7), 4);
    EXPECT_EQ(tile(64, 56, false), 0) << "a weight that is not constant";
    EXPECT_EQ(tile(64, 56, true, {2, 2}), 0) << "a stride of 2";
  }
  {
    test::ScopedEnv two("LATHE_WINOGRAD", "2");
    EXPECT_EQ(tile(64, 56), 2);
  }
  {
    test::ScopedEnv one("LATHE_WINOGRAD", "1");
    EXPECT_EQ(tile(64, 56), 4);
  }
  {
    test::ScopedEnv bad("LATHE_WINOGRAD", "3");
    try {
      tile(64, 56);
      ADD_FAILURE() << "LATHE_WINOGRAD=3 accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("LATHE_WINOGRAD '3'"), std::string::npos) << e.what();
    }
  }
  // Forced F(2x2) where the prices take F(4x4), through prepare: the values of plain loops.
  test::ScopedTargetShape shape("16");
  test::ScopedEnv two("LATHE_WINOGRAD", "2");
  ConvArgs a{.n = 1, .c = 32, .h = 13, .w = 11, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 90);
  for (float& v : d.w) v *= 0.1f;
  Tensor w = constant(d.w, {16, 32, 3, 3});
  Tensor y = f32(d.x, {1, 32, 13, 11}).conv2d(w, f32(d.b, {16}), {1, 1}, {1, 1});
  size_t direct = 0;
  {
    test::ScopedEnv off("LATHE_WINOGRAD", "0");
    direct = test::kernel_count(f32(d.x, {1, 32, 13, 11}).conv2d(w, f32(d.b, {16}), {1, 1}, {1, 1}));
  }
  EXPECT_GE(test::kernel_count(y), direct + 3) << "the transforms and the product";
  int64_t oh = 0, ow = 0;
  EXPECT_ALLCLOSE(y.to_vector<float>(), conv_ref(d.x, d.w, d.b, a, oh, ow), 1e-5, 1e-4);
}

// Through Tensor::conv2d and prepare, with a constant weight, a bias and a ReLU after it and a
// second convolution reading its output in channel blocks: the values of plain loops.
TEST(Winograd, ChosenAtPrepareForAConstantWeight) {
  for (int64_t lanes : {8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    ConvArgs a{.n = 1, .c = 64, .h = 40, .w = 39, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
    Data d = data_for(a, 70);
    for (float& v : d.w) v *= 0.05f;
    Tensor w = constant(d.w, {64, 64, 3, 3});
    ASSERT_TRUE(detail::winograd_pays(f32(d.x, {1, 64, 40, 39}), w, {1, 1}, {1, 1}, {1, 1}, 1, target_of(lanes)));
    Tensor y = f32(d.x, {1, 64, 40, 39}).conv2d(w, f32(d.b, {64}), {1, 1}, {1, 1}).relu();
    Tensor z = y.conv2d(w, std::nullopt, {1, 1}, {1, 1});
    ::setenv("LATHE_WINOGRAD", "0", 1);
    size_t direct = test::kernel_count(f32(d.x, {1, 64, 40, 39}).conv2d(w, f32(d.b, {64}), {1, 1}, {1, 1}).relu());
    ::unsetenv("LATHE_WINOGRAD");
    // The input transform's two passes are one kernel: its first pass, read six times by the
    // second, is computed once per six outputs (the six upcast together, ir/axis.hpp's kSharedWorkLoop).
    // The input, a buffer, is copied into the interior of its padded channel blocks, whose border
    // a kernel of its own fills once, at prepare (schedule/padded_in_place).
    EXPECT_EQ(test::kernel_count(y), direct + 4)
        << "the input transform, the product, the output transform's first pass, the padded input's border";
    TwoLayers want = two_layers_ref(a, d);
    EXPECT_ALLCLOSE(y.to_vector<float>(), std::vector<double>(want.relu.begin(), want.relu.end()), 1e-5, 1e-4);
    EXPECT_ALLCLOSE(z.to_vector<float>(), want.second, 1e-5, 2e-4);
  }
}

// The input's padding is stored in its channel blocks, written in place by the kernel computing
// the input (schedule/padded_in_place), where that kernel is no reduction's: after a Winograd
// convolution (its output transform is elementwise), not after a 1x1 convolution (whose pixels
// would run as rows of a padded width). The values are the plain loops' either way.
TEST(Winograd, ItsInputPaddingIsStoredUnlessAReductionComputesIt) {
  ConvArgs a{.n = 1, .c = 64, .h = 40, .w = 39, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 75);
  for (float& v : d.w) v *= 0.05f;
  Tensor w = constant(d.w, {64, 64, 3, 3}), b = constant(d.b, {64});
  Tensor one = constant(std::vector<float>(d.w.begin(), d.w.begin() + 64 * 64), {64, 64, 1, 1});
  Tensor x = f32(d.x, {1, 64, 40, 39});
  Tensor after_winograd = x.conv2d(w, b, {1, 1}, {1, 1}).relu().conv2d(w, std::nullopt, {1, 1}, {1, 1});
  Tensor after_1x1 = x.conv2d(one).relu().conv2d(w, std::nullopt, {1, 1}, {1, 1});
  auto written_in_place = [](const Tensor& z, int64_t lanes) {
    Schedule s = create_schedule(detail::winograd_where_it_pays({z.uop()}, target_of(lanes)),
                                 test::planned_for(static_cast<int>(lanes)));
    int64_t n = 0;
    for (const auto& [node, p] : s.placements) n += p.kind == Placement::Kind::padded_interior;
    return n;
  };
  for (int64_t lanes : {8, 16}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    // The first convolution's input is a buffer, copied into its padded blocks by a kernel of its own.
    EXPECT_EQ(written_in_place(after_winograd, lanes), 2) << "the first's input's copy, the first's output transform";
    EXPECT_EQ(written_in_place(after_1x1, lanes), 0) << "the 1x1 convolution's output is read through gates";
  }
  TwoLayers want = two_layers_ref(a, d);
  EXPECT_ALLCLOSE(test::run(after_winograd, 8), want.second, 1e-5, 2e-4);
}

// A Winograd convolution's output joined with another convolution's along the channels (a
// SqueezeNet fire module's expand 1x1 and 3x3) is a concatenation of channel blocks, each part
// stored in blocks by the kernel computing it, as for two direct convolutions; the values match.
TEST(Winograd, OutputJoinsAConcatenationOfChannelBlocks) {
  test::ScopedTargetShape shape("16");
  ConvArgs a{.n = 1, .c = 64, .h = 27, .w = 27, .o = 128, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 80);
  Tensor in = f32(d.x, {1, 64, 27, 27}) * 0.5f;
  ASSERT_TRUE(detail::winograd_pays(in, constant(d.w, {128, 64, 3, 3}), {1, 1}, {1, 1}, {1, 1}, 1, target_of(16)));
  Tensor three = in.conv2d(constant(d.w, {128, 64, 3, 3}), constant(d.b, {128}), {1, 1}, {1, 1}).relu();
  Tensor one = in.conv2d(constant(std::vector<float>(d.w.begin(), d.w.begin() + 64 * 64), {64, 64, 1, 1})).relu();
  Tensor joined = Tensor::cat({one, three}, 1);
  // The join's pieces in blocks (schedule/concat_blocks), beside the 1x1 convolution's input.
  int64_t quarter = 0, half = 0;
  Tensor chosen(detail::winograd_where_it_pays({joined.uop()}, target_of(16)).front(), joined.shape());  // as prepare asks
  for (const auto& [s, dt] : test::copies(chosen, test::planned_for(16))) {
    quarter += s == Shape{1, 4, 27, 27, 16};
    half += s == Shape{1, 8, 27, 27, 16};
  }
  EXPECT_EQ(quarter, 2);
  EXPECT_EQ(half, 1);
  for (float& v : d.x) v *= 0.5f;
  int64_t oh = 0, ow = 0;
  std::vector<double> ref = conv_ref(d.x, d.w, d.b, a, oh, ow);
  std::vector<float> got = joined.to_vector<float>();
  std::vector<float> part(got.begin() + 64 * oh * ow, got.end());
  double scale = 0;
  for (double& v : ref) v = std::max(0.0, v), scale = std::max(scale, v);
  EXPECT_ALLCLOSE(part, ref, 0, 1e-5 * scale);
}

// The choice is the plan's: one graph of 72 channels prepared for 8 lanes computes its convolutions
// by Winograd's method (whole 8-lane blocks), prepared for 16 by the direct one; a convolution
// that reads another's output is chosen too (both are rebuilt), and each plan computes the plain
// loops' values (a symbolic batch of 1 and 2 included).
TEST(Winograd, ChosenForTheLanesOfThePlan) {
  ConvArgs a{.n = 2, .c = 72, .h = 21, .w = 18, .o = 72, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 90);
  for (float& v : d.w) v *= 0.1f;
  Tensor w = constant(d.w, {72, 72, 3, 3}), b = constant(d.b, {72});
  Variable n("n", 1, 2);
  Tensor x = f32(d.x, {2, 72, 21, 18});
  for (bool symbolic : {false, true}) {
    Tensor in = symbolic ? x.shrink({{0, n.bind(2)}, {0, 72}, {0, 21}, {0, 18}}) : x;
    Tensor y = in.conv2d(w, b, {1, 1}, {1, 1}).relu();
    Tensor z = y.conv2d(w, std::nullopt, {1, 1}, {1, 1});
    EXPECT_EQ(test::direct_sum_count({z.uop()}), 2u);
    EXPECT_EQ(test::direct_sum_count(detail::winograd_where_it_pays({z.uop()}, target_of(8))), 0u) << symbolic;
    EXPECT_EQ(test::direct_sum_count(detail::winograd_where_it_pays({z.uop()}, target_of(16))), 2u) << "72 channels are not whole 16-lane blocks";
    std::vector<double> want = two_layers_ref(a, d).second;
    for (int lanes : {8, 16}) {
      ExecutionPlan plan = Tensor::prepare({z}, {.threads = 1, .shape = TargetShape::parse(std::to_string(lanes))});
      if (symbolic) plan.execute_with_vars({{"n", 2}});
      else plan.execute();
      // Two F(4x4) layers at 8 lanes: float32's rounding through the transforms leaves a mean error
      // of 1.1e-5 and a largest of 1.4-1.6e-4 (which element, and so how large, moves with the
      // order U's terms are summed in); 16 lanes run the direct method (largest 2.3e-5).
      double atol = lanes == 8 ? 2.5e-4 : 1e-4;
      EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-4, atol) << lanes << " lanes, symbolic " << symbolic;
    }
  }
}

// What the rule rebuilds still answers to the caller's graph: each kernel of a labelled Winograd
// convolution (an ONNX node's) carries its label and no other convolution's (the constants the two
// share, a shape's sizes under a symbolic batch, stay unlabelled), and the output it rebuilt (a
// second Winograd convolution over the first's ReLU) is read by the caller's node's id.
TEST(Winograd, KeepsLabelsAndTheCallersNodes) {
  ConvArgs a{.n = 1, .c = 64, .h = 40, .w = 39, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  Data d = data_for(a, 95);
  for (float& v : d.w) v *= 0.05f;
  Tensor w = constant(d.w, {64, 64, 3, 3});
  Variable n("n", 1, 2);
  std::vector<float> two(d.x);
  two.insert(two.end(), d.x.begin(), d.x.end());
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic ? "symbolic batch" : "static batch");
    Tensor x = symbolic ? f32(two, {2, 64, 40, 39}).shrink({{0, n.bind(1)}, {0, 64}, {0, 40}, {0, 39}}) : f32(d.x, {1, 64, 40, 39});
    auto label = [](const Tensor& from, const Tensor& to, const std::string& name) {
      label_computed(to.uop(), {from.uop().get()}, {name});
    };
    Tensor conv = x.conv2d(w, constant(d.b, {64}), {1, 1}, {1, 1});
    label(x, conv, "conv1");
    Tensor y = conv.relu();
    Tensor z = y.conv2d(w, std::nullopt, {1, 1}, {1, 1});
    label(y, z, "conv2");
    ExecutionPlan plan = Tensor::prepare({z}, {.threads = 1, .shape = TargetShape::parse("8")});
    ASSERT_EQ(test::direct_sum_count(detail::winograd_where_it_pays({z.uop()}, target_of(8))), 0u);
    size_t first = 0, second = 0;
    for (const PreparedKernel* k : plan.prepared_kernels()) {
      bool one = std::find(k->labels.begin(), k->labels.end(), "conv1") != k->labels.end();
      bool two = std::find(k->labels.begin(), k->labels.end(), "conv2") != k->labels.end();
      first += one && !two, second += two && !one;
    }
    EXPECT_GE(first, 3u) << "the first convolution's input transform and product";
    EXPECT_GE(second, 3u) << "the second's product and output transform, without the first's name";
    if (symbolic) plan.execute_with_vars({{"n", 1}});
    else plan.execute();
    const Buffer* out = plan.buffer(z.uop_id());
    ASSERT_NE(out, nullptr) << "the caller's output node, rebuilt by the rule, answers to its id";
    EXPECT_EQ(out, plan.output_buffer());
    std::vector<float> got = out->to_vector<float>();
    got.resize(static_cast<size_t>(64 * 40 * 39));  // the first image (a symbolic batch's buffer holds two)
    EXPECT_ALLCLOSE(got, two_layers_ref(a, d).second, 1e-5, 2e-4);
  }
}

}  // namespace
}  // namespace lathe
