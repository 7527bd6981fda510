// Network patterns whose fusion once multiplied their arithmetic: each plan stays within the work
// budget (work_budget.hpp) of its graph evaluated node by node.
#include <gtest/gtest.h>

#include <cmath>

#include "schedule/work_budget.hpp"

namespace lathe {
namespace {

Tensor weight(int64_t out, int64_t in, int64_t k, uint64_t seed) {
  return Tensor::randn({out, in, k, k}, seed) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(in * k * k)));
}
Tensor bias(int64_t n, uint64_t seed) { return Tensor::randn({n}, seed) * 0.1f; }
Tensor conv(const Tensor& x, int64_t out, int64_t k, uint64_t seed, int64_t groups = 1, int64_t stride = 1) {
  int64_t in = x.shape()[1];
  return x.conv2d(weight(out, in / groups, k, seed), bias(out, seed + 1000), {stride, stride}, {k / 2, k / 2}, {1, 1}, groups);
}

// SqueezeNet's Fire module twice: squeeze 1x1 -> (expand 1x1 || expand 3x3) -> concat, and the next
// module's squeeze reading the concatenation.
TEST(FusionBudget, FireModules) {
  Tensor x = Tensor::rand({1, 32, 13, 13}, 1);
  auto fire = [](const Tensor& in, int64_t s, int64_t e, uint64_t seed) {
    Tensor sq = conv(in, s, 1, seed).relu();
    return Tensor::cat({conv(sq, e, 1, seed + 1).relu(), conv(sq, e, 3, seed + 2).relu()}, 1);
  };
  EXPECT_WITHIN_WORK_BUDGET({fire(fire(x, 8, 16, 10), 8, 16, 20)});
}

// ShuffleNet-V2's unit: split the channels, transform one half, concatenate, shuffle; twice.
TEST(FusionBudget, ChannelShuffleWithSplit) {
  auto unit = [](const Tensor& in, uint64_t seed) {
    int64_t c = in.shape()[1], h = c / 2;
    Tensor a = in.slice(1, 0, h), b = in.slice(1, h, c);
    b = conv(b, h, 1, seed).relu();
    b = conv(b, h, 3, seed + 1, h);  // depthwise
    b = conv(b, h, 1, seed + 2).relu();
    Tensor y = Tensor::cat({a, b}, 1);
    int64_t n = y.shape()[0], hh = y.shape()[2], ww = y.shape()[3];
    return y.reshape({n, 2, h, hh, ww}).transpose(1, 2).reshape({n, c, hh, ww});
  };
  Tensor x = Tensor::rand({1, 24, 14, 14}, 2);
  EXPECT_WITHIN_WORK_BUDGET({conv(unit(unit(x, 30), 40), 24, 1, 50)});
}

// GoogLeNet-style branches of different depths, concatenated and read by a 1x1 convolution.
TEST(FusionBudget, InceptionBranches) {
  Tensor x = Tensor::rand({1, 16, 12, 12}, 3);
  Tensor b1 = conv(x, 8, 1, 60).relu();
  Tensor b2 = conv(conv(x, 8, 1, 61).relu(), 8, 3, 62).relu();
  Tensor b3 = conv(x.max_pool2d({3, 3}, {{1, 1}}, {1, 1}), 8, 1, 63).relu();
  EXPECT_WITHIN_WORK_BUDGET({conv(Tensor::cat({b1, b2, b3}, 1), 16, 1, 64)});
}

// ResNet's basic block with batch-norm affine steps, twice.
TEST(FusionBudget, ResidualBlocks) {
  auto bn = [](const Tensor& t, uint64_t seed) {
    int64_t c = t.shape()[1];
    Tensor scale = (Tensor::rand({c}, seed) + 0.5f).reshape({1, c, 1, 1});
    return t * scale + bias(c, seed + 1).reshape({1, c, 1, 1});
  };
  auto block = [&](const Tensor& in, uint64_t seed) {
    Tensor y = bn(conv(in, 16, 3, seed), seed + 1).relu();
    return (bn(conv(y, 16, 3, seed + 2), seed + 3) + in).relu();
  };
  Tensor x = Tensor::rand({1, 16, 12, 12}, 4);
  EXPECT_WITHIN_WORK_BUDGET({block(block(x, 70), 80)});
}

// MobileNet's depthwise 3x3 then pointwise 1x1, with ReLU6 between.
TEST(FusionBudget, DepthwiseThenPointwise) {
  Tensor x = Tensor::rand({1, 32, 14, 14}, 5);
  Tensor y = conv(x, 32, 3, 90, 32).clip(0, 6);
  EXPECT_WITHIN_WORK_BUDGET({conv(conv(y, 64, 1, 91).clip(0, 6), 64, 3, 92, 64)});
}

// A transformer's attention: projections, heads, softmax(q k^T / sqrt(d)) v, output projection.
TEST(FusionBudget, Attention) {
  const int64_t seq = 24, d = 32, heads = 4, hd = d / heads;
  Tensor x = Tensor::rand({1, seq, d}, 6);
  auto proj = [&](const Tensor& t, uint64_t seed) { return t.matmul(Tensor::randn({d, d}, seed) * 0.2f) + bias(d, seed + 1); };
  auto split = [&](const Tensor& t) { return t.reshape({1, seq, heads, hd}).transpose(1, 2); };
  Tensor q = split(proj(x, 100)), k = split(proj(x, 102)), v = split(proj(x, 104));
  Tensor a = q.scaled_dot_product_attention(k, v, true).transpose(1, 2).reshape({1, seq, d});
  EXPECT_WITHIN_WORK_BUDGET({proj(a, 106).layernorm()});
}

// A reduction read by two kernels and a broadcast of it inside another reduction.
TEST(FusionBudget, SharedReductions) {
  Tensor x = Tensor::rand({64, 48}, 7);
  Tensor m = x.sum({1}, true);
  Tensor y = (x - m).matmul(Tensor::rand({48, 40}, 8));
  EXPECT_WITHIN_WORK_BUDGET(std::vector<Tensor>({y, (x * m).sum({0})}));
}

}  // namespace
}  // namespace lathe
