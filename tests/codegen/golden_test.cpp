// Golden kernels: the C the pipeline renders for a fixed set of kernels, compared exactly with
// the files in tests/codegen/golden/. A change that claims to keep kernels as they are must keep
// these; a change meant to alter them regenerates the files and shows the diff:
//
//   LATHE_UPDATE_GOLDEN=1 build/tests/codegen_tests --gtest_filter='Golden*'
//
// Settings are fixed (optimizations on, two threads at most, the vector registers named here,
// never the host's), so no result depends on the machine.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/render_cuda.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"

namespace lathe {
namespace {

// 16-byte vectors and 16 registers (SSE, NEON-like) unless told: `vector_bytes` and `registers`
// name an AVX2 or AVX-512 target.
void expect_same_as_file(const std::string& file, const ProgramSpec& p) {
  std::string path = std::string(LATHE_GOLDEN_DIR) + "/" + file;
  if (const char* up = std::getenv("LATHE_UPDATE_GOLDEN"); up && std::string(up) == "1") {
    std::ofstream(path) << p.src;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "no golden file " << path << " (LATHE_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(p.src, want.str()) << "the rendered kernel differs from " << path;
}

void expect_golden(const std::string& file, const Tensor& t, int vector_bytes = 16, int registers = 16) {
  expect_same_as_file(file, build_program(test::kernel_ast(t), CRenderer(),
                                          {.optimize = true, .verify = true, .target = {.vector_bytes = vector_bytes, .vector_registers = registers, .threads = 2}}));
}

// The CUDA C an sm_80 GPU gets (its launch sizes checked too: they are not in the source).
void expect_golden_cuda(const std::string& file, const Tensor& t, LaunchSize grid, LaunchSize block) {
  ProgramSpec p = build_program(test::kernel_ast(t), CudaRenderer(), {.optimize = true, .verify = true, .target = gpu_target(80)});
  expect_same_as_file(file, p);
  EXPECT_EQ(p.global_size, grid);
  EXPECT_EQ(p.local_size, block);
}

TEST(Golden, Elementwise) {
  Tensor a = Tensor::rand({7, 13}, 1), b = Tensor::rand({7, 13}, 2);
  expect_golden("elementwise.c", (a * b + 1.0f).relu());
}

TEST(Golden, RowReduction) {
  expect_golden("row_sum.c", Tensor::rand({8, 37}, 1).sum({1}));
}

TEST(Golden, MatmulTile) {
  expect_golden("matmul_tile.c", Tensor::rand({8, 40}, 1).matmul(Tensor::rand({40, 96}, 2)));
}

// The code x86 machines with AVX-512 get: 64-byte vectors, 32 registers.
TEST(Golden, MatmulTileAvx512) {
  expect_golden("matmul_tile_avx512.c", Tensor::rand({8, 40}, 1).matmul(Tensor::rand({40, 96}, 2)), 64, 32);
}

TEST(Golden, Convolution) {
  Tensor x = Tensor::rand({1, 4, 8, 8}, 1), w = Tensor::rand({6, 4, 3, 3}, 2), b = Tensor::rand({6}, 3);
  expect_golden("conv3x3.c", x.conv2d(w, b, {1, 1}, {1, 1}).relu());
}

TEST(Golden, SymbolicSize) {
  Variable n("n", 1, 64);
  Tensor x = Tensor::rand({64, 8}, 1);
  expect_golden("symbolic.c", (x.shrink({{0, n.bind(10)}, {0, 8}}) * 2.0f).sum({0}));
}

TEST(Golden, ThreadedWithTranscendental) {
  expect_golden("threaded_exp.c", Tensor::rand({256, 512}, 1).exp());
}

TEST(Golden, HalfPrecision) {
  Tensor h = Tensor::rand({16, 16}, 1).cast(dtypes::float16);
  expect_golden("half.c", (h * h + 1.0f).sum({1}));
}

TEST(GoldenCuda, Elementwise) {
  Tensor a = Tensor::rand({7, 13}, 1), b = Tensor::rand({7, 13}, 2);
  expect_golden_cuda("elementwise.cu", (a * b + 1.0f).relu(), {1, 1, 1}, {128, 1, 1});
}

TEST(GoldenCuda, RowReduction) {
  expect_golden_cuda("row_sum.cu", Tensor::rand({300, 37}, 1).sum({1}), {2, 1, 1}, {256, 1, 1});
}

TEST(GoldenCuda, MatmulTile) {
  expect_golden_cuda("matmul_tile.cu", Tensor::rand({64, 40}, 1).matmul(Tensor::rand({40, 96}, 2)), {1, 1, 1}, {16, 16, 1});
}

TEST(GoldenCuda, SymbolicSize) {
  Variable n("n", 1, 64);
  Tensor x = Tensor::rand({64, 8}, 1);
  expect_golden_cuda("symbolic.cu", (x.shrink({{0, n.bind(10)}, {0, 8}}) * 2.0f).sum({1}), {1, 1, 1}, {64, 1, 1});
}

TEST(GoldenCuda, ReductionSharedByABlock) {  // few outputs, a long reduction: GROUP
  expect_golden_cuda("grouped_sum.cu", Tensor::rand({3, 1001}, 1).sum({1}), {3, 1, 1}, {128, 1, 1});
}

TEST(GoldenCuda, HalfMatmulOnTensorCores) {  // TC: a warp's lanes are threadIdx.x, mma.sync per 16 of the reduction
  Tensor a = Tensor::rand({64, 48}, 1).cast(dtypes::float16), b = Tensor::rand({48, 32}, 2).cast(dtypes::float16);
  expect_golden_cuda("tensor_core_matmul.cu", a.matmul(b), {1, 1, 1}, {32, 2, 2});  // 2 x 2 tiles a warp
}

TEST(GoldenCuda, HalfPrecision) {
  Tensor h = Tensor::rand({16, 16}, 1).cast(dtypes::float16);
  expect_golden_cuda("half.cu", (h * h + 1.0f).sum({1}), {1, 1, 1}, {16, 1, 1});
}

}  // namespace
}  // namespace lathe
