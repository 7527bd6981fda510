// A kernel's counted work against the count by hand: value ops, index ops, bytes.
#include <gtest/gtest.h>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

WorkCount only_kernel(const ExecutionPlan& plan) {
  EXPECT_EQ(plan.prepared_kernels().size(), 1u);
  return plan.prepared_kernels().at(0)->work;
}

TEST(Estimates, ElementwiseCountsEachOpOncePerElement) {
  Tensor a = Tensor::rand({7, 13}, 1), b = Tensor::rand({7, 13}, 2), c = Tensor::rand({7, 13}, 3);
  ExecutionPlan plan = (a * b + c).prepare();
  WorkCount w = only_kernel(plan);
  EXPECT_EQ(w.ops, 2 * 7 * 13);
  EXPECT_EQ(w.lds, 4 * 4 * 7 * 13);  // three loads and a store of float32 per element
  EXPECT_EQ(w.mem, 4 * 4 * 7 * 13);
  EXPECT_EQ(plan.estimated_work().ops, w.ops);
}

TEST(Estimates, MatmulIsTwoOpsPerMultiplyAdd) {
  const int64_t m = 5, k = 11, n = 3;  // small and odd: no upcast, no threads
  Tensor a = Tensor::rand({m, k}, 1), b = Tensor::rand({k, n}, 2);
  WorkCount w = only_kernel(a.matmul(b).prepare());
  EXPECT_EQ(w.ops, 2 * m * n * k);
  EXPECT_EQ(w.lds, 4 * (2 * m * n * k + m * n));
  EXPECT_EQ(w.mem, 4 * (m * k + k * n + m * n));  // each buffer's bytes once
  EXPECT_GT(w.index_ops, 0);                        // row * k + col addresses
}

TEST(Estimates, BroadcastReadsTouchTheSmallBufferOnce) {
  Tensor a = Tensor::rand({64, 32}, 1), bias = Tensor::rand({32}, 2);
  WorkCount w = only_kernel((a + bias).prepare());
  EXPECT_EQ(w.ops, 64 * 32);
  EXPECT_EQ(w.mem, 4 * (64 * 32 * 2 + 32));
  EXPECT_EQ(w.lds, 4 * 64 * 32 * 3);
}

TEST(Estimates, SymbolicSizesAreCountedAtTheBoundValue) {
  Variable n("n", 1, 64);
  Tensor x = Tensor::rand({64, 8}, 1);
  ExecutionPlan plan = (x.shrink({{0, n.bind(10)}, {0, 8}}) * 2.0f + 1.0f).prepare();
  EXPECT_EQ(only_kernel(plan).ops, 2 * 10 * 8);
  plan.execute_with_vars({{"n", 37}});
  EXPECT_EQ(only_kernel(plan).ops, 2 * 37 * 8);
  EXPECT_EQ(plan.estimated_work().ops, 2 * 37 * 8);
  std::vector<KernelProfile> prof = plan.execute_profiled();
  ASSERT_EQ(prof.size(), 1u);
  EXPECT_EQ(prof[0].work.ops, 2 * 37 * 8);
  EXPECT_GE(prof[0].gflops(), 0.0);
}

TEST(Estimates, EmptyTensorsDoNoWork) {
  Tensor a = Tensor::rand({0, 5}, 1);
  ExecutionPlan plan = (a * 3.0f).prepare();
  EXPECT_EQ(plan.estimated_work().ops, 0);
}

}  // namespace
}  // namespace lathe
