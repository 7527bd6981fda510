// lathe's CUDA runtime against a stand-in for NVIDIA's driver (fake_libcuda.c, found first on the
// library path by the ctest device.cuda.fake_driver): buffers in the driver's memory, pooled;
// devices and errors named; each kernel's CUBIN loaded and launched over its grid and blocks with
// its buffers' device addresses, from any thread, timed by events. The fake runs no kernel: what
// kernels compute is checked by the emulator here and by scripts/gpu-check.sh on a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "device/cuda/cuda_driver.hpp"
#include "device/cuda/nvrtc.hpp"
#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

struct Fake {
  int (*live)() = nullptr;
  int (*allocations)() = nullptr;
  int (*launches)() = nullptr;
  const char* (*kernel)() = nullptr;
  const unsigned* (*grid)() = nullptr;
  const unsigned* (*block)() = nullptr;
  const uint64_t* (*params)() = nullptr;
  int (*device)() = nullptr;
  void (*read_params)(int) = nullptr;
  int (*graph_launches)() = nullptr;
  int (*captured)() = nullptr;
  int (*live_graphs)() = nullptr;
  int (*blocking_captures)() = nullptr;
};

// The fake's own entry points, when the driver lathe loaded is the fake.
std::optional<Fake> fake() {
  if (!cuda_unavailable().empty()) return std::nullopt;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return std::nullopt;
  Fake f;
  f.live = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_live_allocations"));
  f.allocations = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_allocations"));
  f.launches = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_launches"));
  f.kernel = reinterpret_cast<const char* (*)()>(dlsym(lib, "fake_cuda_last_kernel"));
  f.grid = reinterpret_cast<const unsigned* (*)()>(dlsym(lib, "fake_cuda_last_grid"));
  f.block = reinterpret_cast<const unsigned* (*)()>(dlsym(lib, "fake_cuda_last_block"));
  f.params = reinterpret_cast<const uint64_t* (*)()>(dlsym(lib, "fake_cuda_last_params"));
  f.device = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_last_device"));
  f.read_params = reinterpret_cast<void (*)(int)>(dlsym(lib, "fake_cuda_read_params"));
  f.graph_launches = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_graph_launches"));
  f.captured = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_captured_launches"));
  f.live_graphs = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_live_graphs"));
  f.blocking_captures = reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_blocking_captures"));
  dlclose(lib);
  if (!f.live || !f.read_params || !f.graph_launches || !f.captured || !f.live_graphs || !f.blocking_captures) return std::nullopt;
  return f;
}

// This program runs with the stand-in first on the library path (ctest -R device.cuda.fake_driver).
#define NEEDS_FAKE_DRIVER(f)  \
  std::optional<Fake> f = fake(); \
  ASSERT_TRUE(f.has_value()) << "the stand-in driver did not load: " << cuda_unavailable()

TEST(FakeCudaDriver, BuffersLiveInTheDriversMemoryAndArePooled) {
  NEEDS_FAKE_DRIVER(f);
  const DeviceSpec gpu = DeviceSpec::parse("CUDA:1");
  Buffer b(dtypes::float32, 6, gpu);
  std::vector<float> v{1, 2, 3, 4, 5, 6};
  b.copyin(v.data(), 24);
  EXPECT_EQ(b.to_vector<float>(), v);
  EXPECT_FALSE(b.host_visible());
  EXPECT_NE(test::error_message([&] { (void)b.data(); }).find("on CUDA:1 has no host address"), std::string::npos);
  Buffer cpu(dtypes::float32, 6, DeviceSpec{});
  cpu.copy_from(b);
  EXPECT_EQ(cpu.to_vector<float>(), v);
  Buffer::view(b, 8, 2, dtypes::float32).fill_bytes(0);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 0, 0, 5, 6}));
  int made = f->allocations();
  b.release();
  Buffer again(dtypes::float32, 6, gpu);
  again.copy_from(cpu);  // the freed block, from the pool
  EXPECT_EQ(f->allocations(), made);
}

TEST(FakeCudaDriver, NamesADeviceItDoesNotHave) {
  NEEDS_FAKE_DRIVER(f);
  std::string why = test::error_message([] { Buffer(dtypes::float32, 1, DeviceSpec::parse("CUDA:2")).ensure_allocated(); });
  EXPECT_NE(why.find("no device CUDA:2 (the driver sees 2)"), std::string::npos) << why;
}

TEST(FakeCudaDriver, SaysWhenMemoryRunsOut) {
  NEEDS_FAKE_DRIVER(f);
  size_t huge = (size_t{1} << 32) + 1;
  std::string why = test::error_message([&] { Buffer(dtypes::uint8, huge, DeviceSpec::parse("CUDA:0")).ensure_allocated(); });
  EXPECT_NE(why.find("cuMemAlloc of " + std::to_string(huge) + " bytes on CUDA:0 failed: CUDA_ERROR_OUT_OF_MEMORY (2)"), std::string::npos) << why;
}

TEST(FakeCudaDriver, LaunchesEachKernelOverItsGridWithItsBuffersAddresses) {
  NEEDS_FAKE_DRIVER(f);
  std::string no_nvrtc;
  if (!Nvrtc::get(&no_nvrtc)) GTEST_SKIP() << "no NVRTC to build kernels: " << no_nvrtc;
  test::ScopedEnv cuda("LATHE_DEVICE", "CUDA");
  Variable n("n", 1, 500);
  Tensor x = Tensor::rand({500, 3}, 1);  // made on the host, copied to the GPU
  EXPECT_EQ(x.buffer().device().type, "CUDA");
  Tensor y = (x.shrink({{0, n.bind(200)}, {0, 3}}) * 2.0f).relu();
  ExecutionPlan plan = y.prepare();
  ASSERT_EQ(plan.prepared_kernels().size(), 1u);
  const PreparedKernel& k = *plan.prepared_kernels()[0];
  ASSERT_TRUE(k.kernel->local_size.has_value());
  f->read_params(static_cast<int>(k.buffer_ptrs.size()) + 1);  // the buffers, then n
  int launches = f->launches();
  plan.execute_with_vars({{"n", 137}});
  std::vector<KernelProfile> profile;
  std::thread([&] { profile = plan.execute_profiled(); }).join();  // a thread the device's context was never current on
  f->read_params(0);  // what was read stays; later kernels take other parameters
  EXPECT_EQ(f->launches(), launches + 2);
  EXPECT_EQ(std::string(f->kernel()), k.kernel->entry_point);
  EXPECT_EQ(f->device(), 0);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(f->grid()[d], static_cast<unsigned>(k.kernel->global_size[d]->vmax())) << d;
    EXPECT_EQ(f->block()[d], static_cast<unsigned>((*k.kernel->local_size)[d]->vmax())) << d;
  }
  for (size_t i = 0; i < k.buffer_ptrs.size(); ++i) EXPECT_EQ(f->params()[i], k.buffer_ptrs[i]) << "parameter " << i;
  EXPECT_EQ(f->params()[k.buffer_ptrs.size()], 137u) << "the variable n, after the buffers";
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0].elapsed, std::chrono::microseconds(500)) << "the events' time, not the host's";
  EXPECT_EQ(profile[0].device, "CUDA:0");
}

TEST(FakeCudaDriver, AZeroSizedTensorIsComputedWithoutAnEmptyGrid) {
  NEEDS_FAKE_DRIVER(f);
  std::string no_nvrtc;
  if (!Nvrtc::get(&no_nvrtc)) GTEST_SKIP() << "no NVRTC to build kernels: " << no_nvrtc;
  test::ScopedEnv cuda("LATHE_DEVICE", "CUDA");
  Tensor x = Tensor::rand({0, 4}, 1);
  // The stand-in refuses a grid or block with a zero dimension, as the driver does.
  EXPECT_TRUE((x * 2.0f + 1.0f).to_vector<float>().empty());
  EXPECT_EQ(Tensor::rand({3, 0}, 2).sum({1}).to_vector<float>().size(), 3u);  // (the stand-in computes nothing)
}

// A plan of kernels alone is recorded into a CUDA Graph once two runs in a row
// launched the same addresses, and replayed after: every kernel still runs at each execute, with
// its grid and buffers, as one submission. Profiled runs launch each kernel (each is timed); a
// moved buffer is recorded again, and moved back replays the first recording (the last two are
// kept); LATHE_CUDA_GRAPH=0 launches each time. A plan with variables records each size it runs at
// the same way, with the variable's value.
TEST(FakeCudaDriver, APlanReplaysItsRecordedGraphs) {
  NEEDS_FAKE_DRIVER(f);
  std::string no_nvrtc;
  if (!Nvrtc::get(&no_nvrtc)) GTEST_SKIP() << "no NVRTC to build kernels: " << no_nvrtc;
  test::ScopedEnv cuda("LATHE_DEVICE", "CUDA");
  Tensor x = Tensor::rand({37, 5}, 1), u = Tensor::rand({37, 5}, 2);
  ExecutionPlan plan = ((x + u) * 3.0f).softmax(1).prepare();
  const int k = static_cast<int>(plan.prepared_kernels().size());
  ASSERT_GE(k, 2) << "a plan of several kernels";
  const int graphs = f->live_graphs();
  int launches = f->launches(), captured = f->captured(), replays = f->graph_launches();
  auto expect = [&](int launched, int newly_captured, int replayed, const char* what) {
    EXPECT_EQ(f->launches(), launches += launched) << what;
    EXPECT_EQ(f->captured(), captured += newly_captured) << what;
    EXPECT_EQ(f->graph_launches(), replays += replayed) << what;
  };
  plan.execute();
  expect(k, 0, 0, "the first run launches each kernel");
  plan.execute();
  expect(k, k, 1, "the second, with the same addresses, records them and replays the recording");
  std::thread([&] { plan.execute(); }).join();  // from a thread the device's context was never current on
  expect(k, 0, 1, "the third replays it");
  EXPECT_EQ(f->live_graphs(), graphs + 1) << "one executable graph kept, the captured one freed";
  EXPECT_EQ(std::string(f->kernel()), plan.prepared_kernels().back()->kernel->entry_point) << "the last kernel ran last";
  EXPECT_EQ(plan.execute_profiled().size(), static_cast<size_t>(k));
  expect(k, 0, 0, "a profiled run times each kernel");

  const std::vector<Buffer>& bs = plan.buffers();
  size_t out = static_cast<size_t>(plan.output_buffer() - bs.data());
  size_t xi = static_cast<size_t>(std::find(bs.begin(), bs.end(), x.buffer()) - bs.begin());
  ASSERT_TRUE(plan.swap_buffers(out, xi));
  const PreparedKernel& last = *plan.prepared_kernels().back();
  f->read_params(static_cast<int>(last.buffer_ptrs.size()));  // what each launch is given, read as it is captured
  plan.execute();
  expect(k, 0, 0, "moved addresses: launched, not the old recording");
  plan.execute();
  expect(k, k, 1, "and recorded again");
  f->read_params(0);
  for (size_t i = 0; i < last.buffer_ptrs.size(); ++i) EXPECT_EQ(f->params()[i], last.buffer_ptrs[i]) << "the replay's parameter " << i;
  {  // a copy on the default stream between runs: the recording's capture never blocked it
    std::vector<float> ones(static_cast<size_t>(x.numel()), 1.0f);
    plan.buffer_at_mut(out)->copyin(ones.data(), ones.size() * sizeof(float));
  }
  EXPECT_EQ(f->live_graphs(), graphs + 2) << "both recordings kept";
  ASSERT_TRUE(plan.swap_buffers(out, xi));
  plan.execute();
  expect(k, 0, 1, "swapped back: the first recording replays, nothing captured");
  EXPECT_EQ(f->blocking_captures(), 0) << "captured from streams of the recordings' own (non-blocking), never the device's";

  {
    test::ScopedEnv off("LATHE_CUDA_GRAPH", "0");
    ExecutionPlan unrecorded = ((x + u) * 3.0f).softmax(1).prepare();
    for (int i = 0; i < 3; ++i) unrecorded.execute();
    expect(3 * k, 0, 0, "LATHE_CUDA_GRAPH=0");
  }
  Variable n("n", 1, 37);
  ExecutionPlan sized = (x.shrink({{0, n.bind(20)}, {0, 5}}) * 2.0f).prepare();
  ASSERT_EQ(sized.prepared_kernels().size(), 1u);
  const PreparedKernel& s = *sized.prepared_kernels()[0];
  f->read_params(static_cast<int>(s.buffer_ptrs.size()) + 1);  // the buffers, then n, read as each launch is made or captured
  for (int rows : {20, 20, 20}) sized.execute_with_vars({{"n", rows}});
  expect(3, 1, 2, "a plan with variables: a size launched, then recorded and replayed (a replay's launches count)");
  EXPECT_EQ(f->params()[s.buffer_ptrs.size()], 20u);
  sized.execute_with_vars({{"n", 9}});
  expect(1, 0, 0, "a new size is launched");
  EXPECT_EQ(f->params()[s.buffer_ptrs.size()], 9u);
  sized.execute_with_vars({{"n", 9}});
  expect(1, 1, 1, "and recorded");
  EXPECT_EQ(f->params()[s.buffer_ptrs.size()], 9u) << "the recording's n";
  sized.execute_with_vars({{"n", 20}});
  expect(1, 0, 1, "the first size's recording replays");
  EXPECT_EQ(f->params()[s.buffer_ptrs.size()], 20u) << "the first recording's n, not the last one's";
  f->read_params(0);
}

}  // namespace
}  // namespace lathe
