// Creation ops: from_vector / from_buffer for every dtype, full, zeros, ones, empty, arange, eye,
// rand, randn; with size-0, size-1 and 0-d shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::f32;

// ---- from_vector ----------------------------------------------------------------------------------

template <class T>
class FromVectorTyped : public ::testing::Test {};
using AllCTypes = ::testing::Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float, double>;
TYPED_TEST_SUITE(FromVectorTyped, AllCTypes);

TYPED_TEST(FromVectorTyped, RoundTrips) {
  using T = TypeParam;
  std::vector<T> v{T(0), T(1), std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(), T(7), T(42)};
  Tensor t = Tensor::from_vector(v, {2, 3});
  EXPECT_EQ(t.dtype(), dtype_of<T>());
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ(t.to_vector<T>(), v);
}

TYPED_TEST(FromVectorTyped, ThroughAKernel) {
  using T = TypeParam;
  std::vector<T> v{T(1), T(2), T(3), T(4)};
  Tensor t = Tensor::from_vector(v, {2, 2}).transpose().contiguous();
  EXPECT_FALSE(t.is_realized());
  EXPECT_EQ(t.to_vector<T>(), (std::vector<T>{T(1), T(3), T(2), T(4)}));
}

TEST(CreationFromVector, Bool) {
  std::vector<bool> v{true, false, false, true};
  Tensor t = Tensor::from_vector(v, {4});
  EXPECT_EQ(t.dtype(), dtypes::bool_);
  EXPECT_EQ(t.to_vector<bool>(), v);
  EXPECT_EQ(t.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));  // bools as bytes
}

TEST(CreationFromVector, DefaultShapeIsOneDim) {
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3});
  EXPECT_EQ(t.shape(), (Shape{3}));
}

TEST(CreationFromVector, ZeroDimScalar) {
  Tensor t = Tensor::from_vector(std::vector<int64_t>{-9}, {});
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.item<int64_t>(), -9);
}

TEST(CreationFromVector, SizeZero) {
  Tensor t = Tensor::from_vector(std::vector<float>{}, {0, 3});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.to_vector<float>().empty());
  EXPECT_TRUE((t + 1.0f).to_vector<float>().empty());
}

TEST(CreationFromVector, DataIsCopied) {
  std::vector<float> v{1, 2};
  Tensor t = Tensor::from_vector(v);
  v[0] = 100;
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(CreationFromVector, Float16BitsRoundTrip) {
  std::vector<uint16_t> bits{0x3c00, 0xc000, 0x0000, 0x7bff};  // 1, -2, 0, 65504
  Tensor t = Tensor::from_vector(bits).bitcast(dtypes::float16);
  EXPECT_EQ(t.dtype(), dtypes::float16);
  EXPECT_EQ(t.to_vector<uint16_t>(), bits);
  EXPECT_ALLCLOSE(test::as_f32(t), (std::vector<float>{1, -2, 0, 65504}), 0, 0);
}

TEST(CreationFromBuffer, SharesTheBuffer) {
  Buffer b(dtypes::float32, 4);
  std::vector<float> v{1, 2, 3, 4};
  b.copyin(v.data(), v.size() * sizeof(float));
  Tensor t = Tensor::from_buffer(b, {2, 2});
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ((t * 2.0f).to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
  std::vector<float> w{5, 6, 7, 8};
  b.copyin(w.data(), w.size() * sizeof(float));
  EXPECT_EQ((t * 2.0f).to_vector<float>(), (std::vector<float>{10, 12, 14, 16}));
}

// ---- full / zeros / ones / empty --------------------------------------------------------------------

TEST(CreationFull, DtypeFromValue) {
  Tensor f = Tensor::full({2, 3}, 1.5);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.to_vector<float>(), std::vector<float>(6, 1.5f));
  Tensor i = Tensor::full({3}, int64_t{-4});
  EXPECT_EQ(i.dtype(), dtypes::int32);
  EXPECT_EQ(i.to_vector<int32_t>(), std::vector<int32_t>(3, -4));
  Tensor b = Tensor::full({2}, true);
  EXPECT_EQ(b.dtype(), dtypes::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(CreationFull, ExplicitDtypes) {
  EXPECT_EQ(Tensor::full({2}, 2.5, dtypes::float64).to_vector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(Tensor::full({2}, int64_t{300}, dtypes::int16).to_vector<int16_t>(), (std::vector<int16_t>{300, 300}));
  EXPECT_EQ(Tensor::full({1}, uint64_t{1} << 63, dtypes::uint64).to_vector<uint64_t>(), (std::vector<uint64_t>{1ull << 63}));
  EXPECT_ALLCLOSE(test::as_f32(Tensor::full({2}, 0.333, dtypes::float16)), (std::vector<float>{0.333f, 0.333f}), 1e-3, 0);
  EXPECT_ALLCLOSE(test::as_f32(Tensor::full({2}, -3.0, dtypes::bfloat16)), (std::vector<float>{-3, -3}), 0, 0);
}

TEST(CreationFull, ZeroDimSizeZeroAndSizeOne) {
  Tensor s = Tensor::full({}, 7.0);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.item<float>(), 7.0f);
  EXPECT_TRUE(Tensor::full({4, 0}, 1.0).to_vector<float>().empty());
  EXPECT_EQ(Tensor::full({1, 1, 1}, 2.0).to_vector<float>(), (std::vector<float>{2}));
}

TEST(CreationZerosOnes, DefaultFloat32) {
  Tensor z = Tensor::zeros({2, 2}), o = Tensor::ones({3});
  EXPECT_EQ(z.dtype(), dtypes::float32);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(o.to_vector<float>(), std::vector<float>(3, 1.0f));
}

TEST(CreationZerosOnes, EveryDtype) {
  for (DType dt : dtypes::all()) {
    Tensor o = Tensor::ones({3}, dt), z = Tensor::zeros({3}, dt);
    EXPECT_EQ(o.dtype(), dt);
    EXPECT_EQ(o.cast(dtypes::float64).to_vector<double>(), std::vector<double>(3, 1.0)) << dt.name();
    EXPECT_EQ(z.cast(dtypes::float64).to_vector<double>(), std::vector<double>(3, 0.0)) << dt.name();
  }
}

TEST(CreationEmpty, ShapeAndDtype) {
  Tensor e = Tensor::empty({3, 4}, dtypes::int16);
  EXPECT_EQ(e.shape(), (Shape{3, 4}));
  EXPECT_EQ(e.dtype(), dtypes::int16);
  EXPECT_EQ(e.to_vector<int16_t>().size(), 12u);
  EXPECT_EQ(Tensor::empty({0}).numel(), 0);
  Tensor f = Tensor::empty({2});
  EXPECT_EQ(f.dtype(), dtypes::float32);
}

// ---- arange / eye ---------------------------------------------------------------------------------

TEST(CreationArange, CountIsInt32) {
  Tensor a = Tensor::arange(5);
  EXPECT_EQ(a.dtype(), dtypes::int32);
  EXPECT_EQ(a.shape(), (Shape{5}));
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(Tensor::arange(0).to_vector<int32_t>().empty());
  EXPECT_EQ(Tensor::arange(1).to_vector<int32_t>(), (std::vector<int32_t>{0}));
}

TEST(CreationArange, StartStopStep) {
  EXPECT_EQ(Tensor::arange(2, 11, 3).to_vector<int32_t>(), (std::vector<int32_t>{2, 5, 8}));
  EXPECT_EQ(Tensor::arange(5, 0, -2).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_TRUE(Tensor::arange(5, 0, 1).to_vector<int32_t>().empty());
  Tensor f = Tensor::arange(0, 1, 0.3, dtypes::float32);
  std::vector<double> ref;
  for (int i = 0; i < 4; ++i) ref.push_back(0.3 * i);
  EXPECT_ALLCLOSE(f.to_vector<float>(), ref, 1e-6, 1e-7);
  Tensor d = Tensor::arange(-1, 1, 0.5, dtypes::float64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{-1, -0.5, 0, 0.5}));
  EXPECT_EQ(Tensor::arange(0, 4, 1, dtypes::uint8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 2, 3}));
}

TEST(CreationEye, Values) {
  Tensor e = Tensor::eye(3);
  EXPECT_EQ(e.dtype(), dtypes::float32);
  EXPECT_EQ(e.shape(), (Shape{3, 3}));
  std::vector<float> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) ref.push_back(i == j ? 1.0f : 0.0f);
  EXPECT_EQ(e.to_vector<float>(), ref);
  EXPECT_EQ(Tensor::eye(2, dtypes::int64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(Tensor::eye(2, dtypes::bool_).to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(Tensor::eye(0).shape(), (Shape{0, 0}));
  EXPECT_EQ(Tensor::eye(1).to_vector<float>(), (std::vector<float>{1}));
}

TEST(CreationEye, MatmulIdentity) {
  auto x = test::data(12, 3);
  EXPECT_ALLCLOSE(f32(x, {3, 4}).matmul(Tensor::eye(4)).to_vector<float>(), x, 0, 0);
}

// ---- rand / randn ---------------------------------------------------------------------------------

TEST(CreationRand, RangeAndMoments) {
  std::vector<float> v = Tensor::rand({100, 100}, 7).to_vector<float>();
  double sum = 0, sq = 0;
  for (float x : v) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    sum += x;
    sq += x * x;
  }
  double mean = sum / v.size(), var = sq / v.size() - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(var, 1.0 / 12, 0.005);
}

TEST(CreationRand, SeedReproducibility) {
  auto a = Tensor::rand({64}, 3).to_vector<float>(), b = Tensor::rand({64}, 3).to_vector<float>();
  auto c = Tensor::rand({64}, 4).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Element i depends on (seed, i) alone: a bigger tensor starts with the same values.
  auto longer = Tensor::rand({128}, 3).to_vector<float>();
  EXPECT_EQ(std::vector<float>(longer.begin(), longer.begin() + 64), a);
}

TEST(CreationRand, OtherFloatDtypes) {
  Tensor d = Tensor::rand({1000}, 1, dtypes::float64);
  EXPECT_EQ(d.dtype(), dtypes::float64);
  for (double x : d.to_vector<double>()) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
  }
  Tensor h = Tensor::rand({1000}, 1, dtypes::float16);
  EXPECT_EQ(h.dtype(), dtypes::float16);
  for (float x : test::as_f32(h)) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
  }
  for (float x : test::as_f32(Tensor::rand({1000}, 2, dtypes::bfloat16))) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
  }
}

TEST(CreationRand, SizeZeroAndZeroDim) {
  EXPECT_TRUE(Tensor::rand({0, 5}).to_vector<float>().empty());
  float s = Tensor::rand({}, 9).item<float>();
  EXPECT_GE(s, 0.0f);
  EXPECT_LT(s, 1.0f);
}

TEST(CreationRandn, Moments) {
  std::vector<float> v = Tensor::randn({200, 100}, 11).to_vector<float>();
  double sum = 0, sq = 0;
  int beyond3 = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += double(x) * x;
    beyond3 += std::fabs(x) > 3;
  }
  double mean = sum / v.size(), var = sq / v.size() - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(var, 1.0, 0.05);
  EXPECT_LT(beyond3, 0.006 * v.size());  // P(|z| > 3) = 0.0027
}

TEST(CreationRandn, SeedReproducibilityAndDtype) {
  EXPECT_EQ(Tensor::randn({32}, 5).to_vector<float>(), Tensor::randn({32}, 5).to_vector<float>());
  EXPECT_NE(Tensor::randn({32}, 5).to_vector<float>(), Tensor::randn({32}, 6).to_vector<float>());
  EXPECT_EQ(Tensor::randn({4}, 1, dtypes::float64).dtype(), dtypes::float64);
}

// ---- properties -----------------------------------------------------------------------------------

TEST(CreationProperties, RealizeSwapsToBuffer) {
  Tensor t = Tensor::ones({2, 2}) * 3.0f;
  EXPECT_FALSE(t.is_realized());
  EXPECT_FALSE(t.buffer().valid());
  t.realize();
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ(t.buffer().size(), 4u);
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(4, 3.0f));
  EXPECT_NE(t.to_string().find("(2, 2)"), std::string::npos);
}

TEST(CreationProperties, DefaultTensorIsScalarZero) {
  Tensor t;
  EXPECT_EQ(t.shape(), Shape{});
  EXPECT_EQ(t.dtype(), dtypes::float32);
  EXPECT_EQ(t.item<float>(), 0.0f);
}

}  // namespace
}  // namespace lathe
