// Optimization actions: each one, alone and in lists, gives the unoptimized kernel's results on
// odd sizes (primes, sizes no tile divides, 1); one that does not fit is an OptError.
#include <gtest/gtest.h>

#include <thread>

#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::axis_sized;
using test::close;
using test::grid_data;
using test::one_kernel_plan;
using test::reference;
using test::run_with;

Tensor matrix(int64_t rows, int64_t cols, uint64_t seed) {
  return Tensor::from_vector(grid_data(rows * cols, seed), {rows, cols});
}

TEST(Action, PrintsAndParsesBack) {
  std::vector<Opt> opts{{OptOp::UPCAST, 1, 16}, {OptOp::UNROLL, 2, 4}, {OptOp::TILE, 0, 8},
                        {OptOp::PADTO, 3, 32}, {OptOp::SWAP, 0, 1},  {OptOp::THREAD, 0, 2}, {OptOp::GROUP, 4, 3}, {OptOp::TC, 2, 0}, {OptOp::LOCAL, 1, 64}};
  EXPECT_EQ(to_string(opts), "UPCAST(1, 16) UNROLL(2, 4) TILE(0, 8) PADTO(3, 32) SWAP(0, 1) THREAD(0, 2) GROUP(4, 3) TC(2, 0) LOCAL(1, 64)");
  EXPECT_EQ(parse_opts(to_string(opts)), opts);
  EXPECT_TRUE(parse_opts("").empty());
  EXPECT_THROW(parse_opts("UPCAST(1)"), OptError);
  EXPECT_THROW(parse_opts("SPLAT(1, 2)"), OptError);
  EXPECT_THROW(parse_opts("UPCAST(x, 2)"), OptError);
}

// A 13x7 @ 7x48 matmul: rows prime, the reduction prime, columns three vectors of 16.
struct Matmul : ::testing::Test {
  ExecutionPlan plan = one_kernel_plan(matrix(13, 7, 1).matmul(matrix(7, 48, 2)));
  int64_t m = axis_sized(plan, 13), n = axis_sized(plan, 48), k = axis_sized(plan, 7, true);
  std::vector<float> want = reference(plan);

  void SetUp() override {
    ASSERT_GE(m, 0);
    ASSERT_GE(n, 0);
    ASSERT_GE(k, 0);
  }
  ::testing::AssertionResult same(const std::vector<Opt>& opts) { return close(run_with(plan, opts), want); }
};

TEST_F(Matmul, UpcastAsVectorLanesAndUnrolledCopies) {
  EXPECT_TRUE(same({{OptOp::UPCAST, n, 16}}));
  EXPECT_TRUE(same({{OptOp::UPCAST, n, 16}, {OptOp::UPCAST, n, 3}}));
  EXPECT_TRUE(same({{OptOp::UPCAST, n, 3}}));
  EXPECT_TRUE(same({{OptOp::UPCAST, m, 13}}));
  EXPECT_TRUE(same({{OptOp::UPCAST, n, 48}}));
}

TEST_F(Matmul, UnrollTheReduction) {
  EXPECT_TRUE(same({{OptOp::UNROLL, k, 7}}));
  EXPECT_TRUE(same({{OptOp::UPCAST, n, 16}, {OptOp::UNROLL, k, 7}}));
}

TEST_F(Matmul, TileSwapAndThreads) {
  EXPECT_TRUE(same({{OptOp::TILE, n, 16}}));
  EXPECT_TRUE(same({{OptOp::SWAP, m, n}}));
  EXPECT_TRUE(same({{OptOp::THREAD, m, 2}}));   // 13 rows: 7 and 6
  EXPECT_TRUE(same({{OptOp::THREAD, m, 13}}));  // more threads than cores
  EXPECT_TRUE(same({{OptOp::SWAP, m, n}, {OptOp::THREAD, m, 2}}));
  // Loops of the same size trade places too (each one's new range is the other's old one).
  ExecutionPlan square = one_kernel_plan(matrix(16, 5, 3).matmul(matrix(5, 32, 4)));
  int64_t rows = axis_sized(square, 16), cols = axis_sized(square, 32);
  std::vector<Opt> tile{{OptOp::UPCAST, cols, 16}, {OptOp::UPCAST, rows, 8}, {OptOp::SWAP, rows, cols}};  // 2 and 2 left
  EXPECT_TRUE(close(run_with(square, tile), reference(square)));
}

TEST_F(Matmul, PadToTheTileThenUpcast) {
  EXPECT_TRUE(same({{OptOp::PADTO, m, 8}}));
  EXPECT_TRUE(same({{OptOp::PADTO, m, 8}, {OptOp::UPCAST, m, 8}}));
  EXPECT_TRUE(same({{OptOp::PADTO, k, 4}, {OptOp::UNROLL, k, 4}}));  // the reduction adds 0 past its end
  EXPECT_TRUE(same({{OptOp::PADTO, n, 32}, {OptOp::UPCAST, n, 32}, {OptOp::THREAD, m, 2}}));
}

TEST_F(Matmul, WhatDoesNotFitIsAnError) {
  auto fails = [&](const Opt& o, const char* why) { test::expect_refused(plan, {o}, why); };
  fails({OptOp::UPCAST, m, 4}, "not a multiple of 4");
  fails({OptOp::UPCAST, k, 7}, "is a reduction's");
  fails({OptOp::UNROLL, n, 16}, "is not a reduction's");
  fails({OptOp::UPCAST, 99, 2}, "has no loop 99");
  fails({OptOp::UPCAST, n, 1}, "not a multiple of 1");
  fails({OptOp::PADTO, n, 16}, "needs no padding");
  fails({OptOp::THREAD, n, 2}, "not the outermost loop");
  fails({OptOp::THREAD, k, 2}, "is a reduction's");
  fails({OptOp::SWAP, m, k}, "cannot trade places");
  fails({OptOp::TILE, n, 48}, "not larger than the tile");
  EXPECT_THROW(run_with(plan, {{OptOp::UPCAST, n, 16}, {OptOp::UPCAST, n, 16}}), OptError);  // 3 left
}

TEST(Action, ReductionsOtherThanSumPadWithTheirIdentity) {
  std::vector<float> data = grid_data(5 * 11, 3);
  for (float& x : data) x -= 10.0f;  // all negative: a pad of 0 would win a max
  ExecutionPlan plan = one_kernel_plan(Tensor::from_vector(data, {5, 11}).max({1}));
  int64_t k = axis_sized(plan, 11, true);
  std::vector<float> want = reference(plan);
  EXPECT_TRUE(close(run_with(plan, {{OptOp::PADTO, k, 16}, {OptOp::UNROLL, k, 16}}), want));
  EXPECT_TRUE(close(run_with(plan, {{OptOp::PADTO, k, 4}, {OptOp::UNROLL, k, 4}}), want));
}

TEST(Action, NonContiguousInputsAndBroadcasts) {
  // (x^T + row) over a transposed 17x24 view: loads strided along the vector axis.
  Tensor x = matrix(24, 17, 4).transpose(0, 1);
  Tensor row = Tensor::from_vector(grid_data(24, 5), {1, 24});
  ExecutionPlan plan = one_kernel_plan((x + row).exp());
  int64_t r = axis_sized(plan, 17), c = axis_sized(plan, 24);
  std::vector<float> want = reference(plan);
  EXPECT_TRUE(close(run_with(plan, {{OptOp::UPCAST, c, 8}}), want));
  EXPECT_TRUE(close(run_with(plan, {{OptOp::UPCAST, r, 17}}), want));
  EXPECT_TRUE(close(run_with(plan, {{OptOp::PADTO, r, 4}, {OptOp::UPCAST, r, 4}, {OptOp::THREAD, r, 2}}), want));
}

TEST(Action, IntegerAndDoubleAndHalfKernels) {
  Tensor i = Tensor::from_vector(std::vector<int32_t>{1, -2, 3, 4, 5, -6, 7, 8, 9, 10, -11, 12, 13, 14, 15, 16, 17, 18}, {3, 6});
  ExecutionPlan ip = one_kernel_plan(i.sum({0}));
  EXPECT_EQ(run_with<int32_t>(ip, {{OptOp::UPCAST, axis_sized(ip, 6), 6}}), reference<int32_t>(ip));
  EXPECT_EQ(run_with<int32_t>(ip, {{OptOp::UNROLL, axis_sized(ip, 3, true), 3}}), reference<int32_t>(ip));

  Tensor d = Tensor::from_vector(grid_data(9 * 16, 6), {9, 16}).cast(dtypes::float64).realize();
  ExecutionPlan dp = one_kernel_plan((d * d).sum({1}));
  EXPECT_TRUE(close(run_with<double>(dp, {{OptOp::UNROLL, axis_sized(dp, 16, true), 8}}), reference<double>(dp), 1e-12));

  Tensor h = Tensor::from_vector(grid_data(5 * 32, 7), {5, 32}).cast(dtypes::float16).realize();
  ExecutionPlan hp = one_kernel_plan((h * 2.0f + 1.0f).cast(dtypes::float32));
  EXPECT_TRUE(close(run_with(hp, {{OptOp::UPCAST, axis_sized(hp, 5 * 32), 16}}), reference(hp)));  // one merged loop
}

TEST(Action, ConvolutionLoops) {
  // 3x3 convolution, 5 -> 6 channels over 9x11, padding 1: every loop takes every action.
  Tensor x = Tensor::from_vector(grid_data(2 * 5 * 9 * 11, 8), {2, 5, 9, 11});
  Tensor w = Tensor::from_vector(grid_data(6 * 5 * 9, 9), {6, 5, 3, 3});
  ExecutionPlan plan = one_kernel_plan(x.conv2d(w, std::nullopt, {1, 1}, {1, 1}));
  std::vector<float> want = reference(plan);
  std::vector<Loop> loops = test::loops_of(plan);
  ASSERT_EQ(loops.size(), 7u);  // batch, channels, rows, columns; input channels and the 3x3 taps
  for (const Loop& l : loops) {
    SCOPED_TRACE("loop " + std::to_string(l.axis) + " of " + std::to_string(l.size));
    OptOp split = l.reduce ? OptOp::UNROLL : OptOp::UPCAST;
    EXPECT_TRUE(close(run_with(plan, {{split, l.axis, l.size}}), want));
    if (l.size % 4) {
      EXPECT_TRUE(close(run_with(plan, {{OptOp::PADTO, l.axis, 4}, {split, l.axis, 4}}), want));
    }
    if (!l.reduce && l.size > 2 && l.size % 2 == 0) {
      EXPECT_TRUE(close(run_with(plan, {{OptOp::TILE, l.axis, 2}}), want));
    }
  }
}

// GROUP: a reduction's loop split across threads; each reduces its chunk for every output, the
// last to finish combines the partial results and stores the outputs.
TEST(ActionGroup, SplitsAReductionAcrossThreadsOverOddSizes) {
  ExecutionPlan plan = one_kernel_plan((matrix(3, 1009, 8) * 2.0f).sum({1}) * 0.5f + 1.0f);  // a prime reduction, then more
  int64_t k = axis_sized(plan, 1009, true);
  ASSERT_GE(k, 0);
  std::vector<float> want = reference(plan);
  for (int64_t n : {2, 3, 7, 17}) EXPECT_TRUE(close(run_with(plan, {{OptOp::GROUP, k, n}}, 2), want)) << n << " threads";
  EXPECT_TRUE(close(run_with(plan, {{OptOp::GROUP, k, 2}}, 1), want));  // cores one after another
  // Launched again and again: the arrivals count on across launches.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(close(run_with(plan, {{OptOp::GROUP, k, 3}}), want));

  ExecutionPlan wide = one_kernel_plan(matrix(5, 1024, 9).sum({1}));
  int64_t wk = axis_sized(wide, 1024, true), rows = axis_sized(wide, 5);
  std::vector<float> wwant = reference(wide);
  EXPECT_TRUE(close(run_with(wide, {{OptOp::UNROLL, wk, 8}, {OptOp::GROUP, wk, 3}}), wwant));  // vector partial sums per chunk
  EXPECT_TRUE(close(run_with(wide, {{OptOp::TILE, wk, 64}, {OptOp::GROUP, wk, 2}}), wwant));
  EXPECT_TRUE(close(run_with(wide, {{OptOp::PADTO, rows, 8}, {OptOp::GROUP, wk, 2}}), wwant));  // padded outputs stay unwritten
}

TEST(ActionGroup, WholeReductionsMaxAndOtherDtypes) {
  ExecutionPlan total = one_kernel_plan(matrix(1, 997, 10).sum());  // one output: no output loop
  EXPECT_TRUE(close(run_with(total, {{OptOp::GROUP, axis_sized(total, 997, true), 5}}), reference(total)));

  std::vector<float> neg = grid_data(4 * 5, 11);
  for (float& x : neg) x -= 100.0f;  // all negative: a chunk left empty must add max's identity, not 0
  ExecutionPlan mx = one_kernel_plan(Tensor::from_vector(neg, {4, 5}).max({1}));
  int64_t mk = axis_sized(mx, 5, true);
  EXPECT_TRUE(close(run_with(mx, {{OptOp::GROUP, mk, 5}}), reference(mx)));
  EXPECT_TRUE(close(run_with(mx, {{OptOp::GROUP, mk, 4}}), reference(mx)));  // chunks of 2: the last core gets none

  Tensor i = Tensor::from_vector(std::vector<int32_t>{5, -2, 3, 4, 9, -6, 7, 8, 1, 10, -11, 12, 13, 14}, {2, 7});
  ExecutionPlan ip = one_kernel_plan(i.sum({1}));
  EXPECT_EQ(run_with<int32_t>(ip, {{OptOp::GROUP, axis_sized(ip, 7, true), 3}}), reference<int32_t>(ip));

  Tensor h = Tensor::from_vector(grid_data(3 * 301, 12), {3, 301}).cast(dtypes::float16).realize();
  ExecutionPlan hp = one_kernel_plan(h.sum({1}).cast(dtypes::float32));
  EXPECT_TRUE(close(run_with(hp, {{OptOp::GROUP, axis_sized(hp, 301, true), 2}}), reference(hp), 1e-3));
}

TEST(ActionGroup, LaunchesFromTwoThreadsAtOnceEachGetTheirOwnResult) {
  ExecutionPlan a = one_kernel_plan(matrix(64, 50021, 13).sum({1})), b = one_kernel_plan(matrix(64, 50021, 14).sum({1}));
  std::vector<float> want_a = reference(a), want_b = reference(b);
  std::vector<Opt> group{{OptOp::GROUP, axis_sized(a, 50021, true), 2}};
  auto kernel = compile_kernel(test::last_kernel(a).ast, a.device(), PrepareOptions{.threads = 2}, group);
  ASSERT_EQ(kernel, compile_kernel(test::last_kernel(b).ast, b.device(), PrepareOptions{.threads = 2}, group));  // one kernel, one scratch
  EXPECT_FALSE(kernel->host_parallel_safe);
  auto hammer = [&](const ExecutionPlan& plan, const std::vector<float>& want, bool& ok) {
    ok = true;
    for (int i = 0; i < 200 && ok; ++i) {
      launch_on(*kernel, test::last_kernel(plan));
      ok = close(plan.output_buffer()->to_vector<float>(), want);
    }
  };
  bool ok_a = false, ok_b = false;
  std::thread other([&] { hammer(b, want_b, ok_b); });
  hammer(a, want_a, ok_a);
  other.join();
  EXPECT_TRUE(ok_a);
  EXPECT_TRUE(ok_b);
}

TEST(ActionGroup, WhatDoesNotFitIsAnError) {
  ExecutionPlan plan = one_kernel_plan(matrix(6, 40, 15).sum({1}));
  int64_t k = axis_sized(plan, 40, true), rows = axis_sized(plan, 6);
  auto fails = [&](const std::vector<Opt>& opts, const char* why) { test::expect_refused(plan, opts, why); };
  fails({{OptOp::GROUP, rows, 2}}, "is not a reduction's");
  fails({{OptOp::GROUP, k, 1}}, "cannot be split across 1 threads");
  fails({{OptOp::GROUP, k, 41}}, "cannot be split across 41 threads");
  fails({{OptOp::THREAD, rows, 2}, {OptOp::GROUP, k, 2}}, "already split across threads");
  fails({{OptOp::GROUP, k, 2}, {OptOp::THREAD, rows, 2}}, "in a kernel with a GROUP");
  fails({{OptOp::GROUP, k, 2}, {OptOp::UPCAST, rows, 2}}, "in a kernel with a GROUP");
  fails({{OptOp::UPCAST, rows, 2}, {OptOp::GROUP, k, 2}}, "upcast output loop");
  fails({{OptOp::GROUP, k, 2}, {OptOp::GROUP, k, 2}}, "is not an ordinary loop");
  fails({{OptOp::GROUP, k, 2}, {OptOp::UNROLL, k, 4}}, "is not an ordinary loop");  // unroll first, then group the rest
  // Two reductions in one kernel (a variance's mean and sum of squares): the last core would repeat
  // the other one whole.
  Tensor x = matrix(6, 40, 16);
  Tensor centered = x - x.mean({1}, true);
  ExecutionPlan two = one_kernel_plan((centered * centered).sum({1}));
  int64_t two_k = -1;
  for (const Loop& l : test::loops_of(two))
    if (l.reduce) two_k = l.axis;
  ASSERT_GE(two_k, 0);
  test::expect_refused(two, {{OptOp::GROUP, two_k, 2}}, "GROUP takes one");
}

}  // namespace
}  // namespace lathe
