// NVRTC compiles CUDA C for a real architecture (CUBIN, ptxas's report) and a virtual one (PTX);
// its errors name the kernel. Skipped, saying why, where NVRTC does not load (no CUDA toolkit).
#include <gtest/gtest.h>

#include "device/cuda/nvrtc.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

const Nvrtc* nvrtc_or_skip(std::string& why) { return Nvrtc::get(&why); }

#define NVRTC_OR_SKIP()                                  \
  std::string why;                                       \
  const Nvrtc* nvrtc = nvrtc_or_skip(why);               \
  if (!nvrtc) GTEST_SKIP() << why

constexpr const char* kAddOne = R"(extern "C" __global__ void __launch_bounds__(128) add_one(float* __restrict__ out, const float* __restrict__ in, const long long n) {
  long long i = (long long)blockIdx.x * 128 + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
})";

TEST(Nvrtc, CompilesForEachArchitecture) {
  NVRTC_OR_SKIP();
  for (int sm : {80, 90}) {
    NvrtcOutput out = nvrtc->compile(kAddOne, "add_one", sm);
    EXPECT_GT(out.cubin.size(), 100u) << sm;
    EXPECT_NE(out.ptx.find(".target sm_" + std::to_string(sm)), std::string::npos) << out.ptx;
    EXPECT_NE(out.ptx.find(".entry add_one"), std::string::npos);
    EXPECT_GT(out.registers, 0) << out.log;
    EXPECT_EQ(out.spill_bytes, 0) << out.log;
  }
}

TEST(Nvrtc, ReportsSpills) {
  NVRTC_OR_SKIP();
  // 96 values live across a loop, in a block of 1024 threads at 2 blocks a multiprocessor (at most
  // 32 registers a thread): ptxas must spill.
  std::string src = R"(extern "C" __global__ void __launch_bounds__(1024, 2) spills(float* out, const float* in, int n) {
  float v[96];
  #pragma unroll
  for (int j = 0; j < 96; ++j) v[j] = in[j * 977 % 4096];
  for (int i = 0; i < n; ++i) {
    #pragma unroll
    for (int j = 0; j < 96; ++j) v[j] = v[j] * v[(j + 1) % 96] + in[i];
  }
  float s = 0;
  #pragma unroll
  for (int j = 0; j < 96; ++j) s += v[j];
  out[threadIdx.x] = s;
})";
  NvrtcOutput out = nvrtc->compile(src, "spills", 80);
  EXPECT_GT(out.spill_bytes + out.stack_bytes, 0) << out.log;
}

TEST(Nvrtc, ErrorsNameTheKernelAndTheArchitecture) {
  NVRTC_OR_SKIP();
  try {
    nvrtc->compile("extern \"C\" __global__ void broken(float* p) { p[0] = undefined_name; }", "broken", 90);
    FAIL() << "a kernel with an undefined name compiled";
  } catch (const CompileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("broken"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;
  }
}

TEST(Nvrtc, CompilerKeysKernelsByArchitecture) {
  NVRTC_OR_SKIP();
  NvrtcCompiler a(80), b(90);
  EXPECT_NE(a.identity(), b.identity());
  EXPECT_TRUE(b.target().has_local);
}

}  // namespace
}  // namespace lathe
