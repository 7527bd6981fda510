// The CPU renderers' software prefetch (codegen/prefetch.hpp): a vector load in a reduction's
// innermost loop that steps a cache line or more through a large buffer asks for the bytes 4 KB
// ahead, once per cache line where the loop streams two lines or more; loads that stay in a
// core's caches, loops that accumulate nothing, and a GPU's kernels get none. (What the kernels
// compute is checked by every suite on both CPU backends; one kernel here is compiled and run by
// each.)
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/pipeline.hpp"
#include "codegen/prefetch.hpp"
#include "codegen/render_c.hpp"
#include "codegen/render_cuda.hpp"
#include "codegen/render_llvm.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The source of `t`'s kernel for an AVX-512 or AVX2 target (64- or 32-byte vectors), two
// threads: LLVM IR, or C.
std::string ir_of(const Tensor& t, int vector_bytes, const Renderer& renderer = LlvmRenderer()) {
  return build_program(test::kernel_ast(t), renderer,
                       {.optimize = true, .verify = true, .target = {.vector_bytes = vector_bytes, .vector_registers = vector_bytes == 64 ? 32 : 16, .threads = 2}})
      .src;
}

size_t prefetches(const std::string& ir) {
  size_t n = 0;
  for (size_t at = ir.find("call void @llvm.prefetch"); at != std::string::npos; at = ir.find("call void @llvm.prefetch", at + 1)) ++n;
  return n;
}

// A 3x3 convolution over 256 channels: its weights (2.4 MB, in 32-channel blocks) are read a
// block of 128 bytes per tap.
TEST(Prefetch, PrefetchesAStreamedOperandAhead) {
  Tensor x = Tensor::rand({1, 256, 9, 9}, 1), w = Tensor::rand({256, 256, 3, 3}, 2);
  w.realize().buffer().set_constant();
  for (int bytes : {64, 32}) {
    std::string ir = ir_of(x.conv2d(w, std::nullopt, {1, 1}, {1, 1}), bytes);
    EXPECT_GT(prefetches(ir), 0u) << bytes << "-byte vectors\n" << ir;
    EXPECT_NE(ir.find("declare void @llvm.prefetch.p0(ptr, i32, i32, i32)"), std::string::npos);
    EXPECT_NE(ir_of(x.conv2d(w, std::nullopt, {1, 1}, {1, 1}), bytes, CRenderer()).find("__builtin_prefetch("), std::string::npos) << bytes;
  }
  ProgramSpec gpu = build_program(test::kernel_ast(x.conv2d(w, std::nullopt, {1, 1}, {1, 1})), CudaRenderer(),
                                  {.optimize = true, .verify = true, .target = gpu_target(80)});
  EXPECT_EQ(gpu.src.find("prefetch"), std::string::npos) << "a GPU's loads are not a core's streams";
}

TEST(Prefetch, NoPrefetchWhereTheOperandStaysInTheCaches) {
  // 40 x 96 of B: 15 KB.
  EXPECT_EQ(prefetches(ir_of(Tensor::rand({8, 40}, 1).matmul(Tensor::rand({40, 96}, 2)), 64)), 0u);
  // A 1x1 convolution over 64 channels: its weights are 64 KB.
  Tensor w = Tensor::rand({256, 64, 1, 1}, 2);
  w.realize().buffer().set_constant();
  EXPECT_EQ(prefetches(ir_of(Tensor::rand({1, 64, 28, 28}, 1).conv2d(w), 64)), 0u);
}

TEST(Prefetch, NoPrefetchInALoopThatAccumulatesNothing) {
  Tensor a = Tensor::rand({1024, 1024}, 1), b = Tensor::rand({1024, 1024}, 2);
  EXPECT_EQ(prefetches(ir_of((a * b + 1.0f).relu(), 64)), 0u);  // 4 MB each, streamed once
}

// A reduction's loop over 4 MB of weights, 32 floats (128 bytes, two lines) a step, read as four
// 8-float vectors (AVX2's): the first vector of each line asks for it, the second asks nothing; a
// load of another buffer asks, and so does a second loop's load of the same lines. Rows of 40
// floats (160 bytes) are not whole lines: a row's two vectors may lie in two, and both ask. A loop
// that streams one line a step (a matmul's column block of 16 at 8 lanes) asks at each load; one
// nested in it that streams two lines a step asks once per line.
TEST(Prefetch, EachLineIsAskedForOnce) {
  auto buffer = [](int64_t slot) {
    return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 1 << 20), {}, slot);
  };
  UOpPtr w = buffer(0), other = buffer(1), rows = buffer(2);
  UOpPtr acc = UOp::make(Ops::DEFINE_REG, dtypes::float32.vec(8).ptr(AddrSpace::Reg, 1), {}, int64_t{0});
  auto load = [](const UOpPtr& b, const UOpPtr& at) {
    return UOp::make(Ops::LOAD, dtypes::float32.vec(8), {UOp::make(Ops::INDEX, b->dtype(), {b, at})});
  };
  std::vector<UOpPtr> program{w, other, rows, acc};
  auto loop = [&](int64_t axis) {
    UOpPtr k = UOp::range(UOp::index_const(8192), axis);
    std::vector<UOpPtr> loads;
    for (int64_t at : {0, 8, 16, 24}) loads.push_back(load(w, k * 32 + at));
    loads.push_back(load(other, k * 32));
    for (int64_t at : {0, 8}) loads.push_back(load(rows, k * 40 + at));
    program.push_back(k);
    program.insert(program.end(), loads.begin(), loads.end());
    program.push_back(UOp::make(Ops::STORE, dtypes::void_,
                                {UOp::make(Ops::INDEX, acc->dtype(), {acc, UOp::index_const(0)}), loads[0]}));
    program.push_back(UOp::make(Ops::END, dtypes::void_, {k}));
    return std::pair{k, loads};
  };
  auto [first, first_loads] = loop(0);
  auto [second, second_loads] = loop(1);
  // A loop of a single line a step, and nested in it one of two lines a step (the innermost open
  // loop is the one that counts).
  auto alone = [&](int64_t axis, int64_t step, std::vector<int64_t> ats) {
    UOpPtr r = UOp::range(UOp::index_const(8192), axis);
    std::vector<UOpPtr> loads;
    for (int64_t at : ats) loads.push_back(load(w, r * step + at));
    program.push_back(r);
    program.insert(program.end(), loads.begin(), loads.end());
    program.push_back(UOp::make(Ops::STORE, dtypes::void_,
                                {UOp::make(Ops::INDEX, acc->dtype(), {acc, UOp::index_const(0)}), loads[0]}));
    return std::pair{r, loads};
  };
  auto [single, halves] = alone(2, 16, {0, 8});
  auto [inner, two_lines] = alone(3, 32, {0, 8, 16, 24});
  program.push_back(UOp::make(Ops::END, dtypes::void_, {inner}));
  program.push_back(UOp::make(Ops::END, dtypes::void_, {single}));
  Prefetcher p(program);
  auto asks = [&](const UOpPtr& loop, const std::vector<UOpPtr>& loads) {
    std::vector<bool> out;
    for (const UOpPtr& l : loads) out.push_back(p.distance(*l, loop).has_value());
    return out;
  };
  std::vector<bool> want{true, false, true, false, true, true, true};
  EXPECT_EQ(asks(first, first_loads), want);
  EXPECT_EQ(asks(second, second_loads), want);
  EXPECT_EQ(asks(single, halves), (std::vector<bool>{true, true})) << "one line a step";
  EXPECT_EQ(asks(inner, two_lines), (std::vector<bool>{true, false, true, false})) << "two lines a step";
  EXPECT_EQ(Prefetcher(program).distance(*first_loads[0], first), std::optional<int64_t>{4096 / 4})
      << "4 KB ahead, in floats";
}

// A matmul whose B (512 x 256, 512 KB, copied into column blocks) streams through the product's
// loop: planned for 8 and for 16 lanes (whatever this CPU has), its kernel prefetches, the CPU
// backend compiles it, and it computes the product.
void expect_prefetching_matmul(const char* compiler, const char* lanes) {
  SCOPED_TRACE(std::string(compiler) + ", " + lanes + " lanes");
  test::ScopedEnv backend("LATHE_CPU_COMPILER", compiler);
  test::ScopedTargetShape shape(lanes);
  std::vector<float> a(9 * 512), b(512 * 256);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 23) - 11) * 0.125f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int64_t>(i * 104729 % 17) - 8) * 0.0625f;
  ExecutionPlan plan = Tensor::from_vector(a, {9, 512}).matmul(Tensor::from_vector(b, {512, 256})).prepare();
  const char* spelling = std::string(compiler) == "llvm" ? "call void @llvm.prefetch" : "__builtin_prefetch(";  // the backend's own
  bool prefetched = false;
  for (const PreparedKernel* k : plan.prepared_kernels()) prefetched = prefetched || k->kernel->code.find(spelling) != std::string::npos;
  ASSERT_TRUE(prefetched);
  plan.execute();
  std::vector<double> want = test::matmul_ref(a, b, 1, false, false, 9, 512, 256);
  std::vector<float> got = plan.output_buffer()->to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
}

TEST(Prefetch, APrefetchingKernelCompilesAndComputesOnEachCpuBackend) {
  for (const char* lanes : {"8", "16"}) {
    expect_prefetching_matmul("clang", lanes);
#ifdef LATHE_HAS_LLVM
    expect_prefetching_matmul("llvm", lanes);
#endif
  }
}

}  // namespace
}  // namespace lathe
