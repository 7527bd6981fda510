// Convolutions, transposed convolutions, pools and windows over 1, 2 and 3 spatial axes, against
// plain loops written from the definitions (any number of axes): strides, asymmetric padding,
// dilation, groups, bias, ceil mode, count_include_pad, odd sizes, integer dtypes, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::conv_nd_ref;
using test::data;
using test::f32;
using test::flat_of;
using test::for_each;
using test::Geometry;
using Pads = std::vector<std::pair<int64_t, int64_t>>;

Shape full(int64_t n, int64_t c, const std::vector<int64_t>& spatial) {
  Shape s{n, c};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

int64_t numel(const Shape& s) { return test::numel_of(s); }

void check_conv(int64_t n, int64_t c, int64_t o, int64_t groups, const Geometry& g, bool bias, uint64_t seed) {
  Shape xs = full(n, c, g.in), ws = full(o, c / groups, g.kernel);
  auto x = data(static_cast<size_t>(numel(xs)), seed), w = data(static_cast<size_t>(numel(ws)), seed + 1), b = data(static_cast<size_t>(o), seed + 2);
  std::optional<Tensor> tb;
  if (bias) tb = f32(b, {o});
  Tensor y = f32(x, xs).conv(f32(w, ws), tb, g.window(), groups);
  ASSERT_EQ(y.shape(), full(n, o, g.out()));
  EXPECT_ALLCLOSE(y.to_vector<float>(), conv_nd_ref(x, w, bias ? &b : nullptr, n, c, o, groups, g), 1e-5, 1e-5);
}

TEST(SpatialConv, OneAxis) {
  check_conv(2, 3, 4, 1, {{11}, {3}, {2}, {1}, {{1, 2}}}, true, 10);
  check_conv(1, 4, 6, 2, {{9}, {2}, {1}, {3}, {{0, 0}}}, false, 11);
  check_conv(1, 1, 1, 1, {{1}, {1}, {1}, {1}, {{0, 0}}}, true, 12);
}

TEST(SpatialConv, TwoAxesWithUnevenPadding) {
  check_conv(1, 3, 5, 1, {{7, 6}, {3, 2}, {2, 1}, {1, 2}, {{0, 2}, {1, 0}}}, true, 13);
  check_conv(2, 16, 16, 1, {{5, 5}, {3, 3}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}}, false, 14);
}

TEST(SpatialConv, ThreeAxes) {
  check_conv(1, 2, 3, 1, {{5, 4, 6}, {3, 2, 3}, {1, 1, 1}, {1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}}}, true, 15);
  check_conv(2, 4, 6, 2, {{7, 5, 6}, {3, 3, 2}, {2, 1, 2}, {1, 2, 1}, {{1, 2}, {0, 1}, {1, 1}}}, true, 16);
  check_conv(1, 3, 2, 1, {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}}}, false, 17);
  // A stride longer than the kernel's reach: two frames of four at a stride of 3 with one tap.
  check_conv(1, 2, 3, 1, {{4, 5, 6}, {1, 3, 3}, {3, 1, 1}, {1, 1, 1}, {{0, 0}, {1, 1}, {0, 0}}}, true, 18);
}

// The transposed convolution's definition: each input element scatters x * w[c, o, k] to output
// position i * s + k * d - before, kept where that lands inside the output.
std::vector<double> conv_transpose_ref(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t c, int64_t o,
                                       int64_t groups, const Geometry& g, const std::vector<int64_t>& op, std::vector<int64_t>& out) {
  out.clear();
  for (size_t i = 0; i < g.in.size(); ++i)
    out.push_back((g.in[i] - 1) * g.stride[i] + g.dilation[i] * (g.kernel[i] - 1) + 1 + op[i] - g.padding[i].first - g.padding[i].second);
  int64_t cg = c / groups, og = o / groups;
  std::vector<double> r(static_cast<size_t>(n * o * numel(Shape(out.begin(), out.end()))), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci)
      for_each(g.in, [&](const std::vector<int64_t>& i) {
        for (int64_t oo = 0; oo < og; ++oo)
          for_each(g.kernel, [&](const std::vector<int64_t>& k) {
            std::vector<int64_t> at(i.size());
            for (size_t a = 0; a < i.size(); ++a) {
              at[a] = i[a] * g.stride[a] + k[a] * g.dilation[a] - g.padding[a].first;
              if (at[a] < 0 || at[a] >= out[a]) return;
            }
            int64_t oc = ci / cg * og + oo;
            std::vector<int64_t> xi{b, ci}, xd{n, c}, wi{ci, oo}, wd{c, og}, yi{b, oc}, yd{n, o};
            xi.insert(xi.end(), i.begin(), i.end()), xd.insert(xd.end(), g.in.begin(), g.in.end());
            wi.insert(wi.end(), k.begin(), k.end()), wd.insert(wd.end(), g.kernel.begin(), g.kernel.end());
            yi.insert(yi.end(), at.begin(), at.end()), yd.insert(yd.end(), out.begin(), out.end());
            r[static_cast<size_t>(flat_of(yi, yd))] += double(x[static_cast<size_t>(flat_of(xi, xd))]) * w[static_cast<size_t>(flat_of(wi, wd))];
          });
      });
  return r;
}

void check_conv_transpose(int64_t n, int64_t c, int64_t o, int64_t groups, const Geometry& g, const std::vector<int64_t>& op, uint64_t seed) {
  Shape xs = full(n, c, g.in), ws = full(c, o / groups, g.kernel);
  auto x = data(static_cast<size_t>(numel(xs)), seed), w = data(static_cast<size_t>(numel(ws)), seed + 1), b = data(static_cast<size_t>(o), seed + 2);
  std::vector<int64_t> out;
  std::vector<double> want = conv_transpose_ref(x, w, n, c, o, groups, g, op, out);
  for (int64_t bi = 0; bi < n; ++bi)
    for (int64_t oc = 0; oc < o; ++oc) {
      int64_t each = numel(Shape(out.begin(), out.end()));
      for (int64_t j = 0; j < each; ++j) want[static_cast<size_t>((bi * o + oc) * each + j)] += b[static_cast<size_t>(oc)];
    }
  Tensor y = f32(x, xs).conv_transpose(f32(w, ws), f32(b, {o}), g.window(), op, groups);
  ASSERT_EQ(y.shape(), full(n, o, out));
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 1e-5, 1e-5);
}

TEST(SpatialConvTranspose, OneTwoAndThreeAxes) {
  check_conv_transpose(2, 3, 4, 1, {{5}, {3}, {2}, {1}, {{1, 0}}}, {1}, 20);
  check_conv_transpose(1, 4, 6, 2, {{6}, {2}, {1}, {2}, {{0, 0}}}, {0}, 21);
  check_conv_transpose(1, 2, 3, 1, {{4, 5}, {3, 2}, {2, 3}, {1, 1}, {{2, 0}, {0, 1}}}, {1, 2}, 22);
  check_conv_transpose(1, 2, 3, 1, {{3, 4, 2}, {2, 3, 2}, {2, 1, 2}, {1, 1, 2}, {{0, 1}, {1, 1}, {0, 0}}}, {1, 0, 1}, 23);
  check_conv_transpose(2, 4, 2, 2, {{2, 3, 3}, {3, 2, 2}, {1, 2, 1}, {2, 1, 1}, {{1, 1}, {0, 0}, {1, 0}}}, {0, 1, 0}, 24);
}

// A pool's definition over the positions of the input (and, counting padding, of the padded
// input) that each window covers.
std::vector<double> pool_ref(const std::vector<float>& x, int64_t nc, const Geometry& g, bool is_max, bool count_pad) {
  std::vector<int64_t> out = g.out();
  std::vector<double> r;
  for (int64_t b = 0; b < nc; ++b)
    for_each(out, [&](const std::vector<int64_t>& p) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t inside = 0;
      for_each(g.kernel, [&](const std::vector<int64_t>& k) {
        bool in = true;
        std::vector<int64_t> at(p.size());
        for (size_t i = 0; i < p.size(); ++i) {
          at[i] = p[i] * g.stride[i] + k[i] * g.dilation[i] - g.padding[i].first;
          in = in && at[i] >= 0 && at[i] < g.in[i];
        }
        if (!in) return;
        std::vector<int64_t> xi{b}, xd{nc};
        xi.insert(xi.end(), at.begin(), at.end()), xd.insert(xd.end(), g.in.begin(), g.in.end());
        double v = x[static_cast<size_t>(flat_of(xi, xd))];
        best = std::max(best, v), sum += v, ++inside;
      });
      int64_t taps = numel(Shape(g.kernel.begin(), g.kernel.end()));
      r.push_back(is_max ? best : sum / double(count_pad ? taps : inside));
    });
  return r;
}

void check_pool(int64_t n, int64_t c, const Geometry& g, uint64_t seed) {
  Shape xs = full(n, c, g.in);
  auto x = data(static_cast<size_t>(numel(xs)), seed);
  Tensor t = f32(x, xs);
  Tensor mx = t.max_pool(g.kernel, g.window());
  ASSERT_EQ(mx.shape(), full(n, c, g.out()));
  EXPECT_ALLCLOSE(mx.to_vector<float>(), pool_ref(x, n * c, g, true, false), 0, 0);
  EXPECT_ALLCLOSE(t.avg_pool(g.kernel, g.window()).to_vector<float>(), pool_ref(x, n * c, g, false, false), 1e-5, 1e-6);
  EXPECT_ALLCLOSE(t.avg_pool(g.kernel, g.window(), true).to_vector<float>(), pool_ref(x, n * c, g, false, true), 1e-5, 1e-6);
  // An input a kernel computes: the 2-D max pool reads it in channel blocks where the channels
  // fill whole blocks of the target's lanes (tensor/nn.cpp; the structure is NnConv2d's test).
  std::vector<float> twice(x);
  for (float& v : twice) v *= 2.0f;
  for (const char* lanes : {"8", "16"}) {
    test::ScopedTargetShape shape(lanes);
    EXPECT_ALLCLOSE((t * 2.0f).max_pool(g.kernel, g.window()).to_vector<float>(), pool_ref(twice, n * c, g, true, false), 0, 0) << lanes;
  }
}

TEST(SpatialPool, OneTwoAndThreeAxes) {
  check_pool(2, 3, {{9}, {3}, {2}, {1}, {{1, 1}}}, 30);
  check_pool(1, 2, {{8}, {2}, {3}, {2}, {{0, 1}}}, 31);
  check_pool(1, 32, {{7, 9}, {3, 3}, {2, 2}, {1, 1}, {{1, 1}, {1, 0}}}, 32);  // 32 channels: whole blocks at 8 and 16 lanes
  check_pool(1, 2, {{7, 8}, {3, 2}, {1, 2}, {2, 3}, {{2, 1}, {0, 2}}}, 33);  // dilated
  check_pool(2, 1, {{5, 4, 6}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {{1, 0}, {1, 1}, {0, 1}}}, 34);
}

// ceil_mode keeps a last, partial window: the same as padding the end by what it lacks.
TEST(SpatialPool, CeilModeKeepsTheLastPartialWindow) {
  auto x = data(2 * 10 * 7, 35);
  Tensor t = f32(x, {1, 2, 10, 7});
  Window ceil{.stride = {3, 2}, .padding = {{0, 0}, {1, 0}}, .ceil_mode = true};
  Tensor y = t.max_pool({2, 3}, ceil);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 4, 4}));
  Geometry g{{10, 7}, {2, 3}, {3, 2}, {1, 1}, {{0, 1}, {1, 1}}};  // rows 10 + 1: four windows of 2 every 3
  EXPECT_ALLCLOSE(y.to_vector<float>(), pool_ref(x, 2, g, true, false), 0, 0);
  EXPECT_ALLCLOSE(t.avg_pool({2, 3}, ceil).to_vector<float>(), pool_ref(x, 2, g, false, false), 1e-5, 1e-6);
  Tensor one = f32(data(9, 36), {1, 1, 9}).max_pool({2}, Window{.stride = {2}, .ceil_mode = true});
  EXPECT_EQ(one.shape(), (Shape{1, 1, 5}));
}

// ...but not a window that would start in the end padding: a 5-wide axis padded by 1 on each
// side has 3 windows of 2 at stride 2, not 4 (PyTorch and ONNX Runtime 1.30 give these values).
TEST(SpatialPool, CeilModeDropsAWindowThatStartsInTheEndPadding) {
  std::vector<float> x(25);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  Tensor t = f32(x, {1, 1, 5, 5});
  Window ceil{.stride = {2, 2}, .padding = {{1, 1}, {1, 1}}, .ceil_mode = true};
  Tensor y = t.max_pool({2, 2}, ceil);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_ALLCLOSE(y.to_vector<float>(), (std::vector<float>{0, 2, 4, 10, 12, 14, 20, 22, 24}), 0, 0);
  EXPECT_ALLCLOSE(t.avg_pool({2, 2}, ceil).to_vector<float>(), (std::vector<float>{0, 1.5f, 3.5f, 7.5f, 9, 11, 17.5f, 19, 21}), 1e-6, 1e-6);
  EXPECT_ALLCLOSE(t.avg_pool({2, 2}, ceil, true).to_vector<float>(), (std::vector<float>{0, 0.75f, 1.75f, 3.75f, 9, 11, 8.75f, 19, 21}), 1e-6, 1e-6);
  // One axis, and a window that starts in the input and ends past the padding is kept (6 + 1 + 1
  // in windows of 3 at stride 2: starts 0, 2, 4 and 6, the last on the input's last element).
  Tensor one = f32(data(6, 37), {1, 1, 6}).max_pool({3}, Window{.stride = {2}, .padding = {{1, 1}}, .ceil_mode = true});
  EXPECT_EQ(one.shape(), (Shape{1, 1, 4}));
  Tensor two = f32(data(5, 38), {1, 1, 5}).max_pool({2}, Window{.stride = {3}, .padding = {{0, 1}}, .ceil_mode = true});
  EXPECT_EQ(two.shape(), (Shape{1, 1, 2})) << "starts 0 and 3; 6 lies in the end padding";
}

// An average over a window that ceil_mode extends past the padding divides by the taps inside
// what counts (the input, with count_include_pad its stated padding too), not by what ceil_mode
// adds: PyTorch's values.
TEST(SpatialPool, CeilModeAverageCountsNoTapOfTheAddedEnd) {
  std::vector<float> x(36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  Tensor t = f32(x, {1, 1, 6, 6});
  Window ceil{.stride = {2, 2}, .padding = {{1, 1}, {1, 1}}, .ceil_mode = true};
  EXPECT_ALLCLOSE(t.avg_pool({3, 3}, ceil, true).to_vector<float>(),
                  (std::vector<float>{1.5555556f, 3.3333333f, 4.6666667f, 2.6666667f, 8.3333333f, 14, 16, 8.5f, 16.333333f, 26, 28, 14.5f,
                                      10.166667f, 16, 17, 8.75f}),
                  1e-5, 1e-5);
  EXPECT_ALLCLOSE(t.avg_pool({3, 3}, ceil).to_vector<float>(),
                  (std::vector<float>{3.5f, 5, 7, 8, 12.5f, 14, 16, 17, 24.5f, 26, 28, 29, 30.5f, 32, 34, 35}), 1e-5, 1e-5);
  Tensor row = f32(std::vector<float>{0, 1, 2, 3, 4, 5, 6}, {1, 1, 7});
  EXPECT_ALLCLOSE(row.avg_pool({2}, Window{.stride = {2}, .ceil_mode = true}, true).to_vector<float>(),
                  (std::vector<float>{0.5f, 2.5f, 4.5f, 6}), 1e-6, 1e-6) << "no stated padding: the last window holds one element";
}

TEST(SpatialPool, IntegersAndDefaultStride) {
  std::vector<int32_t> x{5, -3, 9, 1, -7, 2, 8, 0, -1};
  Tensor t = Tensor::from_vector(x, {1, 1, 9});
  EXPECT_ALLEQUAL(t.max_pool({3}).to_vector<int32_t>(), (std::vector<int32_t>{9, 2, 8})) << "stride defaults to the kernel";
  EXPECT_ALLEQUAL(t.max_pool({2}, Window{.stride = {2}, .padding = {{1, 0}}}).to_vector<int32_t>(), (std::vector<int32_t>{5, 9, 1, 8, 0}));
  EXPECT_EQ(t.avg_pool({3}).dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(t.avg_pool({3}).to_vector<int32_t>(), (std::vector<int32_t>{3, -1, 2}));
}

TEST(SpatialWindows, AViewOfThePaddedInput) {
  auto x = data(2 * 4 * 5, 40);
  Tensor w = f32(x, {1, 2, 4, 5}).windows({2, 3}, Window{.stride = {2, 1}, .padding = {{1, 0}, {0, 1}}, .dilation = {1, 2}}, -9.0);
  ASSERT_EQ(w.shape(), (Shape{1, 2, 2, 2, 2, 3}));
  std::vector<double> want;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 2; ++q)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 3; ++j) {
            int64_t r = p * 2 + i - 1, s = q + j * 2;
            want.push_back(r >= 0 && r < 4 && s < 5 ? x[static_cast<size_t>((c * 4 + r) * 5 + s)] : -9.0);
          }
  EXPECT_ALLCLOSE(w.to_vector<float>(), want, 0, 0);
}

TEST(Spatial, ErrorsNameTheInput) {
  Tensor x = f32(data(2 * 3 * 5 * 5, 50), {2, 3, 5, 5}), w = f32(data(4 * 3 * 9, 51), {4, 3, 3, 3});
  EXPECT_THROW_MSG(x.conv(w, std::nullopt, Window{.stride = {1}}), ShapeError, "conv of (2, 3, 5, 5)", "stride has 1 entries for 2 spatial axes");
  EXPECT_THROW_MSG(x.conv(w, std::nullopt, Window{.padding = {{-1, 0}, {0, 0}}}), ShapeError, "conv", "padding must not be negative");
  EXPECT_THROW_MSG(x.conv(w, std::nullopt, {}, 2), ShapeError, "conv", "2 groups");
  EXPECT_THROW_MSG(x.conv(w, std::nullopt, Window{.ceil_mode = true}), ShapeError, "ceil_mode is for pools");
  EXPECT_THROW_MSG(x.conv(f32(data(12, 52), {4, 3}), std::nullopt), ShapeError, "conv", "same rank");
  EXPECT_THROW_MSG(x.max_pool({2}), ShapeError, "max_pool of (2, 3, 5, 5)", "one kernel size per spatial axis");
  EXPECT_THROW_MSG(x.avg_pool({2, 2}, Window{.stride = {0, 1}}), ShapeError, "avg_pool", "positive");
  EXPECT_THROW_MSG(x.conv_transpose(w, std::nullopt), ShapeError, "conv_transpose", "input's channels");
  Tensor x3 = f32(data(3 * 4 * 4 * 4, 53), {1, 3, 4, 4, 4}), w3 = f32(data(3 * 2 * 8, 54), {3, 2, 2, 2, 2});
  EXPECT_THROW_MSG(x3.conv_transpose(w3, std::nullopt, Window{.padding = {{2, 0}, {0, 0}, {0, 0}}}), ShapeError, "kernel's reach");
  EXPECT_THROW_MSG(x3.conv_transpose(w3, f32({1, 2, 3}, {3})), ShapeError, "bias", "(2)");
  Variable n("n", 1, 5);
  Tensor sym = x.shrink({{0, 2}, {0, 3}, {0, n.bind(4)}, {0, 5}});
  EXPECT_THROW_MSG(sym.max_pool({2, 2}), ShapeError, "max_pool", "only the batch axis may have a symbolic size");
}

}  // namespace
}  // namespace lathe
