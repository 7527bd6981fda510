// The GPU backends through plans: the emulator (EMU) gives the CPU's answers with kernels lowered
// onto a GPU's grid, and CUDA, where nothing can run its kernels, fails with an error saying why.
#include <gtest/gtest.h>

#include <algorithm>

#include "device/cuda/cuda_driver.hpp"
#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// relu(a @ b + c) at sizes no block divides, and a row softmax.
std::vector<Tensor> graph() {
  Tensor a = Tensor::rand({37, 53}, 1), b = Tensor::rand({53, 29}, 2), c = Tensor::rand({29}, 3);
  Tensor x = Tensor::rand({5, 301}, 4);
  return {(a.matmul(b) + c).relu(), x.softmax(1)};
}

TEST(GpuEmulator, GivesTheCpusAnswers) {
  std::vector<std::vector<float>> cpu;
  {
    test::ScopedCpu on_cpu;
    for (const Tensor& t : graph()) cpu.push_back(t.to_vector<float>());
  }
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  std::vector<Tensor> outs = graph();
  ExecutionPlan plan = Tensor::prepare(outs);
  plan.execute();
  bool launched = false;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    EXPECT_EQ(k->device.type, "EMU");
    ASSERT_TRUE(k->kernel->local_size.has_value()) << k->kernel->entry_point;
    int64_t threads = 1;
    for (const UOpPtr& d : *k->kernel->local_size) threads *= d->vmax();
    EXPECT_LE(threads, 1024);
    launched |= threads > 1;
  }
  EXPECT_TRUE(launched) << "no kernel ran on more than one thread of a block";
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_ALLCLOSE(outs[i].to_vector<float>(), std::vector<double>(cpu[i].begin(), cpu[i].end()), 1e-5, 1e-5);
}

TEST(GpuEmulator, RebindsVariablesWithoutPreparingAgain) {
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  Variable n("n", 1, 300);
  Tensor x = Tensor::arange(300).cast(dtypes::float32);
  Tensor y = (x.shrink({{0, n.bind(300)}}) * 2.0f).sum();
  ExecutionPlan plan = y.prepare();
  for (int64_t v : {1, 7, 256, 257, 300}) {
    plan.execute_with_vars({{"n", v}});
    EXPECT_FLOAT_EQ(plan.output_buffer()->to_vector<float>()[0], static_cast<float>(v * (v - 1))) << v;
  }
}

// Reductions to few outputs shared by a block of threads (GROUP: each thread every n-th element,
// partials in shared memory, one thread combining them after the barrier): to one value at sizes
// the block does not divide (a prime, one past a power of two), a max of negative numbers, an
// integer sum, a mean over a middle axis, four output loops that cannot merge (one stays a loop
// in each block, so each thread keeps a row of partials), a norm's statistics; each runs grouped,
// its block's threads meeting at a real barrier (block_threads: thread 0 runs first, so it would
// combine before the others stored their partials if the barrier did not hold it), and gives the
// CPU's answer.
TEST(GpuEmulator, ReductionsSharedByABlockGiveTheCpusAnswers) {
  auto graph = [] {
    Tensor big = Tensor::rand({100003}, 5), odd = Tensor::rand({257}, 6) - 2.0f;
    Tensor ints = Tensor::arange(4099).cast(dtypes::int32), rows = Tensor::rand({3, 1031, 2}, 7);
    Tensor crossed = Tensor::rand({300, 7, 5, 3, 2}, 9).permute({4, 3, 2, 1, 0});  // (2, 3, 5, 7, 300), strides reversed
    Tensor x = Tensor::rand({2, 4096}, 8);
    return std::vector<Tensor>{big.sum(), odd.max(), ints.sum(), rows.mean({1}), crossed.sum({4}), x.layernorm({-1})};
  };
  std::vector<std::vector<double>> cpu;
  {
    test::ScopedCpu on_cpu;
    for (const Tensor& t : graph()) {
      std::vector<float> v = t.cast(dtypes::float32).to_vector<float>();
      cpu.emplace_back(v.begin(), v.end());
    }
  }
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  std::vector<Tensor> outs = graph();
  for (size_t i = 0; i < outs.size(); ++i) {
    ExecutionPlan plan = outs[i].cast(dtypes::float32).prepare();
    plan.execute();
    bool grouped = false;
    for (const PreparedKernel* k : plan.prepared_kernels())
      if (size_t at = k->kernel->opts.find("GROUP("); at != std::string::npos) {
        grouped = true;
        ASSERT_TRUE(k->kernel->local_size.has_value()) << k->kernel->entry_point;
        int64_t threads = std::stoll(k->kernel->opts.substr(k->kernel->opts.find(", ", at) + 2));
        EXPECT_EQ(k->kernel->local_size->at(0)->vmax(), threads) << k->kernel->entry_point << ": the group is the block";
        const std::vector<std::string>& names = k->kernel->var_names;
        EXPECT_NE(std::find(names.begin(), names.end(), "sync"), names.end()) << k->kernel->entry_point << ": its threads meet at a barrier";
      }
    EXPECT_TRUE(grouped) << "output " << i << " ran ungrouped";
    EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), cpu[i], 1e-4, 1e-5) << i;
  }
}

// Contractions of 16-bit floats run on tensor cores (TC: warps' m16n8k16 multiply-adds, each
// warp's threads meeting at every one on the emulator): a float16 matmul whose sizes are
// multiples of the tile, one padded to it with a bias and relu after it, a batched bfloat16 one,
// a float16 3x3 convolution, and queries times keys transposed (both operands along the reduction). Each gives the float32 answer on the same 16-bit inputs within
// the output's rounding.
TEST(GpuEmulator, SixteenBitContractionsRunOnTensorCores) {
  // reference: the same 16-bit values, in float32
  auto graph = [](bool reference) {
    Tensor a = Tensor::rand({64, 48}, 1) - 0.5f, b = Tensor::rand({48, 32}, 2) - 0.5f;
    Tensor c = Tensor::rand({37, 53}, 3) - 0.5f, d = Tensor::rand({53, 29}, 4) - 0.5f, bias = Tensor::rand({29}, 5);
    Tensor x = Tensor::rand({3, 20, 40}, 6) - 0.5f, w = Tensor::rand({40, 24}, 7) - 0.5f;
    Tensor img = Tensor::rand({2, 16, 9, 11}, 8) - 0.5f, k = Tensor::rand({24, 16, 3, 3}, 9) - 0.5f;
    Tensor q = Tensor::rand({2, 40, 64}, 10) - 0.5f, keys = Tensor::rand({2, 24, 64}, 11) - 0.5f;
    auto h = [&](const Tensor& v) { return reference ? v.cast(dtypes::float16).cast(dtypes::float32) : v.cast(dtypes::float16); };
    auto bf = [&](const Tensor& v) { return reference ? v.cast(dtypes::bfloat16).cast(dtypes::float32) : v.cast(dtypes::bfloat16); };
    return std::vector<Tensor>{h(a).matmul(h(b)), (h(c).matmul(h(d)) + h(bias)).relu(), bf(x).matmul(bf(w)),
                               h(img).conv2d(h(k), std::nullopt, {1, 1}, {1, 1}), h(q).matmul(h(keys).transpose())};
  };
  std::vector<std::vector<double>> want;
  {
    test::ScopedCpu on_cpu;
    for (const Tensor& t : graph(true)) {
      std::vector<float> v = t.to_vector<float>();
      want.emplace_back(v.begin(), v.end());
    }
  }
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  std::vector<Tensor> outs = graph(false);
  for (size_t i = 0; i < outs.size(); ++i) {
    ExecutionPlan plan = outs[i].cast(dtypes::float32).prepare();
    plan.execute();
    bool tensor_cores = false;
    for (const PreparedKernel* k : plan.prepared_kernels()) tensor_cores |= k->kernel->opts.find("TC(") != std::string::npos;
    EXPECT_TRUE(tensor_cores) << "output " << i << " ran without tensor cores";
    EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want[i], 4e-3, 4e-3) << i;
  }
}

TEST(CudaDevice, SaysWhyItCannotRun) {
  if (cuda_unavailable().empty()) GTEST_SKIP() << "a GPU is here: scripts/gpu-check.sh runs on it";
  test::ScopedEnv cuda("LATHE_DEVICE", "CUDA");
  for (bool from_data : {true, false}) {
    try {
      // From data, the values must reach the GPU's memory first; a constant needs a kernel first.
      Tensor t = from_data ? Tensor::rand({4, 4}, 1) + 1.0f : Tensor::full({4, 4}, 2.0f).exp();
      t.prepare().execute();
      FAIL() << "a plan ran on CUDA, where nothing can run it";
    } catch (const Error& e) {
      std::string what = e.what();
      bool says_why = what.find("device CUDA:0 cannot hold buffers: " + cuda_unavailable()) != std::string::npos ||
                      what.find("NVRTC") != std::string::npos ||  // missing: nothing compiles
                      what.find("cannot run kernel") != std::string::npos;
      EXPECT_TRUE(says_why) << what;
    }
  }
}

}  // namespace
}  // namespace lathe
