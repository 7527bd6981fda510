// Padded copies written in place (schedule/padded_in_place.hpp): which producers write into their
// PAD's buffer, and plans in which they do, checked against the same graphs computed from the
// producer's values stored first (the padded copy made plainly), in a poisoned arena.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/arena_check.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/blocks.hpp"
#include "schedule/create_schedule.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// The values of `t`, computed now, as a tensor of stored data.
Tensor stored(const Tensor& t) { return test::f32(t.to_vector<float>(), t.shape()); }

bool loads(const UOpPtr& ast) {
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::LOAD) return true;
  return false;
}

// The producers the schedule writes into a PAD's interior: producer -> that PAD.
std::unordered_map<const UOp*, UOpPtr> written_into(const Schedule& s) {
  std::unordered_map<const UOp*, UOpPtr> into;
  for (const auto& [node, p] : s.placements)
    if (p.kind == Placement::Kind::padded_interior) into.emplace(node, p.base);
  return into;
}

// A model's weight: a buffer marked constant, as the ONNX importer marks initializers.
Tensor constant(const Shape& shape, uint64_t seed) {
  Tensor w = test::random_tensor(shape, seed);
  w.buffer().set_constant();
  return w;
}

// Two 3x3 convolutions with 256 output channels (each input element feeds too many multiply-adds
// to read the padding through gates): the second reads the first's output through a padded copy,
// and a residual sum reads it as it is; a 1x1 convolution reads the sum (so the second
// convolution's output is an intermediate). The image is 7 x 5, its input channels 16.
struct Block {
  Tensor x = test::random_tensor({1, 16, 7, 5}, 1), w1 = constant({256, 16, 3, 3}, 2), b1 = constant({256}, 3),
         w2 = constant({256, 256, 3, 3}, 4), w3 = constant({8, 256, 1, 1}, 5);
  Tensor h = x.conv2d(w1, b1, {1, 1}, {1, 1}).relu();
  Tensor y(const Tensor& first) const { return (first.conv2d(w2, std::nullopt, {1, 1}, {1, 1}) + first).conv2d(w3); }
};

TEST(PaddedInPlace, AConvolutionWritesIntoItsReadersPaddedBuffer) {
  Block b;
  Schedule s = create_schedule({b.y(b.h).uop()}, default_schedule_context());
  std::unordered_map<const UOp*, UOpPtr> padded = written_into(s);
  ASSERT_EQ(padded.size(), 1u);
  const UOpPtr& h = s.becomes.now(b.h.uop());  // rebuilt: the weights are stored in blocks
  auto into = padded.find(h.get());
  ASSERT_NE(into, padded.end()) << "the first convolution's output is written into the padded buffer";
  EXPECT_EQ(into->second->op(), Ops::PAD);
  // The padded buffer's own kernel fills it and reads nothing, and comes before the producer's.
  size_t fill = s.items.size(), producer = s.items.size();
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (s.items[i].bufs[0] == into->second) fill = i;
    if (s.items[i].bufs[0] == h) producer = i;
  }
  ASSERT_LT(fill, s.items.size());
  ASSERT_LT(producer, s.items.size());
  EXPECT_LT(fill, producer);
  EXPECT_FALSE(loads(s.items[fill].ast));
}

// The plan fills the border once, at prepare; execute() runs the producer (writing the interior)
// and no copy, and the padded buffer is no constant (its reader runs in every execute()). Values
// match the plain padded copy's, executed twice, in a poisoned arena, after the intermediates were
// released, after the caller overwrote the padded buffer (the fill runs again), for a new input,
// and with the arena off.
TEST(PaddedInPlace, ThePlanFillsTheBorderOnceAndMatchesAPlainCopy) {
  // The direct method on every CPU: prepare would take Winograd's for the 256-channel 7 x 5 layer
  // at some target shapes, and the padded copy is the direct method's.
  test::ScopedEnv direct("LATHE_WINOGRAD", "0");
  Block b;
  std::vector<float> want = b.y(stored(b.h)).to_vector<float>();
  Tensor y = b.y(b.h);  // held: the PAD node's id names the padded buffer
  PrepareOptions poisoned;
  poisoned.poison = true;
  ExecutionPlan plan = Tensor::prepare({y}, poisoned);
  plan.execute();
  plan.execute();
  testing::expect_no_live_overlap(plan);
  EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-3, 1e-4);
  size_t folded_fills = 0, executed = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    if (k->constant) folded_fills += !loads(k->ast);
    executed += !k->constant;
  }
  EXPECT_EQ(folded_fills, 1u) << "the padded buffer's fill runs at prepare";
  // The input's padded copy (an input is no kernel's output) and the three convolutions: no copy
  // of the first's output.
  EXPECT_EQ(executed, 4u);
  plan.release_intermediate_buffers(nullptr);
  plan.execute();
  EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-3, 1e-4);
  // The PAD over the first convolution in the caller's graph (over the copy conv2d asks for, which
  // the schedule reads padded): its id names the padded buffer.
  UOpPtr pad;
  for (const UOpPtr& u : toposort(y.uop()))
    if (u->op() == Ops::PAD && (u->src(0) == b.h.uop() || (!u->src(0)->src().empty() && u->src(0)->src(0) == b.h.uop()))) pad = u;
  ASSERT_NE(pad, nullptr);
  Buffer* padded = plan.buffer_mut_by_id(pad->id());
  ASSERT_NE(padded, nullptr);
  std::vector<float> junk(padded->size(), std::nanf(""));
  padded->copyin(junk.data(), junk.size() * sizeof(float));
  plan.execute();
  EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-3, 1e-4);
  std::vector<float> x2 = test::data(static_cast<size_t>(16 * 7 * 5), 9);
  b.x.buffer().copyin(x2.data(), x2.size() * sizeof(float));
  plan.execute();
  Block fresh;
  fresh.x = test::f32(x2, {1, 16, 7, 5});
  fresh.h = fresh.x.conv2d(fresh.w1, fresh.b1, {1, 1}, {1, 1}).relu();
  EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), fresh.y(stored(fresh.h)).to_vector<float>(), 1e-3, 1e-4);
  b.x.buffer().copyin(test::data(static_cast<size_t>(16 * 7 * 5), 1).data(), x2.size() * sizeof(float));
  PrepareOptions own;
  own.share_memory = false;
  ExecutionPlan separate = Tensor::prepare({y}, own);
  separate.execute();
  EXPECT_ALLCLOSE(separate.output_buffer()->to_vector<float>(), want, 1e-3, 1e-4);
}

// A pad by another value on uneven sides, the padded buffer itself an output (so its fill runs in
// every execute()), and a second reader of the producer's value: both read the padded buffer.
TEST(PaddedInPlace, APadValueOnUnevenSidesAndAnotherReader) {
  Tensor a = test::random_tensor({67, 64}, 5), w = test::random_tensor({64, 61}, 6);
  Tensor prod = a.matmul(w) * 0.5f;
  Tensor padded = prod.pad({{1, 2}, {3, 0}}, 7.5).contiguous();
  Tensor twice = prod * 2.0f;
  Schedule s = create_schedule({padded.uop(), twice.uop()}, default_schedule_context());
  EXPECT_EQ(written_into(s).count(prod.uop().get()), 1u);
  ExecutionPlan plan = Tensor::prepare({padded, twice});
  plan.execute();
  plan.execute();
  std::vector<float> p = stored(prod).to_vector<float>();
  std::vector<float> got = plan.output_buffer_at(0)->to_vector<float>();
  ASSERT_EQ(got.size(), size_t{70 * 64});
  for (int64_t r = 0; r < 70; ++r)
    for (int64_t c = 0; c < 64; ++c) {
      bool inside = r >= 1 && r < 68 && c >= 3;
      float v = inside ? p[static_cast<size_t>((r - 1) * 61 + c - 3)] : 7.5f;
      ASSERT_NEAR(got[static_cast<size_t>(r * 64 + c)], v, 1e-3) << r << ", " << c;
    }
  std::vector<float> doubled = plan.output_buffer_at(1)->to_vector<float>();
  for (size_t i = 0; i < p.size(); ++i) ASSERT_NEAR(doubled[i], 2 * p[i], 2e-3) << i;
}

// A value copied into channel blocks (a layout copy, which its producer stores directly) and padded
// in them (a Winograd input transform's input): the producer writes the padded buffer's interior,
// in blocks; the value's other reader (a residual sum, through the copy's inverse view) reads it
// there, and no kernel copies it. Values as computed from the value stored first, at 8 and 16
// lanes (blocks of 8 and 16).
TEST(PaddedInPlace, AValueInChannelBlocksPaddedInThem) {
  for (int64_t block : {8, 16}) {
    SCOPED_TRACE(std::to_string(block) + "-channel blocks");
    Tensor in = test::random_tensor({2, 32, 7, 5}, 11);
    Tensor x = (in * 2.0f).relu();
    SymDims dims;
    for (const SInt& d : x.symbolic_shape()) dims.push_back(d.uop());
    UOpPtr view = split_in_blocks(x.uop(), x.shape(), dims, 1, block, true);
    auto padded_of = [&](const Tensor& copy) {
      return copy.pad({{0, 0}, {0, 0}, {1, 2}, {2, 1}, {0, 0}}).contiguous() * 3.0f;
    };
    Tensor padded = padded_of(Tensor(view->src(0), Shape{2, 32 / block, 7, 5, block}));
    Tensor residual = x + 1.0f;
    Schedule s = create_schedule({padded.uop(), residual.uop()}, default_schedule_context());
    ASSERT_EQ(written_into(s).size(), 1u) << "the value's kernel writes the padded buffer's interior";
    size_t kernels = 0;
    for (const ScheduleItem& item : s.items) kernels += item.ast != nullptr;
    EXPECT_EQ(kernels, 4u) << "the fill, the value in blocks, the padded buffer's reader, the residual sum";
    ExecutionPlan plan = Tensor::prepare({padded, residual});
    plan.execute();
    plan.execute();
    Tensor plain = stored(x);
    UOpPtr plain_view = split_in_blocks(plain.uop(), plain.shape(), dims, 1, block, true);
    EXPECT_ALLCLOSE(plan.output_buffer_at(0)->to_vector<float>(),
                    padded_of(Tensor(plain_view->src(0), Shape{2, 32 / block, 7, 5, block})).to_vector<float>(), 1e-6,
                    1e-6);
    EXPECT_ALLCLOSE(plan.output_buffer_at(1)->to_vector<float>(), (plain + 1.0f).to_vector<float>(), 1e-6, 1e-6);
  }
}

// Not taken: a producer that is itself an output, or whose own layout a view of it reads.
TEST(PaddedInPlace, OutputsAndViewsKeepTheProducersLayout) {
  Tensor a = test::random_tensor({32, 64}, 7), w = test::random_tensor({64, 48}, 8);
  Tensor prod = a.matmul(w) * 0.5f;
  Tensor padded = prod.pad({{1, 1}, {1, 1}}).contiguous() + 1.0f;
  EXPECT_TRUE(written_into(create_schedule({padded.uop(), prod.uop()}, default_schedule_context())).empty());
  Tensor rows = prod.reshape({32 * 48}).shrink({{48, 96}});  // a view: the second row
  Schedule s = create_schedule({padded.uop(), rows.uop()}, default_schedule_context());
  EXPECT_TRUE(written_into(s).empty());
  ExecutionPlan plan = Tensor::prepare({padded, rows});
  plan.execute();
  std::vector<float> p = stored(prod).to_vector<float>();
  EXPECT_ALLCLOSE(plan.output_buffer_at(1)->to_vector<float>(), std::vector<float>(p.begin() + 48, p.begin() + 96),
                  1e-4, 1e-4);
}

}  // namespace
}  // namespace lathe
