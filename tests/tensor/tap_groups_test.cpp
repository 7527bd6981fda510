// The tap-group rule (tensor/tap_groups.hpp): a convolution whose taps mostly read padding is
// computed as a sum of parts where each part's savings pay for its kernel on the plan's Target.
#include <gtest/gtest.h>

#include "ir/toposort.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/direct_convolution.hpp"
#include "tensor/reference.hpp"
#include "tensor/tap_groups.hpp"

namespace lathe {
namespace {

using detail::TapGroup;

// Rate 12 on a 14x14 map: each side tap reads the image for the 2 output rows nearest it; taps
// next to each other that read the same rows are one group; a stride steps over rows.
TEST(TapGroups, EachAxisTapsInRunsReadingTheSameOutputs) {
  EXPECT_EQ(detail::tap_groups(14, 3, 1, 12, 12, 14), (std::vector<TapGroup>{{0, 0, 12, 14}, {1, 1, 0, 14}, {2, 2, 0, 2}}));
  EXPECT_EQ(detail::tap_groups(14, 3, 1, 1, 1, 14), (std::vector<TapGroup>{{0, 0, 1, 14}, {1, 1, 0, 14}, {2, 2, 0, 13}}));
  EXPECT_EQ(detail::tap_groups(5, 5, 1, 1, 0, 1), (std::vector<TapGroup>{{0, 4, 0, 1}}));
  EXPECT_EQ(detail::tap_groups(4, 3, 1, 6, 6, 4), (std::vector<TapGroup>{{1, 1, 0, 4}}));  // the side taps read padding only
  EXPECT_EQ(detail::tap_groups(9, 3, 2, 4, 4, 5), (std::vector<TapGroup>{{0, 0, 2, 5}, {1, 1, 0, 5}, {2, 2, 0, 3}}));
}

// What a part must save: 20000 cycles at the Target's multiply-add rate, per dtype.
TEST(TapGroups, APartMustSaveAKernelsWorthOfMultiplyAdds) {
  Target t;
  t.vector_bytes = 32, t.threads = 2;
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::float32), 20000 * 2 * 8 * 2);
  t.vector_bytes = 64, t.threads = 16;
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::float32), 20000 * 2 * 16 * 16);
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::float64), 20000 * 2 * 8 * 16);
  // 16-bit floats are computed in float32, so priced at its lanes; int8 at its own 64.
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::float16), detail::tap_part_macs(t, dtypes::float32));
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::bfloat16), detail::tap_part_macs(t, dtypes::float32));
  EXPECT_EQ(detail::tap_part_macs(t, dtypes::int8), 20000 * 2 * 64 * 16);
}

// The choice follows the Target: the pyramid's 9 parts each save 2.6M multiply-adds, more than a
// kernel costs on one core of 8 lanes (0.32M) and less than on 16 cores of 16 (10.2M). Values of
// both plans against plain loops.
TEST(TapGroups, PartsAreMadeWhereTheyPayOnTheTarget) {
  test::ConvArgs a{.n = 1, .c = 128, .h = 14, .w = 14, .o = 128, .kh = 3, .kw = 3, .padding = {12, 12}, .dilation = {12, 12}, .bias = true};
  auto x = test::data(128 * 14 * 14, 31), w = test::data(128 * 128 * 9, 32), b = test::data(128, 33);
  Tensor y = test::f32(x, {1, 128, 14, 14}).conv2d(test::f32(w, {128, 128, 3, 3}), test::f32(b, {128}), {1, 1}, {12, 12}, {12, 12});
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, w, b, a, oh, ow);
  Target small, large;
  small.vector_bytes = 32, small.threads = 1;
  large.vector_bytes = 64, large.threads = 16;
  EXPECT_EQ(test::direct_sum_count({y.uop()}), 1u);
  EXPECT_EQ(test::direct_sum_count(detail::tap_groups_where_they_pay({y.uop()}, small)), 9u);
  EXPECT_EQ(detail::tap_groups_where_they_pay({y.uop()}, large)[0], y.uop());
  for (auto [threads, lanes] : {std::pair<int, const char*>{1, "8"}, {16, "16"}}) {
    ExecutionPlan plan = Tensor::prepare({y}, {.threads = threads, .shape = TargetShape::parse(lanes)});
    plan.execute();
    EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-4, 1e-4) << threads << " threads, " << lanes << " lanes";
  }
}

// An int8 convolution (its products widened to int32 above the views) is found and split as a
// float one is; a symbolic batch is bound at each run; a convolution reading a PAD of its own,
// uneven (what conv2d leaves where it drops the taps that read only padding on one side), is
// split over that padding (a static batch: over a symbolic one the PAD's batch is ADD(n, 0), which
// the matcher's simplified shapes do not rebuild, so it is left whole). Values exact (int8) or
// against plain loops.
TEST(TapGroups, IntegerSymbolicAndUnevenlyPaddedConvolutionsAreSplit) {
  Target t;
  t.vector_bytes = 32, t.threads = 1;
  test::ConvArgs a{.n = 2, .c = 128, .h = 14, .w = 14, .o = 128, .kh = 3, .kw = 3, .padding = {12, 12}, .dilation = {12, 12}};
  std::vector<int8_t> xi(2 * 128 * 14 * 14), wi(128 * 128 * 9);
  for (size_t i = 0; i < xi.size(); ++i) xi[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 11) - 5);
  for (size_t i = 0; i < wi.size(); ++i) wi[i] = static_cast<int8_t>(static_cast<int>(i * 5 % 7) - 3);
  Tensor y8 = Tensor::from_vector(xi, {2, 128, 14, 14}).conv2d(Tensor::from_vector(wi, {128, 128, 3, 3}), std::nullopt, {1, 1}, {12, 12}, {12, 12});
  EXPECT_EQ(test::direct_sum_count(detail::tap_groups_where_they_pay({y8.uop()}, t)), 9u);
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(std::vector<float>(xi.begin(), xi.end()), std::vector<float>(wi.begin(), wi.end()), {}, a, oh, ow);
  ExecutionPlan p8 = Tensor::prepare({y8}, {.threads = 1, .shape = TargetShape::parse("8")});
  p8.execute();
  std::vector<int32_t> got = p8.output_buffer()->to_vector<int32_t>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<int32_t>(want[i])) << i;

  // A symbolic batch of up to 2, bound to 1 and 2.
  auto x = test::data(2 * 128 * 14 * 14, 36), w = test::data(128 * 128 * 9, 37);
  Variable n("n", 1, 2);
  Tensor xs = test::f32(x, {2, 128, 14, 14});
  Tensor ys = xs.shrink({{0, n.bind(2)}, {0, 128}, {0, 14}, {0, 14}}).conv2d(test::f32(w, {128, 128, 3, 3}), std::nullopt, {1, 1}, {12, 12}, {12, 12});
  EXPECT_EQ(test::direct_sum_count(detail::tap_groups_where_they_pay({ys.uop()}, t)), 9u);
  std::vector<double> ref = test::conv_ref(x, w, {}, a, oh, ow);
  ExecutionPlan ps = Tensor::prepare({ys}, {.threads = 1, .shape = TargetShape::parse("8")});
  for (int64_t batch : {1, 2}) {
    ps.execute_with_vars({{"n", batch}});
    std::vector<float> g = ps.output_buffer()->to_vector<float>();
    g.resize(static_cast<size_t>(batch * 128 * oh * ow));
    EXPECT_ALLCLOSE(g, std::vector<double>(ref.begin(), ref.begin() + batch * 128 * oh * ow), 1e-4, 1e-4) << batch;
  }

  // Padded 13 before and 1 after each axis by a PAD of its own, dilation 12: the taps before read
  // the image for a few outputs.
  Tensor xu = test::f32(x, {2, 128, 14, 14}).shrink({{0, 1}, {0, 128}, {0, 14}, {0, 14}});
  Tensor yu = xu.pad({{0, 0}, {0, 0}, {13, 1}, {13, 1}}).conv2d(test::f32(w, {128, 128, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {12, 12});
  ASSERT_EQ(yu.shape(), (Shape{1, 128, 4, 4}));
  EXPECT_GT(test::direct_sum_count(detail::tap_groups_where_they_pay({yu.uop()}, t)), 1u);
  std::vector<float> padded(128 * 28 * 28, 0.0f);
  for (int64_t c = 0; c < 128; ++c)
    for (int64_t i = 0; i < 14; ++i)
      for (int64_t j = 0; j < 14; ++j) padded[static_cast<size_t>((c * 28 + i + 13) * 28 + j + 13)] = x[static_cast<size_t>((c * 14 + i) * 14 + j)];
  test::ConvArgs u{.n = 1, .c = 128, .h = 28, .w = 28, .o = 128, .kh = 3, .kw = 3, .dilation = {12, 12}};
  std::vector<double> uref = test::conv_ref(padded, w, {}, u, oh, ow);
  ExecutionPlan pu = Tensor::prepare({yu}, {.threads = 1, .shape = TargetShape::parse("8")});
  pu.execute();
  EXPECT_ALLCLOSE(pu.output_buffer()->to_vector<float>(), uref, 1e-4, 1e-4);
}

// A convolution without padding, or whose every tap reads the whole image, is left as it is.
TEST(TapGroups, AConvolutionReadingTheImageEverywhereIsLeft) {
  Target t;
  t.vector_bytes = 32, t.threads = 1;
  Tensor x = test::f32(test::data(64 * 20 * 20, 34), {1, 64, 20, 20});
  Tensor w = test::f32(test::data(64 * 64 * 9, 35), {64, 64, 3, 3});
  for (Tensor y : {x.conv2d(w, std::nullopt, {1, 1}, {1, 1}), x.conv2d(w), x.conv2d(w, std::nullopt, {2, 2}, {2, 2}, {2, 2})})
    EXPECT_EQ(detail::tap_groups_where_they_pay({y.uop()}, t)[0], y.uop());
}

}  // namespace
}  // namespace lathe
