// Gates as loop bounds (codegen/gate_bounds.hpp): a reduction loop every reduction over which is
// its identity outside a bound on the loop runs only inside the bound, and the bound leaves the
// gates; a loop some reduction needs whole keeps them. What the changed kernels compute is checked
// against plain loops here and in tests/tensor/nn_test (convolutions and pools through padding).
#include <gtest/gtest.h>

#include "codegen/gate_bounds.hpp"
#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "opt/heuristic.hpp"
#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

int count(const UOpPtr& ast, bool (*is)(const UOp&)) {
  int n = 0;
  for (const UOpPtr& u : toposort(ast)) n += is(*u);
  return n;
}
bool gated_load(const UOp& u) { return u.op() == Ops::LOAD && u.src(0)->op() == Ops::INDEX && u.src(0)->src().size() == 3; }
bool bounded_loop(const UOp& u) { return u.op() == Ops::RANGE && !u.src(0)->is_const(); }
bool select(const UOp& u) { return u.op() == Ops::WHERE; }

TEST(GateBounds, AConvolutionsTapsBecomeTheBoundsOfItsWindowLoops) {
  Tensor y = test::random_tensor({1, 16, 5, 7}, 1).conv2d(test::random_tensor({16, 16, 3, 3}, 2), std::nullopt, {1, 1}, {1, 1});
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  ASSERT_GT(count(ast, gated_load), 0) << "the convolution reads its padding through gates";
  UOpPtr out = gates_as_loop_bounds(ast);
  EXPECT_EQ(count(out, gated_load), 0) << print_graph(out);
  EXPECT_EQ(count(out, bounded_loop), 2) << "the kernel row and column loops";
}

TEST(GateBounds, AMaxPoolsWindowSkipsItsPaddingInsteadOfSelectingMinusInfinity) {
  Tensor y = test::random_tensor({1, 3, 9, 8}, 3).max_pool2d({3, 3}, std::pair<int64_t, int64_t>{2, 2}, {1, 1});
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  UOpPtr out = gates_as_loop_bounds(ast);
  EXPECT_EQ(count(out, gated_load), 0) << print_graph(out);
  EXPECT_EQ(count(out, select), 0) << print_graph(out);
  EXPECT_EQ(count(out, bounded_loop), 2);
}

// sum(pad(x) + y): the padding adds y's values, so the loop stays whole and gated.
TEST(GateBounds, ALoopWhoseTermsAreNotAllGatedStaysWhole) {
  Tensor x = test::random_tensor({8}, 4), y = test::random_tensor({10}, 5);
  UOpPtr ast = optimizer_input(test::kernel_ast((x.pad({{1, 1}}) + y).sum()));
  EXPECT_EQ(gates_as_loop_bounds(ast), ast);
}

// sum(pad(x) * y) / sum(y): the scheduler gives each reduction a loop of its own, and the gated
// one runs over [1, 9) ungated; made to share one loop, the loop stays whole, as the other reduction needs it.
TEST(GateBounds, ALoopAnotherReductionNeedsWholeStaysWhole) {
  std::vector<float> xv = test::data(8, 6), yv = test::data(10, 7);
  Tensor x = Tensor::from_vector(xv, {8}), y = Tensor::from_vector(yv, {10});
  Tensor t = (x.pad({{1, 1}}) * y).sum() / y.sum();
  UOpPtr ast = optimizer_input(test::kernel_ast(t));
  EXPECT_EQ(count(gates_as_loop_bounds(ast), gated_load), 0) << "the gated loop runs over [1, 9)";
  std::vector<UOpPtr> loops;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::RANGE) loops.push_back(u);
  ASSERT_EQ(loops.size(), 2u);
  UOpPtr shared = substitute(ast, {{loops[1].get(), loops[0]}});
  EXPECT_EQ(gates_as_loop_bounds(shared), shared) << print_graph(shared);
  double num = 0, den = 0;
  for (size_t i = 0; i < 10; ++i) {
    den += yv[i];
    if (i >= 1 && i <= 8) num += double(xv[i - 1]) * yv[i];
  }
  EXPECT_NEAR(t.to_vector<float>()[0], num / den, 1e-4 * std::abs(num / den) + 1e-5);
}

// With an AVX-512 tile (channels in lanes, a row of pixels unrolled) the row gates are bounds of
// the kernel-row loop; only the row's first and last pixels keep a column gate.
TEST(GateBounds, ATiledConvolutionKeepsGatesOnlyOnItsEdgePixels) {
  Tensor y = test::random_tensor({1, 16, 8, 8}, 8).conv2d(test::random_tensor({32, 16, 3, 3}, 9), std::nullopt, {1, 1}, {1, 1});
  UOpPtr ast = test::kernel_ast(y);
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), Target{64, 32, 2});
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
  int input_loads = 0;
  for (const UOpPtr& u : toposort(p.ast))
    input_loads += u->op() == Ops::LOAD && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL && u->dtype().count() == 1;
  EXPECT_GE(count(p.ast, bounded_loop), 1) << to_string(opts);
  EXPECT_LE(count(p.ast, gated_load), 2) << to_string(opts) << " of " << input_loads << " input loads";
  ExecutionPlan plan = test::one_kernel_plan(y);  // and that tile computes what the unoptimized kernel does
  EXPECT_TRUE(test::close(test::run_with(plan, opts), test::reference(plan), 1e-5)) << to_string(opts);
}

// A max pool over channel blocks with 16 channels in lanes and two output pixels unrolled (an
// AVX-512 tile): its window gates select between vectors and -inf on every lane alike (a splat of
// one scalar gate), and those still bound the window's row loop; the selects the bounds leave on
// `true` are gone. That kernel, run, pools as plain loops do.
TEST(GateBounds, AVectorSelectOnOneScalarGateBoundsItsLoop) {
  std::vector<float> xv = test::data(32 * 64, 10);
  Tensor y = (test::f32(xv, {1, 32, 8, 8}) * 2.0f).max_pool2d({3, 3}, std::pair<int64_t, int64_t>{2, 2}, {1, 1});
  ExecutionPlan plan = test::one_kernel_plan(y);
  const UOpPtr& ast = test::last_kernel(plan).ast;
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), Target{64, 32, 1});
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .opts = opts});
  EXPECT_GE(count(p.ast, bounded_loop), 1) << to_string(opts) << "\n" << p.src;
  for (const UOpPtr& u : toposort(p.ast)) {
    if (u->op() != Ops::WHERE || u->src(0)->op() != Ops::VECTORIZE) continue;
    bool all_true = true;
    for (const UOpPtr& s : u->src(0)->src()) all_true = all_true && s->is_const() && const_as_int(s->const_value()) == 1;
    EXPECT_FALSE(all_true) << "a select on true on every lane is left: " << p.src;
  }
  for (float& v : xv) v *= 2.0f;
  std::vector<double> want = test::pool_ref(xv, 32, 8, 8, 3, 3, 2, 2, 1, 1, true);
  EXPECT_TRUE(test::close(test::run_with(plan, opts, 1), std::vector<float>(want.begin(), want.end()), 0));
}

}  // namespace
}  // namespace lathe
