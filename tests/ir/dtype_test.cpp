#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lathe/dtype.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

using namespace dtypes;

struct ScalarRow {
  DType dt;
  const char* name;
  const char* c_name;
  int64_t itemsize;
  ConstValue min, max;
};

TEST(DType, ScalarTable) {
  const double inf = std::numeric_limits<double>::infinity();
  const ScalarRow rows[] = {
      {bool_, "bool", "_Bool", 1, false, true},
      {int8, "int8", "signed char", 1, int64_t{-128}, int64_t{127}},
      {uint8, "uint8", "unsigned char", 1, uint64_t{0}, uint64_t{255}},
      {int16, "int16", "short", 2, int64_t{-32768}, int64_t{32767}},
      {uint16, "uint16", "unsigned short", 2, uint64_t{0}, uint64_t{65535}},
      {int32, "int32", "int", 4, int64_t{-2147483648LL}, int64_t{2147483647}},
      {uint32, "uint32", "unsigned int", 4, uint64_t{0}, uint64_t{4294967295ULL}},
      {int64, "int64", "long long", 8, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
      {uint64, "uint64", "unsigned long long", 8, uint64_t{0}, std::numeric_limits<uint64_t>::max()},
      {float16, "float16", "_Float16", 2, -inf, inf},
      {bfloat16, "bfloat16", "__bf16", 2, -inf, inf},
      {float32, "float32", "float", 4, -inf, inf},
      {float64, "float64", "double", 8, -inf, inf},
      {index, "index", "long long", 8, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
  };
  for (const ScalarRow& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.dt.name(), r.name);
    EXPECT_STREQ(r.dt.c_name(), r.c_name);
    EXPECT_EQ(r.dt.itemsize(), r.itemsize);
    EXPECT_EQ(r.dt.min(), r.min);
    EXPECT_EQ(r.dt.max(), r.max);
    EXPECT_EQ(dtypes::from_name(r.name), r.dt);
  }
  EXPECT_EQ(dtypes::all().size(), 13u);
}

TEST(DType, Kinds) {
  EXPECT_TRUE(float16.is_float());
  EXPECT_TRUE(bfloat16.is_float());
  EXPECT_FALSE(int32.is_float());
  EXPECT_TRUE(int32.is_int());
  EXPECT_TRUE(uint8.is_unsigned());
  EXPECT_FALSE(int8.is_unsigned());
  EXPECT_TRUE(index.is_int());
  EXPECT_TRUE(index.is_index());
  EXPECT_TRUE(bool_.is_bool());
  EXPECT_FALSE(bool_.is_int());
}

TEST(DType, VectorsAndPointers) {
  DType v = float32.vec(4);
  EXPECT_EQ(v.count(), 4);
  EXPECT_EQ(v.itemsize(), 16);
  EXPECT_EQ(v.name(), "float32.vec(4)");
  EXPECT_EQ(v.scalar(), float32);
  DType p = v.ptr(AddrSpace::Local, 128);
  EXPECT_TRUE(p.is_ptr());
  EXPECT_EQ(p.itemsize(), 8);
  EXPECT_EQ(p.base(), v);
  EXPECT_EQ(p.addrspace(), AddrSpace::Local);
  EXPECT_EQ(p.ptr_size(), 128);
  EXPECT_EQ(p.name(), "float32.vec(4)*[local,128]");
  EXPECT_EQ(int8.ptr().name(), "int8*[global]");
  EXPECT_NE(float32.ptr(AddrSpace::Global), float32.ptr(AddrSpace::Local));
  EXPECT_THROW(p.ptr(), DTypeError);
  EXPECT_THROW(v.vec(2), DTypeError);
  EXPECT_THROW(float32.vec(0), DTypeError);
}

struct PromoRow {
  std::vector<DType> in;
  DType out;
};

// tinygrad's lattice: bool < {int8, uint8}; signed and unsigned climb to int64/uint64, both of
// which meet at the 16-bit floats; float16 and bfloat16 meet at float32.
TEST(DType, PromotionTable) {
  const PromoRow rows[] = {
      {{bool_}, bool_},
      {{bool_, bool_}, bool_},
      {{bool_, int8}, int8},
      {{bool_, uint8}, uint8},
      {{int8, uint8}, int16},
      {{int8, int16}, int16},
      {{uint8, int16}, int16},
      {{uint8, uint16}, uint16},
      {{int16, uint16}, int32},
      {{int32, uint32}, int64},
      {{uint32, int64}, int64},
      {{uint32, uint64}, uint64},
      {{int64, uint64}, float16},
      {{int8, uint64}, float16},
      {{int32, float16}, float16},
      {{int64, bfloat16}, bfloat16},
      {{float16, bfloat16}, float32},
      {{float16, float32}, float32},
      {{bfloat16, float64}, float64},
      {{bool_, float32}, float32},
      {{int32, float32}, float32},
      {{uint8, int32, float16}, float16},
      {{float32, float64}, float64},
  };
  for (const PromoRow& r : rows) {
    std::string label;
    for (DType d : r.in) label += d.name() + " ";
    SCOPED_TRACE(label);
    EXPECT_EQ(least_upper_dtype(r.in), r.out);
    std::vector<DType> reversed(r.in.rbegin(), r.in.rend());
    EXPECT_EQ(least_upper_dtype(reversed), r.out);
  }
}

TEST(DType, PromotionRejectsNonTensorTypes) {
  EXPECT_THROW(least_upper_dtype({index, int32}), DTypeError);
  EXPECT_THROW(least_upper_dtype({float32.ptr()}), DTypeError);
  EXPECT_THROW(least_upper_dtype({void_}), DTypeError);
  EXPECT_THROW(least_upper_dtype(std::span<const DType>{}), DTypeError);
}

TEST(DType, FromNameRejectsUnknown) {
  try {
    dtypes::from_name("float33");
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("float33"), std::string::npos);
  }
}

TEST(DType, CastConstWrapsAndRounds) {
  EXPECT_EQ(cast_const(int64_t{300}, uint8), ConstValue(uint64_t{44}));
  EXPECT_EQ(cast_const(int64_t{-1}, uint16), ConstValue(uint64_t{65535}));
  EXPECT_EQ(cast_const(int64_t{200}, int8), ConstValue(int64_t{-56}));
  EXPECT_EQ(cast_const(uint64_t{0xffffffffffffffffULL}, int64), ConstValue(int64_t{-1}));
  EXPECT_EQ(cast_const(3.9, int32), ConstValue(int64_t{3}));
  EXPECT_EQ(cast_const(-3.9, int32), ConstValue(int64_t{-3}));
  EXPECT_EQ(cast_const(int64_t{2}, bool_), ConstValue(true));
  EXPECT_EQ(cast_const(0.0, bool_), ConstValue(false));
  EXPECT_EQ(cast_const(0.1, float32), ConstValue(static_cast<double>(0.1f)));
  EXPECT_EQ(cast_const(1.0 / 3.0, float16), ConstValue(0.333251953125));
  EXPECT_EQ(cast_const(65520.0, float16), ConstValue(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(cast_const(1.00390625, bfloat16), ConstValue(1.0));  // ties to even
  EXPECT_EQ(cast_const(true, float32), ConstValue(1.0));
}

// A double just above a 16-bit midpoint rounds up, once, as a kernel's cast does (codegen/
// half_casts): through float it would land on the midpoint and round to even, down.
TEST(DType, CastConstToSixteenBitsRoundsOnce) {
  double above_half_midpoint = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(cast_const(above_half_midpoint, float16), ConstValue(1.0 + std::ldexp(1.0, -10)));
  EXPECT_EQ(cast_const(-above_half_midpoint, float16), ConstValue(-1.0 - std::ldexp(1.0, -10)));
  double above_bf16_midpoint = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(cast_const(above_bf16_midpoint, bfloat16), ConstValue(1.0 + std::ldexp(1.0, -7)));
  EXPECT_EQ(cast_const(1e300, float16), ConstValue(std::numeric_limits<double>::infinity()));  // past float's range too
  EXPECT_EQ(cast_const(1e-300, bfloat16), ConstValue(0.0));  // below the smallest bfloat16: zero
}

}  // namespace
}  // namespace lathe
