// Tiles transposed in registers (codegen/transpose.hpp), and the stores and loads the vector pass
// makes with them: a convolution with its output channels in vector lanes and a row of pixels
// unrolled stores each channel's pixels as vectors, reads a residual the same way, and computes
// what the unoptimized kernel does for every row length (powers of two, 7 in windows 0..3 and
// 3..6, 3, 5, rows longer than a vector); weights with rows past a block's end, gated per lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "codegen/transpose.hpp"
#include "ir/toposort.hpp"
#include "opt/opt_testing.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// Lane `l` of a tree of VECTORIZE, GEP and CONST nodes.
int64_t lane_value(const UOpPtr& u, int64_t l) {
  switch (u->op()) {
    case Ops::VECTORIZE: return lane_value(u->src(static_cast<size_t>(l)), 0);
    case Ops::GEP: return lane_value(u->src(0), u->arg_as<int64_t>());
    case Ops::CONST: return std::get<int64_t>(u->const_value());
    default: ADD_FAILURE() << "unexpected " << to_string(*u); return -1;
  }
}

// A tile of K vectors of N lanes holding row * 1000 + column.
std::vector<UOpPtr> tile(int K, int N, bool by_column) {
  std::vector<UOpPtr> vs;
  for (int i = 0; i < (by_column ? N : K); ++i) {
    std::vector<UOpPtr> lanes;
    for (int j = 0; j < (by_column ? K : N); ++j) lanes.push_back(UOp::index_const(by_column ? j * 1000 + i : i * 1000 + j));
    DType d = dtypes::index.vec(static_cast<int>(lanes.size()));
    vs.push_back(UOp::make(Ops::VECTORIZE, d, std::move(lanes)));
  }
  return vs;
}

// Every shuffle the transpose made reads at most two vectors.
void expect_two_sources(const std::vector<UOpPtr>& out) {
  for (const UOpPtr& v : out)
    for (const UOpPtr& u : toposort(v)) {
      if (u->op() != Ops::VECTORIZE || u->src(0)->op() != Ops::GEP) continue;
      std::set<const UOp*> from;
      for (const UOpPtr& s : u->src()) from.insert(s->src(0).get());
      EXPECT_LE(from.size(), 2u) << to_string(*u);
    }
}

// `vs` is `count` vectors of `lanes` lanes, lane j of vector i holding value(i, j), and every
// shuffle that made them reads at most two vectors.
template <class Value>
void expect_tile(const std::vector<UOpPtr>& vs, int count, int lanes, Value value) {
  ASSERT_EQ(vs.size(), static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(vs[i]->dtype(), dtypes::index.vec(lanes));
    for (int j = 0; j < lanes; ++j) EXPECT_EQ(lane_value(vs[i], j), value(i, j)) << i << ", " << j;
  }
  expect_two_sources(vs);
}

TEST(TileTranspose, RowsBecomeColumnsAndColumnsRows) {
  for (auto [K, N] : std::vector<std::pair<int, int>>{{2, 2}, {2, 16}, {4, 4}, {4, 8}, {8, 16}, {16, 16}, {2, 64}}) {
    SCOPED_TRACE(std::to_string(K) + "x" + std::to_string(N));
    expect_tile(rows_to_columns(tile(K, N, false)), N, K, [](int c, int r) { return r * 1000 + c; });
    expect_tile(columns_to_rows(tile(K, N, true)), K, N, [](int r, int c) { return r * 1000 + c; });
  }
}

TEST(TileTranspose, RefusesTilesWiderThanTheirVectors) {
  EXPECT_THROW(rows_to_columns(tile(8, 4, false)), InternalError);
  EXPECT_THROW(rows_to_columns(tile(3, 8, false)), InternalError);
  EXPECT_THROW(columns_to_rows(tile(4, 6, true)), InternalError);
  EXPECT_THROW(rows_to_columns({}), InternalError);
}

const Target kAvx512{64, 32, 2}, kAvx2{32, 16, 8}, kSse{16, 16, 1};

// `t`'s one kernel, with the actions the heuristic picks for each target, computes what the
// unoptimized kernel does (within `tol`).
void expect_every_target_agrees(const Tensor& t, double tol) {
  ExecutionPlan plan = test::one_kernel_plan(t);
  std::vector<float> want = test::reference(plan);
  for (const Target& target : {kAvx512, kAvx2, kSse}) {
    std::vector<Opt> chosen = hand_coded_opts(optimizer_input(test::last_kernel(plan).ast), target);
    SCOPED_TRACE(to_string(chosen));
    EXPECT_TRUE(test::close(test::run_with(plan, chosen), want, tol));
  }
}

// relu(conv(x) + residual): 32 output channels (lanes), a row of `width` pixels (unrolled).
Tensor conv_with_residual(int64_t width) {
  Tensor x = test::grid_tensor({1, 8, 4, width}, 1), w = test::grid_tensor({32, 8, 3, 3}, 2), res = test::grid_tensor({1, 32, 4, width}, 3);
  return (x.conv2d(w, test::grid_tensor({32}, 4), {1, 1}, {1, 1}) + res).relu();
}

// The output is written and the residual read only as vectors (no lane-by-lane access), on an
// AVX-512 target whose heuristics put channels in lanes and pixels in rows.
TEST(TransposedAccess, ConvolutionStoresAndReadsEachChannelsPixelsAsVectors) {
  Tensor y = conv_with_residual(8);
  UOpPtr ast = test::kernel_ast(y);
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), kAvx512);
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
  int stores = 0, residual_loads = 0;
  for (const UOpPtr& u : toposort(p.ast)) {
    if (u->op() != Ops::LOAD && u->op() != Ops::STORE) continue;
    const UOpPtr& buf = u->src(0)->src(0);
    if (buf->op() != Ops::DEFINE_GLOBAL) continue;
    bool output = u->op() == Ops::STORE, residual = buf->dtype().ptr_size() == 32 * 4 * 8 && !output;
    if (!output && !residual) continue;
    DType d = output ? u->src(1)->dtype() : u->dtype();
    EXPECT_EQ(d.count(), 8) << (output ? "store " : "load ") << to_string(*u) << " with " << to_string(opts);
    (output ? stores : residual_loads) += 1;
  }
  EXPECT_EQ(stores, 32) << "one store per channel";
  EXPECT_EQ(residual_loads, 32) << "one residual load per channel";
}

// The same convolution storing its output in channel blocks, (N, C/16, H, W, 16), as the next
// convolution reads it: its stores are whole vectors along the channels, and the (N, C, H, W)
// residual is read as transposed tiles (a run of 8 pixels per channel, one vector load each), not
// lane by lane; every target computes what the unoptimized kernel does.
TEST(TransposedAccess, AKernelStoringChannelBlocksReadsAnNchwResidualAsTiles) {
  Tensor y = conv_with_residual(8).reshape({1, 2, 16, 4, 8}).permute({0, 1, 3, 4, 2}).contiguous();
  UOpPtr ast = test::kernel_ast(y);
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), kAvx512);
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
  int stores = 0, residual_runs = 0, residual_lanes = 0;
  for (const UOpPtr& u : toposort(p.ast)) {
    if (u->op() == Ops::STORE && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) {
      EXPECT_EQ(u->src(1)->dtype().count(), 16) << to_string(*u) << " with " << to_string(opts);
      ++stores;
    }
    if (u->op() != Ops::LOAD || u->src(0)->src(0)->op() != Ops::DEFINE_GLOBAL || u->src(0)->src(0)->dtype().ptr_size() != 32 * 4 * 8) continue;
    (u->dtype().count() == 8 ? residual_runs : residual_lanes) += 1;
  }
  EXPECT_GT(stores, 0);
  EXPECT_EQ(residual_runs, 32) << "one run of 8 pixels per channel, " << to_string(opts);
  EXPECT_EQ(residual_lanes, 0);
  expect_every_target_agrees(y, 1e-5);
}

// Row lengths that are and are not powers of two, and a row too long for a transpose (the
// heuristic's padded rows, gated per row): every target computes what the unoptimized kernel does.
// A row of 7 on AVX-512 is transposed in two windows of 4 (pixels 0..3 and 3..6): each channel
// stores two runs of 4, and no store is narrower.
TEST(TransposedAccess, AgreesWithTheUnoptimizedKernelForEveryRowLength) {
  for (int64_t width : {2, 3, 5, 7, 8, 12, 16, 37}) {
    SCOPED_TRACE("width " + std::to_string(width));
    expect_every_target_agrees(conv_with_residual(width), 1e-5);
  }
  UOpPtr ast = test::kernel_ast(conv_with_residual(7));
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), kAvx512);
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
  std::vector<int> runs;
  for (const UOpPtr& u : toposort(p.ast))
    if (u->op() == Ops::STORE) runs.push_back(u->src(1)->dtype().count());
  EXPECT_EQ(std::count(runs.begin(), runs.end(), 4), 64) << "32 channels, two runs of 4 each; " << to_string(opts);
  EXPECT_EQ(std::count_if(runs.begin(), runs.end(), [](int n) { return n < 4; }), 0) << "no narrower run";
}

// A depthwise convolution of 8 channels (the vector's lanes) over rows of `width` pixels
// (unrolled, stored NCHW: contiguous along the row, strided along the channels).
Tensor depthwise(int64_t width) {
  Tensor x = test::grid_tensor({1, 8, 6, width}, 6), w = test::grid_tensor({8, 1, 3, 3}, 7);
  return x.conv2d(w, test::grid_tensor({8}, 8), {1, 1}, {1, 1}, {1, 1}, 8);
}

// Where the heuristic unrolls more pixels than the vector has lanes (16 pixels of 8 channels), the
// row is transposed in windows as wide as the vector: each channel stores its pixels as vectors,
// none lane by lane, and every target computes what the unoptimized kernel does.
TEST(TransposedAccess, RowsLongerThanAVectorAreTransposedInWindowsOfItsWidth) {
  UOpPtr ast = test::kernel_ast(depthwise(16));
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), kAvx512);
  ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
  int vector_stores = 0, scalar_stores = 0;
  for (const UOpPtr& u : toposort(p.ast))
    if (u->op() == Ops::STORE && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) (u->src(1)->dtype().count() > 1 ? vector_stores : scalar_stores) += 1;
  EXPECT_GT(vector_stores, 0) << to_string(opts);
  EXPECT_EQ(scalar_stores, 0) << to_string(opts);
  for (int64_t width : {16, 23, 9, 40}) {
    SCOPED_TRACE("width " + std::to_string(width));
    expect_every_target_agrees(depthwise(width), 1e-5);
  }
}

// A weight of R rows copied to blocks of 16 rows, (ceil(R/16), K, 16), as convolutions read it:
// rows past R are zeros. With R not a multiple of 16 the last block's lanes past R are gated off,
// lane by lane; the rows are still read as transposed tiles (runs along K, one vector load per
// lane under that lane's gate) rather than one scalar load per element, also where K is not a
// power of two (9 taps: runs 0..7 and 1..8), and every target, row count and width computes what
// the unoptimized kernel does.
Tensor weight_in_row_blocks(int64_t rows, int64_t k) {
  int64_t blocks = (rows + 15) / 16;
  return test::grid_tensor({rows, k}, 5).pad({{0, blocks * 16 - rows}, {0, 0}}).reshape({blocks, 16, k}).permute({0, 2, 1}).contiguous();
}

TEST(TransposedAccess, RowsPastTheEndGatedPerLaneAreStillReadAsTiles) {
  for (int64_t k : {32, 9}) {
    UOpPtr ast = test::kernel_ast(weight_in_row_blocks(37, k));
    std::vector<Opt> opts = hand_coded_opts(optimizer_input(ast), kAvx512);
    ProgramSpec p = build_program(ast, CRenderer(), {.verify = true, .target = {.threads = 2}, .opts = opts});
    int vector_loads = 0, scalar_loads = 0;
    for (const UOpPtr& u : toposort(p.ast))
      if (u->op() == Ops::LOAD && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) (u->dtype().count() > 1 ? vector_loads : scalar_loads) += 1;
    EXPECT_GT(vector_loads, 0) << k << " columns, " << to_string(opts);
    EXPECT_EQ(scalar_loads, 0) << k << " columns, " << to_string(opts);
  }
  for (auto [rows, k] : std::vector<std::pair<int64_t, int64_t>>{{37, 32}, {37, 9}, {1, 16}, {17, 9}, {1000, 16}, {23, 7}, {48, 5}, {16, 3}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(k));
    expect_every_target_agrees(weight_in_row_blocks(rows, k), 0);
  }
}

}  // namespace
}  // namespace lathe
