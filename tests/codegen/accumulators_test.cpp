// Reductions as accumulators: checked by running kernels whose reductions share loops against the
// unoptimized kernel and a plain-loop reference.
#include <gtest/gtest.h>

#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::close;

// ONNX's AveragePool with padding on top and left that does not count the padding: the window
// sums divided by the share of each window inside the image, both sums in one kernel over the
// same 2x2 window loops. At 8 lanes the heuristics split the 32 columns into two halves of two
// vectors each; in the upper vector of each half the column gate folds away, so that copy of the
// divisor no longer depends on the half, yet it shares the window loops that run once per half.
Tensor same_lower_average_pool(const Tensor& x) {
  std::vector<std::pair<SInt, SInt>> pads{{0, 0}, {0, 0}, {1, 0}, {1, 0}};
  Tensor ones = Tensor::ones({1, x.shape()[1], x.shape()[2], x.shape()[3]}, dtypes::float32);
  return x.pad(pads).avg_pool2d({2, 2}, std::pair<int64_t, int64_t>{1, 1}) / ones.pad(pads).avg_pool2d({2, 2}, std::pair<int64_t, int64_t>{1, 1});
}

std::vector<float> same_lower_reference(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w) {
  std::vector<float> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) {
        double sum = 0;
        int inside = 0;
        for (int64_t di = -1; di <= 0; ++di)
          for (int64_t dj = -1; dj <= 0; ++dj)
            if (i + di >= 0 && j + dj >= 0) sum += x[static_cast<size_t>((p * h + i + di) * w + j + dj)], ++inside;
        out.push_back(static_cast<float>(sum / inside));
      }
  return out;
}

TEST(Accumulators, SiblingReductionsStartAfreshInsideEveryLoopAroundEither) {
  std::vector<float> data = test::data(3 * 32 * 32, 7);
  Tensor y = same_lower_average_pool(test::f32(data, {1, 3, 32, 32}));
  ExecutionPlan plan = test::one_kernel_plan(y);
  std::vector<float> want = same_lower_reference(data, 3, 32, 32);
  ASSERT_TRUE(close(test::reference(plan), want));
  int64_t columns = test::axis_sized(plan, 32);
  ASSERT_GE(columns, 0);
  // The 8-lane heuristics' choice (an AVX2 CPU's), on any host.
  std::vector<Opt> eight_lanes = hand_coded_opts(optimizer_input(test::last_kernel(plan).ast), Target{32, 16, 1});
  EXPECT_TRUE(close(test::run_with(plan, eight_lanes), want)) << to_string(eight_lanes);
  EXPECT_TRUE(close(test::run_with(plan, {{OptOp::UPCAST, columns, 8}, {OptOp::UPCAST, columns, 2}}), want));
  EXPECT_TRUE(close(test::run_with(plan, {{OptOp::UPCAST, columns, 4}, {OptOp::UPCAST, columns, 2}}), want));
}

// The same through whole plans prepared for each target shape, on the conformance case's image
// and on an odd one.
TEST(Accumulators, AveragePoolAgreesAtEveryTargetShape) {
  for (auto [h, w] : {std::pair<int64_t, int64_t>{32, 32}, {5, 37}}) {
    std::vector<float> data = test::data(static_cast<size_t>(3 * h * w), 11);
    std::vector<float> want = same_lower_reference(data, 3, h, w);
    for (const char* shape : {"4", "8", "16"}) {
      Tensor y = same_lower_average_pool(test::f32(data, {1, 3, h, w}));
      ExecutionPlan plan = Tensor::prepare({y}, PrepareOptions{.shape = TargetShape::parse(shape)});
      plan.execute();
      EXPECT_TRUE(close(plan.output_buffer()->to_vector<float>(), want)) << h << "x" << w << " at " << shape << " lanes";
    }
  }
}

}  // namespace
}  // namespace lathe
