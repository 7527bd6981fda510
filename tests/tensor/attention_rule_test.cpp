// The attention rule (tensor/attention_rule): softmax(q @ k.T / s + mask) @ v written with the
// Tensor API is one attention kernel where the mask, known when the graph is built, restricts the
// keys (causal, sliding window, padded keys), and stays matmuls and a softmax where it does not
// (no mask, a mask every key passes, a mask a program can rewrite); long scores without a key
// range run a block of queries at a time. Values against plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "reference.hpp"

namespace lathe::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kBatch = 2, kHeads = 3, kSeq = 37, kDim = 16;

size_t attention_kernels(const Tensor& t) {
  size_t n = 0;
  ExecutionPlan plan = t.prepare();
  for (const PreparedKernel* k : plan.prepared_kernels()) n += kernel_info(*k->ast).builds_own_loops;
  return n;
}

// softmax(q k^T / sqrt(D) + bias(i, j)) v in double over `heads` matrices of kSeq x kDim (or
// seq x dim); `sees(i, j)` false puts -inf.
std::vector<double> attention_ref(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                                  const std::function<bool(int64_t, int64_t)>& sees, int64_t heads = kBatch * kHeads, int64_t seq = kSeq,
                                  int64_t dim = kDim) {
  std::vector<double> out(static_cast<size_t>(heads * seq * dim), 0.0);
  double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t i = 0; i < seq; ++i) {
      std::vector<double> s(static_cast<size_t>(seq), -kInf);
      double top = -kInf;
      for (int64_t j = 0; j < seq; ++j) {
        if (!sees(i, j)) continue;
        double dot = 0;
        for (int64_t d = 0; d < dim; ++d) dot += static_cast<double>(q[static_cast<size_t>((bh * seq + i) * dim + d)]) * k[static_cast<size_t>((bh * seq + j) * dim + d)];
        s[static_cast<size_t>(j)] = dot * scale;
        top = std::max(top, s[static_cast<size_t>(j)]);
      }
      double total = 0;
      for (double& x : s) total += (x = std::exp(x - top));
      for (int64_t j = 0; j < seq; ++j)
        for (int64_t d = 0; d < dim; ++d)
          out[static_cast<size_t>((bh * seq + i) * dim + d)] += s[static_cast<size_t>(j)] / total * v[static_cast<size_t>((bh * seq + j) * dim + d)];
    }
  return out;
}

struct Inputs {
  std::vector<float> q = data(static_cast<size_t>(kBatch * kHeads * kSeq * kDim), 61);
  std::vector<float> k = data(static_cast<size_t>(kBatch * kHeads * kSeq * kDim), 62);
  std::vector<float> v = data(static_cast<size_t>(kBatch * kHeads * kSeq * kDim), 63);
  Shape shape{kBatch, kHeads, kSeq, kDim};
  Tensor scores() const { return f32(q, shape).matmul(f32(k, shape).transpose(-1, -2)) / 4.0; }
  Tensor attend(const Tensor& masked) const { return masked.softmax(-1).matmul(f32(v, shape)); }
};

// Query positions as a column, key positions as a row: constants (Tensor::arange).
Tensor rows() { return Tensor::arange(kSeq).reshape({kSeq, 1}); }
Tensor cols() { return Tensor::arange(kSeq).reshape({1, kSeq}); }
Tensor bias_where(const Tensor& sees) { return sees.where(Tensor::full({}, 0.0), Tensor::full({}, -kInf)); }

TEST(AttentionRule, CausalMaskAddedToTheScoresIsOneKernel) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  Inputs in;
  Tensor out = in.attend(in.scores() + bias_where(cols() <= rows()));
  EXPECT_EQ(attention_kernels(out), 1u);
  EXPECT_ALLCLOSE(out.to_vector<float>(), attention_ref(in.q, in.k, in.v, [](int64_t i, int64_t j) { return j <= i; }), 1e-4, 1e-5);
}

TEST(AttentionRule, SlidingWindowByWhereIsOneKernel) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  Inputs in;
  int64_t window = 5;
  Tensor sees = (cols() <= rows()).logical_and(cols() > rows() - Tensor::full({}, int64_t{window}, dtypes::int32));
  Tensor out = in.attend(sees.where(in.scores(), Tensor::full({}, -kInf)));
  EXPECT_EQ(attention_kernels(out), 1u);
  EXPECT_ALLCLOSE(out.to_vector<float>(), attention_ref(in.q, in.k, in.v, [&](int64_t i, int64_t j) { return j <= i && j > i - window; }), 1e-4,
                  1e-5);
}

TEST(AttentionRule, PaddedKeysAfterAScaleAreOneKernel) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  Inputs in;
  int64_t valid = 30;  // keys past the 30th are padding
  Tensor bias = bias_where(cols() < Tensor::full({}, int64_t{valid}, dtypes::int32));
  Tensor out = in.attend((in.scores() + bias) * 2.0);  // a positive scale after the mask keeps -inf
  EXPECT_EQ(attention_kernels(out), 1u);
  std::vector<float> q2 = in.q;
  for (float& x : q2) x *= 2.0f;
  EXPECT_ALLCLOSE(out.to_vector<float>(), attention_ref(q2, in.k, in.v, [&](int64_t, int64_t j) { return j < valid; }), 1e-4, 1e-5);
}

// The rule looks through the softmax's own flush of subnormal probabilities (Tensor::softmax),
// and only through it: a program's threshold on the probabilities (here: those below 0.05 dropped)
// is computed as written, not taken for that flush.
TEST(AttentionRule, AThresholdOnTheProbabilitiesIsNotTheSoftmaxsFlush) {
  Inputs in;
  Tensor p = (in.scores() + bias_where(cols() <= rows())).softmax(-1);
  Tensor out = (p < Tensor::full({}, 0.05)).where(Tensor::full({}, 0.0), p).matmul(f32(in.v, in.shape));
  EXPECT_EQ(attention_kernels(out), 0u);
  std::vector<float> probs = p.to_vector<float>();
  std::vector<double> want(in.v.size(), 0.0);
  for (int64_t bh = 0; bh < kBatch * kHeads; ++bh)
    for (int64_t i = 0; i < kSeq; ++i)
      for (int64_t j = 0; j < kSeq; ++j) {
        float w = probs[static_cast<size_t>((bh * kSeq + i) * kSeq + j)];
        if (w < 0.05f) continue;
        for (int64_t d = 0; d < kDim; ++d)
          want[static_cast<size_t>((bh * kSeq + i) * kDim + d)] += static_cast<double>(w) * in.v[static_cast<size_t>((bh * kSeq + j) * kDim + d)];
      }
  EXPECT_ALLCLOSE(out.to_vector<float>(), want, 1e-4, 1e-5);
}

TEST(AttentionRule, WithoutARestrictingMaskStaysMatmuls) {
  Inputs in;
  Tensor plain = in.attend(in.scores());
  EXPECT_EQ(attention_kernels(plain), 0u);
  EXPECT_ALLCLOSE(plain.to_vector<float>(), attention_ref(in.q, in.k, in.v, [](int64_t, int64_t) { return true; }), 1e-4, 1e-5);
  Tensor every = in.attend(in.scores() + bias_where(cols() >= Tensor::full({}, int64_t{0}, dtypes::int32)));  // a mask that shuts nothing
  EXPECT_EQ(attention_kernels(every), 0u);
  // A mask a program may rewrite between runs (an ordinary buffer) is not known when the graph is built.
  std::vector<float> causal(static_cast<size_t>(kSeq * kSeq));
  for (int64_t i = 0; i < kSeq; ++i)
    for (int64_t j = 0; j < kSeq; ++j) causal[static_cast<size_t>(i * kSeq + j)] = j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
  Tensor written = in.attend(in.scores() + f32(causal, {kSeq, kSeq}));
  EXPECT_EQ(attention_kernels(written), 0u);
  EXPECT_ALLCLOSE(written.to_vector<float>(), attention_ref(in.q, in.k, in.v, [](int64_t i, int64_t j) { return j <= i; }), 1e-4, 1e-5);
}

// Products large enough that the schedule would store their right operands in column blocks
// (schedule/column_blocks): the attention rule takes them first, and the attention kernel reads the
// keys and values themselves, so the plan is the key-block copy of the keys, the mask (on
// constants, run at prepare) and the attention kernel; no column-block copies.
TEST(AttentionRule, ReadsTheOperandsNotTheMatmulsColumnBlocks) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  int64_t heads = 4, seq = 256, dim = 64;
  auto n = static_cast<size_t>(heads * seq * dim);
  std::vector<float> qd = data(n, 71, -1, 1), kd = data(n, 72, -1, 1), vd = data(n, 73, -1, 1);
  Tensor q = f32(qd, {1, heads, seq, dim}), k = f32(kd, {1, heads, seq, dim}), v = f32(vd, {1, heads, seq, dim});
  Tensor sees = Tensor::arange(seq).reshape({1, seq}) <= Tensor::arange(seq).reshape({seq, 1});
  Tensor out = (q.matmul(k.transpose(-1, -2)) / 8.0 + bias_where(sees)).softmax(-1).matmul(v);  // 8: sqrt(dim)
  ExecutionPlan plan = out.prepare();
  size_t attention = 0;
  for (const PreparedKernel* kernel : plan.prepared_kernels()) attention += kernel_info(*kernel->ast).builds_own_loops;
  EXPECT_EQ(attention, 1u);
  EXPECT_EQ(plan.prepared_kernels().size(), 3u);
  EXPECT_ALLCLOSE(out.to_vector<float>(), attention_ref(qd, kd, vd, [](int64_t i, int64_t j) { return j <= i; }, heads, seq, dim), 1e-4, 1e-5);
}

TEST(AttentionRule, ANegativeScaleAfterTheMaskIsNotFollowed) {
  Inputs in;
  Tensor out = in.attend((in.scores() + bias_where(cols() <= rows())) * -1.0);  // -inf becomes +inf: no range
  EXPECT_EQ(attention_kernels(out), 0u);
}

// A seq x seq mask of 0 and -inf with no key range to fit: keys shut here and there, never a
// query's own.
std::vector<float> scattered_mask(int64_t seq) {
  std::vector<float> mask(static_cast<size_t>(seq * seq));
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j < seq; ++j) mask[static_cast<size_t>(i * seq + j)] = (i + 3 * j) % 7 == 0 && j != i ? -kInf : 0.0f;
  return mask;
}

// Scores past 16 MB with no key range to skip (a mask in an ordinary buffer, one per query and
// key) run a block of queries at a time: 2 heads x 1500 x 1500 float32 scores are 18 MB; no buffer
// of the plan holds them whole, each block recomputes the scale and the mask on its rows, and
// the values are those of plain loops. Below 16 MB (1000 x 1000) the plan holds the scores.
TEST(AttentionRule, LongScoresWithoutAKeyRangeRunInQueryBlocks) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  for (int64_t seq : {int64_t{1500}, int64_t{1000}}) {
    int64_t heads = 2, dim = 4;
    auto n = static_cast<size_t>(heads * seq * dim);
    std::vector<float> qd = data(n, 81, -1, 1), kd = data(n, 82, -1, 1), vd = data(n, 83, -1, 1);
    std::vector<float> mask = scattered_mask(seq);
    Tensor q = f32(qd, {heads, seq, dim}), k = f32(kd, {heads, seq, dim}), v = f32(vd, {heads, seq, dim});
    Tensor out = (q.matmul(k.transpose(-1, -2)) / 2.0 + f32(mask, {seq, seq})).softmax(-1).matmul(v);  // 2: sqrt(dim)
    ExecutionPlan plan = out.prepare();
    size_t largest = 0, attention = 0;
    for (const Buffer& b : plan.buffers()) largest = std::max(largest, b.nbytes());
    for (const PreparedKernel* kernel : plan.prepared_kernels()) attention += kernel_info(*kernel->ast).builds_own_loops;
    EXPECT_EQ(attention, 0u) << seq;
    if (seq == 1500) EXPECT_LT(largest, static_cast<size_t>(heads * seq * seq * 4)) << "no whole score matrix";
    else EXPECT_GE(largest, static_cast<size_t>(heads * seq * seq * 4)) << "small scores are held whole";
    auto sees = [&](int64_t i, int64_t j) { return mask[static_cast<size_t>(i * seq + j)] == 0.0f; };
    EXPECT_ALLCLOSE(out.to_vector<float>(), attention_ref(qd, kd, vd, sees, heads, seq, dim), 1e-4, 1e-5) << seq;
  }
}

// How many scores are held at once follows the Target's L3 (half of it): 8 MB of scores are held
// whole on a 32 MB L3 and run in blocks of queries on an 8 MB one, with the same values.
TEST(AttentionRule, QueryBlocksFollowTheTargetsL3) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  int64_t heads = 2, seq = 1000, dim = 4;  // 8 MB of float32 scores
  auto n = static_cast<size_t>(heads * seq * dim);
  std::vector<float> qd = data(n, 91, -1, 1), kd = data(n, 92, -1, 1), vd = data(n, 93, -1, 1);
  std::vector<float> mask = scattered_mask(seq);
  Tensor q = f32(qd, {heads, seq, dim}), k = f32(kd, {heads, seq, dim}), v = f32(vd, {heads, seq, dim});
  Tensor out = (q.matmul(k.transpose(-1, -2)) / 2.0 + f32(mask, {seq, seq})).softmax(-1).matmul(v);
  auto sees = [&](int64_t i, int64_t j) { return mask[static_cast<size_t>(i * seq + j)] == 0.0f; };
  std::vector<double> want = attention_ref(qd, kd, vd, sees, heads, seq, dim);
  auto scores = static_cast<size_t>(heads * seq * seq * 4);
  for (const char* l3 : {"32M", "8M"}) {
    ExecutionPlan plan = Tensor::prepare({out}, PrepareOptions{.shape = TargetShape::parse(std::string("l3=") + l3)});
    size_t largest = 0;
    for (const Buffer& b : plan.buffers()) largest = std::max(largest, b.nbytes());
    if (std::string(l3) == "32M") EXPECT_GE(largest, scores) << "held whole";
    else EXPECT_LT(largest, scores) << "in blocks of queries";
    plan.execute();
    EXPECT_ALLCLOSE(plan.output_buffer()->to_vector<float>(), want, 1e-4, 1e-5) << l3;
  }
}

// Long float16 attention with large values (3000 keys, values 20-30): whatever the rule makes of
// it (today Tensor::softmax's float16 graph is not the float32 form it rewrites), nothing is
// summed unnormalised past float16's largest number (about 3000 x 30 would be); the values of
// plain loops, at float16's precision.
TEST(AttentionRule, LongFloat16AttentionStaysInRange) {
  int64_t heads = 1, seq = 3000, dim = 4;  // 18 MB of float16 scores
  auto n = static_cast<size_t>(heads * seq * dim);
  std::vector<float> qd = data(n, 111, -0.1, 0.1), kd = data(n, 112, -0.1, 0.1), vd = data(n, 113, 20, 30);
  std::vector<float> mask = scattered_mask(seq);
  auto f16 = [&](const std::vector<float>& x, Shape s) { return f32(x, std::move(s)).cast(dtypes::float16); };
  Tensor q = f16(qd, {heads, seq, dim}), k = f16(kd, {heads, seq, dim}), v = f16(vd, {heads, seq, dim});
  Tensor out = (q.matmul(k.transpose(-1, -2)) / 2.0 + f16(mask, {seq, seq})).softmax(-1).matmul(v);
  auto sees = [&](int64_t i, int64_t j) { return mask[static_cast<size_t>(i * seq + j)] == 0.0f; };
  EXPECT_ALLCLOSE(out.cast(dtypes::float32).to_vector<float>(), attention_ref(qd, kd, vd, sees, heads, seq, dim), 1e-2, 1e-1);
}

// A value between the product and the result that something else reads too (the probabilities
// returned beside the output, as a model returning its attention weights does; the scores summed)
// is computed once, whole: neither the attention kernel nor blocks of queries compute the scores
// a second time. Short causal scores: no attention kernel. Long scores with a mask in a buffer:
// the plan does less work than the blocks plus the other reader would, and no more than the plain
// graph; the values of plain loops.
TEST(AttentionRule, ScoresReadElsewhereAreComputedOnce) {
  Inputs in;
  Tensor probabilities = (in.scores() + bias_where(cols() <= rows())).softmax(-1);
  Tensor out = probabilities.matmul(f32(in.v, in.shape));
  ExecutionPlan both = Tensor::prepare({out, probabilities});
  size_t attention = 0;
  for (const PreparedKernel* kernel : both.prepared_kernels()) attention += kernel_info(*kernel->ast).builds_own_loops;
  EXPECT_EQ(attention, 0u) << "the probabilities are computed whole anyway";
  both.execute();
  EXPECT_ALLCLOSE(both.output_buffer_at(0)->to_vector<float>(), attention_ref(in.q, in.k, in.v, [](int64_t i, int64_t j) { return j <= i; }),
                  1e-4, 1e-5);

  int64_t heads = 2, seq = 1500, dim = 4;  // 18 MB of scores: blocks of queries when read only by the softmax
  auto n = static_cast<size_t>(heads * seq * dim);
  std::vector<float> qd = data(n, 101, -1, 1), kd = data(n, 102, -1, 1), vd = data(n, 103, -1, 1);
  std::vector<float> mask = scattered_mask(seq);
  Tensor q = f32(qd, {heads, seq, dim}), k = f32(kd, {heads, seq, dim}), v = f32(vd, {heads, seq, dim});
  Tensor scores = q.matmul(k.transpose(-1, -2)) / 2.0 + f32(mask, {seq, seq});
  Tensor long_out = scores.softmax(-1).matmul(v), total = scores.sum({-1});
  ExecutionPlan shared = Tensor::prepare({long_out, total});
  int64_t blocked = long_out.prepare().estimated_work().ops, side = total.prepare().estimated_work().ops;
  EXPECT_LT(shared.estimated_work().ops, blocked + side) << "the scores are not computed twice";
  shared.execute();
  auto sees = [&](int64_t i, int64_t j) { return mask[static_cast<size_t>(i * seq + j)] == 0.0f; };
  EXPECT_ALLCLOSE(shared.output_buffer_at(0)->to_vector<float>(), attention_ref(qd, kd, vd, sees, heads, seq, dim), 1e-4, 1e-5);
}

// Long float64 attention under a causal mask of constants (the attention kernel is float32 only)
// runs in query blocks that each read only the keys up to their last query: less work than over
// every key, and the values of plain loops.
TEST(AttentionRule, LongCausalFloat64BlocksReadOnlyTheKeysTheySee) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  int64_t heads = 2, seq = 2000, dim = 3;  // 64 MB of scores: four blocks of 512 queries and less
  auto n = static_cast<size_t>(heads * seq * dim);
  std::vector<float> qd = data(n, 91, -1, 1), kd = data(n, 92, -1, 1), vd = data(n, 93, -1, 1);
  auto f64 = [&](const std::vector<float>& x) { return f32(x, {heads, seq, dim}).cast(dtypes::float64); };
  Tensor sees = Tensor::arange(seq).reshape({1, seq}) <= Tensor::arange(seq).reshape({seq, 1});
  Tensor scores = f64(qd).matmul(f64(kd).transpose(-1, -2)) / std::sqrt(3.0);
  Tensor causal = (scores + sees.where(Tensor::full({}, 0.0, dtypes::float64), Tensor::full({}, -kInf, dtypes::float64))).softmax(-1).matmul(f64(vd));
  Tensor every = scores.softmax(-1).matmul(f64(vd));
  ExecutionPlan plan = causal.prepare();
  for (const Buffer& b : plan.buffers()) EXPECT_LT(b.nbytes(), static_cast<size_t>(heads * seq * seq * 8));
  EXPECT_LT(plan.estimated_work().ops, every.prepare().estimated_work().ops);
  EXPECT_ALLCLOSE(causal.cast(dtypes::float32).to_vector<float>(),
                  attention_ref(qd, kd, vd, [](int64_t i, int64_t j) { return j <= i; }, heads, seq, dim), 1e-4, 1e-5);
}

}  // namespace
}  // namespace lathe::test
