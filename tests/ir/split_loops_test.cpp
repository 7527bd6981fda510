// A loop read as a quotient and a remainder is two loops (ir/split_loops.hpp): which loops
// split, which stay, and what the split kernels compute, against plain loops.
#include <gtest/gtest.h>

#include "codegen/pipeline.hpp"
#include "ir/split_loops.hpp"
#include "codegen/test_kernels.hpp"
#include "ir/toposort.hpp"
#include "opt/action.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

std::vector<int64_t> output_loop_sizes(const UOpPtr& ast) {
  std::vector<int64_t> out;
  for (const Loop& l : kernel_loops(ast))
    if (!l.reduce) out.push_back(l.size);
  return out;
}

int divisions(const UOpPtr& ast) {
  int n = 0;
  for (const UOpPtr& u : toposort(ast)) n += u->op() == Ops::IDIV || u->op() == Ops::MOD;
  return n;
}

// A transposed (6, 5) stored as 30 values: its loop o reads x[(o % 6) * 5 + o / 6]. Split into
// (5, 6), it reads x[r * 5 + q], with no division, and the values are the transpose's.
TEST(SplitLoops, ALoopReadAsQuotientAndRemainderIsTwoLoops) {
  Tensor x = test::random_tensor({6, 5}, 1);
  Tensor y = x.transpose(0, 1).reshape({30}) * 2.0f;
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  EXPECT_EQ(divisions(ast), 0) << print_graph(ast);
  EXPECT_EQ(output_loop_sizes(ast), (std::vector<int64_t>{5, 6}));
  std::vector<float> xv = x.to_vector<float>(), want;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j) want.push_back(2.0f * xv[j * 5 + i]);
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 0.0, 0.0);
}

// A grouped convolution's output channels are (group, channel in the group): the input is read
// by the group, the weight by both, and neither divides once the loop is split.
TEST(SplitLoops, AGroupedConvolutionsChannelsAreGroupAndChannel) {
  Tensor x = test::random_tensor({1, 16, 5, 6}, 2), w = test::random_tensor({32, 4, 3, 3}, 3);
  Tensor y = x.conv2d(w, std::nullopt, {1, 1}, {1, 1}, {1, 1}, 4);
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  std::vector<int64_t> sizes = output_loop_sizes(ast);
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), 4), sizes.end()) << ::testing::PrintToString(sizes);
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), 8), sizes.end()) << ::testing::PrintToString(sizes);
  EXPECT_EQ(divisions(ast), 0) << print_graph(ast);
}

// Shifted by one, the loop p of 24 reads (p + 1) / 6 and (p + 1) % 6: split into (4, 6) it would
// read (r + 1) / 6 and (r + 1) % 6, no fewer divisions, so it stays one loop.
TEST(SplitLoops, ALoopWhoseDivisionsRemainStaysOneLoop) {
  Tensor x = test::random_tensor({6, 5}, 4);
  Tensor y = x.transpose(0, 1).reshape({30}).shrink({{1, 25}}) * 2.0f;
  UOpPtr ast = optimizer_input(test::kernel_ast(y));
  EXPECT_EQ(output_loop_sizes(ast), (std::vector<int64_t>{24}));
  std::vector<float> xv = x.to_vector<float>(), want;
  for (int p = 1; p < 25; ++p) want.push_back(2.0f * xv[(p % 6) * 5 + p / 6]);
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 0.0, 0.0);
  UOpPtr unoptimized = simplify(test::kernel_ast(y));
  EXPECT_EQ(split_divided_loops(unoptimized), unoptimized);
}

}  // namespace
}  // namespace lathe
