// Settings per plan: one process builds plans with and without optimizations and with different
// thread counts; each plan's kernels follow its own settings and they all agree.
#include <gtest/gtest.h>

#include <cstdlib>

#include "device/thread_pool.hpp"
#include "lathe/lathe.hpp"

namespace lathe {
namespace {

std::vector<float> run(const ExecutionPlan& plan) {
  plan.execute();
  return plan.output_buffer()->to_vector<float>();
}

TEST(PrepareOptions, OptimizedAndUnoptimizedPlansInOneProcess) {
  Tensor a = Tensor::rand({64, 96}, 1), b = Tensor::rand({96, 128}, 2);
  Tensor c = a.matmul(b);
  ExecutionPlan fast = Tensor::prepare({c}, {.optimize = true, .threads = 1});
  ExecutionPlan plain = Tensor::prepare({c}, {.optimize = false, .threads = 1});
  std::string fast_code = fast.kernels().at(0).get().code, plain_code = plain.kernels().at(0).get().code;
  EXPECT_NE(fast_code, plain_code);
  // float vectors as either CPU backend spells them: vf32x16 in C, <16 x float> in LLVM IR
  auto has_float_vectors = [](const std::string& code) { return code.find("vf32x") != std::string::npos || code.find(" x float>") != std::string::npos; };
  EXPECT_TRUE(has_float_vectors(fast_code)) << "the optimized matmul keeps a tile of vector accumulators";
  EXPECT_FALSE(has_float_vectors(plain_code)) << "the unoptimized one keeps one float";
  std::vector<float> x = run(fast), y = run(plain);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-4 * (1 + std::abs(y[i]))) << i;
}

TEST(PrepareOptions, ThreadsPerPlan) {
  Tensor a = Tensor::rand({512, 1024}, 1);
  Tensor y = a * 2.0f + 1.0f;
  ExecutionPlan one = Tensor::prepare({y}, {.threads = 1});
  ExecutionPlan two = Tensor::prepare({y}, {.threads = 2});
  EXPECT_TRUE(one.kernels().at(0).get().var_names.empty());
  ASSERT_FALSE(two.kernels().at(0).get().var_names.empty());
  EXPECT_EQ(two.kernels().at(0).get().var_names.back(), "core_id");
  EXPECT_EQ(run(one), run(two));
}

// An unset field takes the environment's default: optimization on unless NOOPT=1, as many
// threads as LATHE_THREADS or the cores allow.
TEST(PrepareOptions, UnsetFieldsTakeTheEnvironmentsDefaults) {
  Tensor y = Tensor::rand({256, 1024}, 1).sum({1});
  auto code = [&](const PrepareOptions& o) { return Tensor::prepare({y}, o).kernels().at(0).get().code; };
  int threads = detail::kernel_threads();
  std::string unset = code({}), on = code({.optimize = true, .threads = threads}), off = code({.optimize = false, .threads = threads});
  ASSERT_NE(on, off);  // the test needs a kernel the optimizer changes
  EXPECT_EQ(unset, on);
  ::setenv("NOOPT", "1", 1);
  std::string unset_noopt = code({});
  ::unsetenv("NOOPT");
  EXPECT_EQ(unset_noopt, off);
}

}  // namespace
}  // namespace lathe
