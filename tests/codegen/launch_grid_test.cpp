// Output loops as a GPU's grid and blocks: every position of an elementwise kernel is stored by
// exactly one thread, at sizes blocks do not divide, where the grid is capped below the positions,
// with more loops than a grid has dimensions, and at symbolic sizes; a CPU Target keeps its loops.
#include <gtest/gtest.h>

#include <map>

#include "codegen/launch_grid.hpp"
#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"
#include "ir/eval.hpp"
#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"
#include "opt/action.hpp"
#include "opt/heuristic.hpp"

namespace lathe {
namespace {

// The flat positions the kernel's store writes, over every thread of the grid and every position
// of the loops left in a thread, each as often as it is written (gated-off threads write nothing).
std::map<int64_t, int> stored(const GridLaunch& g, const VarValues& vars = {}) {
  UOpPtr store;
  for (const UOpPtr& u : toposort(g.ast))
    if (u->op() == Ops::STORE) store = u;
  const UOpPtr& idx = store->src(0);
  std::vector<UOpPtr> free;  // launch indices and loops, each enumerated over its largest range
  for (const UOpPtr& u : toposort(idx))
    if (u->op() == Ops::SPECIAL || u->op() == Ops::RANGE) free.push_back(u);
  std::map<int64_t, int> out;
  std::vector<int64_t> at(free.size(), 0);
  while (true) {
    Substitution s;
    for (size_t i = 0; i < free.size(); ++i) s[free[i].get()] = UOp::index_const(at[i]);
    bool runs = true;
    for (const UOpPtr& f : free)  // a loop's position must be below its end for this thread
      if (f->op() == Ops::RANGE) runs &= evaluate_int(substitute(f, s), vars) < evaluate_int(substitute(f->src(0), s), vars);
    if (runs && (idx->src().size() < 3 || evaluate_int(substitute(idx->src(2), s), vars) != 0)) ++out[evaluate_int(substitute(idx->src(1), s), vars)];
    size_t i = 0;
    for (; i < free.size(); ++i) {
      int64_t size = free[i]->src(0)->vmax();  // a launch index's size, a loop's largest end
      if (++at[i] < size) break;
      at[i] = 0;
    }
    if (i == free.size()) return out;
  }
}

void expect_each_once(const std::map<int64_t, int>& got, int64_t n) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), n);
  int64_t next = 0;
  for (auto [pos, times] : got) {
    EXPECT_EQ(pos, next++);
    EXPECT_EQ(times, 1) << "position " << pos;
  }
}

GridLaunch launched(const Tensor& t, const Target& target) { return launch_on_grid(optimizer_input(test::kernel_ast(t)), target); }

TEST(LaunchGrid, CpuKeepsItsLoops) {
  Tensor t = Tensor::rand({300}, 1) * 2.0f;
  GridLaunch g = launched(t, Target{});
  EXPECT_EQ(g.ast, optimizer_input(test::kernel_ast(t)));
  EXPECT_EQ(g.global, (LaunchSize{1, 1, 1}));
  EXPECT_EQ(g.local, (LaunchSize{1, 1, 1}));
}

TEST(LaunchGrid, EveryPositionOnceAtSizesBlocksDoNotDivide) {
  for (int64_t n : {1, 2, 7, 256, 257, 1000}) {
    GridLaunch g = launched(Tensor::rand({n}, 1) * 2.0f, gpu_target(80));
    EXPECT_LE(g.local[0], static_cast<size_t>(kThreadsPerBlock)) << n;
    EXPECT_GE(g.local[0] * g.global[0], static_cast<size_t>(n)) << n;
    expect_each_once(stored(g), n);
  }
}

TEST(LaunchGrid, ACappedGridTakesChunks) {
  Target t = gpu_target(80);
  t.global_max[0] = 2;  // 512 threads for 1000 positions: 2 a thread
  GridLaunch g = launched(Tensor::rand({1000}, 1) * 2.0f, t);
  EXPECT_EQ(g.global[0], 2u);
  expect_each_once(stored(g), 1000);
}

TEST(LaunchGrid, TwoAndFourLoops) {
  // Transposes of stored buffers: loops no merge can join.
  Tensor a = Tensor::from_vector(std::vector<float>(1500, 1.0f), {5, 300}), b = Tensor::from_vector(std::vector<float>(210, 1.0f), {2, 3, 5, 7});
  GridLaunch two = launched(a.permute({1, 0}) * 2.0f, gpu_target(90));
  expect_each_once(stored(two), 1500);
  EXPECT_GT(two.global[1] * two.local[1], 1u) << "both loops launched";
  GridLaunch four = launched(b.permute({3, 2, 1, 0}) * 2.0f, gpu_target(90));
  expect_each_once(stored(four), 210);
  size_t loops = 0;
  for (const UOpPtr& u : toposort(four.ast)) loops += u->op() == Ops::RANGE;
  EXPECT_EQ(loops, 1u) << "three loops launched, the outermost a loop in each thread";
  for (size_t d = 0; d < 3; ++d) EXPECT_GT(four.global[d] * four.local[d], 1u) << d;
}

TEST(LaunchGrid, SymbolicSizeLaunchedForItsLargest) {
  Variable n("n", 1, 300);
  Tensor x = Tensor::rand({300}, 1);
  GridLaunch g = launched(x.shrink({{0, n.bind(300)}}) * 2.0f, gpu_target(80));
  EXPECT_GE(g.local[0] * g.global[0], 300u);
  for (int64_t v : {1, 10, 256, 300}) expect_each_once(stored(g, {{"n", v}}), v);
}

// LOCAL: a loop launched with the block it names, before the others, which share what is left of
// the block; a block the Target cannot hold is the default one. Every position is stored once, no
// Local loop is left, and a CPU's pipeline refuses the action.
TEST(LaunchGrid, ALocalLoopTakesTheBlockItNames) {
  UOpPtr ast = optimizer_input(test::kernel_ast(Tensor::rand({37, 1}, 1) + Tensor::rand({1, 300}, 2)));
  int64_t rows = -1, cols = -1;
  for (const Loop& l : kernel_loops(ast)) (l.size == 37 ? rows : cols) = l.axis;
  ASSERT_GE(rows, 0);
  ASSERT_GE(cols, 0);
  Target narrow = gpu_target(80);
  narrow.local_max[1] = 4;
  struct Case {
    Opt opt;
    Target target;
    LaunchSize block;
  };
  for (const Case& c : {Case{{OptOp::LOCAL, rows, 8}, gpu_target(80), {32, 8, 1}}, Case{{OptOp::LOCAL, cols, 96}, gpu_target(80), {96, 2, 1}},
                        Case{{OptOp::LOCAL, rows, 8}, narrow, {256, 1, 1}}}) {
    GridLaunch g = launch_on_grid(apply_opt(ast, c.opt), c.target);
    EXPECT_EQ(g.local, c.block) << to_string(c.opt);
    expect_each_once(stored(g), 37 * 300);
    for (const Loop& l : kernel_loops(g.ast)) EXPECT_NE(l.kind, AxisKind::Local);
  }
  KernelOptions cpu{.optimize = true, .verify = true, .target = {}, .opts = std::vector<Opt>{{OptOp::LOCAL, rows, 8}}};
  EXPECT_THROW(build_program(test::kernel_ast(Tensor::rand({37, 1}, 1) + Tensor::rand({1, 300}, 2)), CRenderer(), cpu), OptError);
}

// A warp's lanes (tensor cores) are threadIdx.x in blocks of exactly 32, whatever blocks LOCAL
// asks of the other loops.
TEST(LaunchGrid, AWarpsLanesAreAlwaysTheFirst32Threads) {
  UOpPtr ast = optimizer_input(test::kernel_ast(Tensor::rand({64, 64}, 1).cast(dtypes::float16).matmul(Tensor::rand({64, 32}, 2).cast(dtypes::float16))));
  int64_t k = -1;
  for (const Loop& l : kernel_loops(ast)) if (l.reduce) k = l.axis;
  UOpPtr tc = apply_opt(ast, {OptOp::TC, k, 0});
  std::vector<int64_t> tiles;
  for (const Loop& l : kernel_loops(tc)) if (!l.reduce && l.kind == AxisKind::Loop && l.size > 1) tiles.push_back(l.axis);
  ASSERT_EQ(tiles.size(), 2u);
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{{}, {{OptOp::LOCAL, tiles[0], 128}}, {{OptOp::LOCAL, tiles[0], 4}, {OptOp::LOCAL, tiles[1], 2}}}) {
    GridLaunch g = launch_on_grid(apply_opts(tc, opts), gpu_target(80));
    EXPECT_EQ(g.local[0], 32u) << to_string(opts);
    EXPECT_EQ(g.global[0], 1u) << to_string(opts);
  }
}

// A reduction the GPU heuristic groups (few outputs, a long reduction): its threads are the block,
// each output a block of its own; the block's partials live in shared memory. Where they do not
// fit, or the group is larger than a block, the reduction runs ungrouped (a thread per output).
TEST(LaunchGrid, AGroupedReductionIsABlockPerOutput) {
  Tensor rows = Tensor::rand({3, 5000}, 1);
  UOpPtr ast = optimizer_input(test::kernel_ast(rows.sum({1})));
  UOpPtr grouped = apply_opts(ast, hand_coded_opts(ast, gpu_target(80)));
  GridLaunch g = launch_on_grid(grouped, gpu_target(80));
  EXPECT_EQ(g.global, (LaunchSize{3, 1, 1}));
  EXPECT_EQ(g.local, (LaunchSize{256, 1, 1}));
  size_t shared = 0, barriers = 0;
  for (const UOpPtr& u : toposort(g.ast)) shared += u->op() == Ops::DEFINE_LOCAL, barriers += u->op() == Ops::BARRIER;
  EXPECT_EQ(shared, 1u);
  EXPECT_EQ(barriers, 2u) << "the rows gathered by the first threads, then by the first";
  Target small = gpu_target(80), narrow = gpu_target(80);
  small.shared_bytes = 512;  // 256 partial sums of 4 bytes do not fit
  narrow.local_max[0] = narrow.local_total_max = 128;
  for (const Target& t : {small, narrow}) {
    GridLaunch plain = launch_on_grid(grouped, t);
    EXPECT_EQ(plain.global[0] * plain.local[0], 4u) << "three outputs on one thread each, in a block of 4";
    for (const UOpPtr& u : toposort(plain.ast)) EXPECT_NE(u->op(), Ops::DEFINE_LOCAL);
    expect_each_once(stored(plain), 3);
  }
}


bool groups(const std::vector<Opt>& opts) {
  return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::GROUP; });
}

// The heuristic groups only what the grid can place: where the partials would not fit a block's
// shared memory it plans the kernel as it would without GROUP (a thread per output, vectorized).
TEST(LaunchGrid, TheHeuristicGroupsOnlyWhatFitsSharedMemory) {
  UOpPtr ast = optimizer_input(test::kernel_ast(Tensor::rand({3, 5000}, 1).sum({1})));
  EXPECT_TRUE(groups(hand_coded_opts(ast, gpu_target(80))));
  Target small = gpu_target(80);
  small.shared_bytes = 512;
  std::vector<Opt> opts = hand_coded_opts(ast, small);
  EXPECT_FALSE(groups(opts)) << to_string(opts);
  // Four output loops that cannot merge: the three of the largest axes are launched, the
  // fourth's 2 rows stay in each thread: 64 threads x 2 rows x 4 bytes fit 512 bytes, not 256.
  Tensor crossed = Tensor::rand({300, 7, 5, 3, 2}, 9).permute({4, 3, 2, 1, 0});  // (2, 3, 5, 7, 300), strides reversed
  UOpPtr four = optimizer_input(test::kernel_ast(crossed.sum({4})));
  Target fits = gpu_target(80), too_small = gpu_target(80);
  fits.shared_bytes = 512;
  too_small.shared_bytes = 256;
  EXPECT_FALSE(groups(hand_coded_opts(four, too_small)));
  std::vector<Opt> four_opts = hand_coded_opts(four, fits);
  ASSERT_TRUE(groups(four_opts)) << to_string(four_opts);
  GridLaunch g = launch_on_grid(apply_opts(four, four_opts), fits);
  EXPECT_EQ(g.local[0], 64u) << "grouped as planned, not ungrouped by the grid";
}

// A reduction whose own loops have a run-time size is still shared by the block: only output loops
// left in a thread size its partials.
TEST(LaunchGrid, AReductionOfRunTimeLengthIsGrouped) {
  Variable n("n", 1, 64);  // the reduction's outer loop; the grouped one is its 512
  Tensor x = Tensor::rand({3, 64, 512}, 3);
  UOpPtr ast = optimizer_input(test::kernel_ast(x.shrink({{0, 3}, {0, n.bind(40)}, {0, 512}}).sum({1, 2})));
  std::vector<Opt> opts = hand_coded_opts(ast, gpu_target(80));
  ASSERT_TRUE(groups(opts)) << to_string(opts);
  GridLaunch g = launch_on_grid(apply_opts(ast, opts), gpu_target(80));
  EXPECT_EQ(g.global, (LaunchSize{3, 1, 1}));
  EXPECT_GT(g.local[0], 1u) << "the group is the block, not ungrouped";
}

}  // namespace
}  // namespace lathe
