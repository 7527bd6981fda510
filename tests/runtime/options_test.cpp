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

// The optimizer's target shape per plan: the same kernel planned for 4, 8 and 16 float lanes
// (whatever this CPU is) gets the vector width of each, and every plan agrees.
TEST(PrepareOptions, TargetShapePerPlan) {
  Tensor a = Tensor::rand({61, 96}, 1), b = Tensor::rand({96, 128}, 2);
  Tensor c = a.matmul(b);
  std::vector<float> want = run(Tensor::prepare({c}, {.optimize = false, .threads = 1}));
  for (int lanes : {4, 8, 16}) {
    ExecutionPlan plan = Tensor::prepare({c}, {.threads = 1, .shape = TargetShape::parse(std::to_string(lanes))});
    const CachedKernel& k = plan.kernels().at(0).get();
    EXPECT_NE(k.opts.find("UPCAST"), std::string::npos) << k.opts;
    // vf32x16 in C, <16 x float> in LLVM IR
    std::string c_vector = "vf32x" + std::to_string(lanes) + " ", llvm_vector = "<" + std::to_string(lanes) + " x float>";
    EXPECT_TRUE(k.code.find(c_vector) != std::string::npos || k.code.find(llvm_vector) != std::string::npos) << lanes << " lanes: " << k.opts;
    std::vector<float> got = run(plan);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << lanes << " lanes, " << i;
  }
}

// LATHE_TARGET_SHAPE gives the default, PrepareOptions::shape overrides it, and text that is not
// a shape is an error that names the variable.
TEST(PrepareOptions, TargetShapeFromTheEnvironment) {
  Tensor y = Tensor::rand({64, 1024}, 1).sum({1});
  auto opts = [&](const PrepareOptions& o) { return Tensor::prepare({y}, o).kernels().at(0).get().opts; };
  std::string four = opts({.threads = 1, .shape = TargetShape::parse("4")});
  std::string sixteen = opts({.threads = 1, .shape = TargetShape::parse("16")});
  ASSERT_NE(four, sixteen);
  ::setenv("LATHE_TARGET_SHAPE", "4", 1);
  EXPECT_EQ(opts({.threads = 1}), four);
  EXPECT_EQ(opts({.threads = 1, .shape = TargetShape::parse("16")}), sixteen);
  ::setenv("LATHE_TARGET_SHAPE", "lanes=5", 1);
  try {
    Tensor::prepare({y * 3.0f}, {.threads = 1});
    ADD_FAILURE() << "lanes=5 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LATHE_TARGET_SHAPE"), std::string::npos) << e.what();
  }
  ::unsetenv("LATHE_TARGET_SHAPE");
}

TEST(TargetShape, ParsesLaneCountsAndFields) {
  EXPECT_EQ(TargetShape::parse("8"), (TargetShape{32, 16, 32 << 10, 512 << 10, 32 << 20, 4}));
  EXPECT_EQ(TargetShape::parse("16"), (TargetShape{64, 32, 48 << 10, 1 << 20, 32 << 20, 7}));
  EXPECT_EQ(TargetShape::parse("4"), (TargetShape{16, 16, 32 << 10, 512 << 10, 32 << 20, 4}));
  EXPECT_EQ(TargetShape::parse("lanes=8,registers=32,l1=48K,l2=2M"), (TargetShape{32, 32, 48 << 10, 2 << 20, 0}));
  EXPECT_EQ(TargetShape::parse("l3=8M,lanes=16"), (TargetShape{64, 0, 0, 0, 8 << 20}));
  EXPECT_EQ(TargetShape::parse("registers=8"), (TargetShape{0, 8, 0, 0}));
  EXPECT_EQ(TargetShape::parse("l1=40000"), (TargetShape{0, 0, 40000, 0}));
  EXPECT_EQ(TargetShape::parse("memory=12,lanes=8"), (TargetShape{32, 0, 0, 0, 0, 12}));
  EXPECT_EQ(TargetShape::parse("lanes=8,registers=32,l1=48K,l2=2M,l3=16M,memory=3").to_string(),
            "lanes=8,registers=32,l1=48K,l2=2M,l3=16M,memory=3");
  EXPECT_EQ(TargetShape::parse(TargetShape::parse("16").to_string()), TargetShape::parse("16"));
}

TEST(TargetShape, TextThatIsNotAShapeIsAnErrorNamingIt) {
  for (const char* bad : {"", "3", "32", "eight", "lanes=", "lanes=8,", "lanes=8;registers=16", "registers=0",
                          "registers=-4", "l1=12Q", "width=8", "lanes=8,l2=99999999999999", "l3=0", "l3=1G", "memory=0",
                          "memory=4K", "memory=2.5", "memory=5000"}) {
    try {
      TargetShape::parse(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lathe
