// Per-dtype behaviour against plain C++: integer arithmetic (wrapping), comparisons, bitwise ops and
// shifts on every integer type and bool, reductions' accumulation types, casts and bitcasts.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::f32;

template <class T>
std::vector<T> small_ints(size_t n, uint64_t seed) {
  return test::int_data<T>(n, seed, std::is_signed_v<T> ? -100 : 0, std::is_signed_v<T> ? 100 : 200);
}

/// Arbitrary bit patterns of T.
template <class T>
std::vector<T> bit_patterns(size_t n, uint64_t seed) {
  std::vector<T> v(n);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    v[i] = static_cast<T>(s);
  }
  return v;
}

/// x op y computed modulo 2^bits, as C does for types narrower than int (and unsigned types).
template <class T, class F>
std::vector<T> wrap_ref(const std::vector<T>& a, const std::vector<T>& b, F f) {
  std::vector<T> r;
  for (size_t i = 0; i < a.size(); ++i)
    r.push_back(static_cast<T>(f(static_cast<uint64_t>(static_cast<int64_t>(a[i])), static_cast<uint64_t>(static_cast<int64_t>(b[i])))));
  return r;
}

template <class T>
class IntDtype : public ::testing::Test {};
using IntTypes = ::testing::Types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
TYPED_TEST_SUITE(IntDtype, IntTypes);

TYPED_TEST(IntDtype, AddSubMul) {
  using T = TypeParam;
  auto a = small_ints<T>(40, 1), b = small_ints<T>(40, 2);
  Tensor ta = Tensor::from_vector(a, {5, 8}), tb = Tensor::from_vector(b, {5, 8});
  EXPECT_EQ((ta + tb).dtype(), dtype_of<T>());
  EXPECT_ALLEQUAL((ta + tb).template to_vector<T>(), wrap_ref(a, b, [](uint64_t x, uint64_t y) { return x + y; }));
  EXPECT_ALLEQUAL((ta - tb).template to_vector<T>(), wrap_ref(a, b, [](uint64_t x, uint64_t y) { return x - y; }));
  EXPECT_ALLEQUAL((ta * tb).template to_vector<T>(), wrap_ref(a, b, [](uint64_t x, uint64_t y) { return x * y; }));
}

TYPED_TEST(IntDtype, BroadcastAndScalar) {
  using T = TypeParam;
  auto a = small_ints<T>(12, 3), b = small_ints<T>(4, 4);
  Tensor c = Tensor::from_vector(a, {3, 4}) * Tensor::from_vector(b, {4}) + 3;
  EXPECT_EQ(c.dtype(), dtype_of<T>());
  auto ref = test::broadcast_binary<T>(a, {3, 4}, b, {4}, {3, 4}, [](T x, T y) {
    return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(x)) * static_cast<uint64_t>(static_cast<int64_t>(y)) + 3u);
  });
  EXPECT_ALLEQUAL(c.template to_vector<T>(), ref);
}

TYPED_TEST(IntDtype, DivisionIsFloat32) {
  using T = TypeParam;
  auto a = small_ints<T>(10, 5);
  std::vector<T> b(10, T(7));
  Tensor c = Tensor::from_vector(a) / Tensor::from_vector(b);
  EXPECT_EQ(c.dtype(), dtypes::float32);
  std::vector<double> ref;
  for (T x : a) ref.push_back(double(x) / 7.0);
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, 1e-6, 1e-7);
}

TYPED_TEST(IntDtype, Comparisons) {
  using T = TypeParam;
  auto a = bit_patterns<T>(32, 6), b = bit_patterns<T>(32, 7);
  for (size_t i = 0; i < 32; i += 4) b[i] = a[i];
  Tensor ta = Tensor::from_vector(a), tb = Tensor::from_vector(b);
  std::vector<bool> lt, le, eq, ne, gt, ge;
  for (size_t i = 0; i < a.size(); ++i) {
    lt.push_back(a[i] < b[i]);
    le.push_back(a[i] <= b[i]);
    eq.push_back(a[i] == b[i]);
    ne.push_back(a[i] != b[i]);
    gt.push_back(a[i] > b[i]);
    ge.push_back(a[i] >= b[i]);
  }
  EXPECT_ALLEQUAL((ta < tb).to_vector<bool>(), lt);
  EXPECT_ALLEQUAL((ta <= tb).to_vector<bool>(), le);
  EXPECT_ALLEQUAL((ta == tb).to_vector<bool>(), eq);
  EXPECT_ALLEQUAL((ta != tb).to_vector<bool>(), ne);
  EXPECT_ALLEQUAL((ta > tb).to_vector<bool>(), gt);
  EXPECT_ALLEQUAL((ta >= tb).to_vector<bool>(), ge);
}

TYPED_TEST(IntDtype, BitwiseOps) {
  using T = TypeParam;
  auto a = bit_patterns<T>(32, 8), b = bit_patterns<T>(32, 9);
  Tensor ta = Tensor::from_vector(a), tb = Tensor::from_vector(b);
  std::vector<T> band, bor, bxor;
  for (size_t i = 0; i < a.size(); ++i) {
    band.push_back(static_cast<T>(a[i] & b[i]));
    bor.push_back(static_cast<T>(a[i] | b[i]));
    bxor.push_back(static_cast<T>(a[i] ^ b[i]));
  }
  EXPECT_EQ(ta.bitwise_and(tb).dtype(), dtype_of<T>());
  EXPECT_ALLEQUAL(ta.bitwise_and(tb).template to_vector<T>(), band);
  EXPECT_ALLEQUAL(ta.bitwise_or(tb).template to_vector<T>(), bor);
  EXPECT_ALLEQUAL(ta.bitwise_xor(tb).template to_vector<T>(), bxor);
}

TYPED_TEST(IntDtype, Shifts) {
  using T = TypeParam;
  auto a = test::int_data<T>(32, 10, 0, 100);  // non-negative: left shifts of negatives are UB in C
  Tensor ta = Tensor::from_vector(a);
  std::vector<T> l3, r2, lmax;
  int top = static_cast<int>(sizeof(T) * 8 - 1);
  for (T x : a) {
    l3.push_back(static_cast<T>(static_cast<uint64_t>(x) << 3));
    r2.push_back(static_cast<T>(x >> 2));
    lmax.push_back(static_cast<T>(static_cast<uint64_t>(x & 1) << top));
  }
  EXPECT_ALLEQUAL(ta.lshift(3).template to_vector<T>(), l3);
  EXPECT_ALLEQUAL(ta.rshift(2).template to_vector<T>(), r2);
  EXPECT_ALLEQUAL(ta.bitwise_and(Tensor::full({}, int64_t{1}, dtype_of<T>())).lshift(top).template to_vector<T>(), lmax);
}

TYPED_TEST(IntDtype, SumAccumulationType) {
  using T = TypeParam;
  auto a = small_ints<T>(200, 11);
  Tensor s = Tensor::from_vector(a).sum();
  DType expect = sizeof(T) >= 4 ? dtype_of<T>() : (std::is_signed_v<T> ? dtypes::int32 : dtypes::uint32);
  EXPECT_EQ(s.dtype(), expect);
  int64_t ref = 0;
  for (T x : a) ref += static_cast<int64_t>(x);
  EXPECT_EQ(s.cast(dtypes::int64).item<int64_t>(), ref);
}

TYPED_TEST(IntDtype, MaxMinArgmax) {
  using T = TypeParam;
  auto a = bit_patterns<T>(24, 12);
  Tensor t = Tensor::from_vector(a, {4, 6});
  std::vector<T> mx, mn;
  std::vector<int32_t> am;
  for (int r = 0; r < 4; ++r) {
    T m = a[r * 6], n = a[r * 6];
    int32_t best = 0;
    for (int c = 1; c < 6; ++c) {
      m = std::max(m, a[r * 6 + c]);
      n = std::min(n, a[r * 6 + c]);
      if (a[r * 6 + c] > a[r * 6 + best]) best = c;
    }
    mx.push_back(m);
    mn.push_back(n);
    am.push_back(best);
  }
  EXPECT_ALLEQUAL(t.max({1}).template to_vector<T>(), mx);
  EXPECT_ALLEQUAL(t.min({1}).template to_vector<T>(), mn);
  EXPECT_ALLEQUAL(t.argmax(1).to_vector<int32_t>(), am);
}

TYPED_TEST(IntDtype, CastToFloatAndBack) {
  using T = TypeParam;
  auto a = small_ints<T>(16, 13);
  Tensor f = Tensor::from_vector(a).cast(dtypes::float32);
  std::vector<float> ref(a.begin(), a.end());
  EXPECT_EQ(f.to_vector<float>(), ref);
  EXPECT_EQ(f.cast(dtype_of<T>()).template to_vector<T>(), a);
  Tensor d = Tensor::from_vector(a).cast(dtypes::float64);
  EXPECT_EQ(d.to_vector<double>(), std::vector<double>(a.begin(), a.end()));
}

TYPED_TEST(IntDtype, WhereAndMaximum) {
  using T = TypeParam;
  auto a = small_ints<T>(16, 14), b = small_ints<T>(16, 15);
  Tensor ta = Tensor::from_vector(a), tb = Tensor::from_vector(b);
  std::vector<T> mx, sel;
  for (size_t i = 0; i < a.size(); ++i) {
    mx.push_back(std::max(a[i], b[i]));
    sel.push_back(a[i] < b[i] ? b[i] : a[i]);
  }
  EXPECT_ALLEQUAL(ta.maximum(tb).template to_vector<T>(), mx);
  EXPECT_ALLEQUAL((ta < tb).where(tb, ta).template to_vector<T>(), sel);
}

// ---- signed/unsigned specifics and bool ---------------------------------------------------------------

TEST(DtypeShift, RightShiftOfNegativeIsArithmetic) {
  Tensor t = Tensor::from_vector(std::vector<int32_t>{-8, -7, -1, 7});
  EXPECT_ALLEQUAL(t.rshift(1).to_vector<int32_t>(), (std::vector<int32_t>{-4, -4, -1, 3}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{0x80, 0xff});
  EXPECT_ALLEQUAL(u.rshift(7).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1}));
  EXPECT_ALLEQUAL(u.lshift(1).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0xfe}));
}

TEST(DtypeShift, NonContiguousInput) {
  Tensor t = Tensor::from_vector(std::vector<int16_t>{1, 2, 3, 4, 5, 6}, {2, 3}).transpose().lshift(2);
  EXPECT_ALLEQUAL(t.to_vector<int16_t>(), (std::vector<int16_t>{4, 16, 8, 20, 12, 24}));
}

TEST(DtypeBool, BitwiseOps) {
  std::vector<bool> a{false, false, true, true}, b{false, true, false, true};
  Tensor ta = Tensor::from_vector(a), tb = Tensor::from_vector(b);
  EXPECT_EQ(ta.bitwise_and(tb).dtype(), dtypes::bool_);
  EXPECT_ALLEQUAL(ta.bitwise_and(tb).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_ALLEQUAL(ta.bitwise_or(tb).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_ALLEQUAL(ta.bitwise_xor(tb).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
}

TEST(DtypeBool, BitwiseWithBroadcastAndIntPromotion) {
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false}, {2, 1});
  Tensor i = Tensor::from_vector(std::vector<int8_t>{3, 6}, {1, 2});
  Tensor r = b.bitwise_or(i);
  EXPECT_EQ(r.dtype(), dtypes::int8);
  EXPECT_ALLEQUAL(r.to_vector<int8_t>(), (std::vector<int8_t>{3, 7, 3, 6}));
}

TEST(DtypeBool, ArithmeticStaysBoolOrPromotesWithInts) {
  Tensor a = Tensor::from_vector(std::vector<bool>{true, false, true, false});
  Tensor b = Tensor::from_vector(std::vector<bool>{true, true, false, false});
  Tensor s = a + b;  // bool + bool: tinygrad keeps bool (logical or)
  EXPECT_EQ(s.dtype(), dtypes::bool_);
  EXPECT_ALLEQUAL(s.to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  Tensor m = a * b;  // logical and
  EXPECT_ALLEQUAL(m.to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  Tensor i = a * 5;
  EXPECT_EQ(i.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(i.to_vector<int32_t>(), (std::vector<int32_t>{5, 0, 5, 0}));
}

// ---- casts ----------------------------------------------------------------------------------------

TEST(DtypeCast, FloatToIntTruncatesTowardZero) {
  std::vector<float> x{-2.7f, -0.5f, 0.0f, 0.9f, 2.5f, 127.0f, -128.0f};
  Tensor t = f32(x, {7});
  std::vector<int32_t> r32;
  std::vector<int8_t> r8;
  for (float v : x) {
    r32.push_back(static_cast<int32_t>(v));
    r8.push_back(static_cast<int8_t>(v));
  }
  EXPECT_ALLEQUAL(t.cast(dtypes::int32).to_vector<int32_t>(), r32);
  EXPECT_ALLEQUAL(t.cast(dtypes::int8).to_vector<int8_t>(), r8);
  EXPECT_ALLEQUAL(t.cast(dtypes::int64).to_vector<int64_t>(), r32);
}

TEST(DtypeCast, FloatToUnsignedInRange) {
  Tensor t = f32({0.0f, 1.9f, 255.0f, 65535.0f}, {4});
  EXPECT_ALLEQUAL(t.cast(dtypes::uint32).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 1, 255, 65535}));
  EXPECT_ALLEQUAL(t.shrink({{0, 3}}).cast(dtypes::uint8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 255}));
}

TEST(DtypeCast, NarrowingIntsWrap) {
  Tensor t = Tensor::from_vector(std::vector<int32_t>{300, -129, 127, -1, 65536 + 5});
  EXPECT_ALLEQUAL(t.cast(dtypes::int8).to_vector<int8_t>(), (std::vector<int8_t>{44, 127, 127, -1, 5}));
  EXPECT_ALLEQUAL(t.cast(dtypes::uint8).to_vector<uint8_t>(), (std::vector<uint8_t>{44, 127, 127, 255, 5}));
  EXPECT_ALLEQUAL(t.cast(dtypes::uint16).to_vector<uint16_t>(), (std::vector<uint16_t>{300, 65407, 127, 65535, 5}));
}

TEST(DtypeCast, WideningSignAndZeroExtends) {
  Tensor s = Tensor::from_vector(std::vector<int8_t>{-1, -128, 5});
  EXPECT_ALLEQUAL(s.cast(dtypes::int64).to_vector<int64_t>(), (std::vector<int64_t>{-1, -128, 5}));
  EXPECT_ALLEQUAL(s.cast(dtypes::uint32).to_vector<uint32_t>(), (std::vector<uint32_t>{0xffffffffu, 0xffffff80u, 5}));
  Tensor u = Tensor::from_vector(std::vector<uint8_t>{255, 128});
  EXPECT_ALLEQUAL(u.cast(dtypes::int32).to_vector<int32_t>(), (std::vector<int32_t>{255, 128}));
  EXPECT_ALLEQUAL(u.cast(dtypes::int16).to_vector<int16_t>(), (std::vector<int16_t>{255, 128}));
}

TEST(DtypeCast, ToAndFromBool) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = f32({0.0f, -0.0f, 0.5f, -3.0f, nan}, {5});
  EXPECT_ALLEQUAL(f.cast(dtypes::bool_).to_vector<bool>(), (std::vector<bool>{false, false, true, true, true}));
  Tensor i = Tensor::from_vector(std::vector<int64_t>{0, 1, -1, int64_t{1} << 40});
  EXPECT_ALLEQUAL(i.cast(dtypes::bool_).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  Tensor b = Tensor::from_vector(std::vector<bool>{true, false});
  EXPECT_ALLEQUAL(b.cast(dtypes::float32).to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_ALLEQUAL(b.cast(dtypes::uint64).to_vector<uint64_t>(), (std::vector<uint64_t>{1, 0}));
}

TEST(DtypeCast, Float64ToFloat32Rounds) {
  std::vector<double> x{1.0 + 1e-10, 0.1, 1e39, -1e-50};
  std::vector<float> ref;
  for (double v : x) ref.push_back(static_cast<float>(v));
  auto got = Tensor::from_vector(x).cast(dtypes::float32).to_vector<float>();
  EXPECT_EQ(got, ref);
}

TEST(DtypeCast, Int64ToFloat64) {
  std::vector<int64_t> x{int64_t{1} << 53, -(int64_t{1} << 60), 123456789012345};
  std::vector<double> ref(x.begin(), x.end());
  EXPECT_EQ(Tensor::from_vector(x).cast(dtypes::float64).to_vector<double>(), ref);
  std::vector<uint64_t> u{~0ull, 1ull << 63};
  EXPECT_EQ(Tensor::from_vector(u).cast(dtypes::float64).to_vector<double>(), (std::vector<double>{double(~0ull), double(1ull << 63)}));
}

TEST(DtypeCast, Float16RoundingAndRange) {
  // 1 + 2^-10 is exact in float16; 1 + 2^-12 rounds to 1; 65504 is the largest; 1e5 overflows.
  std::vector<float> x{1.0f + 0x1p-10f, 1.0f + 0x1p-12f, 65504.0f, 1e5f, -1e5f, 0x1p-24f, 0.1f};
  Tensor h = f32(x, {7}).cast(dtypes::float16);
  auto back = test::as_f32(h);
  EXPECT_EQ(back[0], 1.0f + 0x1p-10f);
  EXPECT_EQ(back[1], 1.0f);
  EXPECT_EQ(back[2], 65504.0f);
  EXPECT_TRUE(std::isinf(back[3]) && back[3] > 0);
  EXPECT_TRUE(std::isinf(back[4]) && back[4] < 0);
  EXPECT_EQ(back[5], 0x1p-24f);  // the smallest subnormal
  EXPECT_NEAR(back[6], 0.1f, 1e-4);
  EXPECT_EQ(h.to_vector<uint16_t>()[2], 0x7bff);
}

TEST(DtypeCast, BFloat16Rounding) {
  std::vector<float> x{1.0f + 0x1p-7f, 1.0f + 0x1p-9f, 3.0e38f, -2.5f};
  auto back = test::as_f32(f32(x, {4}).cast(dtypes::bfloat16));
  EXPECT_EQ(back[0], 1.0f + 0x1p-7f);
  EXPECT_EQ(back[1], 1.0f);
  EXPECT_NEAR(back[2], 3.0e38f, 3.0e38f * 1e-2);
  EXPECT_EQ(back[3], -2.5f);
}

TEST(DtypeCast, Float16ToIntAndFloat64) {
  Tensor h = f32({-3.75f, 2.5f, 100.0f}, {3}).cast(dtypes::float16);
  EXPECT_ALLEQUAL(h.cast(dtypes::int32).to_vector<int32_t>(), (std::vector<int32_t>{-3, 2, 100}));
  EXPECT_EQ(h.cast(dtypes::float64).to_vector<double>(), (std::vector<double>{-3.75, 2.5, 100.0}));
}

TEST(DtypeCast, NonContiguousInputAndSameDtype) {
  Tensor t = f32({1.5f, -2.5f, 3.5f, -4.5f}, {2, 2});
  EXPECT_ALLEQUAL(t.transpose().flip({0}).cast(dtypes::int32).to_vector<int32_t>(), (std::vector<int32_t>{-2, -4, 1, 3}));
  EXPECT_EQ(t.cast(dtypes::float32).uop(), t.uop());  // a cast to the same dtype is a no-op
}

// ---- bitcasts -------------------------------------------------------------------------------------

TEST(DtypeBitcast, Float32ToInt32Bits) {
  std::vector<float> x{1.0f, -0.0f, 0.1f, std::numeric_limits<float>::infinity()};
  std::vector<int32_t> ref;
  for (float v : x) ref.push_back(std::bit_cast<int32_t>(v));
  Tensor b = f32(x, {4}).bitcast(dtypes::int32);
  EXPECT_EQ(b.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(b.to_vector<int32_t>(), ref);
  EXPECT_ALLEQUAL(f32(x, {4}).bitcast(dtypes::uint32).to_vector<uint32_t>(),
                  (std::vector<uint32_t>{0x3f800000u, 0x80000000u, std::bit_cast<uint32_t>(0.1f), 0x7f800000u}));
}

TEST(DtypeBitcast, ThroughArithmetic) {
  // The next float above x: its bits plus one.
  std::vector<float> x{1.0f, 3.5f, 1e-3f};
  Tensor n = (f32(x, {3}).bitcast(dtypes::int32) + 1).bitcast(dtypes::float32);
  std::vector<float> ref;
  for (float v : x) ref.push_back(std::nextafter(v, 2e30f));
  EXPECT_EQ(n.to_vector<float>(), ref);
}

TEST(DtypeBitcast, OtherWidths) {
  Tensor i8 = Tensor::from_vector(std::vector<int8_t>{-1, -128, 5}).bitcast(dtypes::uint8);
  EXPECT_ALLEQUAL(i8.to_vector<uint8_t>(), (std::vector<uint8_t>{255, 128, 5}));
  Tensor d = Tensor::from_vector(std::vector<double>{1.0, -2.0}).bitcast(dtypes::uint64);
  EXPECT_EQ(d.to_vector<uint64_t>(), (std::vector<uint64_t>{std::bit_cast<uint64_t>(1.0), std::bit_cast<uint64_t>(-2.0)}));
  Tensor h = Tensor::from_vector(std::vector<int16_t>{0x3c00, static_cast<int16_t>(0xc400)}).bitcast(dtypes::float16);
  EXPECT_ALLCLOSE(test::as_f32(h), (std::vector<float>{1.0f, -4.0f}), 0, 0);
  Tensor bf = Tensor::from_vector(std::vector<uint16_t>{0x3f80, 0x4040}).bitcast(dtypes::bfloat16);
  EXPECT_ALLCLOSE(test::as_f32(bf), (std::vector<float>{1.0f, 3.0f}), 0, 0);
}

TEST(DtypeBitcast, NonContiguousInput) {
  std::vector<int32_t> x{std::bit_cast<int32_t>(1.0f), std::bit_cast<int32_t>(2.0f), std::bit_cast<int32_t>(3.0f),
                         std::bit_cast<int32_t>(4.0f)};
  Tensor b = Tensor::from_vector(x, {2, 2}).transpose().bitcast(dtypes::float32);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
}

}  // namespace
}  // namespace lathe
