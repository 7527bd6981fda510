// The transposed-convolution rule (tensor/transposed_phases.hpp): conv_transpose2d's spread-input
// convolution computed as one convolution per output phase where the phases pay for their
// kernels on the plan's Target. Values against plain loops (each input element times the kernel,
// scattered to i * s + k - pad).
#include <gtest/gtest.h>

#include "ir/toposort.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/direct_convolution.hpp"
#include "tensor/reference.hpp"
#include "tensor/tensor_util.hpp"
#include "tensor/transposed_phases.hpp"

namespace lathe {
namespace {

struct Case {
  int64_t n, c, h, w, o, kh, kw;  // o: output channels in all
  std::pair<int64_t, int64_t> stride, pad{0, 0}, out_pad{0, 0};
  int64_t groups = 1;
};

// conv_transpose2d by its definition (conv_reference.hpp), with a bias.
// `oh` x `ow` outputs, as the definition's size must be.
std::vector<double> scattered(const Case& t, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b, int64_t oh, int64_t ow) {
  int64_t h = 0, w_ = 0;
  std::vector<double> y = test::conv_transpose_ref(x, w, b,
                                                   {t.n, t.c, t.h, t.w, t.o / t.groups, t.kh, t.kw, t.stride.first, t.stride.second, t.pad.first,
                                                    t.pad.second, t.out_pad.first, t.out_pad.second, t.groups, 1, 1},
                                                   h, w_);
  EXPECT_EQ(h, oh);
  EXPECT_EQ(w_, ow);
  return y;
}

Target target(int lanes, int threads) {
  Target t;
  t.vector_bytes = 4 * lanes, t.threads = threads;
  return t;
}

// Each case on a Target where the phases pay (one core of 8 lanes: 320k multiply-adds a kernel)
// becomes one convolution per phase that some tap reaches, and stays the spread input's one
// convolution where they do not (64 cores of 16 lanes: 41M); both plans' values against plain
// loops: strides 2 and (3, 2), padding, output padding, groups and a batch, and a 1x1 kernel
// under stride 2, whose phases but one hold the bias alone.
TEST(TransposedPhases, OneConvolutionPerPhaseWhereThePhasesPay) {
  for (const Case& t : {Case{1, 64, 9, 7, 32, 3, 3, {2, 2}, {1, 1}, {1, 1}}, Case{2, 128, 5, 4, 64, 3, 2, {3, 2}, {0, 1}, {1, 1}, 2},
                        Case{1, 256, 12, 12, 64, 1, 1, {2, 2}}}) {
    auto x = test::data(static_cast<size_t>(t.n * t.c * t.h * t.w), 61), w = test::data(static_cast<size_t>(t.c * (t.o / t.groups) * t.kh * t.kw), 62);
    auto b = test::data(static_cast<size_t>(t.o), 63);
    Tensor y = test::f32(x, {t.n, t.c, t.h, t.w})
                   .conv_transpose2d(test::f32(w, {t.c, t.o / t.groups, t.kh, t.kw}), test::f32(b, {t.o}), t.stride, t.pad, t.out_pad, t.groups);
    int64_t oh = y.shape()[2], ow = y.shape()[3];
    std::string what = std::to_string(t.kh) + "x" + std::to_string(t.kw) + " stride " + std::to_string(t.stride.first) + "x" + std::to_string(t.stride.second);
    EXPECT_EQ(test::direct_sum_count({y.uop()}), 1u) << what;
    int64_t reached = 0;  // phases some tap reaches
    for (int64_t r = 0; r < t.stride.first; ++r)
      for (int64_t q = 0; q < t.stride.second; ++q) reached += (r < t.kh) * (q < t.kw);
    EXPECT_EQ(test::direct_sum_count(detail::transposed_phases_where_they_pay({y.uop()}, target(8, 1))), static_cast<size_t>(reached)) << what;
    EXPECT_EQ(detail::transposed_phases_where_they_pay({y.uop()}, target(16, 64))[0], y.uop()) << what;
    std::vector<double> want = scattered(t, x, w, b, oh, ow);
    for (auto [threads, lanes] : {std::pair<int, const char*>{1, "8"}, {64, "16"}}) {
      ExecutionPlan plan = Tensor::prepare({y}, {.threads = threads, .shape = TargetShape::parse(lanes)});
      plan.execute();
      EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-4, 1e-4) << what << ", " << threads << " threads";
    }
  }
}

// conv_transpose_by_phases itself, at sizes too small for the rule to choose it: output padding,
// strides (3, 2) and (2, 3) with uneven kernels, groups, a batch, kernels smaller than the stride
// (phases no tap reaches hold zeros) and an axis of one position; against plain loops, a bias added.
TEST(TransposedPhases, ByPhasesMatchesTheDefinition) {
  for (const Case& t : {Case{1, 3, 4, 5, 4, 4, 4, {2, 2}, {1, 1}}, Case{2, 4, 3, 3, 6, 3, 2, {3, 2}, {0, 1}, {1, 1}, 2},
                        Case{1, 2, 5, 1, 5, 1, 1, {2, 3}, {0, 0}, {1, 2}}, Case{1, 6, 2, 3, 3, 2, 2, {2, 2}, {0, 0}, {0, 0}, 3},
                        Case{1, 2, 1, 7, 3, 1, 5, {1, 3}, {0, 2}, {0, 2}}}) {
    auto x = test::data(static_cast<size_t>(t.n * t.c * t.h * t.w), 71), w = test::data(static_cast<size_t>(t.c * (t.o / t.groups) * t.kh * t.kw), 72);
    auto b = test::data(static_cast<size_t>(t.o), 73);
    int64_t oh = (t.h - 1) * t.stride.first + t.kh - 2 * t.pad.first + t.out_pad.first;
    int64_t ow = (t.w - 1) * t.stride.second + t.kw - 2 * t.pad.second + t.out_pad.second;
    Tensor wt = detail::transposed_conv_weight(test::f32(w, {t.c, t.o / t.groups, t.kh, t.kw}), t.groups);
    Tensor y = detail::conv_transpose_by_phases(test::f32(x, {t.n, t.c, t.h, t.w}), wt, t.stride, t.pad, {oh, ow}, t.groups) +
               test::f32(b, {t.o}).reshape({1, t.o, 1, 1});
    ASSERT_EQ(y.shape(), (Shape{t.n, t.o, oh, ow}));
    EXPECT_ALLCLOSE(y.to_vector<float>(), scattered(t, x, w, b, oh, ow), 1e-4, 1e-4) << t.kh << "x" << t.kw << " stride " << t.stride.first << "x" << t.stride.second;
  }
}

// Stride 1 and a dilated transposed convolution multiply no zeros the phases could skip, and a
// plain convolution is no transposed one: all are left as they are.
TEST(TransposedPhases, OthersAreLeft) {
  Tensor x = test::f32(test::data(64 * 10 * 10, 64), {1, 64, 10, 10});
  Tensor w = test::f32(test::data(64 * 64 * 9, 65), {64, 64, 3, 3});
  for (Tensor y : {x.conv_transpose2d(w), x.conv_transpose2d(w, std::nullopt, {2, 2}, {0, 0}, {0, 0}, 1, {2, 2}), x.conv2d(w, std::nullopt, {1, 1}, {1, 1})})
    EXPECT_EQ(detail::transposed_phases_where_they_pay({y.uop()}, target(8, 1))[0], y.uop());
}

}  // namespace
}  // namespace lathe
