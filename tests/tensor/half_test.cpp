// 16-bit floats: every conversion a kernel makes rounds to nearest even, whatever the CPU and the
// C compiler support. The conversions are checked bit for bit against lathe's host reference
// (ir/half.hpp) and against values built to sit on or near a rounding midpoint. CTest runs this
// program again with LATHE_CPU_TARGET=x86-64-v3 (clang: no _Float16, software conversions) and
// with LATHE_CC=gcc (its _Float16), so both code paths are checked on any x86-64 machine.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ir/half.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

bool is_nan_half(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool is_nan_bf16(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

// Float bit patterns of every kind: random ones plus zeros, infinities, nan, the edges of the half
// range (overflow, the smallest normal and subnormal) and exact midpoints.
std::vector<float> float_cases() {
  std::vector<float> v;
  uint64_t s = 0x243F6A8885A308D3ull;
  for (int i = 0; i < 20000; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v.push_back(std::bit_cast<float>(static_cast<uint32_t>(s)));
    // Also values within the half range, where rounding matters most.
    v.push_back(std::ldexp(1.0f + static_cast<float>(s >> 41) * 0x1p-23f, static_cast<int>(s % 44) - 27) * ((s & 1) ? -1.0f : 1.0f));
  }
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65519.996f, 65520.0f, 65536.0f, 0x1p-14f, 0x1p-24f,
                  0x1p-25f, 0x1.8p-24f, 0x1p-26f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 1.0f + 0x1p-8f, 1.0f + 0x3p-8f})
    v.push_back(x);
  return v;
}

TEST(Float16, EveryBitPatternConvertsToFloatAndBack) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  Tensor h = Tensor::from_vector(bits).bitcast(dtypes::float16);
  std::vector<float> f = h.cast(dtypes::float32).to_vector<float>();
  std::vector<uint16_t> back = h.cast(dtypes::float32).cast(dtypes::float16).bitcast(dtypes::uint16).to_vector<uint16_t>();
  for (size_t i = 0; i < bits.size(); ++i) {
    float ref = detail::half_to_float(bits[i]);
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(f[i])) << "half bits " << i;
      EXPECT_TRUE(is_nan_half(back[i])) << "half bits " << i;
      continue;
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(f[i]), std::bit_cast<uint32_t>(ref)) << "half bits " << i;
    EXPECT_EQ(back[i], bits[i]) << "half bits " << i;
  }
}

// Every case of float_cases() cast to `dt` gives the host reference's bits (any nan for a nan).
void expect_casts_like(DType dt, uint16_t (*reference)(float), bool (*is_nan)(uint16_t)) {
  std::vector<float> x = float_cases();
  std::vector<uint16_t> got = Tensor::from_vector(x).cast(dt).bitcast(dtypes::uint16).to_vector<uint16_t>();
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t ref = reference(x[i]);
    if (is_nan(ref)) EXPECT_TRUE(is_nan(got[i])) << x[i];
    else EXPECT_EQ(got[i], ref) << "float " << x[i] << " (bits " << std::bit_cast<uint32_t>(x[i]) << ")";
  }
}

TEST(Float16, FloatRoundsToNearestEven) { expect_casts_like(dtypes::float16, detail::float_to_half, is_nan_half); }

// Doubles a hair above and below the midpoint between two neighbouring halves, and on it: a
// conversion that rounds to float first lands on the midpoint and then picks the even neighbour,
// which is wrong for the values off the midpoint.
TEST(Float16, DoubleRoundsOnceNotThroughFloat) {
  std::vector<double> x;
  std::vector<uint16_t> ref;
  for (uint32_t h = 0; h < 0x7bffu; h += 37) {
    double lo = detail::half_to_float(static_cast<uint16_t>(h)), hi = detail::half_to_float(static_cast<uint16_t>(h + 1));
    double mid = (lo + hi) / 2, eps = (hi - lo) * 0x1p-20;
    for (double sign : {1.0, -1.0}) {
      uint16_t s = sign < 0 ? 0x8000u : 0;
      x.insert(x.end(), {sign * (mid + eps), sign * (mid - eps), sign * mid});
      ref.insert(ref.end(), {static_cast<uint16_t>((h + 1) | s), static_cast<uint16_t>(h | s),
                             static_cast<uint16_t>(((h & 1) ? h + 1 : h) | s)});
    }
  }
  x.insert(x.end(), {65519.999, 65520.0, 1e300, -1e300, 0x1p-25 + 0x1p-60, 0x1p-25, 1e-300});
  ref.insert(ref.end(), {0x7bff, 0x7c00, 0x7c00, 0xfc00, 0x0001, 0x0000, 0x0000});
  std::vector<uint16_t> got = Tensor::from_vector(x).cast(dtypes::float16).bitcast(dtypes::uint16).to_vector<uint16_t>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], ref[i]) << "double " << x[i];
}

TEST(Float16, IntegersConvertExactlyOrOverflow) {
  std::vector<int64_t> x{0, 1, -7, 2048, 2049, 2051, 65504, 65519, 65520, -65520, int64_t{1} << 40, INT64_MIN};
  std::vector<uint16_t> ref;
  for (int64_t v : x) ref.push_back(detail::float_to_half(static_cast<float>(v)));
  EXPECT_EQ(Tensor::from_vector(x).cast(dtypes::float16).bitcast(dtypes::uint16).to_vector<uint16_t>(), ref);
}

TEST(Float16, ArithmeticRoundsEachResult) {
  // Computed in float, stored as float16: 2049 is not a half (spacing 2 above 2048), 1 + 2^-11 is
  // a tie that goes to even, and 60000 + 60000 overflows.
  Tensor a = Tensor::from_vector(std::vector<float>{2048, 1, 60000, 0.1f}).cast(dtypes::float16);
  Tensor b = Tensor::from_vector(std::vector<float>{1, 0x1p-11f, 60000, 0.2f}).cast(dtypes::float16);
  Tensor c = a + b;
  EXPECT_EQ(c.dtype(), dtypes::float16);
  std::vector<float> got = test::as_f32(c);
  EXPECT_EQ(got[0], 2048.0f);
  EXPECT_EQ(got[1], 1.0f);
  EXPECT_TRUE(std::isinf(got[2]));
  float sum = detail::half_to_float(detail::float_to_half(0.1f)) + detail::half_to_float(detail::float_to_half(0.2f));
  EXPECT_EQ(got[3], detail::half_to_float(detail::float_to_half(sum)));
}

TEST(BFloat16, FloatRoundsToNearestEven) { expect_casts_like(dtypes::bfloat16, detail::float_to_bf16, is_nan_bf16); }

TEST(BFloat16, DoubleRoundsOnceNotThroughFloat) {
  std::vector<double> x;
  std::vector<uint16_t> ref;
  for (uint32_t b = 0x0080; b < 0x7f7f; b += 97) {
    double lo = detail::bf16_to_float(static_cast<uint16_t>(b)), hi = detail::bf16_to_float(static_cast<uint16_t>(b + 1));
    double mid = (lo + hi) / 2, eps = (hi - lo) * 0x1p-24;
    x.insert(x.end(), {mid + eps, mid - eps, -(mid + eps)});
    ref.insert(ref.end(), {static_cast<uint16_t>(b + 1), static_cast<uint16_t>(b), static_cast<uint16_t>((b + 1) | 0x8000u)});
  }
  std::vector<uint16_t> got = Tensor::from_vector(x).cast(dtypes::bfloat16).bitcast(dtypes::uint16).to_vector<uint16_t>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], ref[i]) << "double " << x[i];
}

TEST(BFloat16, EveryBitPatternConvertsToFloat) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  std::vector<float> f = Tensor::from_vector(bits).bitcast(dtypes::bfloat16).cast(dtypes::float32).to_vector<float>();
  for (size_t i = 0; i < bits.size(); ++i) {
    float ref = detail::bf16_to_float(bits[i]);
    if (std::isnan(ref)) EXPECT_TRUE(std::isnan(f[i])) << i;
    else EXPECT_EQ(std::bit_cast<uint32_t>(f[i]), std::bit_cast<uint32_t>(ref)) << "bf16 bits " << i;
  }
}

}  // namespace
}  // namespace lathe
