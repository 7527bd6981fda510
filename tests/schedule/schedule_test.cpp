#include <gtest/gtest.h>

#include <cmath>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/work_budget.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

size_t count_ops(const UOpPtr& root, Ops op) {
  size_t n = 0;
  for (const UOpPtr& u : toposort(root)) n += u->op() == op;
  return n;
}

Schedule schedule_of(const Tensor& t) { return create_schedule({t.uop()}, default_schedule_context()); }

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

// A large convolution reads its weight in output-channel blocks (one copy kernel) and a stored
// copy of its input only where that input is not stored already: padded, it is copied with its
// padding; a stored input without padding is read in place.
// A large convolution copies a stored input to pad it, or into channel blocks where each input
// element feeds many multiply-adds; otherwise it reads it where it lies.
TEST(Schedule, LargeConvolutionCopiesAStoredInputToPadItOrIntoBlocks) {
  Tensor x = Tensor::rand({1, 32, 9, 9}, 1), w1 = Tensor::rand({64, 32, 1, 1}, 2), w3 = Tensor::rand({64, 32, 3, 3}, 3),
         w3_wide = Tensor::rand({256, 32, 3, 3}, 4), w1_narrow = Tensor::rand({16, 32, 1, 1}, 5);
  x.realize(), w1.realize(), w3.realize(), w3_wide.realize(), w1_narrow.realize();
  auto kernels = [](const Tensor& t) {
    size_t n = 0;
    for (const ScheduleItem& it : schedule_of(t).items) n += !it.is_view();
    return n;
  };
  EXPECT_EQ(kernels(x.conv2d(w1_narrow)), 2u);                                   // weight blocks, convolution
  EXPECT_EQ(kernels(x.conv2d(w1)), 3u);                                          // and the input in blocks (64 per element)
  EXPECT_EQ(kernels(x.conv2d(w3_wide, std::nullopt, {1, 1}, {1, 1})), 3u);      // and the padded input
  EXPECT_EQ(kernels(x.conv2d(w3, std::nullopt, {1, 1}, {1, 1})), 3u);           // in blocks, read through its padding
  EXPECT_EQ(kernels((x * 2.0f).conv2d(w1)), 3u);                                 // a computed input is stored once
}

TEST(Schedule, MovementOpsBecomeIndexArithmeticNotCopies) {
  Tensor x = Tensor::rand({4, 6}, 1);
  Schedule s = schedule_of(x.permute({1, 0}).flip({0}) + 1.0f);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count_ops(s.items[0].ast, Ops::LOAD), 1u);
}

// A reshape over a symbolic axis that is not the outermost (Winograd's points outside a dynamic
// batch) maps that axis straight through and splits the others among themselves: no address
// divides by a size known only at run time (a division by batch x 4096 on every element made
// Winograd's product over a dynamic batch 4x slower). Every bound size reads the right elements.
TEST(Schedule, AReshapeAroundASymbolicAxisDividesByNoSymbolicSize) {
  Variable n("n", 1, 5);
  std::vector<float> data(3 * 5 * 8);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  Tensor x = Tensor::from_vector(data, {3, 5, 8}).shrink({{0, 3}, {0, n.bind(5)}, {0, 8}}).contiguous();
  Tensor y = (x.reshape({SInt(3), n.bind(5), SInt(4), SInt(2)}).permute({0, 1, 3, 2}) * 1.0f).contiguous();
  Schedule s = schedule_of(y);
  for (const ScheduleItem& item : s.items) {
    if (!item.ast) continue;
    for (const UOpPtr& u : toposort(item.ast))
      if (u->op() == Ops::IDIV || u->op() == Ops::MOD) {
        EXPECT_TRUE(u->src(1)->is_const()) << "a division by " << to_string(*u->src(1));
      }
  }
  ExecutionPlan plan = Tensor::prepare({y});
  for (int64_t rows : {1, 2, 5}) {
    plan.execute_with_vars({{"n", rows}});
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < rows; ++b)
        for (int64_t k = 0; k < 2; ++k)
          for (int64_t i = 0; i < 4; ++i) {  // y[a, b, k, i] = x[a, b, i * 2 + k]
            float want = static_cast<float>((a * 5 + b) * 8 + i * 2 + k);
            ASSERT_EQ(got[static_cast<size_t>(((a * rows + b) * 2 + k) * 4 + i)], want) << rows << " rows, at " << a << "," << b << "," << k << "," << i;
          }
  }
}

TEST(Schedule, ReductionFusesWhatFeedsItAndWhatFollows) {
  Tensor a = Tensor::rand({5, 7}, 1), b = Tensor::rand({5, 7}, 2), d = Tensor::rand({5}, 3);
  Schedule s = schedule_of((a * b + 1.0f).relu().sum({1}) * 2.0f + d);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count_ops(s.items[0].ast, Ops::REDUCE), 1u);
}

// A reduction read back across the axis it reduced is computed once per row: in the kernel that
// reads it when the row's work is small (the linearizer places it outside the loop over the row),
// else stored. Either way at most 3 kernels and no recomputation beyond the work budget.
TEST(Schedule, SoftmaxComputesEachRowReductionOnce) {
  for (Shape shape : {Shape{4, 16}, Shape{64, 1000}}) {
    Tensor x = Tensor::rand(shape, 1);
    Schedule s = schedule_of(x.softmax(1));
    EXPECT_LE(s.items.size(), 3u);
    EXPECT_WITHIN_WORK_BUDGET({x.softmax(1)});
  }
}

// contiguous() stores its source's value once: the CONTIGUOUS is a view of that store, and a
// second reader of the source loads it instead of computing it again. An input is copied.
TEST(Schedule, ContiguousIsARealizePoint) {
  Tensor x = Tensor::rand({4, 4}, 1);
  Tensor y = x * 2.0f;
  Tensor k = y.contiguous();
  Schedule s = schedule_of(k.permute({1, 0}) + y.exp());
  std::vector<const ScheduleItem*> kernels, views;
  for (const ScheduleItem& it : s.items) (it.is_view() ? views : kernels).push_back(&it);
  ASSERT_EQ(kernels.size(), 2u);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(kernels[0]->bufs[0], y.uop());  // the first kernel stores y
  EXPECT_EQ(views[0]->bufs, std::vector<UOpPtr>{k.uop()});
  const Placement* view = s.placement(*k.uop());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->kind, Placement::Kind::view);
  EXPECT_EQ(view->base, y.uop());  // the CONTIGUOUS is y's memory
  EXPECT_EQ(view->offset, 0);
  const std::vector<UOpPtr>& reads = kernels[1]->bufs;  // the second reads y, never x: no x * 2 again
  EXPECT_NE(std::find(reads.begin(), reads.end(), y.uop()), reads.end());
  EXPECT_EQ(std::find(reads.begin(), reads.end(), x.uop()), reads.end());
  Schedule copy = schedule_of(x.contiguous() + 1.0f);
  size_t copy_kernels = 0;
  for (const ScheduleItem& it : copy.items) copy_kernels += !it.is_view();
  EXPECT_EQ(copy_kernels, 2u);
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
  Schedule s = create_schedule({x.reshape({4, 3}).shrink({{1, 3}, {0, 3}}).uop()}, default_schedule_context());
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].ast, nullptr);
  const Placement* view = s.placement(*s.items[0].bufs[0]);
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->kind, Placement::Kind::view);
  EXPECT_EQ(view->base, x.uop());
  EXPECT_EQ(view->offset, 3);
  EXPECT_EQ(view->elements, 6);
  // A column is not contiguous: it needs a kernel.
  Schedule col = create_schedule({x.shrink({{0, 3}, {1, 2}}).uop()}, default_schedule_context());
  ASSERT_EQ(col.items.size(), 1u);
  EXPECT_FALSE(col.items[0].is_view());
  EXPECT_TRUE(col.placements.empty());
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
  Schedule s = create_schedule({x.sum().uop()}, default_schedule_context());
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
  EXPECT_EQ(create_schedule({x.sum().uop()}, default_schedule_context()).items.size(), 1u);
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
  Schedule s = create_schedule({y.uop()}, default_schedule_context());
  ASSERT_EQ(s.items.size(), 1u);
  ASSERT_NE(s.items[0].ast, nullptr);
}

// A computed value that a reduction reads through a broadcast (a convolution's input here) is
// stored once, not recomputed for every output channel and tap. (The weights' layout copies are
// kernels of their own.)
TEST(Schedule, ElementwiseInputOfAConvolutionIsStoredOnce) {
  Tensor x = Tensor::rand({1, 4, 8, 8}, 1), w1 = Tensor::rand({6, 4, 3, 3}, 2), w2 = Tensor::rand({5, 6, 3, 3}, 3);
  Tensor h = (x.conv2d(w1, std::nullopt, {1, 1}, {1, 1}) - 0.5f).relu();
  Tensor y = h.conv2d(w2, std::nullopt, {1, 1}, {1, 1});
  Schedule sched = schedule_of(y);
  // One kernel stores relu(conv - 0.5), not the bare conv; the last reads it, computing no relu.
  // (h and y as the schedule rebuilt them: the weights are stored in blocks.)
  auto stores_h = [&](const ScheduleItem& item) { return item.bufs[0] == sched.becomes.now(h.uop()); };
  EXPECT_EQ(std::count_if(sched.items.begin(), sched.items.end(), stores_h), 1);
  EXPECT_EQ(sched.items.back().bufs[0], sched.becomes.now(y.uop()));
  EXPECT_EQ(count_ops(sched.items.back().ast, Ops::MAX), 0u);
  for (const ScheduleItem& item : sched.items) {
    if (item.is_view() || stores_h(item) || item.bufs[0] == sched.becomes.now(y.uop())) continue;  // a view runs nothing
    EXPECT_EQ(count_ops(item.ast, Ops::REDUCE), 0u) << "only a layout copy besides";
  }
  ExecutionPlan plan = y.prepare();
  plan.execute();
  std::vector<float> got = Tensor::from_buffer(*plan.output_buffer(), y.shape()).to_vector<float>();
  Tensor h_stored = Tensor::from_vector(h.to_vector<float>(), h.shape());
  std::vector<float> want = h_stored.conv2d(w2, std::nullopt, {1, 1}, {1, 1}).to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  // layernorm's mean and variance: at most a kernel each, and nothing recomputed.
  Tensor r = Tensor::rand({8, 32}, 4);
  EXPECT_LE(r.layernorm().prepare().prepared_kernels().size(), 3u);
  EXPECT_WITHIN_WORK_BUDGET({r.layernorm()});
}

// A convolution's computed input is stored in channel blocks, (N, C/16, H, W, 16), by the kernel
// that computes it; read elsewhere too (a residual sum), it is still stored once, in blocks
// (schedule/reader_layout), and the requested output keeps its id.
TEST(Schedule, AConvolutionsComputedInputIsStoredOnceInChannelBlocks) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  std::vector<float> xv(16 * 36);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 3.0f;
  Tensor x = Tensor::from_vector(xv, {1, 16, 6, 6}), w = Tensor::rand({16, 16, 3, 3}, 2).realize();
  Tensor h = (x * 2.0f).relu();
  Tensor y = h.conv2d(w, std::nullopt, {1, 1}, {1, 1}) + h;
  Schedule sched = schedule_of(y);
  int blocked = 0, plain = 0;
  for (const ScheduleItem& item : sched.items) {
    if (item.is_view()) continue;  // a CONTIGUOUS over what another item stores
    const Shape& s = sched.shapes.at(item.bufs[0].get());
    blocked += s == Shape{1, 1, 6, 6, 16};
    plain += s == Shape{1, 16, 6, 6};
  }
  EXPECT_EQ(blocked, 1);
  EXPECT_EQ(plain, 1) << "only the output is stored as (N, C, H, W)";
  EXPECT_EQ(sched.becomes.now(y.uop()), sched.outputs[0]) << "the output as rebuilt";
  ExecutionPlan plan = y.prepare();
  plan.execute();
  EXPECT_NE(plan.buffer(y.uop_id()), nullptr);
  // A user's contiguous() of a transpose is a copy like any other: its node's other reader does
  // not read the transposed copy.
  Tensor r = (Tensor::from_vector(xv, {16, 36}) * 2.0f).relu();
  Schedule copied = create_schedule({r.transpose(0, 1).contiguous().uop(), (r + 1.0f).uop()}, default_schedule_context());
  for (const ScheduleItem& item : copied.items) {
    if (item.bufs[0] != copied.outputs[1]) continue;
    for (const UOpPtr& b : item.bufs) EXPECT_NE(copied.shapes.at(b.get()), (Shape{36, 16})) << to_string(*b);
  }
}

// Squeeze-and-excitation before a projection: the depthwise output d is pooled (the squeeze) and
// scaled by what the pool gives; the projection copies d * scale into channel blocks. d is then
// stored in blocks too, by the depthwise kernel (the pool and the scaling read it there), so the
// scaling kernel reads and stores blocks rather than transposing.
TEST(Schedule, AnOperandOfACopiedElementwiseNodeIsStoredInTheCopysLayout) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  std::vector<float> xv(32 * 49);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 11) * 0.25f - 1.0f;
  Tensor x = Tensor::from_vector(xv, {1, 32, 7, 7});
  Tensor dw = Tensor::rand({32, 1, 3, 3}, 2).realize(), proj = Tensor::rand({16, 32, 1, 1}, 3).realize();
  Tensor d = x.conv2d(dw, std::nullopt, {1, 1}, {1, 1}, {1, 1}, 32).relu();
  Tensor scale = d.mean({2, 3}, true).sigmoid();
  Tensor y = (d * scale).conv2d(proj);
  Schedule sched = schedule_of(y);
  int blocked = 0, plain = 0;
  for (const ScheduleItem& item : sched.items) {
    if (item.is_view()) continue;
    const Shape& s = sched.shapes.at(item.bufs[0].get());
    blocked += s == Shape{1, 2, 7, 7, 16};
    plain += s == Shape{1, 32, 7, 7};
  }
  EXPECT_EQ(blocked, 3) << "x copied for the depthwise kernel, d and d * scale, each in channel blocks";
  EXPECT_EQ(plain, 0) << "d stored as (N, C, H, W)";
  ExecutionPlan plan = y.prepare();
  plan.execute();
  std::vector<float> got = Tensor::from_buffer(*plan.output_buffer(), y.shape()).to_vector<float>();
  Tensor d_stored = Tensor::from_vector(d.to_vector<float>(), d.shape());
  Tensor scale_stored = Tensor::from_vector(scale.to_vector<float>(), scale.shape());
  std::vector<float> want = (d_stored * scale_stored).conv2d(proj).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  // An operand read only inside the expression (SiLU's h * sigmoid(h) over a convolution) is
  // computed in the copy's kernel, not stored on its own.
  Tensor h = x.conv2d(Tensor::rand({32, 32, 3, 3}, 4).realize(), std::nullopt, {1, 1}, {1, 1});
  Tensor silu = (h * h.sigmoid()).conv2d(proj);
  Schedule fused = schedule_of(silu);
  int silu_blocked = 0;
  for (const ScheduleItem& item : fused.items)
    silu_blocked += !item.is_view() && fused.shapes.at(item.bufs[0].get()) == Shape{1, 2, 7, 7, 16};
  EXPECT_EQ(silu_blocked, 2) << "x copied into blocks for h's convolution, h * sigmoid(h) stored in blocks, h not stored on its own";
}

// gather is one indexed load per output, not a one-hot compare-and-sum over the table: the kernel
// has no reduction, negative indices count from the end, and an index outside reads 0.
TEST(Schedule, GatherIsAnIndexedLoad) {
  std::vector<float> table(50 * 3);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  Tensor x = Tensor::from_vector(table, {50, 3});
  Tensor idx = Tensor::from_vector<int64_t>({7, -1, 0, 49, 50, -51}, {6, 1}).expand({6, 3});
  Tensor y = x.gather(0, idx);
  Schedule sched = schedule_of(y);
  ASSERT_EQ(sched.items.size(), 1u);
  EXPECT_EQ(count_ops(sched.items[0].ast, Ops::REDUCE), 0u);
  std::vector<float> got = y.to_vector<float>();
  std::vector<int64_t> rows{7, 49, 0, 49, -1, -1};  // -1: outside, reads 0
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < 3; ++c)
      EXPECT_EQ(got[r * 3 + c], rows[r] < 0 ? 0.0f : table[static_cast<size_t>(rows[r]) * 3 + c]) << r << "," << c;
}

// An LSTM unrolled lazily over several steps: each gate reads its slice of one bias vector
// through index expressions the lowering makes and drops along the way. Its memo once keyed
// requests by node addresses, so a freed index node's address, reused by a new one, returned
// another gate's load (the i gate read the f gate's bias). Compared with plain loops.
void check_unrolled_lstm(int64_t seq) {
  const int64_t batch = 2, in = 16, hs = 24;
  Tensor x = Tensor::randn({seq, batch, in}, 1).realize();
  Tensor w = (Tensor::randn({1, 4 * hs, in}, 2) * 0.3f).realize();
  Tensor r = (Tensor::randn({1, 4 * hs, hs}, 3) * 0.3f).realize();
  Tensor bias = (Tensor::randn({1, 8 * hs}, 4) * 0.3f).realize();
  Tensor h = Tensor::zeros({batch, hs}), cell = Tensor::zeros({batch, hs});
  Tensor wd = w.slice(0, 0, 1).squeeze(0).transpose(0, 1), rd = r.slice(0, 0, 1).squeeze(0).transpose(0, 1);
  Tensor b = bias.slice(0, 0, 1).squeeze(0);
  Tensor wb = b.slice(0, 0, 4 * hs), rb = b.slice(0, 4 * hs, 8 * hs);
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < seq; ++t) {
    Tensor g = x.slice(0, t, t + 1).squeeze(0).matmul(wd) + wb + h.matmul(rd) + rb;
    auto gate = [&](int64_t k) { return g.slice(-1, k * hs, (k + 1) * hs); };
    cell = (gate(2).sigmoid() * cell + gate(0).sigmoid() * gate(3).tanh()).contiguous();
    h = (gate(1).sigmoid() * cell.tanh()).contiguous();
    steps.push_back(h.unsqueeze(0));
  }
  std::vector<float> got = Tensor::cat(steps, 0).to_vector<float>();

  std::vector<float> X = x.to_vector<float>(), W = w.to_vector<float>(), R = r.to_vector<float>(), B = bias.to_vector<float>();
  std::vector<double> H(batch * hs, 0), C(batch * hs, 0);
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  for (int64_t t = 0; t < seq; ++t) {
    std::vector<double> h2(H.size()), c2(C.size());
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t j = 0; j < hs; ++j) {
        double g[4];
        for (int64_t k = 0; k < 4; ++k) {
          int64_t row = k * hs + j;
          double s = B[row] + B[4 * hs + row];
          for (int64_t q = 0; q < in; ++q) s += X[(t * batch + n) * in + q] * W[row * in + q];
          for (int64_t q = 0; q < hs; ++q) s += H[n * hs + q] * R[row * hs + q];
          g[k] = s;
        }
        c2[n * hs + j] = sigmoid(g[2]) * C[n * hs + j] + sigmoid(g[0]) * std::tanh(g[3]);
        h2[n * hs + j] = sigmoid(g[1]) * std::tanh(c2[n * hs + j]);
      }
    H = h2, C = c2;
    for (int64_t i = 0; i < batch * hs; ++i)
      ASSERT_NEAR(got[t * batch * hs + i], H[i], 1e-5) << seq << " steps: step " << t << " element " << i;
  }
}

TEST(Schedule, UnrolledRecurrenceMatchesPlainLoops) {
  for (int64_t seq = 1; seq <= 10; ++seq) check_unrolled_lstm(seq);
}

}  // namespace
}  // namespace lathe
