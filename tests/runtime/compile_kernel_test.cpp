// Compiling many kernels at once: compile_kernels returns them in order and keeps each request's
// failure to itself; plans prepared from several threads at once compute what plain loops do.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "lathe/lathe.hpp"
#include "runtime/compile_kernel.hpp"
#include "runtime/plan_impl.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::data;
using test::f32;

// out[i][j] = max(0, sum_k a[i][k] * b[k][j] + 1)
std::vector<float> matmul_relu(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n) {
  std::vector<float> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 1;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(a[i * k + p]) * b[p * n + j];
      out[i * n + j] = static_cast<float>(acc > 0 ? acc : 0);
    }
  return out;
}

UOpPtr first_ast(const Tensor& t) { return t.prepare().prepared_kernels().at(0)->ast; }

TEST(CompileKernels, ReturnsTheKernelsInOrderAndKeepsAFailureToItsSlot) {
  Tensor a = f32(data(13 * 7, 1), {13, 7}), b = f32(data(7 * 5, 2), {7, 5});
  UOpPtr mm = first_ast((a.matmul(b) + 1.0f).relu()), add = first_ast(a * 2.0f + 3.0f);
  std::vector<KernelRequest> requests{{mm, std::nullopt},
                                      {add, std::vector<Opt>{}},
                                      {mm, std::vector<Opt>{{OptOp::UPCAST, 0, 4}}},  // 13 rows: 4 does not divide
                                      {add, std::nullopt}};
  std::vector<std::exception_ptr> errors;
  size_t last_done = 0;
  auto kernels = compile_kernels(requests, DeviceSpec{}, {}, [&](size_t done) { last_done = done; }, &errors);
  ASSERT_EQ(kernels.size(), 4u);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(last_done, 4u);
  EXPECT_NE(kernels[0], nullptr);
  EXPECT_EQ(kernels[1]->opts, "");
  EXPECT_EQ(kernels[2], nullptr);
  ASSERT_TRUE(errors[2]);
  EXPECT_THROW(std::rethrow_exception(errors[2]), OptError);
  EXPECT_FALSE(errors[0] || errors[1] || errors[3]);
  // In request order: the matmul's reduction kernel first, the elementwise one last, each the
  // kernel compile_kernel makes for its request alone.
  EXPECT_EQ(kernels[0]->entry_point[0], 'r') << kernels[0]->entry_point;
  EXPECT_EQ(kernels[3]->entry_point[0], 'E') << kernels[3]->entry_point;
  EXPECT_EQ(kernels[0]->opts, compile_kernel(mm, DeviceSpec{}, {})->opts);
  EXPECT_EQ(kernels[3]->opts, compile_kernel(add, DeviceSpec{}, {})->opts);
  // Without a place for failures, the failure reaches the caller.
  EXPECT_THROW(compile_kernels(requests, DeviceSpec{}, {}), OptError);
}

TEST(CompileKernels, PlansPreparedFromSeveralThreadsAtOnceComputeThePlainLoopsResult) {
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> got(kThreads), want(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      int64_t m = 17 + t, k = 31, n = 9 + 2 * t;  // other shapes per thread, and one shared inner size
      std::vector<float> av = data(static_cast<size_t>(m * k), 10 + t), bv = data(static_cast<size_t>(k * n), 20 + t);
      Tensor a = f32(av, {m, k}), b = f32(bv, {k, n});
      PrepareOptions options;
      options.optimize = t % 2 == 0;
      ExecutionPlan plan = Tensor::prepare({(a.matmul(b) + 1.0f).relu()}, options);
      plan.execute();
      got[t] = plan.output_buffer()->to_vector<float>();
      want[t] = matmul_relu(av, bv, m, k, n);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(got[t].size(), want[t].size()) << "thread " << t;
    for (size_t i = 0; i < got[t].size(); ++i) EXPECT_NEAR(got[t][i], want[t][i], 1e-4 * (1 + std::abs(want[t][i]))) << "thread " << t << " at " << i;
  }
}

// The guard on compile time: a kernel whose code with the optimizer's actions is over
// LATHE_MOST_KERNEL_BYTES is built again without them (and still computes the same); under the
// limit it keeps them.
TEST(CompileKernels, CodeOverTheLimitIsBuiltWithoutTheActions) {
  // A shape of its own, so no kernel compiled earlier in the process stands in for it.
  const int64_t m = 67, k = 96, n = 80;
  std::vector<float> av = data(m * k, 7), bv = data(k * n, 8);
  Tensor a = f32(av, {m, k}), b = f32(bv, {k, n});
  Tensor y = (a.matmul(b) + 1.0f).relu();
  std::shared_ptr<CachedKernel> usual = compile_kernel(first_ast(y), DeviceSpec{}, {});
  ASSERT_FALSE(usual->opts.empty()) << "the heuristics chose no action: the guard has nothing to drop";
  ::setenv("LATHE_MOST_KERNEL_BYTES", "1000", 1);
  clear_kernel_cache();
  ExecutionPlan plan = y.prepare();
  ::unsetenv("LATHE_MOST_KERNEL_BYTES");
  clear_kernel_cache();
  ASSERT_EQ(plan.prepared_kernels().size(), 1u);
  EXPECT_EQ(plan.prepared_kernels()[0]->kernel->opts, "");
  plan.execute();
  std::vector<float> got = plan.output_buffer()->to_vector<float>(), want = matmul_relu(av, bv, m, k, n);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << i;
}

}  // namespace
}  // namespace lathe
