// Reductions against plain C++ loops: any set of axes with keepdim, size-0/size-1/0-d shapes,
// non-contiguous inputs, accumulation dtypes, and the kernel counts of fused reductions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/toposort.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::data;
using test::f32;
using test::reduce_ref;

constexpr double kRtol = 1e-5, kAtol = 1e-6;
const Shape k345{3, 4, 5};

auto add = [](double acc, float x) { return acc + x; };

// ---- sum ----------------------------------------------------------------------------------------

TEST(ReduceSum, AllAxes) {
  auto x = data(60, 1);
  Tensor s = f32(x, k345).sum();
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(x, k345, {0, 1, 2}, 0.0, add), kRtol, kAtol);
}

TEST(ReduceSum, EachSingleAxis) {
  auto x = data(60, 2);
  for (int64_t a = 0; a < 3; ++a) {
    Tensor s = f32(x, k345).sum({a});
    Shape expect = k345;
    expect.erase(expect.begin() + a);
    EXPECT_EQ(s.shape(), expect) << "axis " << a;
    EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(x, k345, {a}, 0.0, add), kRtol, kAtol) << "axis " << a;
  }
}

TEST(ReduceSum, NonAdjacentAxesKeepdim) {
  auto x = data(60, 3);
  Tensor s = f32(x, k345).sum({0, 2}, true);
  EXPECT_EQ(s.shape(), (Shape{1, 4, 1}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(x, k345, {0, 2}, 0.0, add), kRtol, kAtol);
}

TEST(ReduceSum, NegativeAxes) {
  auto x = data(60, 4);
  Tensor s = f32(x, k345).sum({-1, -3});
  EXPECT_EQ(s.shape(), (Shape{4}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(x, k345, {0, 2}, 0.0, add), kRtol, kAtol);
}

TEST(ReduceSum, KeepdimAllAxes) {
  auto x = data(60, 5);
  Tensor s = f32(x, k345).sum({}, true);
  EXPECT_EQ(s.shape(), (Shape{1, 1, 1}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(x, k345, {0, 1, 2}, 0.0, add), kRtol, kAtol);
}

TEST(ReduceSum, SizeOneAxis) {
  auto x = data(4, 6);
  Tensor s = f32(x, {4, 1}).sum({1});
  EXPECT_EQ(s.shape(), (Shape{4}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), x, 0, 0);
}

TEST(ReduceSum, ZeroDimInput) {
  Tensor s = Tensor::from_vector(std::vector<float>{3.5f}, {}).sum();
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_FLOAT_EQ(s.item<float>(), 3.5f);
}

TEST(ReduceSum, OverSizeZeroAxisIsZero) {
  Tensor a = Tensor::ones({3, 0}).sum({1});
  EXPECT_EQ(a.shape(), (Shape{3}));
  EXPECT_ALLCLOSE(a.to_vector<float>(), (std::vector<float>{0, 0, 0}), 0, 0);
  Tensor b = Tensor::ones({0, 2}).sum({0}, true);
  EXPECT_EQ(b.shape(), (Shape{1, 2}));
  EXPECT_ALLCLOSE(b.to_vector<float>(), (std::vector<float>{0, 0}), 0, 0);
  EXPECT_FLOAT_EQ(Tensor::ones({0}).sum().item<float>(), 0.0f);
}

TEST(ReduceSum, KeptSizeZeroAxisStaysEmpty) {
  Tensor a = Tensor::ones({0, 3}).sum({1});
  EXPECT_EQ(a.shape(), (Shape{0}));
  EXPECT_TRUE(a.to_vector<float>().empty());
}

TEST(ReduceSum, LargeFloat32) {
  // An odd length (no even split into partials or vector lanes) of small integers: every partial
  // sum is exact in float, so any dropped or doubled element changes the result.
  const int64_t n = 100003;
  std::vector<float> x(n);
  double ref = 0;
  for (int64_t i = 0; i < n; ++i) ref += x[i] = static_cast<float>(i % 5);
  EXPECT_EQ(f32(x, {n}).sum().item<float>(), ref);
}

TEST(ReduceSum, Float64) {
  std::vector<double> x;
  for (int i = 0; i < 1000; ++i) x.push_back(1.0 / (i + 1));
  double ref = 0;
  for (double v : x) ref += v;
  EXPECT_ALLCLOSE(Tensor::from_vector(x).sum().to_vector<double>(), std::vector<double>{ref}, 1e-13, 0);
}

TEST(ReduceSum, Float16StaysFloat16) {
  auto x = data(64, 8, 0, 1);
  Tensor h = f32(x, {8, 8}).cast(dtypes::float16);
  auto hx = test::as_f32(h);
  Tensor s = h.sum({1});
  EXPECT_EQ(s.dtype(), dtypes::float16);
  EXPECT_ALLCLOSE(test::as_f32(s), reduce_ref<double>(hx, {8, 8}, {1}, 0.0, add), 1e-2, 1e-2);
}

TEST(ReduceSum, Int8AccumulatesInInt32) {
  std::vector<int8_t> x(300, 100);
  Tensor s = Tensor::from_vector(x).sum();
  EXPECT_EQ(s.dtype(), dtypes::int32);
  EXPECT_EQ(s.item<int32_t>(), 30000);
}

TEST(ReduceSum, SmallIntsAccumulateWide) {
  EXPECT_EQ(Tensor::zeros({2}, dtypes::int16).sum().dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::zeros({2}, dtypes::uint8).sum().dtype(), dtypes::uint32);
  EXPECT_EQ(Tensor::zeros({2}, dtypes::uint16).sum().dtype(), dtypes::uint32);
  EXPECT_EQ(Tensor::zeros({2}, dtypes::int64).sum().dtype(), dtypes::int64);
  EXPECT_EQ(Tensor::zeros({2}, dtypes::uint64).sum().dtype(), dtypes::uint64);
  std::vector<uint8_t> x(1000, 255);
  EXPECT_EQ(Tensor::from_vector(x).sum().item<uint32_t>(), 255000u);
}

TEST(ReduceSum, BoolCountsInInt32) {
  std::vector<bool> x{true, false, true, true, false, true};
  Tensor s = Tensor::from_vector(x, {2, 3}).sum({1});
  EXPECT_EQ(s.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(s.to_vector<int32_t>(), (std::vector<int32_t>{2, 2}));
}

TEST(ReduceSum, Int64Exact) {
  std::vector<int64_t> x{int64_t{1} << 40, 3, -(int64_t{1} << 41), 7};
  EXPECT_EQ(Tensor::from_vector(x).sum().item<int64_t>(), (int64_t{1} << 40) + 3 - (int64_t{1} << 41) + 7);
}

TEST(ReduceSum, PermutedInput) {
  auto x = data(60, 9);
  Tensor s = f32(x, k345).permute({2, 0, 1}).sum({1});  // (5, 3, 4) summed over the 3
  auto xp = test::permute_ref(x, k345, {2, 0, 1});
  EXPECT_EQ(s.shape(), (Shape{5, 4}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), reduce_ref<double>(xp, {5, 3, 4}, {1}, 0.0, add), kRtol, kAtol);
}

TEST(ReduceSum, SlicedFlippedInput) {
  auto x = data(48, 10);
  Tensor t = f32(x, {6, 8}).slice(0, -1, 0, -2).slice(1, 1, 7, 3);  // rows 5,3,1 ; cols 1,4
  ASSERT_EQ(t.shape(), (Shape{3, 2}));
  Tensor s = t.sum({0});
  std::vector<double> ref{double(x[5 * 8 + 1]) + x[3 * 8 + 1] + x[1 * 8 + 1], double(x[5 * 8 + 4]) + x[3 * 8 + 4] + x[1 * 8 + 4]};
  EXPECT_ALLCLOSE(s.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ReduceSum, ExpandedInput) {
  auto x = data(3, 11);
  Tensor s = f32(x, {3, 1}).expand({3, 1000}).sum({1});
  std::vector<double> ref;
  for (float v : x) ref.push_back(1000.0 * v);
  EXPECT_ALLCLOSE(s.to_vector<float>(), ref, 1e-5, 1e-5);
}

// ---- prod, max, min -----------------------------------------------------------------------------

TEST(ReduceProd, FloatAxes) {
  auto x = data(60, 12, 0.5, 1.5);
  Tensor p = f32(x, k345).prod({1});
  EXPECT_ALLCLOSE(p.to_vector<float>(), reduce_ref<double>(x, k345, {1}, 1.0, [](double a, float v) { return a * v; }), 1e-5, 1e-6);
}

TEST(ReduceProd, Int8AccumulatesInInt32) {
  Tensor p = Tensor::from_vector(std::vector<int8_t>{2, 3, 4, 5, -6}).prod();
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_EQ(p.item<int32_t>(), -720);
}

TEST(ReduceProd, EmptyIsOne) {
  Tensor p = Tensor::ones({2, 0}).prod({1});
  EXPECT_ALLCLOSE(p.to_vector<float>(), (std::vector<float>{1, 1}), 0, 0);
}

TEST(ReduceMax, FloatAxesKeepdim) {
  auto x = data(60, 13);
  auto mx = [](double a, float v) { return std::max(a, double(v)); };
  double lo = -std::numeric_limits<double>::infinity();
  Tensor m = f32(x, k345).max({1, 2}, true);
  EXPECT_EQ(m.shape(), (Shape{3, 1, 1}));
  EXPECT_ALLCLOSE(m.to_vector<float>(), reduce_ref<double>(x, k345, {1, 2}, lo, mx), 0, 0);
  EXPECT_ALLCLOSE(f32(x, k345).max().to_vector<float>(), reduce_ref<double>(x, k345, {0, 1, 2}, lo, mx), 0, 0);
}

TEST(ReduceMax, AllNegativeValues) {
  Tensor m = f32({-5, -3, -9, -1e30f}, {2, 2}).max({1});
  EXPECT_ALLCLOSE(m.to_vector<float>(), (std::vector<float>{-3, -9}), 0, 0);
}

TEST(ReduceMin, FloatAxes) {
  auto x = data(60, 14);
  auto mn = [](double a, float v) { return std::min(a, double(v)); };
  Tensor m = f32(x, k345).min({0});
  EXPECT_EQ(m.shape(), (Shape{4, 5}));
  EXPECT_ALLCLOSE(m.to_vector<float>(), reduce_ref<double>(x, k345, {0}, std::numeric_limits<double>::infinity(), mn), 0, 0);
}

TEST(ReduceMaxMin, SignedInts) {
  auto x = test::int_data<int16_t>(60, 15, -30000, 30000);
  Tensor t = Tensor::from_vector(x, k345);
  auto mx = reduce_ref<int64_t>(x, k345, {2}, INT64_MIN, [](int64_t a, int16_t v) { return std::max<int64_t>(a, v); });
  auto mn = reduce_ref<int64_t>(x, k345, {2}, INT64_MAX, [](int64_t a, int16_t v) { return std::min<int64_t>(a, v); });
  EXPECT_EQ(t.max({2}).dtype(), dtypes::int16);
  EXPECT_ALLEQUAL(t.max({2}).to_vector<int16_t>(), mx);
  EXPECT_ALLEQUAL(t.min({2}).to_vector<int16_t>(), mn);
}

TEST(ReduceMaxMin, ExtremeInt8) {
  Tensor t = Tensor::from_vector(std::vector<int8_t>{-128, 127, 0});
  EXPECT_EQ(t.max().item<int8_t>(), 127);
  EXPECT_EQ(t.min().item<int8_t>(), -128);
}

TEST(ReduceArg, ArgminAtSignedMinimum) {
  Tensor t = Tensor::from_vector(std::vector<int8_t>{5, -128, 0, -127});
  EXPECT_EQ(t.argmin().item<int32_t>(), 1);
  Tensor u = Tensor::from_vector(std::vector<int32_t>{0, INT32_MAX, INT32_MIN, -1});
  EXPECT_EQ(u.argmin().item<int32_t>(), 2);
  EXPECT_EQ(u.argmax().item<int32_t>(), 1);
  EXPECT_EQ(u.min().item<int32_t>(), INT32_MIN);
}

TEST(ReduceMaxMin, Unsigned) {
  Tensor t = Tensor::from_vector(std::vector<uint8_t>{7, 255, 0, 128, 3, 9}, {2, 3});
  EXPECT_ALLEQUAL(t.max({1}).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 128}));
  EXPECT_ALLEQUAL(t.min({1}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 3}));
  Tensor u = Tensor::from_vector(std::vector<uint64_t>{1ull << 63, 5, ~0ull});
  EXPECT_EQ(u.max().item<uint64_t>(), ~0ull);
  EXPECT_EQ(u.min().item<uint64_t>(), 5ull);
}

TEST(ReduceMaxMin, Bool) {
  Tensor t = Tensor::from_vector(std::vector<bool>{false, true, true, true}, {2, 2});
  EXPECT_ALLEQUAL(t.max({1}).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_ALLEQUAL(t.min({1}).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(ReduceMaxMin, NonContiguousInput) {
  auto x = data(20, 16);
  Tensor t = f32(x, {4, 5}).transpose().flip({1});  // (5, 4), columns reversed
  std::vector<double> ref;
  for (int i = 0; i < 5; ++i) {
    double m = -1e300;
    for (int j = 0; j < 4; ++j) m = std::max(m, double(x[(3 - j) * 5 + i]));
    ref.push_back(m);
  }
  EXPECT_ALLCLOSE(t.max({1}).to_vector<float>(), ref, 0, 0);
}

// ---- mean, var, std -----------------------------------------------------------------------------

TEST(ReduceMean, FloatAxes) {
  auto x = data(60, 17);
  auto s = reduce_ref<double>(x, k345, {0, 2}, 0.0, add);
  for (double& v : s) v /= 15;
  Tensor m = f32(x, k345).mean({0, 2});
  EXPECT_ALLCLOSE(m.to_vector<float>(), s, kRtol, kAtol);
}

TEST(ReduceMean, IntsGiveFloat32) {
  Tensor m = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 7}, {2, 3}).mean({1});
  EXPECT_EQ(m.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(m.to_vector<float>(), (std::vector<double>{2.0, 16.0 / 3}), kRtol, kAtol);
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, false, false}).mean();
  EXPECT_EQ(b.dtype(), dtypes::float32);
  EXPECT_FLOAT_EQ(b.item<float>(), 0.25f);
}

TEST(ReduceMean, Float64StaysFloat64) {
  Tensor m = Tensor::from_vector(std::vector<double>{0.1, 0.2, 0.4}).mean();
  EXPECT_EQ(m.dtype(), dtypes::float64);
  EXPECT_NEAR(m.item<double>(), 0.7 / 3, 1e-15);
}

TEST(ReduceMean, KeepdimAndSizeOne) {
  auto x = data(6, 18);
  Tensor m = f32(x, {6, 1}).mean({1}, true);
  EXPECT_EQ(m.shape(), (Shape{6, 1}));
  EXPECT_ALLCLOSE(m.to_vector<float>(), x, kRtol, kAtol);
}

TEST(ReduceMean, OfEmptyIsNan) {
  Tensor m = Tensor::ones({2, 0}).mean({1});
  auto v = m.to_vector<float>();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
}

std::vector<double> var_ref(const std::vector<float>& x, const Shape& shape, const std::vector<int64_t>& axes, int64_t corr) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[a];
  auto mean = reduce_ref<double>(x, shape, axes, 0.0, add);
  for (double& m : mean) m /= n;
  Shape kept = shape;
  for (int64_t a : axes) kept[a] = 1;
  std::vector<double> ss(mean.size(), 0.0);
  for (int64_t i = 0; i < test::numel_of(shape); ++i) {
    test::Index idx = test::unravel(i, shape);
    for (int64_t a : axes) idx[a] = 0;
    int64_t o = test::ravel(idx, kept);
    ss[o] += (x[i] - mean[o]) * (x[i] - mean[o]);
  }
  for (double& v : ss) v /= double(n - corr);
  return ss;
}

TEST(ReduceVar, DefaultCorrection) {
  auto x = data(60, 19);
  EXPECT_ALLCLOSE(f32(x, k345).var({1}).to_vector<float>(), var_ref(x, k345, {1}, 1), 1e-5, 1e-6);
}

TEST(ReduceVar, PopulationOverTwoAxesKeepdim) {
  auto x = data(60, 20);
  Tensor v = f32(x, k345).var({0, 2}, true, 0);
  EXPECT_EQ(v.shape(), (Shape{1, 4, 1}));
  EXPECT_ALLCLOSE(v.to_vector<float>(), var_ref(x, k345, {0, 2}, 0), 1e-5, 1e-6);
}

TEST(ReduceVar, OfIntsIsFloat32) {
  Tensor v = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4}).var();
  EXPECT_EQ(v.dtype(), dtypes::float32);
  EXPECT_FLOAT_EQ(v.item<float>(), 5.0f / 3.0f);
}

TEST(ReduceStd, MatchesSqrtOfVar) {
  auto x = data(60, 21);
  auto ref = var_ref(x, k345, {2}, 1);
  for (double& v : ref) v = std::sqrt(v);
  EXPECT_ALLCLOSE(f32(x, k345).std({2}).to_vector<float>(), ref, 1e-5, 1e-6);
  auto all = var_ref(x, k345, {0, 1, 2}, 0);
  EXPECT_ALLCLOSE(f32(x, k345).std({}, false, 0).to_vector<float>(), std::vector<double>{std::sqrt(all[0])}, 1e-5, 1e-6);
}

TEST(ReduceVar, NonContiguousInput) {
  auto x = data(60, 22);
  auto xp = test::permute_ref(x, k345, {1, 2, 0});  // (4, 5, 3)
  Tensor v = f32(x, k345).permute({1, 2, 0}).var({2});
  EXPECT_ALLCLOSE(v.to_vector<float>(), var_ref(xp, {4, 5, 3}, {2}, 1), 1e-5, 1e-6);
}

// ---- argmax, argmin -------------------------------------------------------------------------------

template <class T>
std::vector<int32_t> arg_ref(const std::vector<T>& x, int64_t rows, int64_t cols, int axis, bool is_max) {
  std::vector<int32_t> out;
  int64_t outer = axis == 1 ? rows : cols, inner = axis == 1 ? cols : rows;
  for (int64_t o = 0; o < outer; ++o) {
    int32_t best = 0;
    for (int64_t k = 1; k < inner; ++k) {
      T cur = axis == 1 ? x[o * cols + k] : x[k * cols + o];
      T b = axis == 1 ? x[o * cols + best] : x[best * cols + o];
      if (is_max ? cur > b : cur < b) best = static_cast<int32_t>(k);
    }
    out.push_back(best);
  }
  return out;
}

TEST(ReduceArg, ArgmaxBothAxes) {
  auto x = data(20, 23);
  Tensor t = f32(x, {4, 5});
  Tensor a1 = t.argmax(1), a0 = t.argmax(0);
  EXPECT_EQ(a1.dtype(), dtypes::int32);
  EXPECT_EQ(a1.shape(), (Shape{4}));
  EXPECT_ALLEQUAL(a1.to_vector<int32_t>(), arg_ref(x, 4, 5, 1, true));
  EXPECT_ALLEQUAL(a0.to_vector<int32_t>(), arg_ref(x, 4, 5, 0, true));
}

TEST(ReduceArg, ArgminBothAxesNegativeAxis) {
  auto x = data(20, 24);
  Tensor t = f32(x, {4, 5});
  EXPECT_ALLEQUAL(t.argmin(-1).to_vector<int32_t>(), arg_ref(x, 4, 5, 1, false));
  EXPECT_ALLEQUAL(t.argmin(-2).to_vector<int32_t>(), arg_ref(x, 4, 5, 0, false));
}

TEST(ReduceArg, TiesPickFirst) {
  Tensor t = f32({1, 3, 3, 2, 5, 5, 5, 0}, {2, 4});
  EXPECT_ALLEQUAL(t.argmax(1).to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
  Tensor u = f32({2, 1, 1, 2, 0, 0, 7, 0}, {2, 4});
  EXPECT_ALLEQUAL(u.argmin(1).to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
}

TEST(ReduceArg, FlattenedWithAndWithoutKeepdim) {
  auto x = data(24, 25);
  int32_t best = 0, worst = 0;
  for (int i = 1; i < 24; ++i) {
    if (x[i] > x[best]) best = i;
    if (x[i] < x[worst]) worst = i;
  }
  Tensor t = f32(x, {2, 3, 4});
  Tensor a = t.argmax();
  EXPECT_EQ(a.shape(), Shape{});
  EXPECT_EQ(a.item<int32_t>(), best);
  Tensor k = t.argmin(std::nullopt, true);
  EXPECT_EQ(k.shape(), (Shape{1, 1, 1}));
  EXPECT_EQ(k.item<int32_t>(), worst);
}

TEST(ReduceArg, KeepdimOnAxis) {
  auto x = data(12, 26);
  Tensor a = f32(x, {3, 4}).argmax(1, true);
  EXPECT_EQ(a.shape(), (Shape{3, 1}));
  EXPECT_ALLEQUAL(a.to_vector<int32_t>(), arg_ref(x, 3, 4, 1, true));
}

TEST(ReduceArg, IntsUnsignedAndBool) {
  auto x = test::int_data<int8_t>(20, 27, -128, 127);
  Tensor t = Tensor::from_vector(x, {4, 5});
  EXPECT_ALLEQUAL(t.argmax(1).to_vector<int32_t>(), arg_ref(x, 4, 5, 1, true));
  EXPECT_ALLEQUAL(t.argmin(1).to_vector<int32_t>(), arg_ref(x, 4, 5, 1, false));
  auto u = test::int_data<uint8_t>(20, 28, 0, 255);
  Tensor tu = Tensor::from_vector(u, {4, 5});
  EXPECT_ALLEQUAL(tu.argmax(0).to_vector<int32_t>(), arg_ref(u, 4, 5, 0, true));
  EXPECT_ALLEQUAL(tu.argmin(0).to_vector<int32_t>(), arg_ref(u, 4, 5, 0, false));
  Tensor b = Tensor::from_vector(std::vector<bool>{false, true, true, true, false, false}, {2, 3});
  EXPECT_ALLEQUAL(b.argmax(1).to_vector<int32_t>(), (std::vector<int32_t>{1, 0}));
  EXPECT_ALLEQUAL(b.argmin(1).to_vector<int32_t>(), (std::vector<int32_t>{0, 1}));
}

TEST(ReduceArg, NonContiguousInput) {
  auto x = data(20, 29);
  Tensor t = f32(x, {4, 5}).transpose();  // (5, 4)
  std::vector<float> xt = test::permute_ref(x, {4, 5}, {1, 0});
  EXPECT_ALLEQUAL(t.argmax(1).to_vector<int32_t>(), arg_ref(xt, 5, 4, 1, true));
  Tensor f = f32(x, {4, 5}).flip({1});
  std::vector<float> xf;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) xf.push_back(x[i * 5 + 4 - j]);
  EXPECT_ALLEQUAL(f.argmin(1).to_vector<int32_t>(), arg_ref(xf, 4, 5, 1, false));
}

// ---- any, all -------------------------------------------------------------------------------------

TEST(ReduceAnyAll, BoolAxes) {
  std::vector<bool> x{false, false, true, false, true, true, true, true, false, false, false, false};
  Tensor t = Tensor::from_vector(x, {3, 4});
  auto any = reduce_ref<bool>(x, {3, 4}, {1}, false, [](bool a, bool v) { return a || v; });
  auto all = reduce_ref<bool>(x, {3, 4}, {1}, true, [](bool a, bool v) { return a && v; });
  EXPECT_EQ(t.any({1}).dtype(), dtypes::bool_);
  EXPECT_ALLEQUAL(t.any({1}).to_vector<bool>(), any);
  EXPECT_ALLEQUAL(t.all({1}).to_vector<bool>(), all);
  EXPECT_TRUE(t.any().item<bool>());
  EXPECT_FALSE(t.all().item<bool>());
}

TEST(ReduceAnyAll, NumbersMeanNonZero) {
  Tensor t = f32({0, 0, 0.5f, -1, 2, 3}, {3, 2});
  EXPECT_ALLEQUAL(t.any({1}).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_ALLEQUAL(t.all({1}).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  Tensor i = Tensor::from_vector(std::vector<int32_t>{0, 4, 0, 0}, {2, 2});
  EXPECT_ALLEQUAL(i.any({0}, true).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(i.any({0}, true).shape(), (Shape{1, 2}));
}

TEST(ReduceAnyAll, EmptyAxes) {
  Tensor e = Tensor::zeros({2, 0}, dtypes::bool_);
  EXPECT_ALLEQUAL(e.any({1}).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_ALLEQUAL(e.all({1}).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(e.any({1}).shape(), (Shape{2}));
}

// ---- cumsum ---------------------------------------------------------------------------------------

TEST(ReduceCumsum, EachAxis) {
  auto x = data(12, 30);
  Tensor t = f32(x, {3, 4});
  std::vector<double> r1(12), r0(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      r1[i * 4 + j] = x[i * 4 + j] + (j ? r1[i * 4 + j - 1] : 0.0);
      r0[i * 4 + j] = x[i * 4 + j] + (i ? r0[(i - 1) * 4 + j] : 0.0);
    }
  EXPECT_EQ(t.cumsum(1).shape(), (Shape{3, 4}));
  EXPECT_ALLCLOSE(t.cumsum(1).to_vector<float>(), r1, kRtol, kAtol);
  EXPECT_ALLCLOSE(t.cumsum(-1).to_vector<float>(), r1, kRtol, kAtol);
  EXPECT_ALLCLOSE(t.cumsum(0).to_vector<float>(), r0, kRtol, kAtol);
}

TEST(ReduceCumsum, OneDimLong) {
  auto x = data(200, 31);
  std::vector<double> ref;
  double acc = 0;
  for (float v : x) ref.push_back(acc += v);
  EXPECT_ALLCLOSE(f32(x, {200}).cumsum().to_vector<float>(), ref, 1e-5, 1e-5);
}

TEST(ReduceCumsum, IntsAccumulateWide) {
  Tensor c = Tensor::from_vector(std::vector<int8_t>{100, 100, 100, -50}).cumsum();
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(c.to_vector<int32_t>(), (std::vector<int32_t>{100, 200, 300, 250}));
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false, true}).cumsum();
  EXPECT_ALLEQUAL(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 2}));
}

TEST(ReduceCumsum, FlippedInput) {
  auto x = data(5, 32);
  std::vector<double> ref;
  double acc = 0;
  for (int i = 4; i >= 0; --i) ref.push_back(acc += x[i]);
  EXPECT_ALLCLOSE(f32(x, {5}).flip({0}).cumsum().to_vector<float>(), ref, kRtol, kAtol);
}

// ---- fusion ---------------------------------------------------------------------------------------

TEST(ReduceFusion, ElementwiseIntoReduceIsOneKernel) {
  auto av = data(64, 33), bv = data(64, 34);
  Tensor a = f32(av, {8, 8}), b = f32(bv, {8, 8});
  Tensor c = ((a * b + 1.0f).relu()).sum();
  EXPECT_EQ(test::kernel_count(c), 1u);
  double ref = 0;
  for (size_t i = 0; i < 64; ++i) ref += std::max(0.0, double(av[i]) * bv[i] + 1);
  EXPECT_ALLCLOSE(c.to_vector<float>(), std::vector<double>{ref}, 1e-5, 1e-5);
}

TEST(ReduceFusion, ReduceThenElementwiseIsOneKernel) {
  auto xv = data(32, 35);
  Tensor x = f32(xv, {4, 8});
  Tensor y = (x.sum({1}) * 2.0f + 1.0f).exp2();
  EXPECT_EQ(test::kernel_count(y), 1u);
  auto s = reduce_ref<double>(xv, {4, 8}, {1}, 0.0, add);
  for (double& v : s) v = std::exp2(v * 2 + 1);
  EXPECT_ALLCLOSE(y.to_vector<float>(), s, 1e-4, 1e-6);
}

TEST(ReduceFusion, SharedReductionIsComputedOnce) {
  auto xv = data(32, 36);
  Tensor x = f32(xv, {4, 8});
  Tensor s = x.sum({1});
  Tensor y = s * 2.0f + s * 3.0f;
  size_t reduces = 0;
  for (const ScheduleItem& k : create_schedule({y.uop()}, default_schedule_context()).items)
    if (k.ast)
      for (const UOpPtr& u : toposort(k.ast)) reduces += u->op() == Ops::REDUCE;
  EXPECT_EQ(reduces, 1u);  // summed once, whether stored or fused
  auto r = reduce_ref<double>(xv, {4, 8}, {1}, 0.0, add);
  for (double& v : r) v *= 5;
  EXPECT_ALLCLOSE(y.to_vector<float>(), r, 1e-5, 1e-5);
}

TEST(ReduceFusion, MeanIsOneKernel) {
  Tensor x = Tensor::rand({16, 16}, 5);
  EXPECT_EQ(test::kernel_count(x.mean({1})), 1u);
  EXPECT_EQ(test::kernel_count(x.max()), 1u);
}

}  // namespace
}  // namespace lathe
