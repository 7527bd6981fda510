// A GPU's Target from its architecture, and the names of architectures.
#include <gtest/gtest.h>

#include "device/cuda/gpu_target.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

TEST(GpuTarget, ArchitectureNames) {
  EXPECT_EQ(parse_gpu_arch("sm_80"), 80);
  EXPECT_EQ(parse_gpu_arch("90"), 90);
  EXPECT_EQ(parse_gpu_arch("8.6"), 86);
  EXPECT_EQ(parse_gpu_arch("sm_100"), 100);
  for (const char* bad : {"", "sm_", "sm_9x", "gpu", "9", "sm_8.6.1", "1000"}) EXPECT_THROW(parse_gpu_arch(bad), Error) << bad;
}

TEST(GpuTarget, HasBlocksSharedMemoryAndTensorCores) {
  Target t = gpu_target(90);
  EXPECT_TRUE(t.has_local);
  EXPECT_EQ(t.threads, 1);
  EXPECT_EQ(t.local_total_max, 1024);
  EXPECT_EQ(t.global_max[1], 65535);
  EXPECT_EQ(t.widest_vector, 1);
  EXPECT_EQ(t.tensor_cores[0].m, 16);
  EXPECT_NE(gpu_target(80).key(), gpu_target(90).key());  // kernels cached apart
  EXPECT_EQ(gpu_target(75).tensor_cores[0].m, 0);
}

TEST(GpuTarget, RefusesWhatCuda13DoesNotBuildFor) {
  try {
    gpu_target(70);
    FAIL() << "sm_70 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sm_70"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lathe
