// Concatenations written in place (schedule/concat_in_place.hpp, placed by schedule/buffer_assignment): which joining kernels are
// recognized, and plans whose parts' kernels write their runs of the joined buffer directly, checked
// against the plain concatenation of stored parts, in a poisoned arena.
#include <gtest/gtest.h>

#include "codegen/test_kernels.hpp"
#include "lathe/lathe.hpp"
#include "runtime/arena_check.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/concat_in_place.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The values of `t`, computed now, as a tensor of stored data (the parts joined plainly).
Tensor stored(const Tensor& t) { return test::f32(t.to_vector<float>(), t.shape()); }

// A part a kernel of its own stores (a reduction's result): a 1x1 convolution over 16 channels, too
// much work to repeat over the joined buffer's other channels (its padding), as the join would.
Tensor part(int64_t channels, uint64_t seed, int64_t batch = 1) {
  return test::random_tensor({batch, 16, 5, 3}, seed)
      .conv2d(test::random_tensor({channels, 16, 1, 1}, seed + 1))
      .relu();
}

TEST(ConcatInPlace, JoiningKernelsAlongTheOutermostRunsAreRecognized) {
  // Channels at batch 1 (runs of 3*15 and 5*15 elements), three parts of uneven sizes.
  std::optional<std::vector<ConcatPart>> two = concatenated_parts(test::kernel_ast(Tensor::cat({part(3, 1), part(5, 3)}, 1)));
  ASSERT_TRUE(two.has_value());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].offset, 0);
  EXPECT_EQ((*two)[1].offset, 3 * 15);
  std::optional<std::vector<ConcatPart>> three =
      concatenated_parts(test::kernel_ast(Tensor::cat({part(2, 5), part(7, 7), part(1, 9)}, 1)));
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ(three->size(), 3u);
}

TEST(ConcatInPlace, OtherKernelsAreNot) {
  // At batch 2 a part's channels are two runs apart; along the last axis every row is a run;
  // arithmetic on the join reads it, it does not only copy it.
  EXPECT_FALSE(concatenated_parts(test::kernel_ast(Tensor::cat({part(3, 1, 2), part(5, 3, 2)}, 1))).has_value());
  EXPECT_FALSE(concatenated_parts(test::kernel_ast(Tensor::cat({part(3, 1), part(3, 3)}, 3))).has_value());
  EXPECT_FALSE(concatenated_parts(test::kernel_ast(Tensor::cat({part(3, 1), part(5, 3)}, 1) * 2.0f)).has_value());
  EXPECT_FALSE(concatenated_parts(test::kernel_ast(part(3, 1))).has_value());
}

// The schedule places each part as a run of the joined buffer, at its offset, and drops the joining
// kernel; a join that is an output is computed by its kernel.
TEST(ConcatInPlace, TheSchedulePlacesEachPartAsARunOfTheJoin) {
  Tensor a = part(3, 41), b = part(5, 43);
  Tensor joined = Tensor::cat({a, b}, 1);
  Schedule s = create_schedule({(joined * 2.0f).sum({2, 3}).uop(), joined.sum({1}).uop()}, default_schedule_context());  // the join read twice: stored
  const Placement* pa = s.placement(*s.becomes.now(a.uop()));  // the parts' weights are stored in blocks: a part's node is rebuilt
  const Placement* pb = s.placement(*s.becomes.now(b.uop()));
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(pa->kind, Placement::Kind::concatenation_run);
  EXPECT_EQ(pb->kind, Placement::Kind::concatenation_run);
  EXPECT_EQ(pa->base, pb->base);
  EXPECT_EQ(pa->offset, 0);
  EXPECT_EQ(pa->elements, 3 * 15);
  EXPECT_EQ(pb->offset, 3 * 15);
  EXPECT_EQ(pb->elements, 5 * 15);
  for (const ScheduleItem& item : s.items) EXPECT_NE(item.bufs[0], pa->base) << "the joining kernel is dropped";
  Schedule out = create_schedule({joined.uop()}, default_schedule_context());
  EXPECT_EQ(out.placement(*out.becomes.now(a.uop())), nullptr);
  EXPECT_EQ(out.placement(*out.becomes.now(b.uop())), nullptr);
  EXPECT_FALSE(out.items.back().is_view()) << "an output's join is computed by its kernel";
}

// Convolutions concatenated, then read by another: the plan runs no joining kernel, the parts'
// buffers are views of the joined buffer, the reader waits for both parts' kernels, and every
// value is the plain concatenation's (the parts stored first, then joined) in a poisoned arena.
TEST(ConcatInPlace, PartsWriteTheirRunsOfTheJoinedBuffer) {
  Tensor a = part(3, 11), b = part(16, 13), c = part(5, 15);
  Tensor joined = Tensor::cat({a, b, c}, 1);
  Tensor y = (joined * 2.0f + 1.0f).sum({2, 3}), total = joined.sum({1});
  PrepareOptions o;
  o.poison = true;
  ExecutionPlan plan = Tensor::prepare({y, total}, o);
  plan.execute();
  plan.execute();
  testing::expect_no_live_overlap(plan);
  size_t views = 0;
  for (const PreparedOp& op : plan.prepared_ops()) views += std::holds_alternative<PreparedBufferView>(op);
  EXPECT_GE(views, 3u) << "one view of the joined buffer per part";
  Tensor plain = Tensor::cat({stored(a), stored(b), stored(c)}, 1);
  EXPECT_ALLCLOSE(plan.output_buffer_at(0)->to_vector<float>(), (plain * 2.0f + 1.0f).sum({2, 3}).to_vector<float>(), 1e-4, 1e-4);
  EXPECT_ALLCLOSE(plan.output_buffer_at(1)->to_vector<float>(), plain.sum({1}).to_vector<float>(), 1e-4, 1e-4);
  // The kernels reading the joined buffer (the two outputs') wait for every part's kernel, none
  // for only some of them.
  // (By buffer: the plan's nodes for the parts are rebuilt, their weights stored in blocks; the
  // parts' ids name those nodes' buffers.)
  const std::unordered_map<uint64_t, size_t>& buffer_of = plan.ast_to_buffer_map();
  std::set<size_t> part_buffers{buffer_of.at(a.uop_id()), buffer_of.at(b.uop_id()), buffer_of.at(c.uop_id())};
  size_t readers = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    size_t waits = 0;
    for (uint64_t d : k->dependencies)
      if (auto it = buffer_of.find(d); it != buffer_of.end()) waits += part_buffers.count(it->second);
    if (waits == 0) continue;
    EXPECT_EQ(waits, 3u) << k->kernel->entry_point;
    ++readers;
  }
  EXPECT_EQ(readers, 2u) << "both kernels reading the joined buffer wait for the parts";
}

// Parts computed from constants only: their kernels run once at prepare, writing the joined
// buffer in place, and the joined buffer counts as constant, so what reads only it is folded too.
TEST(ConcatInPlace, AJoinOfConstantsIsAConstant) {
  auto constant = [](const Shape& shape, uint64_t seed) {
    Tensor t = test::random_tensor(shape, seed);
    t.buffer().set_constant();
    return t;
  };
  Tensor a = constant({1, 4, 5, 3}, 21).conv2d(constant({3, 4, 1, 1}, 22)).relu();
  Tensor b = constant({1, 4, 5, 3}, 23).conv2d(constant({5, 4, 1, 1}, 24)).relu();
  Tensor x = test::random_tensor({1, 16, 5, 3}, 25);
  Tensor joined = Tensor::cat({a, b}, 1);
  // t reads only the join (and a constant weight), and two outputs read it with x: t is stored by
  // a kernel of its own, which runs at prepare only if the join written in place is a constant.
  Tensor w = constant({16, 8, 3, 3}, 26);
  Tensor t = joined.conv2d(w, std::nullopt, {1, 1}, {1, 1});
  ExecutionPlan plan = Tensor::prepare({x + t, x * t});
  size_t views = 0;
  for (const PreparedOp& op : plan.prepared_ops()) views += std::holds_alternative<PreparedBufferView>(op);
  EXPECT_GE(views, 2u) << "the parts are views of the joined buffer";
  size_t folded = 0;
  std::string kernels;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    folded += k->constant;
    kernels += " " + k->kernel->entry_point + (k->constant ? " (at prepare)" : "");
  }
  EXPECT_EQ(folded + 2, plan.prepared_kernels().size()) << "only the two outputs' kernels run at execute:" << kernels;
  plan.execute();
  Tensor tp = Tensor::cat({stored(a), stored(b)}, 1).conv2d(stored(w), std::nullopt, {1, 1}, {1, 1});
  EXPECT_ALLCLOSE(plan.output_buffer_at(0)->to_vector<float>(), (x + tp).to_vector<float>(), 1e-4, 1e-4);
  EXPECT_ALLCLOSE(plan.output_buffer_at(1)->to_vector<float>(), (x * tp).to_vector<float>(), 1e-4, 1e-4);
}

// A part that an output views (a step's state returned beside the sequence that joins all steps)
// keeps a buffer of its own: two outputs never share memory.
TEST(ConcatInPlace, APartAnOutputViewsIsNotPlacedInTheJoin) {
  Tensor a = part(3, 31), b = part(5, 33);
  Tensor joined = Tensor::cat({a, b}, 1);
  ExecutionPlan plan = Tensor::prepare({joined * 2.0f, a.reshape({3, 15})});
  plan.execute();
  const Buffer& out_a = *plan.output_buffer_at(1);
  std::vector<float> want = a.to_vector<float>();
  EXPECT_EQ(out_a.to_vector<float>(), want);
  bool found = false;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    if (k->id != a.uop_id()) continue;
    found = true;
    for (size_t pos : k->output_indices) EXPECT_FALSE(plan.buffers()[k->buffer_indices[pos]].is_view()) << "the returned part lies inside the join";
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace lathe
