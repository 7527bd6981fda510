#include <gtest/gtest.h>

#include <cmath>

#include "ir/axis.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"
#include "opt/upcast.hpp"
#include "schedule/schedule.hpp"

namespace lathe {
namespace {

using test::grid_data;

bool is_upcast(const UOpPtr& ast) {
  for (const UOpPtr& u : toposort(ast))
    if (is_upcast_range(*u)) return true;
  return false;
}

UOpPtr only_kernel(const Tensor& t) {
  Schedule s = create_schedule({t.uop()});
  EXPECT_EQ(s.items.size(), 1u);
  return apply_upcast(simplify(s.items.at(0).ast));
}

TEST(Upcast, MatmulTilesRowsAndColumnsAndStaysExact) {
  const int64_t m = 8, k = 40, n = 96;
  std::vector<float> a = grid_data(m * k, 1), b = grid_data(k * n, 2);
  Tensor ta = Tensor::from_vector(a, {m, k}), tb = Tensor::from_vector(b, {k, n});
  Tensor c = ta.matmul(tb);
  ASSERT_TRUE(is_upcast(only_kernel(c)));
  std::vector<float> got = c.to_vector<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t x = 0; x < k; ++x) want += static_cast<double>(a[i * k + x]) * b[x * n + j];
      ASSERT_NEAR(got[i * n + j], want, 1e-4) << i << "," << j;
    }
}

TEST(Upcast, BatchedMatmulWithBiasReluAndTransposedInput) {
  const int64_t bs = 3, m = 4, k = 16, n = 64;
  std::vector<float> a = grid_data(bs * k * m, 3), b = grid_data(bs * k * n, 4), bias = grid_data(n, 5);
  Tensor ta = Tensor::from_vector(a, {bs, k, m}).transpose(1, 2);  // non-contiguous (bs, m, k)
  Tensor tb = Tensor::from_vector(b, {bs, k, n});
  Tensor c = (ta.matmul(tb) + Tensor::from_vector(bias, {n})).relu();
  EXPECT_EQ(c.prepare().prepared_kernels().size(), 1u);
  std::vector<float> got = c.to_vector<float>();
  for (int64_t p = 0; p < bs; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = bias[j];
        for (int64_t x = 0; x < k; ++x) want += static_cast<double>(a[(p * k + x) * m + i]) * b[(p * k + x) * n + j];
        ASSERT_NEAR(got[(p * m + i) * n + j], std::max(want, 0.0), 1e-4);
      }
}

TEST(Upcast, Conv2dOverWideRows) {
  const int64_t c_in = 3, c_out = 4, h = 5, w = 34;  // output width 32 with a 3x3 kernel
  std::vector<float> x = grid_data(c_in * h * w, 6), wt = grid_data(c_out * c_in * 9, 7);
  Tensor out = Tensor::from_vector(x, {1, c_in, h, w}).conv2d(Tensor::from_vector(wt, {c_out, c_in, 3, 3}));
  ASSERT_TRUE(is_upcast(only_kernel(out)));
  std::vector<float> got = out.to_vector<float>();
  for (int64_t o = 0; o < c_out; ++o)
    for (int64_t y = 0; y < h - 2; ++y)
      for (int64_t z = 0; z < w - 2; ++z) {
        double want = 0;
        for (int64_t c = 0; c < c_in; ++c)
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dz = 0; dz < 3; ++dz)
              want += static_cast<double>(x[(c * h + y + dy) * w + z + dz]) * wt[((o * c_in + c) * 3 + dy) * 3 + dz];
        ASSERT_NEAR(got[(o * (h - 2) + y) * (w - 2) + z], want, 1e-4);
      }
}

TEST(Upcast, MaxReductionTilesToo) {
  const int64_t m = 4, k = 8, n = 32;
  std::vector<float> a = grid_data(m * k * n, 8);
  Tensor t = Tensor::from_vector(a, {m, k, n}).max({1});
  ASSERT_TRUE(is_upcast(only_kernel(t)));
  std::vector<float> got = t.to_vector<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = -INFINITY;
      for (int64_t x = 0; x < k; ++x) want = std::max(want, a[(i * k + x) * n + j]);
      ASSERT_EQ(got[i * n + j], want);
    }
}

TEST(Upcast, RowReductionsAreLeftAlone) {
  // Each row's elements are contiguous along the reduced axis, not along an output axis.
  Tensor t = Tensor::rand({64, 64}, 1).sum({1});
  EXPECT_FALSE(is_upcast(only_kernel(t)));
}

TEST(Upcast, ElementwiseKernelsAreLeftAlone) {
  Tensor t = Tensor::rand({64, 64}, 1) * 2.0f;
  EXPECT_FALSE(is_upcast(only_kernel(t)));
}

}  // namespace
}  // namespace lathe
