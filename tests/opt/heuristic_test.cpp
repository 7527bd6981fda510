// The default heuristics: what they choose for the kernels they are for, and that every choice,
// for every target width, gives the unoptimized kernel's results on odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "device/cuda/gpu_target.hpp"
#include "ir/axis.hpp"
#include "ir/toposort.hpp"
#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"
#include "tensor/winograd.hpp"

namespace lathe {
namespace {

using test::close;

const Target kAvx512{64, 32, 2}, kAvx2{32, 16, 8}, kSse{16, 16, 1};

std::vector<Opt> opts_for(const Tensor& t, const Target& target) {
  return hand_coded_opts(optimizer_input(test::kernel_ast(t)), target);
}

// The heuristic's actions for the kernel that computes `plan`'s output.
std::vector<Opt> opts_for(const ExecutionPlan& plan, const Target& target) {
  return hand_coded_opts(optimizer_input(test::last_kernel(plan).ast), target);
}

int64_t loop_sized(const Tensor& t, int64_t size, bool reduce = false) {
  for (const Loop& l : kernel_loops(optimizer_input(test::kernel_ast(t))))
    if (l.size == size && l.reduce == reduce) return l.axis;
  return -1;
}

bool has(const std::vector<Opt>& opts, const Opt& o) { return std::find(opts.begin(), opts.end(), o) != opts.end(); }

TEST(Heuristic, MatmulGetsARegisterTileOfVectorsAndRows) {
  Tensor c = test::grid_tensor({64, 96}, 1).matmul(test::grid_tensor({96, 256}, 2));
  int64_t m = loop_sized(c, 64), n = loop_sized(c, 256);
  std::vector<Opt> opts = opts_for(c, kAvx512);
  ASSERT_GE(opts.size(), 3u) << to_string(opts);
  EXPECT_EQ(opts[0], (Opt{OptOp::UPCAST, n, 16})) << to_string(opts);  // 16 float lanes
  EXPECT_EQ(opts[1], (Opt{OptOp::UPCAST, n, 2})) << to_string(opts);   // two vectors
  EXPECT_EQ(opts[2], (Opt{OptOp::UPCAST, m, 8})) << to_string(opts);   // 8 rows: 16 accumulators
  EXPECT_TRUE(has(opts, {OptOp::THREAD, m, 2})) << to_string(opts);
  std::vector<Opt> narrow = opts_for(c, kAvx2);
  ASSERT_FALSE(narrow.empty());
  EXPECT_EQ(narrow[0], (Opt{OptOp::UPCAST, n, 8})) << to_string(narrow);
  EXPECT_TRUE(has(narrow, {OptOp::UPCAST, m, 4})) << to_string(narrow);  // 16 registers hold fewer rows
}

// A large matmul stores its right operand in column blocks of 32, so its columns are (blocks, 32)
// loops (ir/split_loops) and the tile takes a whole block (2 vectors of 16): the loop over
// the blocks is still ordered against the rows (column blocks outside, as for one column loop:
// 15% on 512-2048 square matmuls).
TEST(Heuristic, ABlockedMatmulWalksColumnBlocksOutsideRows) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor c = test::grid_tensor({512, 256}, 5).matmul(test::grid_tensor({256, 512}, 6));
  int64_t rows = loop_sized(c, 512), blocks = loop_sized(c, 16);
  ASSERT_GE(rows, 0);
  ASSERT_GE(blocks, 0) << "512 columns in 16 blocks of 32";
  std::vector<Opt> opts = opts_for(c, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::SWAP, rows, blocks})) << to_string(opts);
}

TEST(Heuristic, ConvolutionVectorizesOutputChannelsAndUnrollsPixels) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor x = test::grid_tensor({1, 32, 14, 14}, 3), w = test::grid_tensor({64, 32, 3, 3}, 4);
  Tensor y = x.conv2d(w, std::nullopt, {1, 1}, {1, 1});
  std::vector<Opt> opts = opts_for(y, kAvx512);
  ASSERT_GE(opts.size(), 3u) << to_string(opts);
  // 64 channels whose weight is stored in blocks of 32: the loops (2 blocks, 32 channels), no
  // division between them (ir/split_loops); a block is two vectors of 16.
  EXPECT_EQ(opts[0], (Opt{OptOp::UPCAST, loop_sized(y, 32), 16})) << to_string(opts);
  EXPECT_EQ(opts[1], (Opt{OptOp::UPCAST, loop_sized(y, 32), 2})) << to_string(opts);
  int64_t width = -1;  // the innermost output loop of 14: the pixels along a row
  for (const Loop& l : kernel_loops(optimizer_input(test::kernel_ast(y))))
    if (l.size == 14 && !l.reduce) width = l.axis;
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, width, 7})) << to_string(opts);  // 7 rows x 2 vectors
}

TEST(Heuristic, RowReductionsVectorizeTheReductionWithPartialSums) {
  Tensor s = test::grid_tensor({64, 4096}, 5).sum({1});
  int64_t k = loop_sized(s, 4096, true);
  std::vector<Opt> opts = opts_for(s, kAvx512);
  ASSERT_GE(opts.size(), 2u) << to_string(opts);
  EXPECT_EQ(opts[0], (Opt{OptOp::UNROLL, k, 16})) << to_string(opts);
  EXPECT_EQ(opts[1], (Opt{OptOp::UNROLL, k, 4})) << to_string(opts);
}

// A @ B^T reduces along the vectors (both operands contiguous along the reduction): its rows and
// columns take as many partial-sum vectors as the register budget holds, 4 x 4 at 32 registers and
// 4 x 2 at 16 (4 x 4 spilled at 8 lanes; attention's scores ran 13% slower): the registers decide,
// not the lanes (4 lanes with 32 registers, as NEON, takes 4 x 4).
TEST(Heuristic, AReductionAlongTheVectorsKeepsItsPartialSumsInTheRegisters) {
  Tensor c = test::grid_tensor({64, 128}, 3).matmul(test::grid_tensor({32, 128}, 4).transpose(0, 1));
  int64_t m = loop_sized(c, 64), n = loop_sized(c, 32), k = loop_sized(c, 128, true);
  // The UPCASTs' product on the rows and on the columns, and that no other loop has one.
  auto upcasts = [&](const std::vector<Opt>& opts) {
    int64_t product = 1;
    for (const Opt& o : opts)
      if (o.op == OptOp::UPCAST) {
        EXPECT_TRUE(o.axis == m || o.axis == n) << to_string(opts);
        product *= o.amount;
      }
    return product;
  };
  const Target neon{16, 32, 1};
  std::vector<Opt> wide = opts_for(c, kAvx512), narrow = opts_for(c, kAvx2), sse = opts_for(c, kSse), many = opts_for(c, neon);
  EXPECT_EQ(wide.at(0), (Opt{OptOp::UNROLL, k, 16})) << to_string(wide);
  EXPECT_TRUE(has(wide, {OptOp::UPCAST, n, 4}) && has(wide, {OptOp::UPCAST, m, 4})) << to_string(wide);
  EXPECT_EQ(upcasts(wide), 16) << to_string(wide);
  EXPECT_EQ(narrow.at(0), (Opt{OptOp::UNROLL, k, 8})) << to_string(narrow);
  EXPECT_EQ(upcasts(narrow), 8) << to_string(narrow);
  EXPECT_EQ(upcasts(sse), 8) << to_string(sse);
  EXPECT_EQ(upcasts(many), 16) << to_string(many);
}

// exp(x - max(x)) over rows (softmax's numerator, one kernel): the max along the row in vectors,
// and the row it stores after it in vectors too (before, its exps ran one lane at a time). A
// row no vector divides keeps its scalar tail.
TEST(Heuristic, WhatARowReductionStoresAfterItIsVectorizedToo) {
  Tensor x = test::grid_tensor({64, 1536}, 5);
  Tensor e = (x - x.max({1}, true)).exp();
  std::vector<Opt> opts = opts_for(e, kAvx512);
  EXPECT_EQ(opts.at(0), (Opt{OptOp::UNROLL, loop_sized(e, 1536, true), 16})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, loop_sized(e, 1536), 16})) << to_string(opts);
  Tensor odd = test::grid_tensor({64, 1537}, 5);
  Tensor eo = (odd - odd.max({1}, true)).exp();
  std::vector<Opt> odd_opts = opts_for(eo, kAvx512);
  ASSERT_FALSE(odd_opts.empty());  // a plan it made, not nothing to look at
  for (const Opt& o : odd_opts) EXPECT_NE(o.op, OptOp::UPCAST) << to_string(odd_opts);
}

TEST(Heuristic, ElementwiseKernelsVectorizeAlongTheirStores) {
  Tensor e = test::grid_tensor({64, 48}, 6) * 2.0f;  // one loop of 64 x 48 (ir/merge_loops)
  EXPECT_EQ(opts_for(e, kAvx512).at(0), (Opt{OptOp::UPCAST, loop_sized(e, 64 * 48), 16}));
  // Transposed: the store is contiguous along the inner output loop, the load is not.
  Tensor t = test::grid_tensor({48, 64}, 7).transpose(0, 1) * 2.0f;
  EXPECT_EQ(opts_for(t, kAvx512).at(0), (Opt{OptOp::UPCAST, loop_sized(t, 48), 16}));
}

// A transposing copy (a weight laid out in blocks of 32 output channels) also steps along the loop
// its input is contiguous in, a vector's worth per iteration: each row's cache line is read whole
// in one iteration. A loop no number up to the lanes divides (37, prime) is left as it is.
TEST(Heuristic, ATransposingCopyReadsWholeLinesOfEachRow) {
  Tensor w = test::grid_tensor({512, 576}, 8).reshape({16, 32, 576}).permute({0, 2, 1}).contiguous();
  std::vector<Opt> opts = opts_for(w, kAvx512);
  ASSERT_GE(opts.size(), 2u) << to_string(opts);
  EXPECT_EQ(opts[0], (Opt{OptOp::UPCAST, loop_sized(w, 32), 16})) << to_string(opts);
  EXPECT_EQ(opts[1], (Opt{OptOp::UPCAST, loop_sized(w, 576), 16})) << to_string(opts);
  EXPECT_EQ(opts_for(w, kAvx2).at(1), (Opt{OptOp::UPCAST, loop_sized(w, 576), 8}));
  Tensor prime = test::grid_tensor({64, 37}, 9).transpose(0, 1).contiguous();
  std::vector<Opt> prime_opts = opts_for(prime, kAvx512);
  ASSERT_FALSE(prime_opts.empty());
  EXPECT_EQ(prime_opts[0], (Opt{OptOp::UPCAST, loop_sized(prime, 64), 16})) << to_string(prime_opts);
  for (const Opt& o : prime_opts) EXPECT_FALSE(o.op == OptOp::UPCAST && o.axis == loop_sized(prime, 37)) << to_string(prime_opts);
}

// Work that does not depend on an output loop of at most kSharedWorkLoop positions (a value
// broadcast along it, fused by the scheduler on that account) is shared: the loop is upcast whole
// and its copies compute the value once. A longer loop is not: there the value is stored.
TEST(Heuristic, WorkBroadcastAlongAShortLoopIsSharedByItsCopies) {
  auto broadcast = [](int64_t along) {
    Tensor t =
        ((test::grid_tensor({5, 64}, 10) * 1.5f + 0.25f).exp() + 1.0f).reshape({5, 1, 64}).expand({5, along, 64});
    Tensor c = test::grid_tensor({along}, 11).reshape({1, along, 1});
    return t * c + t;
  };
  Tensor y = broadcast(6);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  EXPECT_TRUE(has(opts, Opt{OptOp::UPCAST, loop_sized(y, 6), 6})) << to_string(opts);
  for (const Target& narrow : {kAvx2, kSse})
    EXPECT_TRUE(has(opts_for(y, narrow), Opt{OptOp::UPCAST, loop_sized(y, 6), 6})) << to_string(opts_for(y, narrow));
  std::vector<float> x = test::grid_data(5 * 64, 10), c = test::grid_data(6, 11);
  std::vector<double> want;
  for (size_t n = 0; n < 5; ++n)
    for (size_t b = 0; b < 6; ++b)
      for (size_t k = 0; k < 64; ++k) {
        double t = std::exp(static_cast<double>(x[n * 64 + k]) * 1.5 + 0.25) + 1;
        want.push_back(t * c[b] + t);
      }
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 1e-5, 1e-5);
  Tensor wide = broadcast(kSharedWorkLoop + 4);
  for (const Opt& o : opts_for(wide, kAvx512))
    EXPECT_FALSE(o.op == OptOp::UPCAST && o.axis == loop_sized(wide, kSharedWorkLoop + 4))
        << to_string(opts_for(wide, kAvx512));
}

// Winograd's input transform (F(4x4): 6x6 windows, F(2x2): 4x4) is one kernel, its first pass
// fused into its second, which reads it along the second pass's window-long loop: that loop is
// upcast whole at every target shape, so the first pass runs once per window's worth of outputs.
// Stored apart, each pass would be a kernel with two window-long loops and nothing to share.
TEST(Heuristic, AWinogradInputTransformComputesItsFirstPassOncePerRow) {
  Tensor x = test::grid_tensor({1, 16, 13, 11}, 12), w = test::grid_tensor({16, 16, 3, 3}, 13);
  for (int64_t tile : {4, 2}) {
    int64_t window = tile + 2;
    SCOPED_TRACE("F(" + std::to_string(tile) + "x" + std::to_string(tile) + ")");
    Tensor y = detail::winograd_conv2d(x, w, std::nullopt, {1, 1}, 16, tile);
    std::vector<UOpPtr> transforms;  // kernels without a reduction with two window-long loops
    for (const ScheduleItem& item : create_schedule({y.uop()}, default_schedule_context()).items) {
      if (item.is_view()) continue;
      UOpPtr ast = optimizer_input(simplify(item.ast));
      std::vector<Loop> loops = kernel_loops(ast);
      bool reduces = std::any_of(loops.begin(), loops.end(), [](const Loop& l) { return l.reduce; });
      if (!reduces && std::count_if(loops.begin(), loops.end(), [&](const Loop& l) { return l.size == window; }) == 2)
        transforms.push_back(ast);
    }
    ASSERT_EQ(transforms.size(), 1u) << "the input transform's two passes, one kernel";
    for (const Target& target : {kAvx512, kAvx2, kSse}) {
      std::vector<Opt> opts = hand_coded_opts(transforms[0], target);
      bool shared = std::any_of(opts.begin(), opts.end(), [&](const Opt& o) {
        std::optional<Loop> l = find_loop(transforms[0], o.axis);
        return o.op == OptOp::UPCAST && o.amount == window && l && l->size == window;
      });
      EXPECT_TRUE(shared) << target.vector_bytes << "-byte vectors: " << to_string(opts);
    }
  }
}

// Winograd's output transform is one kernel too: the kernel storing the output reads the product
// (a reduction's buffer) and applies both passes of A^T, the first pass not stored. It loops over a
// tile's columns outside the block of output channels it stores, and the first pass does not
// depend on the column: that tile-long loop is upcast whole at every target shape, so the first
// pass runs once per tile row. (Stored apart, the first pass was a kernel of its own writing
// window x tile planes of the product's size, at 8 lanes more time than the second pass.) An
// output of whole tiles, 16 x 12: where the tiles overhang the output (13 x 11), its loops are
// not the tiles' and the first pass is still stored (docs/architecture/tensor.md).
TEST(Heuristic, AWinogradOutputTransformIsOneKernelReadingTheProduct) {
  Tensor x = test::grid_tensor({2, 16, 16, 12}, 14), w = test::grid_tensor({32, 16, 3, 3}, 15);
  for (int64_t tile : {4, 2}) {
    SCOPED_TRACE("F(" + std::to_string(tile) + "x" + std::to_string(tile) + ")");
    Tensor y = detail::winograd_conv2d(x, w, std::nullopt, {1, 1}, 16, tile);
    Schedule s = create_schedule({y.uop()}, default_schedule_context());
    std::set<const UOp*> products;  // buffers reduction kernels store
    const ScheduleItem* last = nullptr;
    for (const ScheduleItem& item : s.items) {
      if (item.is_view()) continue;
      std::vector<Loop> loops = kernel_loops(optimizer_input(simplify(item.ast)));
      if (std::any_of(loops.begin(), loops.end(), [](const Loop& l) { return l.reduce; })) products.insert(item.bufs[0].get());
      last = &item;
    }
    ASSERT_NE(last, nullptr);
    EXPECT_FALSE(products.count(last->bufs[0].get())) << "the output is stored by the transform, not the product";
    EXPECT_TRUE(std::any_of(last->bufs.begin() + 1, last->bufs.end(), [&](const UOpPtr& b) { return products.count(b.get()) > 0; }))
        << "the output transform reads the product itself, not a stored first pass";
    UOpPtr ast = optimizer_input(simplify(last->ast));
    for (const Target& target : {kAvx512, kAvx2, kSse}) {
      std::vector<Opt> opts = hand_coded_opts(ast, target);
      bool shared = std::any_of(opts.begin(), opts.end(), [&](const Opt& o) {
        std::optional<Loop> l = find_loop(ast, o.axis);
        return o.op == OptOp::UPCAST && o.amount == tile && l && l->size == tile && !l->reduce;
      });
      EXPECT_TRUE(shared) << target.vector_bytes << "-byte vectors: " << to_string(opts);
    }
  }
}

TEST(Heuristic, OnlyKernelsWorthItAreThreaded) {
  auto threaded = [](const std::vector<Opt>& opts) {
    return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::THREAD; });
  };
  EXPECT_FALSE(threaded(opts_for(test::grid_tensor({4, 4}, 8) * 2.0f, kAvx512)));
  EXPECT_TRUE(threaded(opts_for(test::grid_tensor({256, 512}, 8) * 2.0f, kAvx512)));
  EXPECT_FALSE(threaded(opts_for(test::grid_tensor({256, 512}, 8) * 2.0f, kSse)));  // one thread allowed
  // An outermost loop of 3 splits badly in 2: the next one (64) is moved outermost instead. (The
  // input is read with its outer two axes swapped, so the loops stay three.)
  Tensor odd = test::grid_tensor({64, 3, 512}, 9).permute({1, 0, 2}) * 2.0f;
  std::vector<Opt> opts = opts_for(odd, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::SWAP, loop_sized(odd, 3), loop_sized(odd, 64)})) << to_string(opts);
}

// Fewer outputs than threads: the reduction's loop is split across them instead (on a target
// with 8 threads; with 2, reductions long enough to be worth it are split by the scheduler into
// two kernels before they get here).
TEST(Heuristic, ReductionsWithFewerOutputsThanThreadsAreGrouped) {
  const Target eight_threads{64, 32, 8};
  Tensor s = test::grid_tensor({5, 60000}, 11).sum({1});
  std::vector<Opt> opts = opts_for(s, eight_threads);
  EXPECT_TRUE(std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::GROUP && o.amount == 8; })) << to_string(opts);
  EXPECT_FALSE(std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::THREAD; })) << to_string(opts);
  ExecutionPlan plan = test::one_kernel_plan(s);
  EXPECT_TRUE(close(test::run_with(plan, opts), test::reference(plan), 1e-5));
  // Enough outputs for every thread: threads take an output loop.
  std::vector<Opt> many = opts_for(test::grid_tensor({64, 60000}, 11).sum({1}), eight_threads);
  EXPECT_TRUE(std::any_of(many.begin(), many.end(), [](const Opt& o) { return o.op == OptOp::THREAD; })) << to_string(many);
}

// `t`'s kernel with the heuristics' actions for each target computes what the unoptimized one does.
void expect_agrees_on_every_target(const Tensor& t) {
  ExecutionPlan plan = test::one_kernel_plan(t);
  std::vector<float> want = test::reference(plan);
  for (const Target& target : {kAvx512, kAvx2, kSse}) {
    std::vector<Opt> chosen = opts_for(plan, target);
    SCOPED_TRACE(to_string(chosen));
    EXPECT_TRUE(close(test::run_with(plan, chosen), want, 1e-5));
  }
}

// A depthwise convolution's input is read anew for each pixel, its weights are not: pixels become
// rows of the register tile (each with its own input vector, all sharing the weight's).
TEST(Heuristic, DepthwiseConvolutionGetsRowsOfPixels) {
  Tensor x = test::grid_tensor({1, 32, 14, 14}, 3), w = test::grid_tensor({32, 1, 3, 3}, 4);
  Tensor y = x.conv2d(w, std::nullopt, {1, 1}, {1, 1}, {1, 1}, 32);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  ASSERT_FALSE(opts.empty());
  int64_t channels = opts[0].axis;
  EXPECT_EQ(opts[0].op, OptOp::UPCAST) << to_string(opts);
  bool rows = false;
  for (const Opt& o : opts) rows = rows || (o.op == OptOp::UPCAST && o.axis != channels && o.amount > 1);
  EXPECT_TRUE(rows) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// A convolution 4 pixels wide fills half the register budget with one row of pixels (4 x 2
// vectors): where no more vectors can be had (32 output channels: one block of two), the rows above
// them become rows of the tile too, 2 of them, 16 accumulators (ResNet-50 on a 97x113 image: the
// last stage's 3x3 convolutions 143 -> 216 GFLOP/s).
TEST(Heuristic, ANarrowConvolutionTakesRowsFromTheLoopAbove) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor y = test::grid_tensor({1, 32, 4, 4}, 3).conv2d(test::grid_tensor({32, 32, 3, 3}, 4), std::nullopt, {1, 1}, {1, 1});
  std::vector<int64_t> fours;  // the output loops of 4: the image's rows, then its columns
  for (const Loop& l : kernel_loops(optimizer_input(test::kernel_ast(y))))
    if (l.size == 4 && !l.reduce) fours.push_back(l.axis);
  ASSERT_EQ(fours.size(), 2u);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, fours[1], 4})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, fours[0], 2})) << to_string(opts);
  expect_agrees_on_every_target(y);
  // 14 pixels wide: 7 x 2 vectors leave no room for a second row.
  Tensor wide = test::grid_tensor({1, 32, 4, 14}, 3).conv2d(test::grid_tensor({64, 32, 3, 3}, 4), std::nullopt, {1, 1}, {1, 1});
  std::vector<Opt> one_row = opts_for(wide, kAvx512);
  EXPECT_FALSE(has(one_row, {OptOp::UPCAST, loop_sized(wide, 4), 2})) << to_string(one_row);
}

// A convolution of 32 to `out` channels over an image `rows` x `width` (kernel kh x kw, padded to
// keep the size), its AVX-512 actions, and its loop over a row's pixels.
struct Strip {
  Tensor y;
  std::vector<Opt> opts;
  int64_t cols;
};
Strip strip(int64_t rows, int64_t width, int64_t kh, int64_t kw, int64_t out = 64) {
  Tensor y = test::grid_tensor({1, 32, rows, width}, 3)
                 .conv2d(test::grid_tensor({out, 32, kh, kw}, 4), std::nullopt, {1, 1}, {kh / 2, kw / 2});
  return {y, opts_for(y, kAvx512), loop_sized(y, width)};
}

// The accumulators of a register tile: what its UPCASTs multiply to, over the vectors' lanes.
int64_t accumulators(const std::vector<Opt>& opts, int64_t lanes) {
  int64_t n = 1;
  for (const Opt& o : opts)
    if (o.op == OptOp::UPCAST) n *= o.amount;
  return n / lanes;
}

// On 16 registers, a two-vector tile whose rows do not slide along a window takes 6 rows (12
// accumulators beside two column vectors and a broadcast) where its reduction is 128 or longer,
// padding its rows where no divisor is near (61 rows as 66); a 64-long one keeps 4 rows, as does a
// tile with a load that follows both rows and vectors, and 32 registers keep 8 rows of 16
// accumulators; a convolution's sliding pixels keep half the file
// (FourVectorsOfChannelsWhereTheyHoldMoreAccumulators). Values on every target.
TEST(Heuristic, TwelveAccumulatorsWhereRowsDoNotSlideOnSixteenRegisters) {
  Tensor c = test::grid_tensor({61, 130}, 1).matmul(test::grid_tensor({130, 48}, 2));
  int64_t m = loop_sized(c, 61);
  std::vector<Opt> narrow = opts_for(c, kAvx2);
  EXPECT_EQ(accumulators(narrow, 8), 12) << to_string(narrow);
  EXPECT_TRUE(has(narrow, {OptOp::PADTO, m, 6})) << to_string(narrow);
  std::vector<Opt> sse = opts_for(c, kSse);
  EXPECT_EQ(accumulators(sse, 4), 12) << to_string(sse);
  std::vector<Opt> wide = opts_for(c, kAvx512);  // half the file (48 columns, 3 vectors: 16 rows of one)
  EXPECT_EQ(accumulators(wide, 16), 16) << to_string(wide);
  expect_agrees_on_every_target(c);
  Tensor short_sum = test::grid_tensor({64, 64}, 1).matmul(test::grid_tensor({64, 48}, 2));
  std::vector<Opt> four = opts_for(short_sum, kAvx2);
  EXPECT_EQ(accumulators(four, 8), 8) << to_string(four);
  // A load inside the reduction that follows both the rows and the second vector (a scale per row
  // and column) would keep the six broadcasts live beside it: 4 rows.
  Tensor both =
      (test::grid_tensor({60, 130}, 1).reshape({60, 130, 1}) * test::grid_tensor({130, 16}, 2).reshape({1, 130, 16}) *
       test::grid_tensor({60, 16}, 3).reshape({60, 1, 16}))
          .sum({1});
  std::vector<Opt> mixed = opts_for(both, kAvx2);
  EXPECT_LE(accumulators(mixed, 8), 8) << to_string(mixed);
  expect_agrees_on_every_target(both);
}

// A wider tile's rows padded where they cost least: 49 rows (a 7x7 map's pixels) as 5 rows of 2
// vectors, padded to 50, rather than 6 padded to 54; 196 (14x14) as 6, padded to 198; 61 as 6,
// padded to 66 (5 rows would pad to 65, one row less for a fifth more steps), on AVX2 and SSE.
// Values on every target.
TEST(Heuristic, WiderTilesPadTheirRowsWhereTheyCostLeast) {
  for (auto [rows, want] : {std::pair{49, 5}, {196, 6}, {61, 6}}) {
    Tensor c = test::grid_tensor({rows, 130}, 1).matmul(test::grid_tensor({130, 16}, 2));
    int64_t m = loop_sized(c, rows);
    for (const Target& t : {kAvx2, kSse}) {
      std::vector<Opt> opts = opts_for(c, t);
      EXPECT_EQ(accumulators(opts, t.vector_bytes / 4), want * 2) << rows << " rows: " << to_string(opts);
      EXPECT_TRUE(has(opts, {OptOp::PADTO, m, want})) << rows << " rows: " << to_string(opts);
    }
    expect_agrees_on_every_target(c);
  }
}

// An image's pixels that slide by two taps (a 3x3 convolution of stride 2) take the wider tile on
// 16 registers as rows that do not slide: 6 pixels x 2 vectors, 12 accumulators. At stride 1 they
// slide by one tap and keep half the file (8); a video's pixels (a 3x3x3 convolution of stride 2,
// three loops sliding) keep it too. Rows of 28 pixels are padded to 30. Values on every target.
TEST(Heuristic, AnImagesPixelsThatSlideByTwoTapsTakeTheWiderTile) {
  test::ScopedTargetShape shape("8");  // the graph's weights in blocks of 16 channels, as an AVX2 plan stores them
  Tensor x = test::grid_tensor({1, 32, 24, 24}, 1), w = test::grid_tensor({32, 32, 3, 3}, 2);
  Tensor two = x.conv2d(w, std::nullopt, {2, 2}, {1, 1});  // 12 x 12 pixels
  std::vector<Opt> wide = opts_for(two, kAvx2);
  EXPECT_EQ(accumulators(wide, 8), 12) << to_string(wide);
  expect_agrees_on_every_target(two);
  // 28 x 28 pixels: rows of 28 padded to 30, 6 a tile; the padded rows re-read the last pixel's window
  Tensor padded = test::grid_tensor({1, 32, 56, 56}, 1).conv2d(w, std::nullopt, {2, 2}, {1, 1});
  std::vector<Opt> rows = opts_for(padded, kAvx2);
  EXPECT_EQ(accumulators(rows, 8), 12) << to_string(rows);
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [](const Opt& o) { return o.op == OptOp::PADTO && o.amount == 6; }))
      << to_string(rows);
  expect_agrees_on_every_target(padded);
  Tensor one = test::grid_tensor({1, 32, 12, 12}, 1).conv2d(w, std::nullopt, {1, 1}, {1, 1});
  std::vector<Opt> half = opts_for(one, kAvx2);
  EXPECT_EQ(accumulators(half, 8), 8) << to_string(half);
  expect_agrees_on_every_target(one);
  Tensor video = test::grid_tensor({1, 32, 6, 12, 12}, 1)
                     .conv(test::grid_tensor({32, 32, 3, 3, 3}, 2), std::nullopt,
                           {.stride = {2, 2, 2}, .padding = {{1, 1}, {1, 1}, {1, 1}}});
  std::vector<Opt> frames = opts_for(video, kAvx2);
  EXPECT_EQ(accumulators(frames, 8), 8) << to_string(frames);
  expect_agrees_on_every_target(video);
}

// Cache blocks: a 1x1 convolution's weights for a block of 16 output channels over 1024 input
// channels (64 KB) overflow L1, and its 14x14 input (784 KB) half of L2, on an AVX2 CPU's caches
// (32 KB, 512 KB): each of 2 threads walks its 8 blocks in groups of 4 (256 KB, half of L2) inside
// the rows of 6 pixels (TILE of the threads' loop, TILE of a thread's blocks, SWAP of the groups
// with the rows). 512 on 28x28: its 32 KB blocks fill L1, so none stays there beside a row's part,
// and a thread's 8 blocks go inside the rows as one group (no TILE or SWAP of groups). Kept in
// order: a 7x7 input (196 KB, which stays in L2), 256 input channels on 14x14 (200 KB, the same),
// 256 and 384 on 28x28 (16 and 24 KB blocks, under L1's 32 KB, though 24 KB and a row's 9 KB
// overflow it: grouped, such a 1x1 ran 8% faster and a matmul 4% slower), 2048 (48 KB rows), an
// L2 of 128 KB (a group of one). Values, grouped, against the unoptimized kernel, and on every target.
TEST(Heuristic, WeightBlocksWalkedInGroupsThatFitHalfOfL2) {
  test::ScopedTargetShape shape("8");  // the graph's weights in blocks of 16 channels, as an AVX2 plan stores them
  Target avx2 = kAvx2;
  avx2.threads = 2, avx2.l1_bytes = int64_t{32} << 10, avx2.l2_bytes = int64_t{512} << 10;
  auto one_by_one = [](int64_t in, int64_t side) {
    return test::grid_tensor({1, in, side, side}, 1)
        .conv2d(test::grid_tensor({256, in, 1, 1}, 2), std::nullopt, {1, 1}, {0, 0});
  };
  auto tiles = [](const std::vector<Opt>& opts) {
    return std::count_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::TILE; });
  };
  Tensor y = one_by_one(1024, 14);
  int64_t blocks = loop_sized(y, 16), pixels = loop_sized(y, 196);
  std::vector<Opt> grouped = opts_for(y, avx2);
  EXPECT_TRUE(has(grouped, {OptOp::TILE, blocks, 8})) << to_string(grouped);
  EXPECT_TRUE(has(grouped, {OptOp::THREAD, blocks, 2})) << to_string(grouped);
  EXPECT_EQ(tiles(grouped), 2) << to_string(grouped);
  // the groups of 4 of a thread's blocks, whose loop then trades places with the pixels'
  auto groups =
      std::find_if(grouped.begin(), grouped.end(), [](const Opt& o) { return o.op == OptOp::TILE && o.amount == 4; });
  ASSERT_NE(groups, grouped.end()) << to_string(grouped);
  EXPECT_TRUE(has(grouped, {OptOp::SWAP, pixels, groups->axis})) << to_string(grouped);
  ExecutionPlan plan = test::one_kernel_plan(y);
  std::vector<float> want = test::reference(plan);
  EXPECT_TRUE(close(test::run_with(plan, opts_for(plan, avx2)), want, 1e-5));
  expect_agrees_on_every_target(y);
  EXPECT_EQ(tiles(opts_for(one_by_one(1024, 7), avx2)), 0) << to_string(opts_for(one_by_one(1024, 7), avx2));
  EXPECT_EQ(tiles(opts_for(one_by_one(256, 14), avx2)), 0) << to_string(opts_for(one_by_one(256, 14), avx2));
  // 2048 input channels: a row of 6 pixels reads 48 KB, more than L1 keeps beside the blocks
  EXPECT_EQ(tiles(opts_for(one_by_one(2048, 14), avx2)), 0) << to_string(opts_for(one_by_one(2048, 14), avx2));
  // 256 input channels on 28x28: 16 KB blocks stay in L1 beside a row's 6 KB, though the 800 KB
  // input overflows half of L2
  EXPECT_EQ(tiles(opts_for(one_by_one(256, 28), avx2)), 0) << to_string(opts_for(one_by_one(256, 28), avx2));
  // 384 on 28x28: a 24 KB block stays under L1, though not beside a row's 9 KB: kept in order
  EXPECT_EQ(tiles(opts_for(one_by_one(384, 28), avx2)), 0) << to_string(opts_for(one_by_one(384, 28), avx2));
  // 512 on 28x28: a 32 KB block fills L1: a thread's 8 blocks (256 KB) are one group, their loop
  // (the TILE's inner one) nested inside the rows as it comes: no SWAP
  Tensor wide = one_by_one(512, 28);
  std::vector<Opt> one_group = opts_for(wide, avx2);
  int64_t wide_blocks = loop_sized(wide, 16);
  EXPECT_TRUE(has(one_group, {OptOp::TILE, wide_blocks, 8})) << to_string(one_group);
  EXPECT_TRUE(has(one_group, {OptOp::THREAD, wide_blocks, 2})) << to_string(one_group);
  EXPECT_EQ(tiles(one_group), 1) << to_string(one_group);
  EXPECT_TRUE(std::none_of(one_group.begin(), one_group.end(), [](const Opt& o) { return o.op == OptOp::SWAP; }))
      << to_string(one_group);
  ExecutionPlan wide_plan = test::one_kernel_plan(wide);
  EXPECT_TRUE(close(test::run_with(wide_plan, opts_for(wide_plan, avx2)), test::reference(wide_plan), 1e-5));
  expect_agrees_on_every_target(wide);
  Target small_l2 = avx2;
  small_l2.l2_bytes = int64_t{128} << 10;
  EXPECT_EQ(tiles(opts_for(y, small_l2)), 0) << to_string(opts_for(y, small_l2));
}

// Four vectors of output channels (two channel blocks at once) where they pad no more than two and
// hold half as many accumulators again, or more where two hold too few to hide the multiply-adds'
// latency (under 8): 17 pixels as 6 rows of 4 vectors at 32 registers (24 accumulators, not 12) and
// as 2 rows of 4 at 16 (8, not 3 x 2), 4 pixels as 4 rows of 4 (16, not 4 x 2 with 2 rows from the
// loop above). Not for 7 pixels (no more than 1 row of 4 divides them: 7 rows of 2 stay), 56 (8
// rows of 2 hold 16, 4 of 4 no more), a depthwise convolution (no broadcast) or an NCHW image whose
// rows would be the extra vectors (they slide along the taps). Values on every target.
TEST(Heuristic, FourVectorsOfChannelsWhereTheyHoldMoreAccumulators) {
  test::ScopedTargetShape shape("16");  // the graph's weights in blocks of 32 channels, as expected below, on any CPU
  Strip prime = strip(3, 17, 1, 7, 128);
  EXPECT_EQ(accumulators(prime.opts, 16), 24) << to_string(prime.opts);
  EXPECT_TRUE(has(prime.opts, {OptOp::UPCAST, prime.cols, 6})) << to_string(prime.opts);
  std::vector<Opt> blocks_of_32 = opts_for(prime.y, kAvx2);  // a block of 32 is 4 vectors of 8 on AVX2: not two blocks
  EXPECT_EQ(accumulators(blocks_of_32, 8), 6) << to_string(blocks_of_32);
  expect_agrees_on_every_target(prime.y);
  {
    test::ScopedTargetShape eight("8");  // the graph in blocks of 16 channels, two vectors of 8, as AVX2 plans store it
    Strip narrow8 = strip(3, 17, 1, 7, 128);
    std::vector<Opt> avx2 = opts_for(narrow8.y, kAvx2);
    EXPECT_EQ(accumulators(avx2, 8), 8) << to_string(avx2);  // 2 x 4, not 3 x 2: 6 would wait on latency
    EXPECT_TRUE(has(avx2, {OptOp::PADTO, narrow8.cols, 2})) << to_string(avx2);
    expect_agrees_on_every_target(narrow8.y);
    // 147 pixels (3 x 7 x 7): two vectors' rows divide them (3), four's pad them by one (148,
    // within a 32nd more), which pays where two hold too few accumulators (6: Inception-v3's
    // 147-pixel layers as 2 x 4 ran 9-18% faster than 7 rows of 1 vector).
    Strip odd8 = strip(1, 147, 1, 3, 64);
    std::vector<Opt> odd = opts_for(odd8.y, kAvx2);
    EXPECT_EQ(accumulators(odd, 8), 8) << to_string(odd);
    EXPECT_TRUE(has(odd, {OptOp::PADTO, odd8.cols, 2})) << to_string(odd);
    expect_agrees_on_every_target(odd8.y);
    // A depthwise convolution reads its input as vectors too: no broadcast to share, two vectors.
    Tensor dw = test::grid_tensor({1, 128, 3, 17}, 3).conv2d(test::grid_tensor({128, 1, 1, 7}, 4), std::nullopt, {1, 1}, {0, 3}, {1, 1}, 128);
    std::vector<Opt> depthwise = opts_for(dw, kAvx2);
    EXPECT_LE(accumulators(depthwise, 8), 8) << to_string(depthwise);
    EXPECT_FALSE(has(depthwise, {OptOp::PADTO, loop_sized(dw, 17), 2})) << to_string(depthwise);
    expect_agrees_on_every_target(dw);
  }
  // An NCHW convolution (4 channels, no blocks) vectorized along a row's pixels: the image's rows
  // slide along the taps and are not taken as more vectors (3 output channels x 2 vectors).
  Tensor nchw = test::grid_tensor({1, 4, 8, 8}, 1).conv2d(test::grid_tensor({6, 4, 3, 3}, 2), std::nullopt, {1, 1}, {1, 1});
  std::vector<Opt> sliding = opts_for(nchw, kSse);
  EXPECT_EQ(accumulators(sliding, 4), 6) << to_string(sliding);
  expect_agrees_on_every_target(nchw);
  Strip narrow = strip(4, 4, 3, 3, 64);
  EXPECT_EQ(accumulators(narrow.opts, 16), 16) << to_string(narrow.opts);
  // the loop over the 2 blocks of 32 channels is the tile's, not the rows above (4 x 2 x 2)
  EXPECT_TRUE(has(narrow.opts, {OptOp::UPCAST, loop_sized(narrow.y, 2), 2})) << to_string(narrow.opts);
  expect_agrees_on_every_target(narrow.y);
  Strip seven = strip(3, 7, 3, 3, 128);
  EXPECT_EQ(accumulators(seven.opts, 16), 14) << to_string(seven.opts);
  EXPECT_TRUE(has(seven.opts, {OptOp::UPCAST, seven.cols, 7})) << to_string(seven.opts);
  Strip wide = strip(2, 56, 3, 3, 128);
  EXPECT_EQ(accumulators(wide.opts, 16), 16) << to_string(wide.opts);
  EXPECT_TRUE(has(wide.opts, {OptOp::UPCAST, wide.cols, 8})) << to_string(wide.opts);
  expect_agrees_on_every_target(wide.y);
}

// 17 pixels (a prime; Inception-v3's 17x17 layers): no divisor of the row comes near the budget,
// so it is padded to 18 and tiled as 6 pixels x 2 vectors (12 accumulators, not 2). Values on
// every target, the padded pixel never stored.
TEST(Heuristic, APrimeRowOfPixelsIsPaddedToTheMostRowsThatAddAnEighth) {
  test::ScopedTargetShape shape("16");  // the graph planned for kAvx512 as a 16-lane CPU stores it, on any CPU
  auto [y, opts, cols] = strip(3, 17, 1, 7);
  ASSERT_GE(cols, 0);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, cols, 6})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, cols, 6})) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// 147 pixels (Inception-v3's second layer): 7 rows of 2 vectors (14 accumulators, 9 loads a step)
// rather than the row padded to 160 as 16 rows of 1 vector (16 accumulators, 17 loads): 2.5x
// faster on Zen 5.
TEST(Heuristic, ARowTileIsCountedWithTheLoadsItNeeds) {
  test::ScopedTargetShape shape("16");  // the graph planned for kAvx512 as a 16-lane CPU stores it, on any CPU
  auto [y, opts, cols] = strip(2, 147, 3, 3);
  ASSERT_GE(cols, 0);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, cols, 7})) << to_string(opts);
  for (const Opt& o : opts) EXPECT_NE(o.op, OptOp::PADTO) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// The images of a batch as tile rows each read a window of their own: where 8 of them overflow L1
// (3x3 windows of 256 channels, 74 KB) the tile's rows are pixels, which slide along one window
// (ResNet-18 at batch 8: its 14x14 and 7x7 layers ~1.6x faster); 8 windows of 128 channels (37 KB)
// stay rows.
TEST(Heuristic, ImagesAreTileRowsOnlyWhileTheirWindowsFitL1) {
  test::ScopedTargetShape shape("16");  // the graph planned for kAvx512 as a 16-lane CPU stores it, on any CPU
  auto conv = [](int64_t channels) {
    return test::grid_tensor({8, channels, 7, 7}, 3).conv2d(test::grid_tensor({32, channels, 3, 3}, 4), std::nullopt, {1, 1}, {1, 1});
  };
  Tensor wide = conv(256), narrow = conv(128);
  std::vector<Opt> pixels = opts_for(wide, kAvx512), images = opts_for(narrow, kAvx512);
  EXPECT_FALSE(has(pixels, {OptOp::UPCAST, loop_sized(wide, 8), 8})) << to_string(pixels);
  EXPECT_TRUE(std::any_of(pixels.begin(), pixels.end(), [&](const Opt& o) { return o.op == OptOp::UPCAST && o.amount == 7; }))
      << to_string(pixels);
  EXPECT_TRUE(has(images, {OptOp::UPCAST, loop_sized(narrow, 8), 8})) << to_string(images);
  expect_agrees_on_every_target(wide);
}

// Threads split a weight larger than a core's cache (1.2 MB) between them, each reading its own
// output channels, rather than taking one image of the batch each and both reading all of it; a
// small weight leaves the split on the images.
TEST(Heuristic, ThreadsSplitAnOperandTooLargeForACoreCache) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor x = test::grid_tensor({2, 64, 4, 4}, 5);
  Tensor big = x.conv2d(test::grid_tensor({512, 64, 3, 3}, 6), std::nullopt, {1, 1}, {1, 1});
  int64_t images = loop_sized(big, 2), blocks = loop_sized(big, 16);  // 512 channels: 16 blocks of 32
  ASSERT_GE(images, 0);
  ASSERT_GE(blocks, 0);
  std::vector<Opt> opts = opts_for(big, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::SWAP, images, blocks})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::THREAD, images, 2})) << to_string(opts);  // the loop now outermost
  expect_agrees_on_every_target(big);
  Tensor small = x.conv2d(test::grid_tensor({32, 64, 3, 3}, 6), std::nullopt, {1, 1}, {1, 1});
  std::vector<Opt> batch = opts_for(small, kAvx512);
  EXPECT_FALSE(std::any_of(batch.begin(), batch.end(), [](const Opt& o) { return o.op == OptOp::SWAP; })) << to_string(batch);
  EXPECT_TRUE(has(batch, {OptOp::THREAD, loop_sized(small, 2), 2})) << to_string(batch);
}

// Winograd's product, a batched one (per point: the tiles x input channels by input channels x
// output channels), splits its threads along the points, which both operands step along, so each
// thread reads half of each. Split along the tiles or the output channels' blocks (the outermost
// loops otherwise), each thread reads all the points' weights or all the transformed input, many
// times a core's L1. At 256 channels and a batch of 8 (a weight larger than L2) the output
// channels' blocks were split and the product ran 1.8x slower in one profile; at 64 channels the
// rule for an operand larger than L2 split the points already. Below L2, the L1 rule decides.
TEST(Heuristic, ThreadsSplitWinogradsProductAlongItsPoints) {
  for (auto [channels, size] : {std::pair<int64_t, int64_t>{64, 56}, {256, 14}})
  for (int64_t lanes : {16, 8}) {
    Tensor x = test::grid_tensor({8, channels, size, size}, 8), w = test::grid_tensor({channels, channels, 3, 3}, 9);
    test::ScopedTargetShape shape(std::to_string(lanes));
    Tensor y = detail::winograd_conv2d(x, w, std::nullopt, {1, 1}, lanes, 4);
    UOpPtr product;
    for (const ScheduleItem& item : create_schedule({y.uop()}, default_schedule_context()).items) {
      if (item.is_view()) continue;
      UOpPtr ast = optimizer_input(simplify(item.ast));
      std::vector<Loop> loops = kernel_loops(ast);
      if (std::any_of(loops.begin(), loops.end(), [](const Loop& l) { return l.reduce; })) product = ast;
    }
    ASSERT_NE(product, nullptr);
    Target target = lanes == 16 ? kAvx512 : kAvx2;
    target.threads = 2;
    std::vector<Opt> opts = hand_coded_opts(product, target);
    auto thread = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::THREAD; });
    ASSERT_NE(thread, opts.end()) << to_string(opts);
    std::optional<Loop> split = find_loop(apply_opts(product, std::vector<Opt>(opts.begin(), thread)), thread->axis);
    ASSERT_TRUE(split.has_value());
    EXPECT_EQ(split->size, 36) << lanes << " lanes: " << to_string(opts);
  }
  // Both operands within L2 (451 KB of transformed input), so only the L1 rule decides: a batch
  // of 36 products of tiles x C by C x C. At 64 channels (49 tiles) the weights each thread
  // would read whole over a split of the tiles are 590 KB, more than L1: the points are split. At
  // 8 channels (392 tiles) they are 9 KB, which each thread reads whole at no cost (as a depthwise
  // convolution's few weights): the tiles stay the threads'.
  for (int64_t c : {64, 8}) {
    int64_t tiles = 49 * 64 / c;
    Tensor v = test::grid_tensor({tiles, 36, c}, 12), u = test::grid_tensor({36, c, c}, 13);
    Tensor m = (v.unsqueeze(-1) * u.reshape({1, 36, c, c})).sum({2});
    UOpPtr ast = optimizer_input(test::kernel_ast(m));
    Target target = kAvx512;
    target.threads = 2;
    std::vector<Opt> opts = hand_coded_opts(ast, target);
    auto thread = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::THREAD; });
    ASSERT_NE(thread, opts.end()) << c << " channels: " << to_string(opts);
    std::optional<Loop> split = find_loop(apply_opts(ast, std::vector<Opt>(opts.begin(), thread)), thread->axis);
    ASSERT_TRUE(split.has_value());
    if (c == 64) {
      EXPECT_EQ(split->size, 36) << c << " channels: " << to_string(opts);
    } else {  // the tiles' loop (what the register tile left of it), never moved
      EXPECT_NE(split->size, 36) << c << " channels: " << to_string(opts);
      EXPECT_FALSE(std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::SWAP; }))
          << to_string(opts);
    }
    expect_agrees_on_every_target(m);
  }
}

// A kernel without a reduction that stores its input in another order splits its threads along
// the loop the input steps farthest along (the input's outermost, as the kernel that stored it was
// split), where each thread's part of the output still comes in runs of 4 KB or more: (8, 64,
// 1024) stored as (64, 8, 1024) splits the 8, not the 64. With runs of 2 KB (rows of 512), an
// input the outermost loop does not split (one repeated 64 times), or one smaller than the output
// (a column of 8 x 64 spread along rows of 1024), the outermost loop stays the threads'.
TEST(Heuristic, ThreadsFollowTheLayoutOfWhatAnElementwiseKernelReads) {
  auto swapped = [](int64_t row) { return (test::grid_tensor({8, 64, row}, 7).permute({1, 0, 2}) + 1.0f).contiguous(); };
  Tensor y = swapped(1024);
  int64_t outer = loop_sized(y, 64), inner = loop_sized(y, 8);
  ASSERT_GE(outer, 0);
  ASSERT_GE(inner, 0);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::SWAP, outer, inner})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::THREAD, outer, 2})) << to_string(opts);  // the 8 now outermost
  expect_agrees_on_every_target(y);
  Tensor short_rows = swapped(512);
  std::vector<Opt> kept = opts_for(short_rows, kAvx512);
  EXPECT_FALSE(std::any_of(kept.begin(), kept.end(), [](const Opt& o) { return o.op == OptOp::SWAP; })) << to_string(kept);
  EXPECT_TRUE(has(kept, {OptOp::THREAD, loop_sized(short_rows, 64), 2})) << to_string(kept);
  expect_agrees_on_every_target(short_rows);
  auto swaps = [](const std::vector<Opt>& opts) { return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::SWAP; }); };
  Tensor repeated = (test::grid_tensor({1, 8, 1024}, 7).expand({64, 8, 1024}) + 1.0f).contiguous();
  std::vector<Opt> whole = opts_for(repeated, kAvx512);
  EXPECT_FALSE(swaps(whole)) << to_string(whole);
  expect_agrees_on_every_target(repeated);
  Tensor spread = (test::grid_tensor({8, 64, 1}, 7).expand({8, 64, 1024}).permute({1, 0, 2}) + 1.0f).contiguous();
  std::vector<Opt> small = opts_for(spread, kAvx512);
  EXPECT_FALSE(swaps(small)) << to_string(small);
  expect_agrees_on_every_target(spread);
}

// A kernel that reads a tile-major layout (71 tiles of 192 channels) and stores channel blocks
// (12 blocks of 16, each a run over the tiles: a Winograd output transform's second pass) takes
// the loop over the blocks innermost of its output loops, and its threads leave it there, so it
// reads its input in order: a step of that loop reads the next 64 bytes and stores to one of 12
// streams 4.5 KB apart. It keeps the blocks outermost where more than two streams would be a
// multiple of 4 KB apart (64 tiles: all 12 streams, 4 KB apart; 96 tiles, 6 KB: 6 on each of two
// offsets; 784 tiles, 49 KB: 3 on each of four, where 8 blocks, two on each, swap), where there
// would be more than 16 (32 blocks), where it stores more than it reads (each tile's channels stored twice),
// and on a GPU, whose warps store along the output's own order.
TEST(Heuristic, AnElementwiseKernelReadsItsInputInTheOrderItLies) {
  auto blocks_of = [](int64_t tiles, int64_t blocks) {
    return (test::grid_tensor({tiles, blocks * 16}, 7).reshape({tiles, blocks, 16}).permute({1, 0, 2}) + 1.0f)
        .contiguous();
  };
  auto swaps = [](const std::vector<Opt>& opts) {
    return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::SWAP; });
  };
  // The size of the innermost output loop of the kernel of `t` after `opts`.
  auto innermost = [](const Tensor& t, const std::vector<Opt>& opts) {
    int64_t size = 0;
    for (const Loop& l : kernel_loops(apply_opts(optimizer_input(test::kernel_ast(t)), opts)))
      if (!l.reduce && l.kind != AxisKind::Upcast) size = l.size;
    return size;
  };
  Tensor y = blocks_of(71, 12);
  ASSERT_GE(loop_sized(y, 12), 0);
  ASSERT_GE(loop_sized(y, 71), 0);
  ASSERT_LT(loop_sized(y, 12), loop_sized(y, 71)) << "the blocks start outermost";
  // The same over 71 x 71 tiles, enough work for threads: they split the tiles' rows.
  Tensor image =
      (test::grid_tensor({71, 71, 192}, 7).reshape({71, 71, 12, 16}).permute({2, 0, 1, 3}) + 1.0f).contiguous();
  for (const Target& t : {kAvx512, kAvx2}) {
    std::vector<Opt> opts = opts_for(y, t), threaded = opts_for(image, t);
    EXPECT_EQ(innermost(y, opts), 12) << to_string(opts);
    EXPECT_EQ(innermost(image, threaded), 12) << to_string(threaded);
    EXPECT_TRUE(has(threaded, {OptOp::THREAD, 0, t.threads})) << to_string(threaded);
    for (auto [tiles, blocks] : std::vector<std::pair<int64_t, int64_t>>{{64, 12}, {96, 12}, {784, 12}, {71, 32}}) {
      Tensor kept = blocks_of(tiles, blocks);
      EXPECT_NE(innermost(kept, opts_for(kept, t)), blocks)
          << tiles << " x " << blocks << ": " << to_string(opts_for(kept, t));
    }
    EXPECT_EQ(innermost(blocks_of(784, 8), opts_for(blocks_of(784, 8), t)), 8);
  }
  expect_agrees_on_every_target(y);
  expect_agrees_on_every_target(image);
  expect_agrees_on_every_target(blocks_of(64, 12));
  // Each tile's 12 blocks stored twice (a broadcast loop of 2 outside them).
  Tensor twice =
      (test::grid_tensor({71, 192}, 7).reshape({1, 71, 12, 16}).expand({2, 71, 12, 16}).permute({0, 2, 1, 3}) + 1.0f)
          .contiguous();
  ASSERT_GE(loop_sized(twice, 2), 0);
  ASSERT_GE(loop_sized(twice, 12), 0);
  EXPECT_FALSE(swaps(opts_for(twice, kAvx512))) << to_string(opts_for(twice, kAvx512));
  EXPECT_FALSE(swaps(hand_coded_opts(optimizer_input(test::kernel_ast(y)), gpu_target(80))))
      << "a GPU keeps the output's order";
}

// 1000 output channels (a classifier's 1x1 convolution): no vector of 16 divides them. The weight
// is stored in channel blocks of 16 padded to 1008 (tensor/nn.cpp), so the channel loop is padded
// to whole vectors of 16 whose padded lanes read inside the weight: every weight load in the
// reduction is one vector. An elementwise loop of 1000 is not padded: its padded lanes would load
// lane by lane.
TEST(Heuristic, AChannelLoopNoVectorDividesIsPaddedToWholeVectors) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor y = test::grid_tensor({1, 32, 3, 5}, 12).conv2d(test::grid_tensor({1000, 32, 1, 1}, 13));
  ExecutionPlan plan = test::one_kernel_plan(y);
  int64_t channels = test::axis_sized(plan, 1000);
  std::vector<Opt> opts = opts_for(plan, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, channels, 16})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 16})) << to_string(opts);
  ProgramSpec p = build_program(test::last_kernel(plan).ast, CRenderer(), {.verify = true, .opts = opts});
  int weight_vectors = 0;
  for (const UOpPtr& u : toposort(p.ast)) weight_vectors += u->op() == Ops::LOAD && u->dtype().count() == 16;
  EXPECT_GE(weight_vectors, 1) << p.src;
  expect_agrees_on_every_target(y);
  for (const Opt& o : opts_for(test::grid_tensor({1000}, 14) * 2.0f, kAvx512)) EXPECT_NE(o.op, OptOp::PADTO) << to_string(o);
  // Vectors of two float64 lanes are no vectors to pad to (as no loop is split for them unpadded).
  Tensor y64 = test::grid_tensor({1, 32, 3, 5}, 12).cast(dtypes::float64).conv2d(test::grid_tensor({1001, 32, 1, 1}, 13).cast(dtypes::float64));
  for (const Opt& o : opts_for(y64, kSse)) EXPECT_NE(o.op, OptOp::PADTO) << to_string(o);
}

// The same padded channel loop where the output is stored NCHW and a residual is added (RegNetY's
// 440-channel projections): the stores and the residual's loads are strided across the lanes and
// the bias is clamped in the padded ones, each once per output, and the weight's vector load runs
// a reduction's length of times; so 72 channels are padded to vectors of 16, not split in 9 of 8
// (the 440-channel kernels ran 1.5x faster padded).
TEST(Heuristic, APaddedChannelLoopIsTakenForItsWeightBesideAnNchwOutput) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor x = test::grid_tensor({1, 72, 7, 7}, 15);
  Tensor y = (x.conv2d(test::grid_tensor({72, 72, 1, 1}, 16), test::grid_tensor({72}, 17)) + x).relu();
  ExecutionPlan plan = test::one_kernel_plan(y);
  int64_t channels = test::axis_sized(plan, 72);
  ASSERT_GE(channels, 0);
  std::vector<Opt> opts = opts_for(plan, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, channels, 16})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 16})) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// A 1x1 convolution whose NCHW output adds three stored values: each output's store and three
// loads step across the channel lanes, once per output, beside the weight's vector load a
// reduction's length of times. The channels still become the lanes (they ran scalar, 30x slower,
// when the strided accesses outweighed the weight's in vector_axis's count).
TEST(Heuristic, AConvolutionsLanesOutweighWhatItsNchwOutputReadsOncePerOutput) {
  test::ScopedTargetShape shape("8");  // the graph stores for 8 lanes, as expected below, on any CPU
  Tensor x = test::grid_tensor({1, 64, 7, 7}, 21);
  Tensor y = x.conv2d(test::grid_tensor({64, 64, 1, 1}, 22)) + test::grid_tensor({1, 64, 7, 7}, 23) +
             test::grid_tensor({1, 64, 7, 7}, 24) + test::grid_tensor({1, 64, 7, 7}, 25);
  ExecutionPlan plan = test::one_kernel_plan(y);
  int64_t channels = test::axis_sized(plan, 16);  // 64 channels as the weight's 4 blocks of 16
  ASSERT_GE(channels, 0);
  std::vector<Opt> opts = opts_for(plan, kAvx2);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 8})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 2})) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// A convolution storing its output in channel blocks, (N, C/16, H, W, 16) as the next
// convolution reads it: a block of 16 channels fills the lanes (its stores are whole vectors), and
// the second vector of each row is the next block (the block loop upcast by 2).
TEST(Heuristic, ABlockedConvolutionTakesTwoChannelBlocksPerRow) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  Tensor h = test::grid_tensor({1, 16, 8, 8}, 15).conv2d(test::grid_tensor({64, 16, 3, 3}, 16), std::nullopt, {1, 1}, {1, 1}).relu();
  Tensor stored = h.reshape({1, 4, 16, 8, 8}).permute({0, 1, 3, 4, 2}).contiguous();
  ExecutionPlan plan = test::one_kernel_plan(stored);
  std::vector<Opt> opts = opts_for(plan, kAvx512);
  // The 4 blocks of 16 are (2, 2) loops: the weight's blocks of 32 and the half of one each
  // block of 16 is (ir/split_loops). The second vector is the next block of 16.
  int64_t lanes = test::axis_sized(plan, 16);
  ASSERT_GE(lanes, 0);
  EXPECT_EQ(test::axis_sized(plan, 4), -1);
  std::vector<int64_t> halves;  // the output loops of 2
  for (const Loop& l : test::loops_of(plan))
    if (l.size == 2 && !l.reduce) halves.push_back(l.axis);
  ASSERT_EQ(halves.size(), 2u);
  int64_t half_of_block = std::max(halves[0], halves[1]);  // the inner one: next to the lanes in the nest
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, lanes, 16})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, half_of_block, 2})) << to_string(opts);
  expect_agrees_on_every_target(stored);
}

// At 8 lanes (16 registers), 104 output channels are 13 vectors: an odd count, so a row of the
// register tile would take one vector, each broadcast feeding one multiply-add. The weight is
// stored in blocks of two registers padded to 112 (Blocks::stored), and the kernel pads its
// channels to pairs of vectors: the channel loop itself (PADTO 16) where the output is NCHW, the
// loop over 13 blocks of 8 (PADTO 2) where the output is stored in blocks, as the next
// convolution reads it. Wider registers keep their tiles; every target computes the same values.
TEST(Heuristic, AnOddCountOfChannelVectorsIsPaddedToPairs) {
  test::ScopedTargetShape shape("8");  // the graph stores for 8 lanes, as expected below, on any CPU
  Tensor y = test::grid_tensor({1, 48, 5, 7}, 18)
                 .conv2d(test::grid_tensor({104, 48, 1, 1}, 19), test::grid_tensor({104}, 20))
                 .relu();
  {
    ExecutionPlan plan = test::one_kernel_plan(y);
    int64_t channels = test::axis_sized(plan, 104);
    ASSERT_GE(channels, 0);
    std::vector<Opt> opts = opts_for(plan, kAvx2);
    EXPECT_TRUE(has(opts, {OptOp::PADTO, channels, 16})) << to_string(opts);
    EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 8})) << to_string(opts);
    EXPECT_TRUE(has(opts, {OptOp::UPCAST, channels, 2})) << to_string(opts);
    for (const Opt& o : opts_for(plan, kAvx512)) EXPECT_NE(o, (Opt{OptOp::PADTO, channels, 32})) << to_string(o);
    expect_agrees_on_every_target(y);
  }
  Tensor stored = y.reshape({1, 13, 8, 5, 7}).permute({0, 1, 3, 4, 2}).contiguous();
  ExecutionPlan plan = test::one_kernel_plan(stored);
  int64_t blocks = test::axis_sized(plan, 13);
  ASSERT_GE(blocks, 0);
  std::vector<Opt> opts = opts_for(plan, kAvx2);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, blocks, 2})) << to_string(opts);
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, blocks, 2})) << to_string(opts);
  for (const Opt& o : opts_for(plan, kAvx512)) EXPECT_NE(o, (Opt{OptOp::PADTO, blocks, 2})) << to_string(o);
  expect_agrees_on_every_target(stored);
  // Five blocks would grow by a fifth: the tile keeps one vector a row.
  Tensor five = test::grid_tensor({1, 48, 6, 7}, 18)
                    .conv2d(test::grid_tensor({40, 48, 1, 1}, 19))
                    .reshape({1, 5, 8, 6, 7})
                    .permute({0, 1, 3, 4, 2})
                    .contiguous();
  ExecutionPlan five_plan = test::one_kernel_plan(five);
  int64_t five_blocks = test::axis_sized(five_plan, 5);
  ASSERT_GE(five_blocks, 0);
  for (const Opt& o : opts_for(five_plan, kAvx2))
    EXPECT_FALSE(o.op == OptOp::PADTO && o.axis == five_blocks) << to_string(o);
}

// A row loop of prime size (109 pixels, as SqueezeNet's first convolution makes) has no divisor
// for the register tile: it is padded to the budget's multiple and tiled (its loads clamped to the
// last pixel, its stores gated), and the result is the unoptimized kernel's.
TEST(Heuristic, PrimeRowLoopsArePaddedToTheRegisterTile) {
  Tensor x = test::grid_tensor({1, 3, 41, 217}, 3), w = test::grid_tensor({32, 3, 3, 3}, 4);
  Tensor y = x.conv2d(w, test::grid_tensor({32}, 5), {2, 2}, {1, 1});  // 21 x 109 pixels
  int64_t width = loop_sized(y, 109);
  ASSERT_GE(width, 0);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, width, 8})) << to_string(opts);  // 2 vectors x 8 rows
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, width, 8})) << to_string(opts);
  expect_agrees_on_every_target(y);
}

// A matmul over a symbolic count of rows (the boxes a detector kept, at most 37 here) takes a
// register tile of rows all the same: the loop runs to the next multiple of the tile at each run,
// its stores past the count gated. Without it each row fed its vectors one multiply-add at a time
// (Faster R-CNN's box head, 150 x 12544 x 1024: 77 against 197 GFLOP/s). Every bound count, on
// every target width, from none to the bound, agrees with plain loops.
TEST(Heuristic, ASymbolicRowLoopIsPaddedToTheRegisterTile) {
  const int64_t most = 37, k = 45, n = 96;
  auto a = test::data(static_cast<size_t>(most * k), 31), b = test::data(static_cast<size_t>(k * n), 32);
  Variable rows("rows", 0, most);
  Tensor y = test::f32(a, {most, k}).shrink({{0, rows.bind(20)}, {0, k}}).matmul(test::f32(b, {k, n})).relu();
  int64_t m = loop_sized(y, most);
  ASSERT_GE(m, 0);
  std::vector<Opt> opts = opts_for(y, kAvx512);
  EXPECT_TRUE(has(opts, {OptOp::PADTO, m, 8})) << to_string(opts);  // 2 vectors x 8 rows
  EXPECT_TRUE(has(opts, {OptOp::UPCAST, m, 8})) << to_string(opts);
  std::vector<Opt> narrow = opts_for(y, kAvx2);  // 16 registers: 2 vectors x 4 rows
  EXPECT_TRUE(has(narrow, {OptOp::PADTO, m, 4})) << to_string(narrow);
  EXPECT_TRUE(has(narrow, {OptOp::UPCAST, m, 4})) << to_string(narrow);
  std::vector<double> want = test::matmul_ref(a, b, 1, false, false, most, k, n);
  for (const char* lanes : {"16", "8", "4"}) {
    ExecutionPlan plan = Tensor::prepare({y}, {.threads = 2, .shape = TargetShape::parse(lanes)});
    for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{13}, int64_t{20}, most}) {
      plan.execute_with_vars({{"rows", t}});
      std::vector<float> got = plan.output_buffer()->to_vector<float>();
      for (int64_t i = 0; i < t * n; ++i) {
        double w = std::max(0.0, want[static_cast<size_t>(i)]);
        ASSERT_NEAR(got[static_cast<size_t>(i)], w, 1e-4 * (1 + std::abs(w))) << lanes << " lanes, " << t << " rows, " << i;
      }
    }
  }
}

// A convolution over a batch of symbolic size (a model served with dynamic batching) keeps its
// pixels as the tile's rows: the batch, padded to a tile of images, computed 8 images for a run of
// one (ResNet-18 prepared for batches up to 16 ran one image in 35 ms against 15).
TEST(Heuristic, AConvolutionOverASymbolicBatchTakesPixelsAsRows) {
  Variable n("n", 1, 16);
  Tensor x = test::grid_tensor({16, 16, 9, 24}, 3).shrink({{0, n.bind(16)}, {0, 16}, {0, 9}, {0, 24}});
  Tensor y = x.conv2d(test::grid_tensor({32, 16, 3, 3}, 4), std::nullopt, {1, 1}, {1, 1});
  std::optional<Loop> batch, pixels;
  for (const Loop& l : kernel_loops(optimizer_input(test::kernel_ast(y)))) {
    if (l.symbolic) batch = l;
    if (!l.reduce && !l.symbolic && l.size == 24) pixels = l;  // along a row of the image
  }
  ASSERT_TRUE(batch) << "the batch is a symbolic loop";
  ASSERT_TRUE(pixels) << "a row's pixels are a loop of 24";
  for (const Target& target : {kAvx512, kAvx2}) {
    std::vector<Opt> opts = opts_for(y, target);
    for (const Opt& o : opts) EXPECT_FALSE(o.axis == batch->axis && (o.op == OptOp::PADTO || o.op == OptOp::UPCAST)) << to_string(opts);
    bool rows = std::any_of(opts.begin(), opts.end(), [&](const Opt& o) { return o.op == OptOp::UPCAST && o.axis == pixels->axis && o.amount > 1; });
    EXPECT_TRUE(rows) << "the pixels are the tile's rows: " << to_string(opts);
  }
}

// The output loops of a kernel in the order they nest once its actions are applied.
std::vector<Loop> planned_outputs(const Tensor& t, const std::vector<Opt>& opts) {
  std::vector<Loop> outs;
  for (const Loop& l : kernel_loops(apply_opts(optimizer_input(test::kernel_ast(t)), opts)))
    if (!l.reduce && (l.kind == AxisKind::Loop || l.kind == AxisKind::Thread)) outs.push_back(l);
  return outs;
}

// A convolution along depth alone (R(2+1)D's 3x1x1: each output frame a sum over three input
// frames of every channel at the same pixel) over an input larger than L2: the pixels run
// outermost, then the frames (neighbours read the same input frames), then the blocks of output
// channels, so each row of pixels is read from beyond L2 once for every frame and block. With the
// blocks outside the pixels, each block read the whole input again (60-73 GFLOP/s on a Zen 3,
// 97-104 in this order). An input that fits L2 keeps the order it had.
TEST(Heuristic, ADepthOnlyConvolutionTakesItsPixelsThroughEveryFrameAndBlock) {
  const int64_t frames = 8, pixels = 40;
  Window depth{.stride = {1, 1, 1}, .padding = {{1, 1}, {0, 0}, {0, 0}}, .dilation = {1, 1, 1}};
  Tensor w = test::grid_tensor({32, 48, 3, 1, 1}, 2);
  Tensor large = test::grid_tensor({1, 48, frames, pixels, pixels}, 1).conv(w, std::nullopt, depth);  // 2.5 MB in
  for (const Target& target : {kAvx512, kAvx2}) {
    std::vector<Opt> opts = opts_for(large, target);
    SCOPED_TRACE(to_string(opts));
    std::vector<Loop> outs = planned_outputs(large, opts);
    ASSERT_GE(outs.size(), 3u);
    EXPECT_EQ(outs[0].kind, AxisKind::Thread) << "the threads split the outermost loop";
    EXPECT_NE(outs[0].size, frames) << "the pixels outermost, not the frames";
    EXPECT_EQ(outs[1].size, frames) << "then the frames, the blocks inside them";
  }
  expect_agrees_on_every_target(large);
  Tensor small = test::grid_tensor({1, 48, frames, 8, 8}, 1).conv(w, std::nullopt, depth);  // 98 KB in
  std::vector<Opt> opts = opts_for(small, kAvx2);
  std::vector<Loop> outs = planned_outputs(small, opts);
  ASSERT_FALSE(outs.empty()) << to_string(opts);
  EXPECT_EQ(outs[0].size, frames) << to_string(opts);
  expect_agrees_on_every_target(small);
}

// Every kernel, every target: the heuristics' actions give the unoptimized results.
TEST(Heuristic, AgreesWithTheUnoptimizedKernelOnOddSizes) {
  Tensor conv_in = test::grid_tensor({2, 6, 11, 13}, 10);
  std::vector<std::pair<std::string, Tensor>> kernels = {
      {"matmul 1x1x1", test::grid_tensor({1, 1}, 1).matmul(test::grid_tensor({1, 1}, 2))},
      {"matmul 13x7x48", test::grid_tensor({13, 7}, 1).matmul(test::grid_tensor({7, 48}, 2))},
      {"matmul 17x31x33", test::grid_tensor({17, 31}, 1).matmul(test::grid_tensor({31, 33}, 2))},
      {"matmul 64x64x64", test::grid_tensor({64, 64}, 1).matmul(test::grid_tensor({64, 64}, 2))},
      {"matmul 3x5x1000", test::grid_tensor({3, 5}, 1).matmul(test::grid_tensor({5, 1000}, 2))},
      {"matmul 1x256x40", test::grid_tensor({1, 256}, 1).matmul(test::grid_tensor({256, 40}, 2))},
      {"matmul A @ B^T", test::grid_tensor({9, 32}, 1).matmul(test::grid_tensor({24, 32}, 2).transpose(0, 1))},
      {"batched matmul", test::grid_tensor({3, 8, 16}, 1).matmul(test::grid_tensor({3, 16, 32}, 2))},
      {"conv 3x3 pad 1", conv_in.conv2d(test::grid_tensor({16, 6, 3, 3}, 3), test::grid_tensor({16}, 4), {1, 1}, {1, 1})},
      {"conv 3x3 stride 2", conv_in.conv2d(test::grid_tensor({32, 6, 3, 3}, 3), std::nullopt, {2, 2}, {1, 1})},
      {"conv 7x7 stride 2, 37 pixels wide (padded rows)", test::grid_tensor({1, 3, 9, 79}, 10).conv2d(test::grid_tensor({32, 3, 7, 7}, 3), std::nullopt, {2, 2}, {3, 3})},
      {"conv 3x3 dilation 2", conv_in.conv2d(test::grid_tensor({8, 6, 3, 3}, 3), std::nullopt, {1, 1}, {2, 2}, {2, 2})},
      {"conv 5x5 groups 2", conv_in.conv2d(test::grid_tensor({4, 3, 5, 5}, 3), std::nullopt, {1, 1}, {2, 2}, {1, 1}, 2)},
      {"conv depthwise", conv_in.conv2d(test::grid_tensor({6, 1, 3, 3}, 3), std::nullopt, {1, 1}, {1, 1}, {1, 1}, 6)},
      {"conv 1x1", conv_in.conv2d(test::grid_tensor({48, 6, 1, 1}, 3))},
      {"max pool", conv_in.max_pool2d({3, 3}, std::pair<int64_t, int64_t>{2, 2}, {1, 1})},
      {"sum 1000", test::grid_tensor({1000}, 5).sum()},
      {"sum 5x60000 (grouped with 8 threads)", test::grid_tensor({5, 60000}, 5).sum({1})},
      {"row sums 7x37", test::grid_tensor({7, 37}, 5).sum({1})},
      {"column sums 37x7", test::grid_tensor({37, 7}, 5).sum({0})},
      {"row max 5x4096", test::grid_tensor({5, 4096}, 5).max({1})},
      {"exp 3x50", test::grid_tensor({3, 50}, 6).exp()},
      {"broadcast add", test::grid_tensor({17, 1, 5}, 6) + test::grid_tensor({1, 3, 5}, 7)},
      {"transposed copy", (test::grid_tensor({31, 17}, 6).transpose(0, 1) + 1.0f)},
      {"transposed copy, 12 rows tiled", test::grid_tensor({48, 12}, 6).transpose(0, 1).contiguous()},
      {"blocked layout copy, 45 rows", test::grid_tensor({64, 45}, 6).reshape({2, 32, 45}).permute({0, 2, 1}).contiguous()},
  };
  for (const auto& [name, t] : kernels) {
    SCOPED_TRACE(name);
    ExecutionPlan plan = test::one_kernel_plan(t);
    std::vector<float> want = test::reference(plan);
    UOpPtr ast = optimizer_input(test::last_kernel(plan).ast);
    for (const Target& target : {kAvx512, kAvx2, kSse}) {
      std::vector<Opt> opts = hand_coded_opts(ast, target);
      SCOPED_TRACE(to_string(opts));
      EXPECT_TRUE(close(test::run_with(plan, opts), want, 1e-5));
    }
  }
}

// Graphs of several kernels: the whole plan optimized and not, on this machine's target.
TEST(Heuristic, WholePlansAgreeWithUnoptimizedPlans) {
  std::vector<std::pair<std::string, Tensor>> graphs = {
      {"softmax 7x37", test::grid_tensor({7, 37}, 1).softmax(1)},
      {"softmax 3x1", test::grid_tensor({3, 1}, 1).softmax(1)},
      {"layernorm 5x64", test::grid_tensor({5, 64}, 2).layernorm({1})},
      {"log_softmax 2x3x31", test::grid_tensor({2, 3, 31}, 3).log_softmax(2)},
      {"mlp", (test::grid_tensor({5, 33}, 4).matmul(test::grid_tensor({33, 64}, 5)) + test::grid_tensor({64}, 6)).relu().matmul(test::grid_tensor({64, 10}, 7))},
      {"attention", test::grid_tensor({2, 7, 16}, 8).scaled_dot_product_attention(test::grid_tensor({2, 9, 16}, 9), test::grid_tensor({2, 9, 16}, 10))},
  };
  for (const auto& [name, t] : graphs) {
    SCOPED_TRACE(name);
    ExecutionPlan off = Tensor::prepare({t}, PrepareOptions{.optimize = false, .threads = 1});
    ExecutionPlan on = Tensor::prepare({t}, PrepareOptions{.optimize = true, .threads = 2});
    off.execute();
    on.execute();
    EXPECT_TRUE(close(on.output_buffer()->to_vector<float>(), off.output_buffer()->to_vector<float>(), 1e-5));
  }
}

}  // namespace
}  // namespace lathe
