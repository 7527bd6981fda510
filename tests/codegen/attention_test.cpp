// Attention as one kernel (codegen/attention) against plain loops: sizes that leave a tail in a
// tile of rows, a block of keys or a vector of values; causal and masked key ranges; rows that
// see no key; broadcast batches, strided operands, one or two threads. The plan is one attention
// kernel (and the keys' copy in blocks) and stores no queries x keys matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/attention.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "tensor/reference.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

using test::data;
using test::f32;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  int64_t batch, queries, keys, d, dv;
  bool causal;
};

// softmax(q k^T / sqrt(d), masked by `sees`) v over (batch, queries, d), (batch, keys, d), (batch, keys, dv).
template <class Sees>
std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, const Case& c, Sees sees) {
  std::vector<double> out;
  for (int64_t z = 0; z < c.batch; ++z)
    for (int64_t i = 0; i < c.queries; ++i) {
      std::vector<double> row = test::attention_row(
          &q[static_cast<size_t>((z * c.queries + i) * c.d)], c.keys, c.d, c.dv,
          [&](int64_t j, int64_t p) { return k[static_cast<size_t>((z * c.keys + j) * c.d + p)]; },
          [&](int64_t j, int64_t e) { return v[static_cast<size_t>((z * c.keys + j) * c.dv + e)]; },
          [&](int64_t j, double x) { return sees(i, j) ? x : -kInf; });
      out.insert(out.end(), row.begin(), row.end());
    }
  return out;
}

// The plan for `out` has one attention kernel, and none of its buffers holds `scores` floats.
void expect_one_kernel(const Tensor& out, int64_t scores) {
  Schedule s = create_schedule({out.uop()}, default_schedule_context());
  int attention = 0;
  for (const ScheduleItem& item : s.items) attention += item.ast && kernel_info(*item.ast).builds_own_loops;
  EXPECT_EQ(attention, 1);
  ExecutionPlan plan = out.prepare();
  for (const Buffer& b : plan.buffers()) EXPECT_LT(b.nbytes(), static_cast<size_t>(scores) * sizeof(float)) << "a buffer of the scores' size";
}

class AttentionKernel : public ::testing::TestWithParam<Case> {};

// softmax(q k^T / sqrt(d)) v as one attention kernel (a causal one with the key range {0, 0, 1, 1}).
Tensor one_kernel(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  Tensor scores = detail::attention_scores(q, k.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(q.shape().back())));
  std::optional<Tensor> out = detail::attention(scores, v, causal ? std::optional(AttentionKeys{0, 0, 1, 1}) : std::nullopt);
  EXPECT_TRUE(out.has_value());
  return out.value_or(Tensor());
}

// At every target shape: 16 lanes and 32 registers, 8 and 4 lanes with 16 registers, where a
// tile's rows (at least 4) spill their accumulators (80 values at 8 lanes: 4 vectors a row).
TEST_P(AttentionKernel, AgreesWithPlainLoops) {
  const Case& c = GetParam();
  auto q = data(static_cast<size_t>(c.batch * c.queries * c.d), 1), k = data(static_cast<size_t>(c.batch * c.keys * c.d), 2),
       v = data(static_cast<size_t>(c.batch * c.keys * c.dv), 3);
  std::vector<double> want = reference(q, k, v, c, [&](int64_t i, int64_t j) { return !c.causal || j <= i; });
  for (const char* lanes : {"16", "8", "4"}) {
    test::ScopedTargetShape shape(lanes);
    SCOPED_TRACE(std::string(lanes) + " lanes");
    Tensor out = one_kernel(f32(q, {c.batch, c.queries, c.d}), f32(k, {c.batch, c.keys, c.d}), f32(v, {c.batch, c.keys, c.dv}), c.causal);
    ASSERT_EQ(out.shape(), (Shape{c.batch, c.queries, c.dv}));
    if (c.queries * c.keys > 4 * std::max(c.queries * c.d, c.keys * std::max(c.d, c.dv))) expect_one_kernel(out, c.batch * c.queries * c.keys);
    EXPECT_ALLCLOSE(out.to_vector<float>(), want, 1e-4, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, AttentionKernel,
    ::testing::Values(Case{1, 1, 1, 1, 1, false},        // one of everything
                      Case{2, 7, 37, 3, 5, false},       // primes: tails of rows, of keys (2 blocks and 5), of value lanes
                      Case{1, 37, 37, 8, 17, true},      // causal; 17 values, a vector and one lane
                      Case{3, 16, 16, 16, 16, true},     // whole blocks and vectors
                      Case{1, 5, 130, 4, 80, false},     // 80 values: 5 vectors in two chunks
                      Case{1, 9, 20, 2, 256, true},      // 256 values: 16 vectors in four chunks
                      Case{2, 64, 33, 64, 64, true},     // more queries than keys: the last rows see every key
                      Case{1, 300, 301, 32, 1, false}),  // one value position, scores 45x the operands
    [](const ::testing::TestParamInfo<Case>& i) {
      const Case& c = i.param;
      return "b" + std::to_string(c.batch) + "_q" + std::to_string(c.queries) + "_k" + std::to_string(c.keys) + "_d" + std::to_string(c.d) +
             "_v" + std::to_string(c.dv) + (c.causal ? "_causal" : "");
    });

// The kernel splits its tiles across cores: one core and two give the plain loops' values.
TEST(AttentionKernel, OneOrTwoThreads) {
  const Case c{2, 45, 70, 16, 24, true};
  auto q = data(2 * 45 * 16, 4), k = data(2 * 70 * 16, 5), v = data(2 * 70 * 24, 6);
  std::vector<double> want = reference(q, k, v, c, [](int64_t i, int64_t j) { return j <= i; });
  for (int threads : {1, 2}) {
    Tensor out = f32(q, {2, 45, 16}).scaled_dot_product_attention(f32(k, {2, 70, 16}), f32(v, {2, 70, 24}), true);
    PrepareOptions options;
    options.threads = threads;
    ExecutionPlan plan = Tensor::prepare({out}, options);
    plan.execute();
    EXPECT_ALLCLOSE(Tensor::from_buffer(*plan.output_buffer(), out.shape()).to_vector<float>(), want, 1e-4, 1e-5) << threads << " threads";
  }
}

// Queries, keys and values read through views (transposed storage) and batches broadcast against
// heads: (2, 1) queries against (1, 3) keys and values give (2, 3).
TEST(AttentionKernel, StridedOperandsAndBroadcastBatches) {
  const int64_t l = 19, s = 23, d = 6, dv = 9;
  auto q = data(2 * d * l, 7), k = data(3 * s * d, 8), v = data(3 * dv * s, 9);
  Tensor qt = f32(q, {2, 1, d, l}).transpose(-1, -2), vt = f32(v, {1, 3, dv, s}).transpose(-1, -2);
  Tensor out = one_kernel(qt, f32(k, {1, 3, s, d}), vt, false);
  ASSERT_EQ(out.shape(), (Shape{2, 3, l, dv}));
  std::vector<float> got = out.to_vector<float>();
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t i = 0; i < l; ++i) {
        std::vector<float> q_row(static_cast<size_t>(d));
        for (int64_t c = 0; c < d; ++c) q_row[static_cast<size_t>(c)] = q[static_cast<size_t>((a * d + c) * l + i)];
        std::vector<double> want = test::attention_row(
            q_row.data(), s, d, dv, [&](int64_t j, int64_t c) { return k[static_cast<size_t>((h * s + j) * d + c)]; },
            [&](int64_t j, int64_t e) { return v[static_cast<size_t>((h * dv + e) * s + j)]; }, [](int64_t, double x) { return x; });
        for (int64_t e = 0; e < dv; ++e)
          EXPECT_NEAR(got[static_cast<size_t>(((a * 3 + h) * l + i) * dv + e)], want[static_cast<size_t>(e)], 1e-4) << a << h << i << e;
      }
}

// A mask in the scores (a sliding window of 5 keys as a bias of 0 and -inf) and a key range the
// kernel reads: the window's own ({1, -4, 1, 1}), one holding more keys than the mask ({0, 0, 0,
// keys}: every key), or a range only (the scores unmasked). All give the masked softmax; the
// window's range reads a fraction of the keys.
TEST(AttentionKernel, KeyRangesReadOnlyTheKeysTheyHold) {
  const Case c{2, 150, 150, 8, 16, false};
  const int64_t window = 5;
  auto q = data(2 * 150 * 8, 10), k = data(2 * 150 * 8, 11), v = data(2 * 150 * 16, 12);
  std::vector<float> bias(150 * 150);
  for (int64_t i = 0; i < 150; ++i)
    for (int64_t j = 0; j < 150; ++j) bias[static_cast<size_t>(i * 150 + j)] = j <= i && j > i - window ? 0.0f : -INFINITY;
  auto in_window = [&](int64_t i, int64_t j) { return j <= i && j > i - window; };
  std::vector<double> want = reference(q, k, v, c, in_window);
  Tensor scores = detail::attention_scores(f32(q, {2, 150, 8}), f32(k, {2, 150, 8}).transpose(-1, -2)) * (1.0 / std::sqrt(8.0));
  Tensor masked = scores + f32(bias, {150, 150});
  std::vector<int64_t> ops;
  for (auto [s, range] : {std::pair{masked, AttentionKeys{0, 0, 0, 150}}, std::pair{masked, AttentionKeys{1, 1 - window, 1, 1}},
                          std::pair{scores, AttentionKeys{1, 1 - window, 1, 1}}}) {
    std::optional<Tensor> out = detail::attention(s, f32(v, {2, 150, 16}), range);
    ASSERT_TRUE(out.has_value());
    EXPECT_ALLCLOSE(out->to_vector<float>(), want, 1e-4, 1e-5) << range.begin_step << " " << range.begin << " " << range.end;
    ops.push_back(out->prepare().estimated_work().ops);
  }
  EXPECT_LT(static_cast<double>(ops[1]), 0.35 * static_cast<double>(ops[0]));
  EXPECT_LT(static_cast<double>(ops[2]), 0.35 * static_cast<double>(ops[0]));
}

// Rows whose range holds no key (end = i - 2: rows 0 to 2) are NaN, as softmax over scores that
// are all -inf is; the others see keys [0, i - 2).
TEST(AttentionKernel, ARowThatSeesNoKeyIsNaN) {
  const Case c{1, 40, 40, 4, 3, false};
  auto q = data(40 * 4, 13), k = data(40 * 4, 14), v = data(40 * 3, 15);
  Tensor scores = detail::attention_scores(f32(q, {1, 40, 4}), f32(k, {1, 40, 4}).transpose(-1, -2)) * 0.5;
  std::optional<Tensor> out = detail::attention(scores, f32(v, {1, 40, 3}), AttentionKeys{0, 0, 1, -2});
  ASSERT_TRUE(out.has_value());
  std::vector<float> got = out->to_vector<float>();
  std::vector<double> want = reference(q, k, v, c, [](int64_t i, int64_t j) { return j < i - 2; });
  for (size_t i = 0; i < got.size(); ++i) {
    if (i < 9) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-5 * std::abs(want[i])) << i;
  }
}

// Tensor::scaled_dot_product_attention is one kernel where that pays: with a causal mask, which
// lets it skip keys; without one it runs as matmuls and a softmax (faster over every key).
TEST(AttentionKernel, ScaledDotProductAttentionTakesItWhereItPays) {
  auto kernels = [](int64_t dv, bool causal) {
    Tensor q = Tensor::rand({2, 40, 16}, 1), k = Tensor::rand({2, 50, 16}, 2), v = Tensor::rand({2, 50, dv}, 3);
    ExecutionPlan plan = q.scaled_dot_product_attention(k, v, causal).prepare();  // the attention rule runs at prepare
    int n = 0;
    for (const PreparedKernel* kernel : plan.prepared_kernels()) n += kernel_info(*kernel->ast).builds_own_loops;
    return n;
  };
  EXPECT_EQ(kernels(64, true), 1);
  EXPECT_EQ(kernels(32, true), 1);
  EXPECT_EQ(kernels(64, false), 0);
}

// What the kernel does not take: a symbolic size, another dtype, an empty axis, keys that differ.
TEST(AttentionKernel, OnlyStaticFloat32) {
  Tensor s = Tensor::rand({2, 3, 4}, 1), v = Tensor::rand({2, 4, 5}, 2);
  EXPECT_TRUE(detail::attention(s, v).has_value());
  EXPECT_FALSE(detail::attention(s.cast(dtypes::float16), v).has_value());
  EXPECT_FALSE(detail::attention(s, Tensor::rand({2, 3, 5}, 3)).has_value());
  EXPECT_FALSE(detail::attention(Tensor::rand({2, 0, 4}, 4), v).has_value());
  Variable n("n", 1, 4);
  EXPECT_FALSE(detail::attention(Tensor::rand({2, 4, 4}, 5).shrink({{0, 2}, {0, n.bind(3)}, {0, 4}}), v).has_value());
}

}  // namespace
}  // namespace lathe
