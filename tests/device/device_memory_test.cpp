// A device's memory through Buffer: on the GPU emulator (memory the host may not address) every
// byte goes through the backend's copies; on CUDA, where nothing can hold a buffer, it says why.
#include <gtest/gtest.h>

#include "device/cuda/cuda_driver.hpp"
#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

const DeviceSpec kEmu = DeviceSpec::parse("EMU");
const DeviceSpec kCpu{};

TEST(DeviceMemory, EmulatedBuffersAreReachedOnlyThroughCopies) {
  Buffer b(dtypes::float32, 5, kEmu);
  EXPECT_FALSE(b.host_visible());
  std::string why = test::error_message([&] { (void)b.data(); });
  EXPECT_NE(why.find("a buffer of 5 x " + dtypes::float32.name() + " on EMU:0 has no host address"), std::string::npos) << why;
  std::vector<float> v{1, 2, 3, 4, 5};
  b.copyin(v.data(), v.size() * 4);
  EXPECT_EQ(b.to_vector<float>(), v);
  EXPECT_NE(b.device_ptr(), nullptr);  // what kernels are given
  Buffer view = Buffer::view(b, 8, 2, dtypes::float32);
  EXPECT_EQ(view.device().type, "EMU");
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{3, 4}));
  view.fill_bytes(0);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 0, 0, 5}));
}

TEST(DeviceMemory, CopiesBetweenBuffersCrossDevicesThroughTheHost) {
  std::vector<int32_t> v{7, -8, 9};
  Buffer cpu(dtypes::int32, 3, kCpu);
  cpu.copyin(v.data(), 12);
  Buffer emu(dtypes::int32, 3, kEmu), emu2(dtypes::int32, 3, kEmu), back(dtypes::int32, 3, kCpu);
  emu.copy_from(cpu);
  emu2.copy_from(emu);  // within the device
  back.copy_from(emu2);
  EXPECT_EQ(back.to_vector<int32_t>(), v);
  Buffer longer(dtypes::int32, 4, kEmu);
  EXPECT_NE(test::error_message([&] { longer.copy_from(cpu); }).find("copy of a buffer of 12 bytes into one of 16 bytes"), std::string::npos);
  Buffer empty(dtypes::int32, 0, kEmu);
  empty.copy_from(Buffer(dtypes::int32, 0, kCpu));  // nothing to copy, nothing allocated
  EXPECT_TRUE(empty.to_vector<int32_t>().empty());
}

TEST(DeviceMemory, ReleasedMemoryCanBeAllocatedAgain) {
  Buffer b(dtypes::float32, 1000, kEmu);
  std::vector<float> v(1000, 2.5f);
  b.copyin(v.data(), 4000);
  b.release();
  EXPECT_FALSE(b.is_allocated());
  b.copyin(v.data(), 4000);
  EXPECT_EQ(b.to_vector<float>(), v);
}

TEST(DeviceMemory, BuffersAreMadeOnTheDefaultDevice) {
  {
    test::ScopedEnv emu("LATHE_DEVICE", "EMU");
    EXPECT_EQ(Buffer(dtypes::float32, 1).device(), kEmu);
    EXPECT_EQ(Buffer(dtypes::float32, 1, kCpu).device(), kCpu);
  }
  test::ScopedCpu cpu;
  EXPECT_EQ(Buffer(dtypes::float32, 1).device(), kCpu);
  EXPECT_TRUE(Buffer(dtypes::float32, 1).host_visible());
}

TEST(DeviceMemory, CudaSaysWhyItCannotHoldABuffer) {
  if (cuda_unavailable().empty()) GTEST_SKIP() << "a GPU is here: its memory is checked by scripts/gpu-check.sh";
  Buffer b(dtypes::float32, 4, DeviceSpec::parse("CUDA:1"));
  EXPECT_FALSE(b.is_allocated());  // a handle costs nothing until it is used
  std::vector<float> v(4, 1.0f);
  std::string why = test::error_message([&] { b.copyin(v.data(), 16); });
  EXPECT_NE(why.find("device CUDA:1 cannot hold buffers: "), std::string::npos) << why;
  EXPECT_NE(why.find(cuda_unavailable()), std::string::npos) << why;
}

// Where there is a GPU (scripts/gpu-check.sh runs this there), its memory as the emulator's above.
TEST(DeviceMemory, CudaBuffersRoundTripOnAGpu) {
  if (!cuda_unavailable().empty()) GTEST_SKIP() << "no GPU here (" << cuda_unavailable() << "): CudaSaysWhyItCannotHoldABuffer runs instead";
  const DeviceSpec gpu = DeviceSpec::parse("CUDA:0");
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  Buffer b(dtypes::float32, v.size(), gpu), c(dtypes::float32, v.size(), gpu);
  b.copyin(v.data(), v.size() * 4);
  c.copy_from(b);
  EXPECT_EQ(c.to_vector<float>(), v);
  Buffer::view(c, 40, 10, dtypes::float32).fill_bytes(0);
  std::vector<float> w = c.to_vector<float>();
  for (size_t i = 10; i < 20; ++i) EXPECT_EQ(w[i], 0.0f) << i;
  EXPECT_EQ(w[20], v[20]);
  EXPECT_FALSE(b.host_visible());
}

}  // namespace
}  // namespace lathe
