// Adjacent loops as one (ir/merge_loops.hpp): which loops merge, which stay apart, and what
// the merged kernels compute, against plain loops (the unoptimized kernel merges its loops too).
#include <gtest/gtest.h>

#include "ir/merge_loops.hpp"
#include "codegen/pipeline.hpp"
#include "codegen/render_c.hpp"
#include "codegen/test_kernels.hpp"
#include "ir/toposort.hpp"
#include "opt/action.hpp"
#include "opt/heuristic.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The sizes of the kernel's (output, reduction) loops as the optimizer sees them, by axis.
std::vector<int64_t> loop_sizes(const Tensor& t, bool reduce = false) {
  std::vector<int64_t> out;
  for (const Loop& l : kernel_loops(optimizer_input(test::kernel_ast(t))))
    if (l.reduce == reduce) out.push_back(l.size);
  return out;
}

int divisions(const UOpPtr& ast) {
  int n = 0;
  for (const UOpPtr& u : toposort(ast)) n += u->op() == Ops::IDIV || u->op() == Ops::MOD;
  return n;
}

void expect_equal(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << "at " << i;
}

TEST(MergeLoops, AnElementwiseKernelOverContiguousTensorsIsOneLoop) {
  Tensor x = test::random_tensor({7, 13, 3}, 1);
  Tensor y = x * 2.0f + 1.0f;
  EXPECT_EQ(loop_sizes(y), (std::vector<int64_t>{273}));
  std::vector<float> xv = x.to_vector<float>(), want;
  for (float v : xv) want.push_back(v * 2.0f + 1.0f);
  expect_equal(y.to_vector<float>(), want);
}

// cat((2, 5, 8), (3, 5, 8)) along its first axis: one loop of 200 whose gates are `m < 80` and its
// negation, with no division; vectorized, each gate is the same for all lanes of a vector, so every
// load is a whole vector.
TEST(MergeLoops, AConcatenationIsOneLoopItsGatesBoundAndItsLoadsWholeVectors) {
  Tensor a = test::random_tensor({2, 5, 8}, 2), b = test::random_tensor({3, 5, 8}, 3);
  Tensor y = Tensor::cat({a, b}, 0);
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  EXPECT_EQ(loop_sizes(y), (std::vector<int64_t>{200}));
  EXPECT_EQ(divisions(ast), 0) << print_graph(ast);
  std::vector<Opt> opts = hand_coded_opts(ast, Target{64, 32, 1});
  ProgramSpec p = build_program(test::kernel_ast(y), CRenderer(), {.verify = true, .opts = opts});
  int loads = 0;
  for (const UOpPtr& u : toposort(p.ast))
    if (u->op() == Ops::LOAD) {
      ++loads;
      EXPECT_EQ(u->dtype().count(), 8) << to_string(opts) << "\n" << p.src;
    }
  EXPECT_EQ(loads, 2);
  std::vector<float> want = a.to_vector<float>(), bv = b.to_vector<float>();
  want.insert(want.end(), bv.begin(), bv.end());
  expect_equal(y.to_vector<float>(), want);
}

// cat((1, 12), (1, 4)) along its last axis: the gate `l < 12` changes inside a vector of 16, so
// each part is one masked vector load (a gate per lane), not sixteen loads.
TEST(MergeLoops, AGateThatChangesInsideAVectorMasksTheLanes) {
  Tensor a = test::random_tensor({1, 12}, 4), b = test::random_tensor({1, 4}, 5);
  Tensor y = Tensor::cat({a, b}, 1);
  std::vector<Opt> opts = hand_coded_opts(optimizer_input(test::kernel_ast(y)), Target{64, 32, 1});
  ProgramSpec p = build_program(test::kernel_ast(y), CRenderer(), {.verify = true, .opts = opts});
  int masked = 0;
  for (const UOpPtr& u : toposort(p.ast))
    if (u->op() == Ops::LOAD && u->src(0)->src(0)->op() == Ops::DEFINE_GLOBAL) {
      ASSERT_EQ(u->src(0)->src().size(), 3u) << p.src;
      EXPECT_EQ(u->dtype().count(), 16) << p.src;
      EXPECT_EQ(u->src(0)->src(2)->dtype().count(), 16) << p.src;
      ++masked;
    }
  EXPECT_EQ(masked, 2) << p.src;
  std::vector<float> want = a.to_vector<float>(), bv = b.to_vector<float>();
  want.insert(want.end(), bv.begin(), bv.end());
  expect_equal(y.to_vector<float>(), want);
}

// A padded column, a transposed read and a broadcast each read one loop without the other.
TEST(MergeLoops, LoopsAGateAStrideOrABroadcastSeparatesStayApart) {
  Tensor x = test::random_tensor({5, 7}, 6);
  std::vector<float> xv = x.to_vector<float>();
  Tensor padded = x.pad({{0, 0}, {1, 1}}) * 2.0f;
  EXPECT_EQ(loop_sizes(padded), (std::vector<int64_t>{5, 9}));
  std::vector<float> want;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 9; ++j) want.push_back(j == 0 || j == 8 ? 0.0f : 2.0f * xv[i * 7 + j - 1]);
  expect_equal(padded.to_vector<float>(), want);

  Tensor transposed = x.transpose(0, 1) * 2.0f;
  EXPECT_EQ(loop_sizes(transposed), (std::vector<int64_t>{7, 5}));
  want.clear();
  for (int j = 0; j < 7; ++j)
    for (int i = 0; i < 5; ++i) want.push_back(2.0f * xv[i * 7 + j]);
  expect_equal(transposed.to_vector<float>(), want);

  Tensor col = test::random_tensor({5, 1}, 7);
  std::vector<float> cv = col.to_vector<float>();
  Tensor broadcast = x + col;
  EXPECT_EQ(loop_sizes(broadcast), (std::vector<int64_t>{5, 7}));
  want.clear();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) want.push_back(xv[i * 7 + j] + cv[i]);
  expect_equal(broadcast.to_vector<float>(), want);
}

// A sum over the last two axes runs one reduction loop of 13 x 17; over the first and last, the
// two stay apart (the middle one is between them).
TEST(MergeLoops, AReductionsLoopsMergeWhenItReadsThemAsOne) {
  Tensor x = test::random_tensor({4, 13, 17}, 8);
  std::vector<float> xv = x.to_vector<float>();
  Tensor inner = x.sum({1, 2});
  EXPECT_EQ(loop_sizes(inner, true), (std::vector<int64_t>{221}));
  std::vector<float> want(4, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 221; ++k) want[i] += xv[i * 221 + k];
  expect_equal(inner.to_vector<float>(), want);

  Tensor outer = x.sum({0, 2});
  EXPECT_EQ(loop_sizes(outer, true), (std::vector<int64_t>{4, 17}));
  want.assign(13, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 13; ++j)
      for (int k = 0; k < 17; ++k) want[j] += xv[(i * 13 + j) * 17 + k];
  expect_equal(outer.to_vector<float>(), want);
}

// A 1x1 convolution's output pixels are one loop (7 x 9); a padded 3x3 convolution's rows and
// columns stay two, as its window reads them apart.
TEST(MergeLoops, APointwiseConvolutionsPixelsAreOneLoopA3x3sAreNot) {
  Tensor x = test::random_tensor({1, 16, 7, 9}, 9);
  Tensor pointwise = x.conv2d(test::random_tensor({32, 16, 1, 1}, 10));
  std::vector<int64_t> sizes = loop_sizes(pointwise);
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), 63), sizes.end()) << ::testing::PrintToString(sizes);
  Tensor window = x.conv2d(test::random_tensor({32, 16, 3, 3}, 11), std::nullopt, {1, 1}, {1, 1});
  sizes = loop_sizes(window);
  EXPECT_EQ(std::find(sizes.begin(), sizes.end(), 63), sizes.end()) << ::testing::PrintToString(sizes);
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), 9), sizes.end()) << ::testing::PrintToString(sizes);
}

TEST(MergeLoops, AKernelWithNothingToMergeIsUnchanged) {
  Tensor x = test::random_tensor({5, 7}, 12);
  UOpPtr ast = optimizer_input(test::kernel_ast(x.transpose(0, 1) * 3.0f));
  EXPECT_EQ(merge_adjacent_loops(ast), ast);
}

}  // namespace
}  // namespace lathe
