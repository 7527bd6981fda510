// NVRTC compiles CUDA C for a real architecture (CUBIN, ptxas's report) and a virtual one (PTX);
// its errors name the kernel. Skipped, saying why, where NVRTC does not load (no CUDA toolkit).
#include <gtest/gtest.h>

#include "codegen/pipeline.hpp"
#include "codegen/render_cuda.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"
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

// Kernels as the pipeline renders them for a GPU, with what the CUDA dialect spells apart from C:
// bit casts, infinities (a max's identity), 16-bit floats, 64-bit and unsigned integers, doubles,
// transcendentals, a symbolic size, a reduction shared by a block; each compiles for both architectures without a spill.
TEST(Nvrtc, RenderedKernelsCompileWithoutSpills) {
  NVRTC_OR_SKIP();
  Variable n("n", 1, 37);
  Tensor x = Tensor::rand({37, 19}, 1);
  std::vector<Tensor> kernels = {
      x.bitcast(dtypes::int32) + 1,
      x.max({1}),
      (x.cast(dtypes::bfloat16) * x.cast(dtypes::bfloat16)).sum({1}),
      x.cast(dtypes::float16).exp(),
      x.cast(dtypes::int64) * 3 + x.cast(dtypes::uint8),
      x.cast(dtypes::float64).sqrt() / 3.0,
      (x.shrink({{0, n.bind(20)}, {0, 19}}) * 2.0f).sum({0}),
      x.matmul(Tensor::rand({19, 23}, 2)).relu(),
      Tensor::rand({3, 5003}, 3).sum({1}),  // grouped: shared memory and a barrier
  };
  std::string all;
  for (const Tensor& t : kernels) {
    ProgramSpec p = build_program(test::kernel_ast(t), CudaRenderer(), {.optimize = true, .verify = true, .target = gpu_target(80)});
    all += p.src;
    for (int sm : {80, 90}) {
      NvrtcOutput out = nvrtc->compile(p.src, p.name, sm, false);
      EXPECT_EQ(out.spill_bytes, 0) << p.name << " sm_" << sm << "\n" << out.log;
    }
  }
  // What the dialect spells apart from C was compiled above.
  for (const char* spelling : {"lathe_bitcast<int>(", "__int_as_float(0x7f800000)", "lathe_f32_to_f16(", "const long long n", "blockIdx.x", "#pragma unroll 4", "__shared__ float", "__syncthreads();"})
    EXPECT_NE(all.find(spelling), std::string::npos) << spelling;
}

TEST(Nvrtc, CompilerKeysKernelsByArchitecture) {
  NVRTC_OR_SKIP();
  NvrtcCompiler a(80), b(90);
  EXPECT_NE(a.identity(), b.identity());
  EXPECT_TRUE(b.target().has_local);
}

}  // namespace
}  // namespace lathe
