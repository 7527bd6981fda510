// float32 transcendentals as polynomials (codegen/transcendental.hpp): which exp2 a kernel gets.
// The values are checked in tests/tensor/elementwise_test.cpp, on every backend and target.
#include <gtest/gtest.h>

#include "codegen/test_kernels.hpp"
#include "codegen/transcendental.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

using test::kernel_ast;

// Whether the decomposed kernel of `t` takes exp2's underflow step: a comparison with -150.
bool takes_the_underflow_step(const Tensor& t) {
  for (const UOpPtr& u : toposort(decompose_transcendentals(kernel_ast(t))))
    if (u->op() == Ops::CONST && u->dtype() == dtypes::float32 && const_as_double(u->const_value()) == -150.0)
      return true;
  return false;
}

// How many exp2 polynomials the decomposed kernel of `t` evaluates: the nodes that read the
// polynomial's first coefficient, or its double (the exp2 that 1 is added to).
size_t exp2_polynomials(const Tensor& t) {
  size_t n = 0;
  for (const UOpPtr& u : toposort(decompose_transcendentals(kernel_ast(t))))
    for (const UOpPtr& s : u->src()) {
      if (s->op() != Ops::CONST || s->dtype() != dtypes::float32) continue;
      double c = const_as_double(s->const_value());
      n += c == static_cast<double>(1.535336188319500e-4f) || c == static_cast<double>(2 * 1.535336188319500e-4f);
    }
  return n;
}

// How many selects the decomposed kernel of `t` makes.
size_t selects(const Tensor& t) {
  size_t n = 0;
  for (const UOpPtr& u : toposort(decompose_transcendentals(kernel_ast(t)))) n += u->op() == Ops::WHERE;
  return n;
}

// An exp2 that 1 is added to selects three times: its two clamps (each compares the value it
// selects, one min or max instruction) and NaN. It tests neither where the rounding lands at the
// top of the range (n = 128, scaled as 2p * 2^(n - 1)) nor below it. The whole exp2 selects
// the underflow twice, its clamp at 128, NaN, and the two-step scale below n = -125 three times.
TEST(Transcendental, AnExp2ThatOneIsAddedToSelectsOnlyItsClampsAndNaN) {
  Tensor x = Tensor::from_vector(std::vector<float>{-200.0f, 0.0f, 200.0f});
  EXPECT_EQ(selects(x.exp2() + 1.0f), 3u);
  EXPECT_EQ(selects(x.exp2()), 7u);
}

// An exp2 that 1 is added to, and that nothing else reads, skips the underflow and subnormal
// steps (1 + 2^x is 1 below -24); an exp2 read alone, or by the sum and another reader, keeps them
// (computed once, for both).
TEST(Transcendental, AnExp2ThatOneIsAddedToSkipsTheSubnormalSteps) {
  Tensor x = Tensor::from_vector(std::vector<float>{-200.0f, 0.5f, 3.0f}, {3});
  EXPECT_FALSE(takes_the_underflow_step(x.exp2() + 1.0f));
  EXPECT_FALSE(takes_the_underflow_step(1.0f + x.exp2()));
  EXPECT_FALSE(takes_the_underflow_step(x.sigmoid()));
  EXPECT_TRUE(takes_the_underflow_step(x.exp2()));
  EXPECT_TRUE(takes_the_underflow_step(x.exp2() + 2.0f));
  EXPECT_TRUE(takes_the_underflow_step((x.exp2() + 1.0f) * x.exp2()));
  EXPECT_EQ(exp2_polynomials((x.exp2() + 1.0f) * x.exp2()), 1u);
  EXPECT_EQ(exp2_polynomials(x.sigmoid() * x.exp2()), 2u);  // two exponents: -x and x
}

}  // namespace
}  // namespace lathe
