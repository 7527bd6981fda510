#include <gtest/gtest.h>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "schedule/schedule.hpp"

namespace lathe {
namespace {

size_t count_ops(const UOpPtr& root, Ops op) {
  size_t n = 0;
  for (const UOpPtr& u : toposort(root)) n += u->op() == op;
  return n;
}

Schedule schedule_of(const Tensor& t) { return create_schedule({t.uop()}); }

TEST(Schedule, ElementwiseChainIsOneKernelReadingEachInputOnce) {
  Tensor a = Tensor::rand({8, 8}, 1), b = Tensor::rand({8, 8}, 2), c = Tensor::rand({8}, 3);
  Schedule s = schedule_of(((a * b + c) * 0.5f).relu());
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& k = s.items[0];
  EXPECT_EQ(k.bufs.size(), 4u);  // output, a, b, c
  EXPECT_EQ(count_ops(k.ast, Ops::LOAD), 3u);
  EXPECT_EQ(count_ops(k.ast, Ops::STORE), 1u);
  EXPECT_EQ(count_ops(k.ast, Ops::REDUCE), 0u);
}

TEST(Schedule, MovementOpsBecomeIndexArithmeticNotCopies) {
  Tensor x = Tensor::rand({4, 6}, 1);
  Schedule s = schedule_of(x.permute({1, 0}).flip({0}) + 1.0f);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count_ops(s.items[0].ast, Ops::LOAD), 1u);
}

TEST(Schedule, ReductionFusesWhatFeedsItAndWhatFollows) {
  Tensor a = Tensor::rand({5, 7}, 1), b = Tensor::rand({5, 7}, 2), d = Tensor::rand({5}, 3);
  Schedule s = schedule_of((a * b + 1.0f).relu().sum({1}) * 2.0f + d);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count_ops(s.items[0].ast, Ops::REDUCE), 1u);
}

TEST(Schedule, SoftmaxStoresTheReductionsItReadsAcrossTheirAxis) {
  Tensor x = Tensor::rand({4, 16}, 1);
  Schedule s = schedule_of(x.softmax(1));
  ASSERT_LE(s.items.size(), 3u);
  ASSERT_GE(s.items.size(), 2u);
  // The last kernel is elementwise; every earlier one is a reduction a later kernel reads.
  EXPECT_EQ(count_ops(s.items.back().ast, Ops::REDUCE), 0u);
  for (size_t i = 0; i + 1 < s.items.size(); ++i) {
    EXPECT_EQ(count_ops(s.items[i].ast, Ops::REDUCE), 1u) << "kernel " << i;
    bool read_later = false;
    for (size_t j = i + 1; j < s.items.size(); ++j)
      for (size_t k = 1; k < s.items[j].bufs.size(); ++k) read_later |= s.items[j].bufs[k] == s.items[i].bufs[0];
    EXPECT_TRUE(read_later) << "kernel " << i << " stores a value nothing reads";
  }
}

TEST(Schedule, ContiguousIsARealizePoint) {
  Tensor x = Tensor::rand({4, 4}, 1);
  Tensor k = (x * 2.0f).contiguous();
  Schedule s = schedule_of(k.permute({1, 0}) + 1.0f);
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].bufs[1], s.items[0].bufs[0]);  // the second kernel reads what the first stored
}

TEST(Schedule, SharedReductionIsStoredOnce) {
  Tensor x = Tensor::rand({6, 6}, 1);
  Tensor r = x.sum({1});
  Schedule s = schedule_of(r * 2.0f + r.exp());
  size_t reduces = 0;
  for (const ScheduleItem& k : s.items) reduces += count_ops(k.ast, Ops::REDUCE);
  EXPECT_EQ(reduces, 1u);
}

TEST(Schedule, KernelsComeAfterWhatTheyRead) {
  Tensor x = Tensor::rand({8, 8}, 1);
  Tensor y = x.softmax(0).softmax(1);
  Schedule s = schedule_of(y);
  for (size_t i = 0; i < s.items.size(); ++i)
    for (size_t slot = 1; slot < s.items[i].bufs.size(); ++slot) {
      const UOpPtr& in = s.items[i].bufs[slot];
      if (in->op() == Ops::BUFFER) continue;
      bool written_before = false;
      for (size_t j = 0; j < i; ++j) written_before |= s.items[j].bufs[0] == in;
      EXPECT_TRUE(written_before) << "kernel " << i << " reads an intermediate no earlier kernel wrote";
    }
}

TEST(Schedule, PaddedLoadsAreGated) {
  Tensor x = Tensor::rand({4}, 1);
  Schedule s = schedule_of(x.pad({{2, 3}}, 7.0));
  ASSERT_EQ(s.items.size(), 1u);
  bool gated = false;
  for (const UOpPtr& u : toposort(s.items[0].ast))
    if (u->op() == Ops::INDEX && u->src().size() == 3) gated = true;
  EXPECT_TRUE(gated) << print_graph(s.items[0].ast);
}

TEST(Schedule, RealizedInputNeedsNoKernel) {
  Tensor x = Tensor::rand({4}, 1);
  Schedule s = schedule_of(x);
  EXPECT_TRUE(s.items.empty());
  EXPECT_EQ(s.outputs[0], x.uop());
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(Schedule, ContiguousReshapesAndShrinksOfABufferAreViews) {
  Tensor x = Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Schedule s = create_schedule({x.reshape({4, 3}).shrink({{1, 3}, {0, 3}}).uop()});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].ast, nullptr);
  ASSERT_TRUE(s.items[0].view_offset.has_value());
  EXPECT_EQ(*s.items[0].view_offset, 3);
  // A column is not contiguous: it needs a kernel.
  Schedule col = create_schedule({x.shrink({{0, 3}, {1, 2}}).uop()});
  ASSERT_EQ(col.items.size(), 1u);
  EXPECT_FALSE(col.items[0].view_offset.has_value());
}

TEST(ExecutionPlanViews, AViewSharesMemoryWithItsBaseAndRunsNoKernel) {
  Tensor x = Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor rows = x.shrink({{1, 3}, {0, 4}});
  ExecutionPlan plan = rows.prepare();
  EXPECT_TRUE(plan.prepared_kernels().empty());
  ASSERT_EQ(plan.prepared_ops().size(), 1u);
  EXPECT_TRUE(std::holds_alternative<PreparedBufferView>(plan.prepared_ops()[0]));
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_TRUE(plan.output_buffer()->is_view());
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11}));
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(Schedule, LargeReductionToFewOutputsSplitsIntoPartials) {
  const int64_t n = 1 << 18;
  std::vector<float> data(n);
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 7);  // integer sums stay exact in float
  Tensor x = Tensor::from_vector(data, {n});
  Schedule s = create_schedule({x.sum().uop()});
  size_t kernels = 0;
  for (const ScheduleItem& item : s.items) kernels += item.ast != nullptr;
  EXPECT_EQ(kernels, 2u);  // partial sums, then their sum (the reshape to a scalar is a view)
  double want = 0;
  for (float v : data) want += v;
  EXPECT_EQ(x.sum().item<float>(), want);  // a dropped or doubled partial would show
  // Same over one axis of a 2-D tensor with a non-trailing reduced axis.
  Tensor y = Tensor::from_vector(data, {n / 2, 2});
  std::vector<float> cols = y.sum({0}).to_vector<float>();
  double c0 = 0, c1 = 0;
  for (int64_t i = 0; i < n; ++i) (i % 2 ? c1 : c0) += data[i];
  EXPECT_EQ(cols[0], c0);
  EXPECT_EQ(cols[1], c1);
  EXPECT_EQ(y.max().item<float>(), 6.0f);
}

TEST(Schedule, SmallReductionsStayOneKernel) {
  Tensor x = Tensor::rand({1000}, 1);
  EXPECT_EQ(create_schedule({x.sum().uop()}).items.size(), 1u);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(Schedule, DeepElementwiseChainsLowerWithoutRecursion) {
  // 20000 chained ops would overflow a recursive lowering's stack (sooner under ASan).
  std::vector<float> xs{1, 2, 3, 4};
  Tensor x = Tensor::from_vector(xs, {4});
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = i % 2 ? y * 1.0f : y + 0.5f;
  Schedule s = create_schedule({y.uop()});
  ASSERT_EQ(s.items.size(), 1u);
  ASSERT_NE(s.items[0].ast, nullptr);
}

}  // namespace
}  // namespace lathe
