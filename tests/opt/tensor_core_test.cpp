// Tensor cores (opt/tensor_core): which reductions TC takes and how it names its loops, what it
// refuses and why, and where the heuristic and the pipeline use it. Its answers are checked on the
// GPU emulator (tests/device/cuda/cuda_backend_test.cpp: GpuEmulator.SixteenBitContractions...).
#include "opt/tensor_core.hpp"

#include <gtest/gtest.h>

#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"
#include "ir/axis.hpp"
#include "ir/toposort.hpp"
#include "opt/heuristic.hpp"

namespace lathe {
namespace {

UOpPtr matmul_ast(int64_t m, int64_t k, int64_t n, DType t) {
  return optimizer_input(test::kernel_ast(Tensor::rand({m, k}, 1).cast(t).matmul(Tensor::rand({k, n}, 2).cast(t))));
}

const Loop& sized(const std::vector<Loop>& loops, int64_t size, bool reduce) {
  for (const Loop& l : loops)
    if (l.size == size && l.reduce == reduce) return l;
  throw std::runtime_error("no loop of size " + std::to_string(size));
}

bool uses_tc(const std::vector<Opt>& opts) {
  return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::TC; });
}

TEST(TensorCore, TakesTheRowsTheColumnsAndTheReductionOfA16BitMatmul) {
  for (DType t : {dtypes::float16, dtypes::bfloat16}) {
    UOpPtr ast = matmul_ast(48, 64, 40, t);  // 3 tiles of 16 rows, 5 of 8 columns: each told apart
    std::vector<Loop> loops = kernel_loops(ast);
    const Loop& k = sized(loops, 64, true);
    std::optional<TensorCoreLoops> fit = tensor_core_loops(ast, k.axis);
    ASSERT_TRUE(fit) << t.name();
    EXPECT_EQ(fit->m.size, 48);
    EXPECT_EQ(fit->n.size, 40);
    EXPECT_EQ(fit->input, t);
    UOpPtr tc = apply_opt(ast, {OptOp::TC, k.axis, 0});
    int wmma = 0;
    for (const UOpPtr& u : toposort(tc)) wmma += u->op() == Ops::WMMA;
    EXPECT_EQ(wmma, 1);
    // tiles of rows and columns, the reduction's steps, a warp's 32 lanes, 4 accumulators in registers
    std::vector<Loop> after = kernel_loops(tc);
    EXPECT_EQ(sized(after, 3, false).axis, fit->m.axis);
    EXPECT_EQ(sized(after, 5, false).axis, fit->n.axis);
    EXPECT_EQ(sized(after, 4, true).axis, k.axis);
    EXPECT_EQ(sized(after, 32, false).kind, AxisKind::Warp);
    EXPECT_EQ(sized(after, 4, false).kind, AxisKind::Upcast);
  }
}

TEST(TensorCore, RefusesWhatItCannotTakeAndSaysWhy) {
  auto refusal = [](const UOpPtr& ast, const Opt& o) -> std::string {
    try {
      apply_opt(ast, o);
    } catch (const OptError& e) {
      return e.what();
    }
    return "";
  };
  UOpPtr f32 = matmul_ast(48, 64, 24, dtypes::float32);
  EXPECT_NE(refusal(f32, {OptOp::TC, sized(kernel_loops(f32), 64, true).axis, 0}).find("float16"), std::string::npos);
  UOpPtr odd = matmul_ast(37, 53, 29, dtypes::float16);
  EXPECT_NE(refusal(odd, {OptOp::TC, sized(kernel_loops(odd), 53, true).axis, 0}).find("multiples of 16, 8 and 16"), std::string::npos);
  UOpPtr ok = matmul_ast(48, 64, 24, dtypes::float16);
  EXPECT_NE(refusal(ok, {OptOp::TC, sized(kernel_loops(ok), 64, true).axis, 1}).find("m16n8k16"), std::string::npos);
  EXPECT_NE(refusal(ok, {OptOp::TC, sized(kernel_loops(ok), 48, false).axis, 0}).find("no reduction's"), std::string::npos);
  UOpPtr maxed = optimizer_input(test::kernel_ast(Tensor::rand({32, 64}, 1).cast(dtypes::float16).max({1})));
  EXPECT_NE(refusal(maxed, {OptOp::TC, sized(kernel_loops(maxed), 64, true).axis, 0}).find("not a sum"), std::string::npos);
  // after another action: TC comes first
  Loop n = sized(kernel_loops(ok), 24, false);
  UOpPtr upcast = apply_opt(ok, {OptOp::UPCAST, n.axis, 2});
  EXPECT_NE(refusal(upcast, {OptOp::TC, sized(kernel_loops(upcast), 64, true).axis, 0}).find("already transformed"), std::string::npos);
}

TEST(TensorCore, OnlyAGpuWithTensorCoresForItsInputsGetsThem) {
  UOpPtr half = matmul_ast(48, 64, 24, dtypes::float16), bf16 = matmul_ast(48, 64, 24, dtypes::bfloat16);
  EXPECT_TRUE(uses_tc(hand_coded_opts(half, gpu_target(80))));
  EXPECT_TRUE(uses_tc(hand_coded_opts(bf16, gpu_target(90))));
  EXPECT_FALSE(uses_tc(hand_coded_opts(half, gpu_target(75)))) << "sm_75 has none lathe uses";
  Target no_bf16 = gpu_target(80);
  no_bf16.tensor_cores[1] = TensorCore{};
  EXPECT_FALSE(uses_tc(hand_coded_opts(bf16, no_bf16)));
  EXPECT_FALSE(uses_tc(hand_coded_opts(matmul_ast(48, 64, 24, dtypes::float32), gpu_target(80))));
  for (int shape : {8, 16})  // a CPU never
    EXPECT_FALSE(uses_tc(hand_coded_opts(half, Target{.vector_bytes = shape * 4, .vector_registers = shape * 2})));
  // the pipeline refuses a TC a CPU is given
  KernelOptions cpu{.optimize = true, .verify = true, .target = {}, .opts = std::vector<Opt>{{OptOp::TC, sized(kernel_loops(half), 64, true).axis, 0}}};
  EXPECT_THROW(build_program(test::kernel_ast(Tensor::rand({48, 64}, 1).cast(dtypes::float16).matmul(Tensor::rand({64, 24}, 2).cast(dtypes::float16))),
                             CRenderer(), cpu),
               OptError);
}

// A warp's lanes take no later action, and its kernel no GROUP: the grid makes them threadIdx.x
// in blocks of 32 whatever else the kernel is given (codegen/launch_grid).
TEST(TensorCore, NoActionTakesTheWarpsLanes) {
  UOpPtr ast = matmul_ast(64, 64, 32, dtypes::float16);
  int64_t k = sized(kernel_loops(ast), 64, true).axis;
  UOpPtr tc = apply_opt(ast, {OptOp::TC, k, 0});
  std::vector<Loop> loops = kernel_loops(tc);
  const Loop& lane = sized(loops, 32, false);
  EXPECT_EQ(lane.kind, AxisKind::Warp);
  const Loop& tiles = sized(loops, 4, false);
  for (const Opt& o : std::vector<Opt>{{OptOp::UPCAST, lane.axis, 2}, {OptOp::LOCAL, lane.axis, 8}, {OptOp::SWAP, tiles.axis, lane.axis},
                                       {OptOp::SWAP, lane.axis, tiles.axis}, {OptOp::PADTO, lane.axis, 64}, {OptOp::GROUP, k, 4}})
    EXPECT_THROW(apply_opt(tc, o), OptError) << to_string(o);
  EXPECT_NO_THROW(apply_opt(tc, {OptOp::UPCAST, tiles.axis, 2})) << "its tiles may";
}

// A warp takes 2 x 2 tiles where the row and column tiles pair up, else what pairs.
TEST(TensorCore, AWarpTakesTwoByTwoTilesWhereTheyPairUp) {
  auto upcasts = [](const std::vector<Opt>& opts) {
    int n = 0;
    for (const Opt& o : opts) n += o.op == OptOp::UPCAST && o.amount == 2;
    return n;
  };
  EXPECT_EQ(upcasts(hand_coded_opts(matmul_ast(64, 64, 32, dtypes::float16), gpu_target(80))), 2);  // 4 x 4 tiles
  EXPECT_EQ(upcasts(hand_coded_opts(matmul_ast(64, 64, 24, dtypes::float16), gpu_target(80))), 1);  // 4 x 3
  EXPECT_EQ(upcasts(hand_coded_opts(matmul_ast(48, 64, 24, dtypes::float16), gpu_target(80))), 0);  // 3 x 3
}

// Sizes the tile does not divide are padded to it first, where that at most doubles the work.
TEST(TensorCore, PadsToTheTileWhereThatAtMostDoublesTheWork) {
  std::vector<Opt> odd = hand_coded_opts(matmul_ast(37, 53, 29, dtypes::float16), gpu_target(80));
  ASSERT_TRUE(uses_tc(odd)) << to_string(odd);
  int pads = 0;
  for (const Opt& o : odd) pads += o.op == OptOp::PADTO;
  EXPECT_EQ(pads, 3) << to_string(odd);
  EXPECT_FALSE(uses_tc(hand_coded_opts(matmul_ast(5, 64, 24, dtypes::float16), gpu_target(80)))) << "5 rows padded to 16";
}

}  // namespace
}  // namespace lathe
