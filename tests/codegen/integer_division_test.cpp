// Integer division defined for every divisor (codegen/integer_division.hpp): dividing by 0, and
// the minimum value by -1, gives a value instead of killing the process with SIGFPE, also where
// the divisor is 0 only in lanes a gate discards.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "codegen/integer_division.hpp"
#include "codegen/test_kernels.hpp"
#include "ir/toposort.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

Tensor idiv_of(const Tensor& a, const Tensor& b) { return detail::broadcast_alu(Ops::IDIV, {a, b}, "idiv"); }
Tensor mod_of(const Tensor& a, const Tensor& b) { return detail::broadcast_alu(Ops::MOD, {a, b}, "mod"); }

TEST(IntegerDivision, ByZeroIsZeroAndTheMinimumByMinusOneWraps) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> x{7, -7, 5, kMin, 9, 0, 13}, d{0, 2, -1, -1, 0, 3, -4};
  Tensor a = Tensor::from_vector(x, {7}), b = Tensor::from_vector(d, {7});
  EXPECT_EQ(idiv_of(a, b).to_vector<int64_t>(), (std::vector<int64_t>{0, -3, -5, kMin, 0, 0, -3}));
  EXPECT_EQ(mod_of(a, b).to_vector<int64_t>(), (std::vector<int64_t>{0, -1, 0, 0, 0, 0, 1}));
  std::vector<uint32_t> ux{7, 9, 4000000000u}, ud{0, 2, 4000000000u};
  Tensor ua = Tensor::from_vector(ux, {3}), ub = Tensor::from_vector(ud, {3});
  EXPECT_EQ(idiv_of(ua, ub).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 4, 1}));
  EXPECT_EQ(mod_of(ua, ub).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 1, 0}));
}

// Padding the divisor with zeros: the padded lanes' quotient is discarded by the gate, but the
// division runs on every lane of a vector.
TEST(IntegerDivision, ADivisorAGateMakesZeroIsSafe) {
  std::vector<int32_t> x(19), d(11);
  for (int i = 0; i < 19; ++i) x[i] = 3 * i - 20;
  for (int i = 0; i < 11; ++i) d[i] = i % 4 + 1;
  Tensor b = Tensor::from_vector(d, {11}).pad({{4, 4}});
  std::vector<int32_t> got = idiv_of(Tensor::from_vector(x, {19}), b).to_vector<int32_t>();
  for (int i = 0; i < 19; ++i) EXPECT_EQ(got[i], i < 4 || i >= 15 ? 0 : x[i] / d[i - 4]) << i;
}

// A divisor whose range excludes 0 and -1 (a constant 4) is left alone; a loaded one is guarded.
TEST(IntegerDivision, ADivisorThatCannotBeZeroIsUnchanged) {
  Tensor a = Tensor::from_vector(std::vector<int32_t>{5, 6, 7}, {3});
  UOpPtr ast = test::kernel_ast(idiv_of(a, Tensor::full({3}, int64_t{4}, dtypes::int32)));
  EXPECT_EQ(define_integer_division(ast), ast);
  UOpPtr loaded = test::kernel_ast(idiv_of(a, a));
  EXPECT_NE(define_integer_division(loaded), loaded);
  // A constant divisor of 0 or -1 is guarded too (and folds, at no point dividing by zero).
  EXPECT_EQ(idiv_of(a, Tensor::full({3}, int64_t{0}, dtypes::int32)).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(mod_of(a, Tensor::full({3}, int64_t{0}, dtypes::int32)).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(idiv_of(a, Tensor::full({3}, int64_t{-1}, dtypes::int32)).to_vector<int32_t>(), (std::vector<int32_t>{-5, -6, -7}));
}

}  // namespace
}  // namespace lathe
