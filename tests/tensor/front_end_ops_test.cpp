// Tensor::conv_transpose2d, Tensor::resize / resize_by_scales and Tensor::einsum against plain
// loops: the transposed convolution by scattering each input element through the kernel, resize by
// the interpolation formulas, einsum by summing over every label's values. Odd sizes, strides that
// do not divide, groups, output padding, size-1 and empty axes; errors that name the input.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "reference.hpp"
#include "tensor/conv_reference.hpp"

namespace lathe::test {
namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-4;

void expect_conv_transpose(const ConvT& c, bool with_bias, uint64_t seed) {
  std::vector<float> x = data(static_cast<size_t>(c.n * c.cin * c.h * c.w), seed), w = data(static_cast<size_t>(c.cin * c.cout_per_group * c.kh * c.kw), seed + 1);
  std::vector<float> bias = with_bias ? data(static_cast<size_t>(c.cout_per_group * c.groups), seed + 2) : std::vector<float>{};
  std::optional<Tensor> b;
  if (with_bias) b = f32(bias, {c.cout_per_group * c.groups});
  Tensor y = f32(x, {c.n, c.cin, c.h, c.w})
                 .conv_transpose2d(f32(w, {c.cin, c.cout_per_group, c.kh, c.kw}), b, {c.sh, c.sw}, {c.ph, c.pw}, {c.oph, c.opw}, c.groups, {c.dh, c.dw});
  int64_t oh = 0, ow = 0;
  std::vector<double> want = conv_transpose_ref(x, w, bias, c, oh, ow);
  EXPECT_EQ(y.shape(), (Shape{c.n, c.cout_per_group * c.groups, oh, ow}));
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, kRtol, kAtol);
}

TEST(ConvTranspose2d, StrideOneIsAFullConvolution) { expect_conv_transpose({1, 3, 5, 7, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, true, 1); }

TEST(ConvTranspose2d, StridesThatDoNotDivideTheKernel) {
  expect_conv_transpose({2, 3, 5, 6, 4, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1}, true, 4);
  expect_conv_transpose({1, 2, 7, 3, 3, 5, 2, 3, 2, 2, 0, 1, 1, 1, 1, 1}, false, 7);
  expect_conv_transpose({1, 1, 1, 1, 1, 4, 4, 4, 4, 0, 0, 0, 0, 1, 1, 1}, true, 10);  // one pixel: the kernel itself
  expect_conv_transpose({1, 2, 3, 3, 2, 1, 1, 3, 3, 0, 0, 2, 2, 1, 1, 1}, true, 11);  // taps reach few phases: bias alone elsewhere
}

TEST(ConvTranspose2d, GroupsAndDilation) {
  expect_conv_transpose({1, 4, 5, 5, 3, 3, 3, 2, 1, 1, 0, 1, 0, 2, 1, 1}, true, 13);
  expect_conv_transpose({2, 6, 4, 5, 1, 3, 2, 1, 1, 1, 1, 0, 0, 3, 2, 3}, true, 16);
  expect_conv_transpose({1, 2, 6, 5, 2, 3, 3, 2, 2, 0, 1, 1, 0, 1, 2, 2}, false, 19);  // stride and dilation together
}

TEST(ConvTranspose2d, RejectsWhatDoesNotFitNamingTheShapes) {
  Tensor x = Tensor::zeros({1, 4, 5, 5}), w = Tensor::zeros({4, 2, 3, 3});
  EXPECT_THROW_MSG(x.conv_transpose2d(Tensor::zeros({3, 2, 3, 3})), ShapeError, "conv_transpose2d", "(1, 4, 5, 5)", "(3, 2, 3, 3)");
  EXPECT_THROW_MSG(x.conv_transpose2d(w, Tensor::zeros({3})), ShapeError, "conv_transpose2d", "bias");
  EXPECT_THROW_MSG(x.conv_transpose2d(w, std::nullopt, {1, 1}, {3, 0}), ShapeError, "conv_transpose2d", "reach");
  EXPECT_THROW_MSG(x.conv_transpose2d(w, std::nullopt, {0, 1}), ShapeError, "conv_transpose2d", "positive");
  EXPECT_THROW_MSG(x.conv_transpose2d(w, std::nullopt, {1, 1}, {0, 0}, {0, 0}, 3), ShapeError, "conv_transpose2d", "groups");
  EXPECT_THROW_MSG(Tensor::zeros({4, 5, 5}).conv_transpose2d(w), ShapeError, "conv_transpose2d", "(4, 5, 5)");
}

// Linear interpolation along one axis, half-pixel centres clamped to the input, as the formula.
std::vector<double> linear_ref(const std::vector<float>& x, int64_t rows, int64_t in, int64_t out, bool align_corners) {
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double pos = align_corners ? (out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                                 : std::clamp((o + 0.5) * static_cast<double>(in) / static_cast<double>(out) - 0.5, 0.0, static_cast<double>(in - 1));
      auto lo = static_cast<int64_t>(std::floor(pos));
      int64_t hi = std::min(lo + 1, in - 1);
      double t = pos - static_cast<double>(lo);
      y[static_cast<size_t>(r * out + o)] = (1 - t) * x[static_cast<size_t>(r * in + lo)] + t * x[static_cast<size_t>(r * in + hi)];
    }
  return y;
}

TEST(Resize, LinearAlongTheLastAxisAtWholeAndOtherRatios) {
  for (auto [in, out] : {std::pair<int64_t, int64_t>{5, 10}, {6, 3}, {7, 11}, {1, 4}, {4, 1}}) {
    for (bool align : {false, true}) {
      auto x = data(static_cast<size_t>(3 * in), static_cast<uint64_t>(in * 10 + out));
      ResizeOptions o;
      o.mode = "linear";
      o.coordinate_transformation = align ? "align_corners" : "half_pixel";
      Tensor y = f32(x, {3, in}).resize({3, out}, o);
      EXPECT_EQ(y.shape(), (Shape{3, out}));
      EXPECT_ALLCLOSE(y.to_vector<float>(), linear_ref(x, 3, in, out, align), kRtol, kAtol) << in << " -> " << out << (align ? " aligned" : "");
    }
  }
}

TEST(Resize, NearestByScalesRepeatsPixels) {
  auto x = data(2 * 3 * 5, 41);
  ResizeOptions o;
  o.coordinate_transformation = "asymmetric";
  o.nearest_mode = "floor";
  Tensor y = f32(x, {1, 2, 3, 5}).resize_by_scales({1.0, 1.0, 2.0, 3.0}, o);
  ASSERT_EQ(y.shape(), (Shape{1, 2, 6, 15}));
  std::vector<double> want;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 15; ++j) want.push_back(x[static_cast<size_t>((c * 3 + i / 2) * 5 + j / 3)]);
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 0.0, 0.0);
}

TEST(Resize, IntegersRoundAndEmptyOutputs) {
  Tensor x = Tensor::from_vector(std::vector<int32_t>{0, 8, 16}, {3});
  ResizeOptions o;
  o.mode = "linear";
  EXPECT_EQ(x.resize({6}, o).to_vector<int32_t>(), (std::vector<int32_t>{0, 2, 6, 10, 14, 16}));
  EXPECT_EQ(x.resize({0}, o).shape(), (Shape{0}));
}

TEST(Resize, RejectsBadOptionsNamingThem) {
  Tensor x = Tensor::zeros({2, 3});
  ResizeOptions bad_mode;
  bad_mode.mode = "bilinear";
  EXPECT_THROW_MSG(x.resize({4, 6}, bad_mode), ShapeError, "resize", "(2, 3)", "bilinear");
  ResizeOptions bad_ct;
  bad_ct.coordinate_transformation = "centre";
  EXPECT_THROW_MSG(x.resize({4, 6}, bad_ct), ShapeError, "resize", "centre");
  EXPECT_THROW_MSG(x.resize({4}), ShapeError, "resize", "one size per axis");
  EXPECT_THROW_MSG(x.resize_by_scales({2.0, -1.0}), ShapeError, "resize", "positive");
  EXPECT_THROW_MSG(Tensor::zeros({0, 3}).resize({2, 3}), ShapeError, "resize", "empty");
}

TEST(Einsum, MatmulTraceOuterAndBroadcast) {
  auto a = data(3 * 4, 51), b = data(4 * 5, 52), sq = data(4 * 4, 53);
  Tensor ta = f32(a, {3, 4}), tb = f32(b, {4, 5}), tsq = f32(sq, {4, 4});
  std::vector<double> mm(15, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 4; ++k) mm[static_cast<size_t>(i * 5 + j)] += a[static_cast<size_t>(i * 4 + k)] * b[static_cast<size_t>(k * 5 + j)];
  EXPECT_ALLCLOSE(Tensor::einsum("ij,jk->ik", {ta, tb}).to_vector<float>(), mm, kRtol, kAtol);
  EXPECT_ALLCLOSE(Tensor::einsum("ij, jk", {ta, tb}).to_vector<float>(), mm, kRtol, kAtol);  // implicit output: i, k
  double trace = 0;
  for (int i = 0; i < 4; ++i) trace += sq[static_cast<size_t>(i * 5)];
  EXPECT_NEAR(Tensor::einsum("ii", {tsq}).item<float>(), trace, 1e-4);
  std::vector<double> transposed;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) transposed.push_back(a[static_cast<size_t>(i * 4 + j)]);
  EXPECT_ALLCLOSE(Tensor::einsum("ij->ji", {ta}).to_vector<float>(), transposed, 0.0, 0.0);
  auto batch = data(2 * 3 * 4, 54);
  std::vector<double> bmm(2 * 3 * 5, 0.0);  // "...ij,jk->...ik": the batch axis broadcast over b
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 4; ++k)
          bmm[static_cast<size_t>((n * 3 + i) * 5 + j)] += batch[static_cast<size_t>((n * 3 + i) * 4 + k)] * b[static_cast<size_t>(k * 5 + j)];
  EXPECT_ALLCLOSE(Tensor::einsum("...ij,jk->...ik", {f32(batch, {2, 3, 4}), tb}).to_vector<float>(), bmm, kRtol, kAtol);
}

TEST(Einsum, RejectsMismatchesNamingTheEquation) {
  Tensor a = Tensor::zeros({3, 4}), b = Tensor::zeros({5, 6});
  EXPECT_THROW_MSG(Tensor::einsum("ij,jk->ik", {a, b}), ShapeError, "einsum 'ij,jk->ik'", "two sizes");
  EXPECT_THROW_MSG(Tensor::einsum("ij,jk->ik", {a}), ShapeError, "einsum", "2 operands, 1 given");
  EXPECT_THROW_MSG(Tensor::einsum("ijk->i", {a}), ShapeError, "einsum", "operand 0 has 2 axes");
  EXPECT_THROW_MSG(Tensor::einsum("i2->i", {a}), ShapeError, "einsum", "character");
  EXPECT_THROW_MSG(Tensor::einsum("ij->x", {a}), ShapeError, "einsum", "output label x");
}

}  // namespace
}  // namespace lathe::test
