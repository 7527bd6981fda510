// linearize: where each node of a lowered kernel lands among its loops.
#include <gtest/gtest.h>

#include "codegen/accumulators.hpp"
#include "codegen/linearize.hpp"
#include "codegen/test_kernels.hpp"

namespace lathe {
namespace {

using test::kernel_ast;

// The loop depth of every listed node, by position.
std::vector<int> depths(const std::vector<UOpPtr>& program) {
  std::vector<int> d;
  int depth = 0;
  for (const UOpPtr& u : program) {
    if (u->op() == Ops::END)
      for (const UOpPtr& s : u->src()) depth -= s->op() == Ops::RANGE;
    d.push_back(depth);
    if (u->op() == Ops::RANGE) ++depth;
  }
  return d;
}

TEST(Linearize, LoopInvariantWorkIsHoisted) {
  // sum over j of x[i, j] * y[i]: y's load depends only on i, so it sits outside the j loop.
  Tensor x = Tensor::rand({4, 8}, 1), y = Tensor::rand({4, 1}, 2);
  std::vector<UOpPtr> program = linearize(lower_reductions(kernel_ast((x * y).sum({1}))));
  std::vector<int> d = depths(program);
  int y_depth = -1, x_depth = -1;
  for (size_t i = 0; i < program.size(); ++i) {
    const UOpPtr& u = program[i];
    if (u->op() != Ops::LOAD || u->src(0)->src(0)->op() != Ops::DEFINE_GLOBAL) continue;
    (u->src(0)->src(0)->arg_as<int64_t>() == 2 ? y_depth : x_depth) = d[i];
  }
  EXPECT_EQ(d.back(), 0);
  EXPECT_EQ(y_depth, 1);
  EXPECT_EQ(x_depth, 2);
}

TEST(Linearize, AReductionIsAnAccumulatorSetInItsLoopAndReadAfterIt) {
  Tensor x = Tensor::rand({4, 8}, 1);
  std::vector<UOpPtr> program = linearize(lower_reductions(kernel_ast(x.sum({1}))));
  std::vector<Ops> structure;
  for (const UOpPtr& u : program)
    if (u->op() == Ops::RANGE || u->op() == Ops::END || u->op() == Ops::DEFINE_REG || u->op() == Ops::STORE) structure.push_back(u->op());
  // for i: acc = 0; for j: acc = acc + x; end; out[i] = acc; end
  EXPECT_EQ(structure, (std::vector<Ops>{Ops::RANGE, Ops::DEFINE_REG, Ops::RANGE, Ops::STORE, Ops::END, Ops::STORE, Ops::END}));
  // the value after the loop reads the accumulator through the END that closed its loop
  bool read_after = false;
  for (const UOpPtr& u : program)
    read_after |= u->op() == Ops::LOAD && u->src().size() == 2 && u->src(1)->op() == Ops::END;
  EXPECT_TRUE(read_after);
}

}  // namespace
}  // namespace lathe
