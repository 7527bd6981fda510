// The random operators have no reference values to compare with: their statistics, seeds and
// the relations between their outputs are checked instead.
#include <gtest/gtest.h>

#include <cmath>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/node_model.hpp"

namespace lathe::onnx {
namespace {

TEST(OnnxRandom, UniformHasItsRangeAndMeanAndTheSeedFixesIt) {
  NodeModel nm("RandomUniform", {}, 1);
  nm.attr("low", -2).attr("high", 6).attr("seed", 3).attr_ints("shape", {100, 100});
  std::vector<float> a = nm.model().build({})[0].to_vector<float>(), b = nm.model().build({})[0].to_vector<float>();
  EXPECT_EQ(a, b);  // same seed, same values
  double mean = 0;
  for (float v : a) {
    ASSERT_GE(v, -2.0f);
    ASSERT_LT(v, 6.0f);
    mean += v / static_cast<double>(a.size());
  }
  EXPECT_NEAR(mean, 2.0, 0.1);  // 8 / sqrt(12) / 100 = 0.023 standard error
}

TEST(OnnxRandom, NormalHasItsMeanAndScale) {
  NodeModel nm("RandomNormal", {}, 1);
  nm.attr("mean", 1).attr("scale", 3).attr_ints("shape", {200, 100});
  std::vector<float> v = nm.model().build({})[0].to_vector<float>();
  double mean = 0, sq = 0;
  for (float x : v) mean += x / static_cast<double>(v.size());
  for (float x : v) sq += (x - mean) * (x - mean) / static_cast<double>(v.size());
  EXPECT_NEAR(mean, 1.0, 0.1);
  EXPECT_NEAR(std::sqrt(sq), 3.0, 0.1);
}

TEST(OnnxRandom, BernoulliFollowsItsProbabilities) {
  Model m = NodeModel("Bernoulli", {{"p", {4, 1000}}}, 1).model();
  std::vector<float> p;
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 1000; ++i) p.push_back(std::vector<float>{0.0f, 1.0f, 0.25f, 0.75f}[r]);
  std::vector<float> y = m.build({{"p", Tensor::from_vector(p, {4, 1000})}})[0].to_vector<float>();
  int ones[4] = {0, 0, 0, 0};
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 1000; ++i) {
      float v = y[static_cast<size_t>(r * 1000 + i)];
      ASSERT_TRUE(v == 0.0f || v == 1.0f) << v;
      ones[r] += v == 1.0f;
    }
  EXPECT_EQ(ones[0], 0);
  EXPECT_EQ(ones[1], 1000);
  EXPECT_NEAR(ones[2], 250, 50);  // standard deviation 14
  EXPECT_NEAR(ones[3], 750, 50);
}

TEST(OnnxRandom, TrainingDropoutScalesWhatItKeepsAndMasksTheRest) {
  Model m = NodeModel("Dropout", {{"x", {50, 40}}, {"ratio", {}}, {"training", {}}}, 2).model();
  Tensor x = Tensor::rand({50, 40}, 5) + 1.0f;  // no zeros, so a zero output means dropped
  std::vector<Tensor> out = m.build({{"x", x}, {"ratio", Tensor::full({}, 0.25f)}, {"training", Tensor::full({}, true)}});
  std::vector<float> xs = x.to_vector<float>(), y = out[0].to_vector<float>();
  std::vector<bool> mask = out[1].to_vector<bool>();
  double kept = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (mask[i]) {
      ASSERT_NEAR(y[i], xs[i] / 0.75f, 1e-5);
      kept += 1.0 / static_cast<double>(xs.size());
    } else {
      ASSERT_EQ(y[i], 0.0f);
    }
  }
  EXPECT_NEAR(kept, 0.75, 0.05);
  // Not training: the identity, and every element kept.
  std::vector<Tensor> same = m.build({{"x", x}, {"ratio", Tensor::full({}, 0.25f)}, {"training", Tensor::full({}, false)}});
  EXPECT_EQ(same[0].to_vector<float>(), xs);
  EXPECT_THROW(m.build({{"x", x}, {"ratio", Tensor::full({}, 1.5f)}, {"training", Tensor::full({}, true)}}), OnnxError);
}

}  // namespace
}  // namespace lathe::onnx
