// Elementwise ops against plain C++ loops: arithmetic with broadcasting, scalars on either side,
// size-0/size-1/0-d shapes, non-contiguous inputs, every unary op, comparisons, where, logical ops.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::data;
using test::f32;

constexpr double kRtol = 1e-5, kAtol = 1e-6;

// ---- binary arithmetic ---------------------------------------------------------------------------

TEST(ElementwiseBinary, AddSameShape) {
  auto a = data(12, 1), b = data(12, 2);
  Tensor c = f32(a, {3, 4}) + f32(b, {3, 4});
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  std::vector<double> ref(12);
  for (size_t i = 0; i < 12; ++i) ref[i] = static_cast<double>(a[i]) + b[i];
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseBinary, SubBroadcastsColumnAgainstRow) {
  auto a = data(3, 3), b = data(4, 4);
  Tensor c = f32(a, {3, 1}) - f32(b, {1, 4});
  ASSERT_EQ(c.shape(), (Shape{3, 4}));
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) ref.push_back(static_cast<double>(a[i]) - b[j]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseBinary, MulBroadcastsTrailingVector) {
  auto a = data(24, 5), b = data(4, 6);
  Tensor c = f32(a, {2, 3, 4}) * f32(b, {4});
  ASSERT_EQ(c.shape(), (Shape{2, 3, 4}));
  auto ref = test::broadcast_binary<double>(a, {2, 3, 4}, b, {4}, {2, 3, 4}, [](float x, float y) { return double(x) * y; });
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseBinary, DivBroadcastsBothSides) {
  auto a = data(6, 7, 1, 3), b = data(4, 8, 1, 3);
  Tensor c = f32(a, {2, 1, 3}) / f32(b, {4, 1});
  ASSERT_EQ(c.shape(), (Shape{2, 4, 3}));
  auto ref = test::broadcast_binary<double>(a, {2, 1, 3}, b, {4, 1}, {2, 4, 3}, [](float x, float y) { return double(x) / y; });
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseBinary, ZeroDimTensorBroadcastsEverywhere) {
  auto a = data(6, 9);
  Tensor s = Tensor::from_vector(std::vector<float>{2.5f}, {});
  Tensor c = f32(a, {2, 3}) * s;
  ASSERT_EQ(c.shape(), (Shape{2, 3}));
  std::vector<double> ref;
  for (float x : a) ref.push_back(x * 2.5);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseBinary, ZeroDimWithZeroDimIsZeroDim) {
  Tensor a = Tensor::from_vector(std::vector<float>{3.0f}, {});
  Tensor b = Tensor::from_vector(std::vector<float>{4.0f}, {});
  Tensor c = a * b + 1.0f;
  EXPECT_EQ(c.shape(), Shape{});
  EXPECT_EQ(c.numel(), 1);
  EXPECT_FLOAT_EQ(c.item<float>(), 13.0f);
}

TEST(ElementwiseBinary, SizeOneAxesBroadcast) {
  Tensor a = f32({5.0f}, {1, 1});
  Tensor b = f32({1, 2, 3}, {3});
  Tensor c = a - b;
  ASSERT_EQ(c.shape(), (Shape{1, 3}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{4, 3, 2}), kRtol, kAtol);
}

TEST(ElementwiseBinary, SizeZeroAxisBroadcasts) {
  Tensor a = Tensor::zeros({0, 3});
  Tensor b = f32({1, 2, 3}, {1, 3});
  Tensor c = a + b;
  EXPECT_EQ(c.shape(), (Shape{0, 3}));
  EXPECT_TRUE(c.to_vector<float>().empty());
  Tensor d = Tensor::ones({2, 0}) * f32({1, 2}, {2, 1});
  EXPECT_EQ(d.shape(), (Shape{2, 0}));
  EXPECT_TRUE(d.to_vector<float>().empty());
}

TEST(ElementwiseBinary, SizeZeroAgainstSizeOneGivesSizeZero) {
  Tensor c = Tensor::ones({1}) + Tensor::ones({0});
  EXPECT_EQ(c.shape(), (Shape{0}));
  EXPECT_TRUE(c.to_vector<float>().empty());
}

TEST(ElementwiseBinary, ScalarsOnEitherSide) {
  auto a = data(5, 10, 0.5, 3.0);
  Tensor t = f32(a, {5});
  std::vector<double> r1, r2, r3, r4, r5;
  for (float x : a) {
    r1.push_back(2.0 - x);
    r2.push_back(x * 3.0);
    r3.push_back(1.0 / x);
    r4.push_back(x + 1.0);
    r5.push_back(x / 4.0);
  }
  EXPECT_ALLCLOSE((2.0f - t).to_vector<float>(), r1, kRtol, kAtol);
  EXPECT_ALLCLOSE((t * 3).to_vector<float>(), r2, kRtol, kAtol);
  EXPECT_ALLCLOSE((1.0f / t).to_vector<float>(), r3, kRtol, kAtol);
  EXPECT_ALLCLOSE((1 + t).to_vector<float>(), r4, kRtol, kAtol);
  EXPECT_ALLCLOSE((t / 4.0).to_vector<float>(), r5, kRtol, kAtol);
}

TEST(ElementwiseBinary, FloatLiteralKeepsFloat32) {
  Tensor t = f32({1, 2}, {2});
  EXPECT_EQ((t * 2.0).dtype(), dtypes::float32);
  EXPECT_EQ((t + 1).dtype(), dtypes::float32);
  Tensor d = Tensor::from_vector(std::vector<double>{1, 2});
  EXPECT_EQ((d * 2.0f).dtype(), dtypes::float64);
}

TEST(ElementwiseBinary, IntDivisionIsFloat32) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{7, -7, 1, 0});
  Tensor b = Tensor::from_vector(std::vector<int32_t>{2, 2, 3, 5});
  Tensor c = a / b;
  EXPECT_EQ(c.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<double>{3.5, -3.5, 1.0 / 3, 0.0}), kRtol, kAtol);
}

TEST(ElementwiseBinary, IntArithmeticIsExact) {
  auto a = test::int_data<int32_t>(20, 1, -1000, 1000), b = test::int_data<int32_t>(20, 2, -1000, 1000);
  Tensor c = Tensor::from_vector(a) * Tensor::from_vector(b) - Tensor::from_vector(b) + 7;
  EXPECT_EQ(c.dtype(), dtypes::int32);
  std::vector<int32_t> ref;
  for (size_t i = 0; i < a.size(); ++i) ref.push_back(a[i] * b[i] - b[i] + 7);
  EXPECT_ALLEQUAL(c.to_vector<int32_t>(), ref);
}

TEST(ElementwiseBinary, IntLiteralAdoptsTensorDtype) {
  Tensor a = Tensor::from_vector(std::vector<int8_t>{1, 2, -3});
  Tensor c = a + 1;
  EXPECT_EQ(c.dtype(), dtypes::int8);
  EXPECT_ALLEQUAL(c.to_vector<int8_t>(), (std::vector<int8_t>{2, 3, -2}));
  Tensor f = a * 0.5f;
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(f.to_vector<float>(), (std::vector<float>{0.5f, 1.0f, -1.5f}), kRtol, kAtol);
}

TEST(ElementwiseBinary, SmallIntsWrapOnOverflow) {
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{200, 255, 10}) + Tensor::from_vector(std::vector<uint8_t>{100, 1, 5});
  EXPECT_ALLEQUAL(u.to_vector<uint8_t>(), (std::vector<uint8_t>{44, 0, 15}));
  Tensor s = Tensor::from_vector(std::vector<int8_t>{100, -128, 5}) + Tensor::from_vector(std::vector<int8_t>{100, -1, 5});
  EXPECT_ALLEQUAL(s.to_vector<int8_t>(), (std::vector<int8_t>{-56, 127, 10}));
}

TEST(ElementwiseBinary, TypePromotion) {
  auto t = [](DType dt) { return Tensor::zeros({2}, dt); };
  EXPECT_EQ((t(dtypes::int8) + t(dtypes::int16)).dtype(), dtypes::int16);
  EXPECT_EQ((t(dtypes::uint8) + t(dtypes::int8)).dtype(), dtypes::int16);
  EXPECT_EQ((t(dtypes::uint8) + t(dtypes::uint16)).dtype(), dtypes::uint16);
  EXPECT_EQ((t(dtypes::int32) + t(dtypes::int64)).dtype(), dtypes::int64);
  EXPECT_EQ((t(dtypes::uint32) + t(dtypes::int32)).dtype(), dtypes::int64);
  EXPECT_EQ((t(dtypes::bool_) + t(dtypes::int8)).dtype(), dtypes::int8);
  EXPECT_EQ((t(dtypes::int32) + t(dtypes::float16)).dtype(), dtypes::float16);
  EXPECT_EQ((t(dtypes::float16) + t(dtypes::float32)).dtype(), dtypes::float32);
  EXPECT_EQ((t(dtypes::float32) + t(dtypes::float64)).dtype(), dtypes::float64);
  EXPECT_EQ((t(dtypes::int64) * t(dtypes::float32)).dtype(), dtypes::float32);
}

TEST(ElementwiseBinary, MixedIntFloatValues) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{1, -2, 3});
  Tensor b = f32({0.5f, 0.25f, -1.5f}, {3});
  Tensor c = a * b + a;
  EXPECT_EQ(c.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<double>{1.5, -2.5, -1.5}), kRtol, kAtol);
}

TEST(ElementwiseBinary, Float64IsComputedInDouble) {
  std::vector<double> a{1.0 / 3, 1e-17, 2.0 / 7}, b{1e-16, 1.0, 1e-15};
  Tensor c = Tensor::from_vector(a) + Tensor::from_vector(b);
  std::vector<double> ref;
  for (size_t i = 0; i < a.size(); ++i) ref.push_back(a[i] + b[i]);
  EXPECT_ALLCLOSE(c.to_vector<double>(), ref, 1e-15, 0.0);
}

// ---- non-contiguous inputs ------------------------------------------------------------------------

TEST(ElementwiseNonContiguous, PermutedPlusContiguous) {
  auto a = data(24, 11), b = data(24, 12);
  Tensor c = f32(a, {2, 3, 4}).permute({2, 0, 1}) + f32(b, {4, 2, 3});
  auto ap = test::permute_ref(a, {2, 3, 4}, {2, 0, 1});
  std::vector<double> ref;
  for (size_t i = 0; i < 24; ++i) ref.push_back(double(ap[i]) + b[i]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, TransposedTimesTransposed) {
  auto a = data(12, 13), b = data(12, 14);
  Tensor c = f32(a, {3, 4}).transpose() * f32(b, {3, 4}).transpose();
  ASSERT_EQ(c.shape(), (Shape{4, 3}));
  std::vector<double> ref;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) ref.push_back(double(a[j * 4 + i]) * b[j * 4 + i]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, ShrunkInputs) {
  auto a = data(30, 15);
  Tensor t = f32(a, {5, 6});
  Tensor c = t.shrink({{1, 4}, {2, 5}}) - t.shrink({{0, 3}, {0, 3}});
  ASSERT_EQ(c.shape(), (Shape{3, 3}));
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) ref.push_back(double(a[(i + 1) * 6 + j + 2]) - a[i * 6 + j]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, SlicedWithStepsAndNegativeIndices) {
  auto a = data(10, 16);
  Tensor t = f32(a, {10});
  Tensor c = t.slice(0, 1, std::nullopt, 3) * t.slice(0, -1, -8, -3);  // a[1::3] * a[-1:-8:-3]
  ASSERT_EQ(c.shape(), (Shape{3}));
  std::vector<double> ref{double(a[1]) * a[9], double(a[4]) * a[6], double(a[7]) * a[3]};
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, ExpandedInput) {
  auto a = data(3, 17), b = data(12, 18);
  Tensor c = f32(a, {3, 1}).expand({3, 4}) + f32(b, {3, 4});
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) ref.push_back(double(a[i]) + b[i * 4 + j]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, FlippedInput) {
  auto a = data(12, 19);
  Tensor t = f32(a, {3, 4});
  Tensor c = t.flip({0, 1}) - t;
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) ref.push_back(double(a[(2 - i) * 4 + (3 - j)]) - a[i * 4 + j]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(ElementwiseNonContiguous, PermutedSlicedFlippedIntChain) {
  auto a = test::int_data<int32_t>(24, 20, -50, 50);
  Tensor t = Tensor::from_vector(a, {2, 3, 4});
  // permute to (4, 2, 3), take rows 1..3 of axis 0 flipped on axis 2, multiply by 3.
  Tensor c = t.permute({2, 0, 1}).shrink({{1, 3}, {0, 2}, {0, 3}}).flip({2}) * 3;
  ASSERT_EQ(c.shape(), (Shape{2, 2, 3}));
  std::vector<int32_t> ref;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) ref.push_back(a[j * 12 + (2 - k) * 4 + (i + 1)] * 3);
  EXPECT_ALLEQUAL(c.to_vector<int32_t>(), ref);
}

TEST(ElementwiseNonContiguous, PaddedInputsInArithmetic) {
  Tensor t = f32({1, 2, 3, 4}, {2, 2});
  Tensor c = t.pad({{1, 0}, {0, 1}}, -1.0) * 2.0f;
  ASSERT_EQ(c.shape(), (Shape{3, 3}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{-2, -2, -2, 2, 4, -2, 6, 8, -2}), kRtol, kAtol);
}

// ---- unary ops, a table checked against <cmath> ----------------------------------------------------

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo, hi, rtol, atol;
};

double gelu_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

const UnaryCase kUnaryCases[] = {
    {"neg", [](const Tensor& t) { return t.neg(); }, [](double x) { return -x; }, -5, 5, kRtol, kAtol},
    {"neg_operator", [](const Tensor& t) { return -t; }, [](double x) { return -x; }, -5, 5, kRtol, kAtol},
    {"abs", [](const Tensor& t) { return t.abs(); }, [](double x) { return std::fabs(x); }, -5, 5, kRtol, kAtol},
    {"exp", [](const Tensor& t) { return t.exp(); }, [](double x) { return std::exp(x); }, -10, 10, 1e-4, 1e-6},
    {"exp2", [](const Tensor& t) { return t.exp2(); }, [](double x) { return std::exp2(x); }, -10, 10, 1e-4, 1e-6},
    {"log", [](const Tensor& t) { return t.log(); }, [](double x) { return std::log(x); }, 0.01, 100, 1e-4, 1e-5},
    {"log2", [](const Tensor& t) { return t.log2(); }, [](double x) { return std::log2(x); }, 0.01, 100, 1e-4, 1e-5},
    {"sqrt", [](const Tensor& t) { return t.sqrt(); }, [](double x) { return std::sqrt(x); }, 0, 100, kRtol, kAtol},
    {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, 0.01, 100, 1e-5,
     1e-6},
    {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }, [](double x) { return 1 / x; }, 0.1, 10, kRtol,
     kAtol},
    {"sin", [](const Tensor& t) { return t.sin(); }, [](double x) { return std::sin(x); }, -10, 10, 1e-4, 1e-5},
    {"cos", [](const Tensor& t) { return t.cos(); }, [](double x) { return std::cos(x); }, -10, 10, 1e-4, 1e-5},
    {"tan", [](const Tensor& t) { return t.tan(); }, [](double x) { return std::tan(x); }, -1.3, 1.3, 1e-4, 1e-5},
    {"asin", [](const Tensor& t) { return t.asin(); }, [](double x) { return std::asin(x); }, -0.999, 0.999, 1e-5,
     2e-6},
    {"acos", [](const Tensor& t) { return t.acos(); }, [](double x) { return std::acos(x); }, -0.999, 0.999, 1e-5,
     2e-6},
    {"atan", [](const Tensor& t) { return t.atan(); }, [](double x) { return std::atan(x); }, -30, 30, 1e-5, 1e-6},
    {"expm1", [](const Tensor& t) { return t.expm1(); }, [](double x) { return std::expm1(x); }, -20, 10, 1e-5, 1e-6},
    {"log1p", [](const Tensor& t) { return t.log1p(); }, [](double x) { return std::log1p(x); }, -0.99, 50, 1e-5, 1e-6},
    {"sinh", [](const Tensor& t) { return t.sinh(); }, [](double x) { return std::sinh(x); }, -8, 8, 1e-4, 1e-6},
    {"cosh", [](const Tensor& t) { return t.cosh(); }, [](double x) { return std::cosh(x); }, -8, 8, 1e-4, 1e-6},
    {"asinh", [](const Tensor& t) { return t.asinh(); }, [](double x) { return std::asinh(x); }, -50, 50, 1e-5, 1e-6},
    {"acosh", [](const Tensor& t) { return t.acosh(); }, [](double x) { return std::acosh(x); }, 1.5, 50, 1e-5, 1e-6},
    {"atanh", [](const Tensor& t) { return t.atanh(); }, [](double x) { return std::atanh(x); }, -0.99, 0.99, 1e-4,
     1e-6},
    {"relu", [](const Tensor& t) { return t.relu(); }, [](double x) { return x > 0 ? x : 0; }, -5, 5, kRtol, kAtol},
    {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }, [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20,
     1e-4, 1e-6},
    {"tanh", [](const Tensor& t) { return t.tanh(); }, [](double x) { return std::tanh(x); }, -10, 10, 1e-4, 1e-6},
    {"gelu", [](const Tensor& t) { return t.gelu(); }, gelu_ref, -6, 6, 1e-4, 1e-6},
    {"silu", [](const Tensor& t) { return t.silu(); }, [](double x) { return x / (1 + std::exp(-x)); }, -10, 10, 1e-4,
     1e-6},
    {"softplus", [](const Tensor& t) { return t.softplus(); }, [](double x) { return std::log1p(std::exp(x)); }, -20,
     120, 1e-5, 1e-6},
    {"softsign", [](const Tensor& t) { return t.softsign(); }, [](double x) { return x / (1 + std::fabs(x)); }, -10, 10,
     1e-5, 1e-6},
    {"mish", [](const Tensor& t) { return t.mish(); }, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); },
     -10, 10, 1e-4, 1e-5},
    {"elu", [](const Tensor& t) { return t.elu(); }, [](double x) { return x < 0 ? std::expm1(x) : x; }, -5, 5, 1e-4,
     1e-6},
    {"celu", [](const Tensor& t) { return t.celu(0.7); },
     [](double x) { return x < 0 ? 0.7 * std::expm1(x / 0.7) : x; }, -5, 5, 1e-4, 1e-6},
    {"selu", [](const Tensor& t) { return t.selu(); },
     [](double x) { return 1.0507009873554805 * (x <= 0 ? 1.6732632423543772 * std::expm1(x) : x); }, -5, 5, 1e-4,
     1e-6},
    {"leaky_relu", [](const Tensor& t) { return t.leaky_relu(0.1); }, [](double x) { return x < 0 ? 0.1 * x : x; }, -5,
     5, kRtol, kAtol},
    {"hardsigmoid", [](const Tensor& t) { return t.hardsigmoid(); },
     [](double x) { return std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -5, 5, kRtol, kAtol},
    {"hardswish", [](const Tensor& t) { return t.hardswish(); },
     [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -5, 5, kRtol, kAtol},
    {"erf", [](const Tensor& t) { return t.erf(); }, [](double x) { return std::erf(x); }, -4, 4, 1e-5, 1e-6},
    {"floor", [](const Tensor& t) { return t.floor(); }, [](double x) { return std::floor(x); }, -10, 10, 0, 0},
    {"ceil", [](const Tensor& t) { return t.ceil(); }, [](double x) { return std::ceil(x); }, -10, 10, 0, 0},
    {"trunc", [](const Tensor& t) { return t.trunc(); }, [](double x) { return std::trunc(x); }, -10, 10, 0, 0},
    {"round", [](const Tensor& t) { return t.round(); }, [](double x) { return std::nearbyint(x); }, -10, 10, 0, 0},
    {"sign", [](const Tensor& t) { return t.sign(); }, [](double x) { return double((x > 0) - (x < 0)); }, -5, 5, 0, 0},
    {"clip", [](const Tensor& t) { return t.clip(-1.5, 0.75); }, [](double x) { return std::clamp(x, -1.5, 0.75); }, -5,
     5, 0, 0},
    {"pow_half", [](const Tensor& t) { return t.pow(0.5); }, [](double x) { return std::sqrt(x); }, 0, 50, 1e-5, 1e-6},
    {"pow_square", [](const Tensor& t) { return t.pow(2.0); }, [](double x) { return x * x; }, -5, 5, kRtol, kAtol},
    {"pow_cube", [](const Tensor& t) { return t.pow(3.0); }, [](double x) { return x * x * x; }, -5, 5, 1e-5, 1e-5},
};

class UnaryFloat32 : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryFloat32, MatchesCmath) {
  const UnaryCase& c = GetParam();
  auto in = data(257, 31, c.lo, c.hi);
  Tensor out = c.op(f32(in, {257}));
  EXPECT_EQ(out.dtype(), dtypes::float32);
  std::vector<double> ref;
  for (float x : in) ref.push_back(c.ref(x));
  EXPECT_ALLCLOSE(out.to_vector<float>(), ref, c.rtol, c.atol);
}

TEST_P(UnaryFloat32, ZeroDimInput) {
  const UnaryCase& c = GetParam();
  float x = static_cast<float>(c.lo + (c.hi - c.lo) * 0.37);
  Tensor out = c.op(Tensor::from_vector(std::vector<float>{x}, {}));
  EXPECT_EQ(out.shape(), Shape{});
  EXPECT_ALLCLOSE(out.to_vector<float>(), std::vector<double>{c.ref(x)}, c.rtol, c.atol);
}

TEST_P(UnaryFloat32, SizeZeroInput) {
  Tensor out = GetParam().op(Tensor::zeros({3, 0}));
  EXPECT_EQ(out.shape(), (Shape{3, 0}));
  EXPECT_TRUE(out.to_vector<float>().empty());
}

TEST_P(UnaryFloat32, PermutedFlippedInput) {
  const UnaryCase& c = GetParam();
  auto in = data(60, 32, c.lo, c.hi);
  Tensor out = c.op(f32(in, {3, 4, 5}).permute({2, 0, 1}).flip({1}));  // (5, 3, 4)
  std::vector<double> ref;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) ref.push_back(c.ref(in[(2 - j) * 20 + k * 5 + i]));
  EXPECT_ALLCLOSE(out.to_vector<float>(), ref, c.rtol, c.atol);
}

TEST_P(UnaryFloat32, Float16WithLooseTolerance) {
  const UnaryCase& c = GetParam();
  auto in = data(64, 33, c.lo, c.hi);
  Tensor h = f32(in, {64}).cast(dtypes::float16);
  std::vector<float> hin = test::as_f32(h);  // the float16-rounded inputs
  Tensor out = c.op(h);
  EXPECT_EQ(out.dtype(), dtypes::float16);
  std::vector<double> ref;
  for (float x : hin) ref.push_back(c.ref(x));
  // float16 has an 11-bit significand; results also round to float16.
  double atol = std::string(c.name) == "sign" || std::string(c.name) == "floor" || std::string(c.name) == "ceil" ||
                        std::string(c.name) == "trunc" || std::string(c.name) == "round"
                    ? 0
                    : 1e-2;
  EXPECT_ALLCLOSE(test::as_f32(out), ref, 1e-2, atol);
}

TEST_P(UnaryFloat32, Float64IsPrecise) {
  const UnaryCase& c = GetParam();
  auto inf = data(64, 34, c.lo, c.hi);
  std::vector<double> in;
  for (size_t i = 0; i < inf.size(); ++i) in.push_back(double(inf[i]) + 1e-9 * double(i));  // not float32-representable
  Tensor out = c.op(Tensor::from_vector(in));
  EXPECT_EQ(out.dtype(), dtypes::float64);
  std::vector<double> ref;
  for (double x : in) ref.push_back(c.ref(x));
  // erf is a rational approximation (absolute error < 1.7e-8) whatever the dtype; atan (and asin,
  // acos from it) a polynomial one (Cephes' atanf: < 1e-7).
  std::string name = c.name;
  bool fit = name == "erf" || name == "atan" || name == "asin" || name == "acos";
  double rtol = fit ? 0 : 1e-10, atol = name == "erf" ? 2e-8 : fit ? 1e-7 : 1e-12;
  EXPECT_ALLCLOSE(out.to_vector<double>(), ref, rtol, atol);
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryFloat32, ::testing::ValuesIn(kUnaryCases),
                         [](const ::testing::TestParamInfo<UnaryCase>& info) { return std::string(info.param.name); });

// celu divides x by alpha: 0 is refused, naming the op.
TEST(ElementwiseUnary, CeluOfZeroAlphaIsAnError) {
  Tensor x = f32({1.0f, -1.0f}, {2});
  EXPECT_THROW(
      {
        try {
          (void)x.celu(0.0);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("celu"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

TEST(ElementwiseUnary, BFloat16Arithmetic) {
  auto a = data(32, 40, -4, 4), b = data(32, 41, 0.5, 4);
  Tensor ha = f32(a, {32}).cast(dtypes::bfloat16), hb = f32(b, {32}).cast(dtypes::bfloat16);
  auto ra = test::as_f32(ha), rb = test::as_f32(hb);
  Tensor c = (ha * hb + ha) / hb;
  EXPECT_EQ(c.dtype(), dtypes::bfloat16);
  std::vector<double> ref;
  for (size_t i = 0; i < 32; ++i) ref.push_back((double(ra[i]) * rb[i] + ra[i]) / rb[i]);
  EXPECT_ALLCLOSE(test::as_f32(c), ref, 3e-2, 3e-2);  // bfloat16 keeps 8 significant bits
}

TEST(ElementwiseUnary, Float16Arithmetic) {
  auto a = data(32, 42, -4, 4), b = data(32, 43, 0.5, 4);
  Tensor ha = f32(a, {32}).cast(dtypes::float16), hb = f32(b, {32}).cast(dtypes::float16);
  auto ra = test::as_f32(ha), rb = test::as_f32(hb);
  Tensor c = (ha * hb - hb) / hb;
  EXPECT_EQ(c.dtype(), dtypes::float16);
  std::vector<double> ref;
  for (size_t i = 0; i < 32; ++i) ref.push_back((double(ra[i]) * rb[i] - rb[i]) / rb[i]);
  EXPECT_ALLCLOSE(test::as_f32(c), ref, 1e-2, 1e-2);
}

TEST(ElementwiseUnary, RoundIsHalfToEven) {
  std::vector<float> in{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 0.49999997f, 2.4f, -2.6f, 8388609.0f, -0.0f, 1e8f};
  std::vector<double> ref;
  for (float x : in) ref.push_back(std::nearbyint(x));
  EXPECT_ALLCLOSE(f32(in, {13}).round().to_vector<float>(), ref, 0, 0);
}

TEST(ElementwiseUnary, FloorCeilTruncAtIntegersAndNegatives) {
  std::vector<float> in{-2.0f, -1.5f, -0.25f, 0.0f, 0.25f, 1.0f, 1.75f, -3.0f};
  std::vector<double> fl, ce, tr;
  for (float x : in) {
    fl.push_back(std::floor(x));
    ce.push_back(std::ceil(x));
    tr.push_back(std::trunc(x));
  }
  Tensor t = f32(in, {8});
  EXPECT_ALLCLOSE(t.floor().to_vector<float>(), fl, 0, 0);
  EXPECT_ALLCLOSE(t.ceil().to_vector<float>(), ce, 0, 0);
  EXPECT_ALLCLOSE(t.trunc().to_vector<float>(), tr, 0, 0);
}

TEST(ElementwiseUnary, SpecialValues) {
  Tensor t = f32({0.0f, -1.0f, 1000.0f, -1000.0f}, {4});
  auto lg = t.log().to_vector<float>();
  EXPECT_TRUE(std::isinf(lg[0]) && lg[0] < 0);
  EXPECT_TRUE(std::isnan(lg[1]));
  auto sq = t.sqrt().to_vector<float>();
  EXPECT_EQ(sq[0], 0.0f);
  EXPECT_TRUE(std::isnan(sq[1]));
  auto ex = t.exp().to_vector<float>();
  EXPECT_TRUE(std::isinf(ex[2]) && ex[2] > 0);
  EXPECT_EQ(ex[3], 0.0f);
  EXPECT_ALLCLOSE(t.sigmoid().to_vector<float>(), (std::vector<float>{0.5f, 0.26894142f, 1.0f, 0.0f}), 1e-5, 1e-6);
  EXPECT_ALLCLOSE(t.tanh().to_vector<float>(), (std::vector<float>{0.0f, -0.7615942f, 1.0f, -1.0f}), 1e-5, 1e-6);
  auto rc = t.reciprocal().to_vector<float>();
  EXPECT_TRUE(std::isinf(rc[0]));
}

TEST(ElementwiseUnary, TranscendentalEdgeValues) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Below -126 exp2 is subnormal (-130, -140, -149 exactly); from -150 down it is 0.
  std::vector<float> x{-inf, inf, nan, -200.0f, 127.25f, 1e-40f, 0.0f, -130.0f, -140.0f, -149.0f, -150.0f, -151.5f};
  Tensor t = f32(x, {static_cast<int64_t>(x.size())});
  std::vector<double> e2, l2, sq;
  for (float v : x) {
    e2.push_back(static_cast<float>(std::exp2(double(v))));  // what float32 can hold: exp2(-200) is 0
    l2.push_back(std::log2(double(v)));
    sq.push_back(std::sqrt(double(v)));
  }
  EXPECT_ALLCLOSE(t.exp2().to_vector<float>(), e2, 1e-5, 0);
  EXPECT_ALLCLOSE(t.log2().to_vector<float>(), l2, 1e-5, 1e-5);
  EXPECT_ALLCLOSE(t.sqrt().to_vector<float>(), sq, 1e-5, 1e-30);
  auto sn = t.sin().to_vector<float>();
  EXPECT_TRUE(std::isnan(sn[0]) && std::isnan(sn[1]) && std::isnan(sn[2]));
}

// Where 1 is added to exp2 (a sigmoid's, SiLU's, softplus's 1 + e^x), the kernel skips exp2's
// subnormal steps (codegen/transcendental.cpp): the sum is still the float 1 + exp2(x) is, exp2
// computed in a kernel of its own, bit for bit, from the infinities and NaN through the subnormal
// range (1 + 2^x is 1 below -24), the rounding turns and the top of float32's range; and the
// functions built on it stay within float32's rounding of the true values.
TEST(ElementwiseUnary, OnePlusExp2IsTheSumOfItsOwnExp2) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{-inf,    inf,         nan,    -200.0f, -151.5f, -150.0f, -149.0f, -130.0f, -126.5f,
                       -126.0f, -125.7f,     -30.0f, -24.5f,  -24.0f,  -23.5f,  -1.5f,   -0.5f,   0.0f,
                       1e-40f,  0.49999997f, 3.3f,   126.6f,  127.25f, 127.5f,  127.9f,  128.0f,  200.0f};
  Tensor t = f32(x, {static_cast<int64_t>(x.size())});
  Tensor alone = t.exp2();
  alone.realize();
  std::vector<float> want = (alone + 1.0f).to_vector<float>(), got = (t.exp2() + 1.0f).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(got[i]));
      continue;
    }
    EXPECT_EQ(got[i], want[i]) << x[i];
  }
  std::vector<double> sig, th, sp;
  for (float v : x) {
    double d = v;
    sig.push_back(1.0 / (1.0 + std::exp(-d)));
    th.push_back(std::tanh(d));
    sp.push_back(d > 30 ? d : std::log1p(std::exp(d)));
  }
  EXPECT_ALLCLOSE(t.sigmoid().to_vector<float>(), sig, 1e-6, 1e-7);
  EXPECT_ALLCLOSE(t.tanh().to_vector<float>(), th, 1e-6, 1e-7);
  EXPECT_ALLCLOSE(t.softplus().to_vector<float>(), sp, 1e-6, 1e-7);
}

// erf is +-1 from +-3.925 on (float32's erf rounds there), at the infinities too; NaN stays NaN;
// odd, exact at 0, and within 4e-7 of the true value everywhere in float32: the fit's 1.7e-8 and
// a few roundings of about 6e-8 (float32's step below 1). Run on every x86 target: without FMA
// (x86-64-v2) the roundings differ (tests/CMakeLists.txt, portable.unary).
TEST(ElementwiseUnary, ErfEdgeValues) {
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{-inf, inf, nan, 0.0f, -0.0f, 1e-30f, -1e-6f, 3.9f, 3.925f, -3.93f, 5.0f, -1e30f};
  std::vector<float> got = f32(x, {static_cast<int64_t>(x.size())}).erf().to_vector<float>();
  EXPECT_EQ(got[0], -1.0f);
  EXPECT_EQ(got[1], 1.0f);
  EXPECT_TRUE(std::isnan(got[2]));
  for (size_t i = 3; i < x.size(); ++i) EXPECT_NEAR(got[i], std::erf(double(x[i])), 4e-7) << x[i];
  EXPECT_EQ(got[3], 0.0f);
  EXPECT_EQ(got[8], 1.0f);
  EXPECT_EQ(got[9], -1.0f);
  EXPECT_EQ(got[10], 1.0f);
  EXPECT_EQ(got[11], -1.0f);
  std::vector<float> sweep;  // every 1/4096 over [-4, 4], and the worst points seen with and without FMA
  for (int i = -16384; i <= 16384; ++i) sweep.push_back(static_cast<float>(i) / 4096.0f);
  sweep.insert(sweep.end(), {3.42364f, 3.6213815f, -3.42364f, -3.6213815f});
  std::vector<float> swept = f32(sweep, {static_cast<int64_t>(sweep.size())}).erf().to_vector<float>();
  for (size_t i = 0; i < sweep.size(); ++i) ASSERT_NEAR(swept[i], std::erf(double(sweep[i])), 4e-7) << sweep[i];
}

// exp2 rounds x to the nearest integer n and evaluates 2^(x - n) by a polynomial: at the points
// where that rounding turns (halves, the floats next to them) and at the ends of float32's range
// (a subnormal result, one just below overflow; n = -125 and -126, where the scale 2^n turns
// from one multiply to two), within a few ulp of the true value.
TEST(ElementwiseUnary, Exp2WhereItsRoundingTurns) {
  std::vector<float> x{0.5f,   -0.5f,   1.5f,    -1.5f,   0.49999997f, -0.50000006f, 2.5f,    -2.5f,
                       127.5f, -126.5f, -149.5f, -125.0f, -125.5f,     -125.50001f,  -126.0f, -126.49998f};
  std::vector<float> got = f32(x, {static_cast<int64_t>(x.size())}).exp2().to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    double want = std::exp2(double(x[i]));
    EXPECT_NEAR(got[i], want, 4e-7 * want + 1.5e-45) << x[i];  // 1.5e-45: one subnormal step
  }
}

// tanh in float32 within a few ulp of the true value everywhere, near 0 too, where it is x (a
// formula through the sigmoid, 2 sigmoid(2x) - 1, gave 1.19e-7 for 1e-7): every 1/4096 over
// [-10, 10], small and subnormal arguments, arguments beside where float32's tanh turns to +-1
// (9.011), the infinities and NaN; +-1 exactly well past the turn. Half precision computes it in
// float32 and rounds once.
TEST(ElementwiseUnary, TanhWithinAFewUlpNearZeroToo) {
  std::vector<float> x;
  for (int i = -40960; i <= 40960; ++i) x.push_back(static_cast<float>(i) / 4096.0f);
  for (float v :
       {1e-7f, -3e-5f, 1e-3f, -0.01f, 1e-20f, 1e-40f, 9.0f, 9.0109f, 9.0111f, -9.0109f, 9.02f, -9.1f, 30.0f, -1e30f})
    x.push_back(v);
  std::vector<float> got = f32(x, {static_cast<int64_t>(x.size())}).tanh().to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    double want = std::tanh(double(x[i]));
    ASSERT_NEAR(got[i], want, 2.5e-7 * std::abs(want) + 1.5e-45) << x[i];  // 2-4 ulp; one subnormal step
  }
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edges = f32({inf, -inf, std::numeric_limits<float>::quiet_NaN()}, {3}).tanh().to_vector<float>();
  EXPECT_EQ(edges[0], 1.0f);
  EXPECT_EQ(edges[1], -1.0f);
  EXPECT_TRUE(std::isnan(edges[2]));
  EXPECT_EQ(f32({30.0f, -9.1f, 1e30f, -1e30f}, {4}).tanh().to_vector<float>(),
            (std::vector<float>{1.0f, -1.0f, 1.0f, -1.0f}));
  Tensor h = f32({1e-3f, -0.5f, 3.0f}, {3}).cast(dtypes::float16).tanh();
  EXPECT_EQ(h.dtype(), dtypes::float16);
  EXPECT_ALLCLOSE(h.cast(dtypes::float32).to_vector<float>(), (std::vector<float>{1e-3f, -0.46211716f, 0.99505475f}),
                  1e-3, 0);
}

// Each op's float32 result against float64 <cmath> within `ulps` of the float32 answer's spacing,
// plus `per_x` ulps per unit of |x|, over a sweep. Below the normal range the spacing is one
// subnormal step, and each product there rounds to a step: a few more are allowed.
void expect_within_ulps(const char* name, const std::function<Tensor(const Tensor&)>& op, double (*ref)(double),
                        const std::vector<float>& x, double ulps, double per_x = 0) {
  std::vector<float> got = op(f32(x, {static_cast<int64_t>(x.size())})).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref(double(x[i]));
    if (!std::isfinite(want) || std::abs(want) > 3.4e38) continue;
    float w = static_cast<float>(std::abs(want));
    double spacing = std::max(double(std::nextafter(w, INFINITY) - w), 1.4e-45);
    ASSERT_NEAR(got[i], want, (ulps + per_x * std::abs(x[i])) * spacing + 6e-45) << name << "(" << x[i] << ")";
  }
}

std::vector<float> magnitudes(double lo_exponent, double hi_exponent, bool negated_too) {
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) {
    float m = static_cast<float>(std::pow(10.0, lo_exponent + (hi_exponent - lo_exponent) * i / 20000));
    x.push_back(m);
    if (negated_too) x.push_back(-m);
  }
  return x;
}

// e^x - 1 and log(1 + x) keep every digit of a result near 0, where e^x and 1 + x would round it
// away (expm1(1e-7) came out 1.19e-7 as e^x - 1), and so do the ops built on them: ELU, SELU,
// CELU, softplus and mish of very negative x (softplus(-30) was log(1) = 0), sinh, asinh, atanh
// near 0, acosh near 1. Also the ends: expm1 is -1 below -17.4 and inf above 88.73; sinh and cosh
// are finite to 89.4; asinh and acosh up to float32's largest; acosh is NaN below 1; float16 and
// float64 keep their ranges and digits. Away from 0, expm1's and sinh's
// error may grow by an ulp per unit of |x|: the C backend's fast math can fold the two-part
// n ln 2 into one constant, and x log2(e)'s rounding then reaches the result.
TEST(ElementwiseUnary, NoCancellationNearZeroForExpm1Log1pAndTheOpsOnThem) {
  std::vector<float> both = magnitudes(-40, 1.9, true);
  expect_within_ulps(
      "expm1", [](const Tensor& t) { return t.expm1(); }, [](double v) { return std::expm1(v); }, both, 3, 1);
  expect_within_ulps(
      "log1p", [](const Tensor& t) { return t.log1p(); }, [](double v) { return std::log1p(v); },
      magnitudes(-40, 30, false), 3);
  std::vector<float> above_minus_one = magnitudes(-40, -1e-7, true);
  expect_within_ulps(
      "log1p", [](const Tensor& t) { return t.log1p(); }, [](double v) { return std::log1p(v); }, above_minus_one, 3);
  expect_within_ulps(
      "elu", [](const Tensor& t) { return t.elu(); }, [](double v) { return v < 0 ? std::expm1(v) : v; }, both, 3);
  expect_within_ulps(
      "selu", [](const Tensor& t) { return t.selu(); },
      [](double v) { return 1.0507009873554805 * (v <= 0 ? 1.6732632423543772 * std::expm1(v) : v); }, both, 4);
  expect_within_ulps(
      "celu", [](const Tensor& t) { return t.celu(0.7); },
      [](double v) { return v < 0 ? 0.7 * std::expm1(v / 0.7) : v; }, both, 4);
  expect_within_ulps(
      "sinh", [](const Tensor& t) { return t.sinh(); }, [](double v) { return std::sinh(v); }, both, 4, 1);
  expect_within_ulps(
      "asinh", [](const Tensor& t) { return t.asinh(); }, [](double v) { return std::asinh(v); },
      magnitudes(-40, 38, true), 4);
  expect_within_ulps(
      "atanh", [](const Tensor& t) { return t.atanh(); }, [](double v) { return std::atanh(v); },
      magnitudes(-40, -1e-7, true), 4);
  std::vector<float> near_one;
  for (float m : magnitudes(-7, 0, false)) near_one.push_back(1.0f + m);
  expect_within_ulps(
      "acosh", [](const Tensor& t) { return t.acosh(); }, [](double v) { return std::acosh(v); }, near_one, 5);
  expect_within_ulps(
      "acosh", [](const Tensor& t) { return t.acosh(); }, [](double v) { return std::acosh(v); },
      magnitudes(0, 38, false), 4);
  // softplus and mish of very negative x are e^x-sized: within exp's error, which grows with |x|
  // (x log2(e)'s rounding), about |x| / 1.4 ulp.
  std::vector<float> x;
  for (int i = 0; i <= 8000; ++i) x.push_back(-0.01f * static_cast<float>(i));
  std::vector<float> sp = f32(x, {8001}).softplus().to_vector<float>();
  std::vector<float> mish = f32(x, {8001}).mish().to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i], want = std::log1p(std::exp(v)), tol = (3 + std::abs(v)) * 1.2e-7;
    ASSERT_NEAR(sp[i], want, tol * want) << "softplus(" << v << ")";
    ASSERT_NEAR(mish[i], v * std::tanh(want), 2 * tol * std::abs(v * std::tanh(want))) << "mish(" << v << ")";
  }
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> e = f32({-100.0f, 88.8f, inf, -inf, 0.0f}, {5}).expm1().to_vector<float>();
  EXPECT_EQ(e, (std::vector<float>{-1.0f, inf, inf, -1.0f, 0.0f}));
  EXPECT_TRUE(std::isnan(f32({nan}, {1}).expm1().item<float>()));
  std::vector<float> l = f32({-1.0f, -2.0f, inf, nan}, {4}).log1p().to_vector<float>();
  EXPECT_EQ(l[0], -inf);
  EXPECT_TRUE(std::isnan(l[1]));
  EXPECT_EQ(l[2], inf);
  EXPECT_TRUE(std::isnan(l[3]));
  EXPECT_EQ(f32({-inf, inf}, {2}).softplus().to_vector<float>(), (std::vector<float>{0.0f, inf}));
  EXPECT_ALLCLOSE(f32({89.0f, -89.0f}, {2}).sinh().to_vector<float>(),
                  (std::vector<double>{std::sinh(89.0), -std::sinh(89.0)}), 1e-6, 0);
  EXPECT_ALLCLOSE(f32({89.0f}, {1}).cosh().to_vector<float>(), (std::vector<double>{std::cosh(89.0)}), 1e-6, 0);
  EXPECT_EQ(f32({1.0f, -1.0f}, {2}).atanh().to_vector<float>(), (std::vector<float>{inf, -inf}));
  EXPECT_TRUE(std::isfinite(f32({89.4f}, {1}).sinh().item<float>()));
  for (float v : f32({0.5f, -2.0f, -1e10f, -1e30f}, {4}).acosh().to_vector<float>()) EXPECT_TRUE(std::isnan(v)) << v;
  // 16-bit floats go through float32: sinh(11.5) is 49369 (e^11.5 - 1 is above float16's
  // largest), asinh(300) 6.397 (300^2 is too).
  Tensor h = f32({11.5f, 300.0f}, {2}).cast(dtypes::float16);
  EXPECT_NEAR(h.sinh().cast(dtypes::float32).to_vector<float>().front(), std::sinh(11.5), 2e-3 * std::sinh(11.5));
  EXPECT_ALLCLOSE(h.asinh().cast(dtypes::float32).to_vector<float>(),
                  (std::vector<double>{std::asinh(11.5), std::asinh(300.0)}), 2e-3, 0);
  // float64 by its own series: within a few float64 ulps near 0, and past the inverses' switch to
  // log(2x) (5000: float32's switch at 4096 would be 1e-8 off in float64).
  std::vector<double> d{1e-300, -3e-17, 1e-9, -0.3, 0.49, 0.7, 5.0, 5000.0, 3e8};
  Tensor t = Tensor::from_vector(d, {9});
  std::vector<double> em1 = t.expm1().to_vector<double>(), lp1 = t.log1p().to_vector<double>();
  std::vector<double> above_one;  // 1 + |d| rounded here: in one kernel, fast math may keep |d| exact
  for (double v : d) above_one.push_back(std::abs(v) + 1.0);
  std::vector<double> ash = t.asinh().to_vector<double>();
  std::vector<double> ach = Tensor::from_vector(above_one, {9}).acosh().to_vector<double>();
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_NEAR(ash[i], std::asinh(d[i]), 1e-15 * std::abs(std::asinh(d[i]))) << d[i];
    EXPECT_NEAR(ach[i], std::acosh(above_one[i]), 1e-15 * std::acosh(above_one[i])) << above_one[i];
    if (d[i] < 700) {
      EXPECT_NEAR(em1[i], std::expm1(d[i]), 1e-15 * std::abs(std::expm1(d[i]))) << d[i];
    }
    EXPECT_NEAR(lp1[i], std::log1p(d[i]), 1e-15 * std::abs(std::log1p(d[i]))) << d[i];
  }
}

TEST(ElementwiseUnary, Exp2JustBelowFloat32Overflow) {
  std::vector<float> x{127.5f, 127.9f, 127.99f};
  std::vector<double> ref;
  for (float v : x) ref.push_back(std::exp2(double(v)));  // 2.4e38 .. 3.4e38, all below FLT_MAX
  EXPECT_ALLCLOSE(f32(x, {3}).exp2().to_vector<float>(), ref, 1e-5, 0);
  EXPECT_TRUE(std::isfinite(f32({88.5f}, {1}).exp().item<float>()));  // e^88.5 = 2.7e38
}

TEST(ElementwiseUnary, SinCosOfLargeArguments) {
  auto in = data(200, 35, -1000, 1000);
  std::vector<double> s, c;
  for (float x : in) {
    s.push_back(std::sin(double(x)));
    c.push_back(std::cos(double(x)));
  }
  EXPECT_ALLCLOSE(f32(in, {200}).sin().to_vector<float>(), s, 0, 1e-4);
  EXPECT_ALLCLOSE(f32(in, {200}).cos().to_vector<float>(), c, 0, 1e-4);
}

TEST(ElementwiseUnary, TranscendentalsOfIntsAreFloat32) {
  Tensor t = Tensor::from_vector(std::vector<int32_t>{1, 4, 9, 16});
  Tensor s = t.sqrt();
  EXPECT_EQ(s.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(s.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}), kRtol, kAtol);
  Tensor e = Tensor::from_vector(std::vector<int8_t>{0, 1, -1}).exp();
  EXPECT_EQ(e.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(e.to_vector<float>(), (std::vector<double>{1.0, std::exp(1.0), std::exp(-1.0)}), 1e-5, 1e-6);
  Tensor l = Tensor::from_vector(std::vector<bool>{true, false}).sigmoid();
  EXPECT_EQ(l.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(l.to_vector<float>(), (std::vector<double>{1 / (1 + std::exp(-1.0)), 0.5}), 1e-5, 1e-6);
}

TEST(ElementwiseUnary, IntAbsSignNegRelu) {
  std::vector<int32_t> in{-7, 0, 3, -1, 100};
  Tensor t = Tensor::from_vector(in);
  std::vector<int32_t> ab, sg, ng, rl;
  for (int32_t x : in) {
    ab.push_back(x < 0 ? -x : x);
    sg.push_back((x > 0) - (x < 0));
    ng.push_back(-x);
    rl.push_back(x > 0 ? x : 0);
  }
  EXPECT_EQ(t.abs().dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(t.abs().to_vector<int32_t>(), ab);
  EXPECT_ALLEQUAL(t.sign().to_vector<int32_t>(), sg);
  EXPECT_ALLEQUAL(t.neg().to_vector<int32_t>(), ng);
  EXPECT_ALLEQUAL(t.relu().to_vector<int32_t>(), rl);
}

TEST(ElementwiseUnary, UnsignedAbsSignClip) {
  Tensor t = Tensor::from_vector(std::vector<uint8_t>{0, 1, 200, 255});
  EXPECT_ALLEQUAL(t.abs().to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 200, 255}));
  EXPECT_ALLEQUAL(t.sign().to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_ALLEQUAL(t.clip(1, 250).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 200, 250}));
}

TEST(ElementwiseUnary, IntFloorCeilRoundAreIdentity) {
  Tensor t = Tensor::from_vector(std::vector<int16_t>{-3, 0, 5});
  EXPECT_ALLEQUAL(t.floor().to_vector<int16_t>(), (std::vector<int16_t>{-3, 0, 5}));
  EXPECT_ALLEQUAL(t.ceil().to_vector<int16_t>(), (std::vector<int16_t>{-3, 0, 5}));
  EXPECT_ALLEQUAL(t.round().to_vector<int16_t>(), (std::vector<int16_t>{-3, 0, 5}));
}

TEST(ElementwiseUnary, IntClip) {
  auto in = test::int_data<int64_t>(30, 44, -100, 100);
  Tensor c = Tensor::from_vector(in).clip(-10, 20);
  EXPECT_EQ(c.dtype(), dtypes::int64);
  std::vector<int64_t> ref;
  for (int64_t x : in) ref.push_back(std::clamp<int64_t>(x, -10, 20));
  EXPECT_ALLEQUAL(c.to_vector<int64_t>(), ref);
}

// ---- pow, maximum, minimum ------------------------------------------------------------------------

TEST(ElementwisePow, TensorExponentBroadcast) {
  auto base = data(6, 50, 0.1, 3), ex = data(3, 51, -2, 2);
  Tensor c = f32(base, {2, 3}).pow(f32(ex, {3}));
  auto ref = test::broadcast_binary<double>(base, {2, 3}, ex, {3}, {2, 3}, [](float b, float e) { return std::pow(double(b), double(e)); });
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, 1e-4, 1e-6);
}

TEST(ElementwisePow, NegativeBaseIntegerExponent) {
  Tensor c = f32({-2.0f, -3.0f, 2.0f}, {3}).pow(3.0);
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{-8, -27, 8}), 1e-5, 1e-5);
  Tensor z = f32({-2.0f, 0.0f, 5.0f}, {3}).pow(0.0);
  EXPECT_ALLCLOSE(z.to_vector<float>(), (std::vector<float>{1, 1, 1}), 0, 0);
}

TEST(ElementwisePow, IntegerPowersAreExact) {
  std::vector<int32_t> b{2, 3, -2, 0, 1, 10}, e{10, 4, 3, 5, 100, 9};
  Tensor c = Tensor::from_vector(b).pow(Tensor::from_vector(e));
  EXPECT_EQ(c.dtype(), dtypes::int32);
  std::vector<int64_t> ref;
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t r = 1;
    for (int k = 0; k < e[i]; ++k) r *= b[i];
    ref.push_back(r);
  }
  EXPECT_ALLEQUAL(c.to_vector<int32_t>(), ref);
  Tensor s = Tensor::from_vector(std::vector<int64_t>{3, -5, 7}).pow(3.0);
  EXPECT_EQ(s.dtype(), dtypes::int64);
  EXPECT_ALLEQUAL(s.to_vector<int64_t>(), (std::vector<int64_t>{27, -125, 343}));
}

TEST(ElementwisePow, EdgeCasesMatchStdPow) {
  std::vector<float> b{0.0f, 0.0f, -8.0f, -2.0f, 2.0f, 1.0f, 4.0f, 0.5f};
  std::vector<float> e{2.5f, -1.0f, 1.0f / 3, 2.0f, -3.0f, 1e6f, 0.0f, 10.0f};
  std::vector<double> ref;
  for (size_t i = 0; i < b.size(); ++i) ref.push_back(std::pow(double(b[i]), double(e[i])));
  EXPECT_ALLCLOSE(f32(b, {8}).pow(f32(e, {8})).to_vector<float>(), ref, 1e-5, 1e-7);
}

TEST(ElementwisePow, Float64) {
  std::vector<double> b{1.5, 2.0, 0.3, 7.0}, e{2.2, -0.5, 3.0, 0.1};
  std::vector<double> ref;
  for (size_t i = 0; i < b.size(); ++i) ref.push_back(std::pow(b[i], e[i]));
  EXPECT_ALLCLOSE(Tensor::from_vector(b).pow(Tensor::from_vector(e)).to_vector<double>(), ref, 1e-12, 0);
}

TEST(ElementwiseMaxMin, FloatBroadcast) {
  auto a = data(12, 52), b = data(4, 53);
  Tensor ta = f32(a, {3, 4}), tb = f32(b, {4});
  auto mx = test::broadcast_binary<double>(a, {3, 4}, b, {4}, {3, 4}, [](float x, float y) { return std::max(x, y); });
  auto mn = test::broadcast_binary<double>(a, {3, 4}, b, {4}, {3, 4}, [](float x, float y) { return std::min(x, y); });
  EXPECT_ALLCLOSE(ta.maximum(tb).to_vector<float>(), mx, 0, 0);
  EXPECT_ALLCLOSE(ta.minimum(tb).to_vector<float>(), mn, 0, 0);
}

TEST(ElementwiseMaxMin, IntAndUnsigned) {
  Tensor a = Tensor::from_vector(std::vector<int8_t>{-128, 5, 127, 0});
  Tensor b = Tensor::from_vector(std::vector<int8_t>{0, -5, 126, 0});
  EXPECT_ALLEQUAL(a.maximum(b).to_vector<int8_t>(), (std::vector<int8_t>{0, 5, 127, 0}));
  EXPECT_ALLEQUAL(a.minimum(b).to_vector<int8_t>(), (std::vector<int8_t>{-128, -5, 126, 0}));
  Tensor u = Tensor::from_vector(std::vector<uint32_t>{4000000000u, 1, 7});
  Tensor v = Tensor::from_vector(std::vector<uint32_t>{3, 2, 7});
  EXPECT_ALLEQUAL(u.maximum(v).to_vector<uint32_t>(), (std::vector<uint32_t>{4000000000u, 2, 7}));
  EXPECT_ALLEQUAL(u.minimum(v).to_vector<uint32_t>(), (std::vector<uint32_t>{3, 1, 7}));
}

TEST(ElementwiseMaxMin, MixedDtypesPromote) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{1, 5});
  Tensor b = f32({2.5f, 2.5f}, {2});
  Tensor m = a.minimum(b);
  EXPECT_EQ(m.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(m.to_vector<float>(), (std::vector<float>{1.0f, 2.5f}), 0, 0);
  EXPECT_ALLCLOSE(a.maximum(b).to_vector<float>(), (std::vector<float>{2.5f, 5.0f}), 0, 0);
}

// ---- comparisons --------------------------------------------------------------------------------

TEST(ElementwiseCompare, AllSixOnFloatsWithBroadcast) {
  auto a = data(12, 60, -2, 2);
  std::vector<float> b{-1.0f, a[1], 0.5f, a[3]};  // some equal elements in column 1 and 3 of row 0
  Tensor ta = f32(a, {3, 4}), tb = f32(b, {4});
  auto cmp = [&](auto f) { return test::broadcast_binary<bool>(a, {3, 4}, b, {4}, {3, 4}, f); };
  Tensor lt = ta < tb;
  EXPECT_EQ(lt.dtype(), dtypes::bool_);
  EXPECT_EQ(lt.shape(), (Shape{3, 4}));
  EXPECT_ALLEQUAL(lt.to_vector<bool>(), cmp([](float x, float y) { return x < y; }));
  EXPECT_ALLEQUAL((ta <= tb).to_vector<bool>(), cmp([](float x, float y) { return x <= y; }));
  EXPECT_ALLEQUAL((ta > tb).to_vector<bool>(), cmp([](float x, float y) { return x > y; }));
  EXPECT_ALLEQUAL((ta >= tb).to_vector<bool>(), cmp([](float x, float y) { return x >= y; }));
  EXPECT_ALLEQUAL((ta == tb).to_vector<bool>(), cmp([](float x, float y) { return x == y; }));
  EXPECT_ALLEQUAL((ta != tb).to_vector<bool>(), cmp([](float x, float y) { return x != y; }));
}

TEST(ElementwiseCompare, WithScalarsOnEitherSide) {
  Tensor t = Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4});
  EXPECT_ALLEQUAL((t < 3).to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_ALLEQUAL((3 < t).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_ALLEQUAL((t >= 2.5f).to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_ALLEQUAL((t == 2).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
  EXPECT_ALLEQUAL((t != 2).to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
}

TEST(ElementwiseCompare, UnsignedComparesUnsigned) {
  Tensor a = Tensor::from_vector(std::vector<uint8_t>{200, 1, 128});
  Tensor b = Tensor::from_vector(std::vector<uint8_t>{100, 255, 127});
  EXPECT_ALLEQUAL((a > b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  Tensor c = Tensor::from_vector(std::vector<uint64_t>{1ull << 63, 5});
  Tensor d = Tensor::from_vector(std::vector<uint64_t>{1, 1ull << 63});
  EXPECT_ALLEQUAL((c < d).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(ElementwiseCompare, Int64BeyondFloatPrecision) {
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor a = Tensor::from_vector(std::vector<int64_t>{big, big});
  Tensor b = Tensor::from_vector(std::vector<int64_t>{big - 1, big});
  EXPECT_ALLEQUAL((a == b).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_ALLEQUAL((a > b).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(ElementwiseCompare, NanComparesFalseExceptNotEqual) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32({nan, nan, 1.0f}, {3});
  Tensor b = f32({1.0f, nan, nan}, {3});
  EXPECT_ALLEQUAL((a < b).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_ALLEQUAL((a > b).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_ALLEQUAL((a == b).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_ALLEQUAL((a != b).to_vector<bool>(), (std::vector<bool>{true, true, true}));
}

TEST(ElementwiseCompare, BoolTensorsCompare) {
  Tensor a = Tensor::from_vector(std::vector<bool>{false, false, true, true});
  Tensor b = Tensor::from_vector(std::vector<bool>{false, true, false, true});
  EXPECT_ALLEQUAL((a == b).to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_ALLEQUAL((a < b).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
}

TEST(ElementwiseCompare, ResultFeedsArithmetic) {
  Tensor t = f32({-1, 2, -3, 4}, {4});
  Tensor c = (t > 0).cast(dtypes::float32) * t;
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{0, 2, 0, 4}), 0, 0);
  Tensor n = (t > 0) + 1;  // bool + int literal: int32
  EXPECT_EQ(n.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(n.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 1, 2}));
}

// ---- where and logical ops ----------------------------------------------------------------------

TEST(ElementwiseWhere, BroadcastsAllThree) {
  std::vector<bool> cond{true, false, true};
  auto x = data(4, 70), y = data(1, 71);
  Tensor c = Tensor::from_vector(cond, {3, 1}).where(f32(x, {1, 4}), f32(y, {}));
  ASSERT_EQ(c.shape(), (Shape{3, 4}));
  std::vector<double> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) ref.push_back(cond[i] ? x[j] : y[0]);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, 0, 0);
}

TEST(ElementwiseWhere, ScalarBranches) {
  Tensor cond = f32({-1, 2, 0, 3}, {4}) > 0;
  Tensor i = cond.where(1.0, 0.0);
  EXPECT_EQ(i.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(i.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 1}));
  Tensor f = cond.where(0.5, -1.5);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(f.to_vector<float>(), (std::vector<float>{-1.5f, 0.5f, -1.5f, 0.5f}), 0, 0);
}

TEST(ElementwiseWhere, NonBoolConditionMeansNonZero) {
  Tensor cond = Tensor::from_vector(std::vector<int32_t>{0, 5, -1, 0});
  Tensor r = cond.where(f32({1, 2, 3, 4}, {4}), f32({10, 20, 30, 40}, {4}));
  EXPECT_ALLCLOSE(r.to_vector<float>(), (std::vector<float>{10, 2, 3, 40}), 0, 0);
}

TEST(ElementwiseWhere, PromotesBranches) {
  Tensor cond = Tensor::from_vector(std::vector<bool>{true, false});
  Tensor r = cond.where(Tensor::from_vector(std::vector<int32_t>{1, 2}), f32({0.5f, 0.25f}, {2}));
  EXPECT_EQ(r.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(r.to_vector<float>(), (std::vector<float>{1.0f, 0.25f}), 0, 0);
}

TEST(ElementwiseWhere, NonContiguousCondition) {
  auto a = data(12, 72);
  Tensor t = f32(a, {3, 4});
  Tensor r = (t.transpose() > 0).where(t.transpose(), t.transpose() * 2.0f);
  std::vector<double> ref;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) {
      float x = a[j * 4 + i];
      ref.push_back(x > 0 ? x : 2.0 * x);
    }
  EXPECT_ALLCLOSE(r.to_vector<float>(), ref, 0, 0);
}

TEST(ElementwiseLogical, NotAndOrOnBools) {
  std::vector<bool> a{false, false, true, true}, b{false, true, false, true};
  Tensor ta = Tensor::from_vector(a), tb = Tensor::from_vector(b);
  EXPECT_ALLEQUAL(ta.logical_not().to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_ALLEQUAL(ta.logical_and(tb).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_ALLEQUAL(ta.logical_or(tb).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
}

TEST(ElementwiseLogical, OnNumbersAndBroadcast) {
  Tensor a = f32({0.0f, 1.5f, -2.0f}, {3, 1});
  Tensor b = Tensor::from_vector(std::vector<int32_t>{0, 7}, {1, 2});
  Tensor andv = a.logical_and(b), orv = a.logical_or(b);
  EXPECT_EQ(andv.dtype(), dtypes::bool_);
  EXPECT_EQ(andv.shape(), (Shape{3, 2}));
  EXPECT_ALLEQUAL(andv.to_vector<bool>(), (std::vector<bool>{false, false, false, true, false, true}));
  EXPECT_ALLEQUAL(orv.to_vector<bool>(), (std::vector<bool>{false, true, true, true, true, true}));
  EXPECT_ALLEQUAL(a.logical_not().to_vector<bool>(), (std::vector<bool>{true, false, false}));
}

TEST(ElementwiseLogical, NegOfBoolIsLogicalNot) {
  Tensor t = Tensor::from_vector(std::vector<bool>{true, false});
  EXPECT_EQ(t.neg().dtype(), dtypes::bool_);
  EXPECT_ALLEQUAL(t.neg().to_vector<bool>(), (std::vector<bool>{false, true}));
}

// ---- fusion -------------------------------------------------------------------------------------

TEST(ElementwiseFusion, ChainIsOneKernel) {
  Tensor a = Tensor::rand({16, 16}, 1), b = Tensor::rand({16}, 2);
  Tensor c = ((a * b + 1.0f).exp().sqrt() - a).relu().maximum(b).sigmoid();
  EXPECT_EQ(test::kernel_count(c), 1u);
}

TEST(ElementwiseFusion, MovementInsideChainIsOneKernel) {
  Tensor a = Tensor::rand({8, 16}, 3), b = Tensor::rand({16, 8}, 4);
  Tensor c = (a.transpose() * b).flip({0}).pad({{1, 1}, {0, 0}}) + 2.0f;
  EXPECT_EQ(test::kernel_count(c), 1u);
}

// ---- integer division, remainders, shifts by tensors ------------------------------------------------

// idiv rounds toward zero, fmod keeps the dividend's sign, remainder the divisor's: every sign
// pairing, broadcasting a row of divisors over a column of dividends, in int32, int8 and uint8.
TEST(ElementwiseInteger, DivisionAndRemaindersAgainstC) {
  std::vector<int32_t> a{-7, -6, -1, 0, 1, 6, 7, 100, -100}, b{-3, 2, 5, -1, 7};
  Tensor ta = Tensor::from_vector(a, {9, 1}), tb = Tensor::from_vector(b, {1, 5});
  std::vector<int32_t> q, f, r;
  for (int32_t x : a)
    for (int32_t y : b) {
      q.push_back(x / y);
      f.push_back(x % y);
      int32_t m = x % y;
      r.push_back(m != 0 && (m < 0) != (y < 0) ? m + y : m);
    }
  EXPECT_ALLEQUAL(ta.idiv(tb).to_vector<int32_t>(), q);
  EXPECT_ALLEQUAL(ta.fmod(tb).to_vector<int32_t>(), f);
  EXPECT_ALLEQUAL(ta.remainder(tb).to_vector<int32_t>(), r);
  Tensor i8 = Tensor::from_vector(std::vector<int8_t>{-128, -5, 5, 127}, {4});
  Tensor d8 = Tensor::from_vector(std::vector<int8_t>{3, -3, -3, 4}, {4});
  EXPECT_EQ(i8.idiv(d8).dtype(), dtypes::int8);
  EXPECT_ALLEQUAL(i8.idiv(d8).to_vector<int8_t>(), (std::vector<int8_t>{-42, 1, -1, 31}));
  EXPECT_ALLEQUAL(i8.remainder(d8).to_vector<int8_t>(), (std::vector<int8_t>{1, -2, -1, 3}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{250, 7, 0}, {3}), v = Tensor::from_vector(std::vector<uint8_t>{7, 250, 3}, {3});
  EXPECT_ALLEQUAL(u.idiv(v).to_vector<uint8_t>(), (std::vector<uint8_t>{35, 0, 0}));
  EXPECT_ALLEQUAL(u.remainder(v).to_vector<uint8_t>(), (std::vector<uint8_t>{5, 7, 0}));
  EXPECT_EQ(ta.idiv(tb.slice(1, 0, 0)).shape(), (Shape{9, 0}));
}

TEST(ElementwiseInteger, FloatRemainders) {
  std::vector<float> a{-7.5f, -1.0f, 0.0f, 2.25f, 7.5f}, b{2.0f, -2.0f, 0.75f};
  Tensor ta = f32(a, {5, 1}), tb = f32(b, {1, 3});
  std::vector<double> f, r;
  for (float x : a)
    for (float y : b) {
      f.push_back(std::fmod(double(x), double(y)));
      double m = std::fmod(double(x), double(y));
      r.push_back(m != 0 && (m < 0) != (y < 0) ? m + y : m);
    }
  EXPECT_ALLCLOSE(ta.fmod(tb).to_vector<float>(), f, 1e-6, 1e-6);
  EXPECT_ALLCLOSE(ta.remainder(tb).to_vector<float>(), r, 1e-6, 1e-6);
}

// float32 remainders whose quotient float32 rounds to the next integer (1 / 0.1f is 9.99999985,
// 10 in float32): C's fmod, exactly, on every CPU (with or without a fused multiply-add).
TEST(ElementwiseInteger, FloatRemaindersWhoseQuotientRoundsUp) {
  std::vector<float> a{1.0f, 2.0f, 0.3f, -1.0f, 7.0f}, b{0.1f, 0.1f, 0.1f, 0.1f, 0.7f};
  Tensor ta = f32(a, {5}), tb = f32(b, {5});
  std::vector<float> got = ta.fmod(tb).to_vector<float>(), rem = ta.remainder(tb).to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    float want = std::fmod(a[i], b[i]);
    EXPECT_EQ(got[i], want) << a[i] << " fmod " << b[i];
    EXPECT_EQ(rem[i], want != 0 && (want < 0) != (b[i] < 0) ? want + b[i] : want) << a[i] << " remainder " << b[i];
  }
}

TEST(ElementwiseInteger, ShiftsByATensor) {
  Tensor x = Tensor::from_vector(std::vector<int32_t>{1, -8, 255}, {3, 1});
  Tensor s = Tensor::from_vector(std::vector<int64_t>{0, 1, 4}, {1, 3});
  EXPECT_ALLEQUAL(x.lshift(s).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 16, -8, -16, -128, 255, 510, 4080}));
  EXPECT_ALLEQUAL(x.rshift(s).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0, -8, -4, -1, 255, 127, 15}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{0x81, 0x0f}, {2});
  EXPECT_ALLEQUAL(u.rshift(Tensor::from_vector(std::vector<uint8_t>{7, 2}, {2})).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 3}));
}

TEST(ElementwiseInteger, ErrorsNameTheOp) {
  Tensor i = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {3}), f = f32({1, 2}, {2});
  EXPECT_THROW_MSG(f.idiv(f), DTypeError, "idiv", "integer", "float32");
  EXPECT_THROW_MSG(i.lshift(f), DTypeError, "lshift", "float32");
  EXPECT_THROW_MSG(Tensor::full({2}, true, dtypes::bool_).fmod(i.slice(0, 0, 2)), DTypeError, "fmod", "bool");
  EXPECT_THROW_MSG(i.idiv(Tensor::from_vector(std::vector<int32_t>{1, 2}, {2})), ShapeError, "idiv", "(3,)", "(2,)");
  EXPECT_THROW_MSG(i.cast(dtypes::float32).fmod(f), ShapeError, "fmod", "(3,)", "(2,)");
}

}  // namespace
}  // namespace lathe
