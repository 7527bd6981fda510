// Kernels that read only constant buffers (a model's weights) run once, when the plan is
// prepared; execute() runs the rest, and a buffer handed out for writing brings them back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

Tensor weights(const Shape& shape, uint64_t seed, bool constant) {
  Tensor w = Tensor::rand(shape, seed);
  w.realize();
  Tensor copy = Tensor::from_vector(w.to_vector<float>(), shape);
  if (constant) copy.buffer().set_constant();
  return copy;
}

size_t count_constant(const ExecutionPlan& plan) {
  size_t n = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) n += k->constant;
  return n;
}

// A convolution large enough to store its weight in its own layout, so the plan has a kernel on
// the weight alone; and a weight-only kernel (w * 2 + 1, stored) feeding a matmul.
struct Graph {
  Tensor x, y;
  explicit Graph(bool constant) {
    x = Tensor::rand({1, 16, 9, 9}, 1);
    x.realize();
    Tensor w = weights({32, 16, 3, 3}, 2, constant), m = weights({32, 7}, 3, constant);
    Tensor feat = x.conv2d(w, std::nullopt, {1, 1}, {1, 1}).relu().mean({2, 3});  // (1, 32)
    y = feat.matmul((m * 2.0f + 1.0f).contiguous());
  }
};

TEST(ConstantFolding, KernelsOnConstantsRunAtPrepareAndResultsAgree) {
  Graph folded(true), plain(false);
  ExecutionPlan fp = Tensor::prepare({folded.y}), pp = Tensor::prepare({plain.y});
  EXPECT_GE(count_constant(fp), 2u);  // the weight's layout and w * 2 + 1
  EXPECT_EQ(count_constant(pp), 0u);
  fp.execute();
  pp.execute();
  EXPECT_ALLCLOSE(fp.output_buffer()->to_vector<float>(), pp.output_buffer()->to_vector<float>(), 1e-4, 1e-4);
  // execute() runs only the others, and counts only their work.
  EXPECT_EQ(fp.execute_profiled().size(), fp.prepared_kernels().size() - count_constant(fp));
  EXPECT_LT(fp.estimated_work().lds, pp.estimated_work().lds);
}

TEST(ConstantFolding, ABufferHandedOutForWritingIsFoldedAgain) {
  Tensor x = Tensor::rand({4, 8}, 1);
  x.realize();
  Tensor m = weights({8, 3}, 2, true);
  Tensor y = x.matmul((m * 2.0f).contiguous());
  ExecutionPlan plan = Tensor::prepare({y});
  ASSERT_EQ(count_constant(plan), 1u);
  size_t all = plan.prepared_kernels().size();
  plan.execute();
  std::vector<float> before = plan.output_buffer()->to_vector<float>();
  // Writing the input leaves the folded kernel alone: execute() runs only the others.
  ASSERT_NE(plan.buffer_mut_by_id(x.uop_id()), nullptr);
  EXPECT_EQ(plan.execute_profiled().size(), all - 1);
  // Writing the weight runs it once more, at the next execute() only.
  std::vector<float> zeros(8 * 3, 0.0f);
  plan.buffer_mut_by_id(m.uop_id())->copyin(zeros.data(), zeros.size() * sizeof(float));
  EXPECT_EQ(plan.execute_profiled().size(), all);
  for (float v : plan.output_buffer()->to_vector<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_NE(before, std::vector<float>(before.size(), 0.0f));
  EXPECT_EQ(plan.execute_profiled().size(), all - 1);
}

TEST(ConstantFolding, ReleasedIntermediatesKeepWhatWasFolded) {
  Graph g(true);
  ExecutionPlan plan = Tensor::prepare({g.y});
  plan.execute();
  std::vector<float> want = plan.output_buffer()->to_vector<float>();
  size_t released = 0;
  plan.release_intermediate_buffers([&](uint64_t) { ++released; });
  EXPECT_GT(released, 0u);
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    if (!k->constant) continue;
    for (size_t pos : k->output_indices) EXPECT_TRUE(plan.buffers()[k->buffer_indices[pos]].is_allocated());
  }
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), want);
}

// A weight scaled and then laid out in blocks, both at prepare: the scaled copy only feeds the
// layout kernel, so it is an intermediate of the prepare-time run (in the arena, poisoned after
// its last use) rather than a constant the plan keeps; results agree with the unfolded plan, and
// again after the weight is handed out for writing and folded anew.
TEST(ConstantFolding, WhatOnlyFoldedKernelsReadIsNotKept) {
  Tensor x = Tensor::rand({1, 16, 9, 9}, 1);
  x.realize();
  auto graph = [&](bool constant) {
    Tensor w = weights({32, 16, 3, 3}, 2, constant);
    return std::pair{w, x.conv2d((w * 2.0f).contiguous(), std::nullopt, {1, 1}, {1, 1})};
  };
  auto [w, y] = graph(true);
  auto [pw, py] = graph(false);
  ExecutionPlan plan = Tensor::prepare({y}, PrepareOptions{.poison = true}), plain = Tensor::prepare({py});
  ASSERT_EQ(count_constant(plan), 2u) << "the scaling and the layout";
  size_t weight_bytes = 32 * 16 * 9 * sizeof(float);
  EXPECT_EQ(plan.memory_stats().constant_bytes, 2 * weight_bytes) << "the weight and its blocked copy, not the scaled one";
  plain.execute();
  std::vector<float> want = plain.output_buffer()->to_vector<float>();
  for (int run = 0; run < 2; ++run) {
    plan.execute();
    EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-5, 1e-5);
  }
  std::vector<float> doubled = w.to_vector<float>();
  for (float& v : doubled) v *= 2.0f;
  plan.buffer_mut_by_id(w.uop_id())->copyin(doubled.data(), doubled.size() * sizeof(float));
  plan.execute();
  std::vector<float> got = plan.output_buffer()->to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], 2.0f * want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << i;
}

// What the caller reads is never folded: a plan whose output is a constant's copy (or a view of
// it) computes it in execute().
TEST(ConstantFolding, OutputsAreNeverFolded) {
  Tensor w = weights({6, 5}, 4, true);
  for (Tensor out : {(w * 2.0f).contiguous(), (w * 2.0f).contiguous().reshape({30}), (w * 2.0f).contiguous().shrink({{0, 3}, {0, 5}})}) {
    ExecutionPlan plan = Tensor::prepare({out});
    EXPECT_EQ(count_constant(plan), 0u);
    plan.execute();
    std::vector<float> got = plan.output_buffer()->to_vector<float>(), src = w.to_vector<float>();
    ASSERT_LE(got.size(), src.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], src[i] * 2.0f) << i;
  }
}

// A tensor built from nothing but constants (arange, full: no buffer at all) is folded the same
// way as one built from weights.
TEST(ConstantFolding, ATensorMadeOnlyOfConstantsIsFolded) {
  Tensor x = Tensor::rand({3, 8}, 1);
  x.realize();
  Tensor c = (Tensor::arange(0, 64, 1, dtypes::float32).reshape({8, 8}) * 0.125f).exp().contiguous();
  Tensor y = x.matmul(c);
  ExecutionPlan plan = Tensor::prepare({y});
  EXPECT_GE(count_constant(plan), 1u);
  EXPECT_EQ(plan.execute_profiled().size(), plan.prepared_kernels().size() - count_constant(plan));
  std::vector<float> xs = x.to_vector<float>(), want(3 * 8, 0.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) want[i * 8 + j] += xs[i * 8 + k] * std::exp(static_cast<float>(k * 8 + j) * 0.125f);
  EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-5, 1e-5);
}

}  // namespace
}  // namespace lathe
