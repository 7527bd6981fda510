// A mask known while the graph is built shuts a block of queries out of keys: a causal decoder's
// block reads only the keys up to its last query, with the values of plain loops; a mask computed
// from the model's inputs, or one a later node could undo, shuts nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "tensor/attention_rule.hpp"
#include "onnx/graph_parts.hpp"
#include "onnx/onnx_include.hpp"
#include "onnx/op_context.hpp"
#include "tensor/reference.hpp"

namespace lathe::onnx {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The test's q, kt and v values.
std::vector<float> inputs(int64_t n, uint64_t seed) { return test::data(static_cast<size_t>(n), seed, -0.8, 0.8); }

enum class Mask {
  kCausalInitializer,  // Where(future, -inf, scores), future a bool initializer (PyTorch's masked_fill)
  kCausalInput,        // the same, future given as an input
  kCausalListedInput,  // the initializer, also listed as a graph input (keep_initializers_as_inputs)
  kWindowBias,         // scores + bias, bias an initializer of 0 and -inf (a sliding window)
  kNegatedAfterMask,   // the window's bias, then the scores times -1: -inf turns into +inf
  kAllowedWhere,       // Where(allowed, scores, -inf), allowed a bool initializer of the window
  kKeyPadding,         // scores + bias, bias (keys) of -inf for the last `window` keys (broadcast along queries)
  kOddQueries,         // scores + bias, bias (queries, 1) of -inf for odd queries (broadcast along keys)
};

// Query i may see key j: a causal triangle, or a window of the `window` keys up to i; for the
// broadcast biases, every key but the last `window`, or every key for even queries only.
bool sees(Mask mask, int64_t i, int64_t j, int64_t seq, int64_t window) {
  if (mask == Mask::kKeyPadding) return j < seq - window;
  if (mask == Mask::kOddQueries) return i % 2 == 0;
  return j <= i && (window == 0 || j > i - window);
}

// softmax(mask(q kt * scale)) v over (1, heads, queries, keys) scores.
std::string masked_attention_model(Mask mask, int64_t heads, int64_t seq, int64_t d, int64_t window) {
  ::onnx::ModelProto m;
  ::onnx::GraphProto* g = start_graph(m, "masked_attention");
  add_input(g, "q", {1, heads, seq, d});
  add_input(g, "kt", {1, heads, d, seq});
  add_input(g, "v", {1, heads, seq, d});
  add_float(g, "scale", 1.0f / std::sqrt(static_cast<float>(d)));
  add_float(g, "lowest", -kInf);
  add_float(g, "minus_one", -1.0f);
  ::onnx::TensorProto* t = nullptr;
  if (mask == Mask::kCausalInput || mask == Mask::kCausalListedInput) add_input(g, "future", {seq, seq}, ::onnx::TensorProto::BOOL);
  if (mask != Mask::kCausalInput) {
    t = g->add_initializer();
    bool bias = mask != Mask::kCausalInitializer && mask != Mask::kCausalListedInput && mask != Mask::kAllowedWhere;
    t->set_name(mask == Mask::kCausalInitializer || mask == Mask::kCausalListedInput ? "future" : bias ? "bias" : "allowed");
    t->set_data_type(bias ? ::onnx::TensorProto::FLOAT : ::onnx::TensorProto::BOOL);
    int64_t rows = mask == Mask::kKeyPadding ? 1 : seq, cols = mask == Mask::kOddQueries ? 1 : seq;
    if (mask != Mask::kKeyPadding) t->add_dims(rows);  // the key padding is one row of rank 1
    t->add_dims(cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool seen = sees(mask, i, j, seq, window);
        if (mask == Mask::kCausalInitializer || mask == Mask::kCausalListedInput) t->add_int32_data(!seen);
        else if (mask == Mask::kAllowedWhere) t->add_int32_data(seen);
        else t->add_float_data(seen ? 0.0f : -kInf);
      }
  }
  add_node(g, "MatMul", {"q", "kt"}, "qk");
  add_node(g, "Mul", {"qk", "scale"}, "scaled");
  if (mask == Mask::kCausalInitializer || mask == Mask::kCausalInput || mask == Mask::kCausalListedInput) {
    add_node(g, "Where", {"future", "lowest", "scaled"}, "masked");
  } else if (mask == Mask::kAllowedWhere) {
    add_node(g, "Where", {"allowed", "scaled", "lowest"}, "masked");
  } else {
    add_node(g, "Add", {"scaled", "bias"}, "masked");
  }
  std::string last = "masked";
  if (mask == Mask::kNegatedAfterMask) add_node(g, "Mul", {"masked", "minus_one"}, last = "negated");
  add_node(g, "Softmax", {last}, "probs");
  set_last_node_int(g, "axis", -1);
  add_node(g, "MatMul", {"probs", "v"}, "out");
  g->add_output()->set_name("out");
  return m.SerializeAsString();
}

struct Outcome {
  std::vector<float> out;
  int64_t ops = 0;  // the plan's counted operations
  size_t attention = 0;  // its attention kernels (codegen/attention)
};

Outcome run(Mask mask, int64_t heads, int64_t seq, int64_t d, int64_t window) {
  std::map<std::string, Tensor> given{{"q", Tensor::from_vector(inputs(heads * seq * d, 1), {1, heads, seq, d})},
                                      {"kt", Tensor::from_vector(inputs(heads * d * seq, 2), {1, heads, d, seq})},
                                      {"v", Tensor::from_vector(inputs(heads * seq * d, 3), {1, heads, seq, d})}};
  if (mask == Mask::kCausalInput) {
    std::vector<bool> future(static_cast<size_t>(seq * seq));
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < seq; ++j) future[static_cast<size_t>(i * seq + j)] = !sees(mask, i, j, seq, 0);
    given.emplace("future", Tensor::from_vector(future, {seq, seq}));
  }
  std::vector<Tensor> outs = Model::from_bytes(masked_attention_model(mask, heads, seq, d, window)).build(given);
  ExecutionPlan plan = outs.at(0).prepare();
  plan.execute();
  size_t attention = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) attention += kernel_info(*k->ast).builds_own_loops;
  return {plan.output_buffer()->to_vector<float>(), plan.estimated_work().ops, attention};
}

// The attention of every 7th query and of each query at either edge of a 32-row run (the blocks
// are multiples of 32 rows: where a key trim off by one would show) over the keys it sees, against
// double loops (all of them would take seconds).
void expect_attention(const std::vector<float>& got, Mask mask, int64_t heads, int64_t seq, int64_t d, int64_t window) {
  std::vector<float> q = inputs(heads * seq * d, 1), kt = inputs(heads * d * seq, 2), v = inputs(heads * seq * d, 3);
  std::vector<float> picked;
  std::vector<double> want;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < seq; ++i) {
      if (i % 7 != 0 && i % 32 != 0 && i % 32 != 31 && i != seq - 1) continue;
      std::vector<double> row = test::attention_row(
          &q[static_cast<size_t>((h * seq + i) * d)], seq, d, d,
          [&](int64_t j, int64_t c) { return kt[static_cast<size_t>((h * d + c) * seq + j)]; },
          [&](int64_t j, int64_t e) { return v[static_cast<size_t>((h * seq + j) * d + e)]; },
          [&](int64_t j, double x) { return sees(mask, i, j, seq, window) ? x : -std::numeric_limits<double>::infinity(); });
      want.insert(want.end(), row.begin(), row.end());
      picked.insert(picked.end(), got.begin() + (h * seq + i) * d, got.begin() + (h * seq + i + 1) * d);
    }
  EXPECT_ALLCLOSE(picked, want, 1e-4, 1e-5);
}

// Attention masked by `mask` against plain loops, as one attention kernel that reads the keys'
// range, doing less than `fraction` of the work of the same attention with a causal mask given
// as an input (not known at build time: query blocks that read every key), itself right too.
void expect_trimmed(Mask mask, int64_t heads, int64_t seq, int64_t d, int64_t window, double fraction) {
  Outcome trimmed = run(mask, heads, seq, d, window);
  expect_attention(trimmed.out, mask, heads, seq, d, window);
  Outcome whole = run(Mask::kCausalInput, heads, seq, d, 0);
  expect_attention(whole.out, Mask::kCausalInput, heads, seq, d, 0);
  EXPECT_LT(static_cast<double>(trimmed.ops), fraction * static_cast<double>(whole.ops));
  EXPECT_EQ(trimmed.attention, 1u) << "one attention kernel reading the keys' range";
  EXPECT_EQ(whole.attention, 0u) << "a mask given as an input: query blocks";
}

// 2 heads x 2053 x 2053 scores are 34 MB: with the mask known at build time, one attention kernel
// whose tiles read the keys up to their last query (about half); given as an input, query blocks
// of 992, 992 and 69 that read every key.
TEST(OnnxAttentionMask, ACausalMaskFromAnInitializerReadsOnlyTheKeysEachBlockSees) { expect_trimmed(Mask::kCausalInitializer, 2, 2053, 8, 0, 0.85); }

TEST(OnnxAttentionMask, AWindowBiasReadsTheKeysFromTheWindowsStart) { expect_trimmed(Mask::kWindowBias, 1, 2900, 8, 97, 0.6); }

// A padding mask of keys (rank 1, broadcast along queries and heads): every tile reads the keys
// before the padding only.
TEST(OnnxAttentionMask, AKeyPaddingBiasBroadcastAlongQueriesReadsTheUnpaddedKeys) { expect_trimmed(Mask::kKeyPadding, 2, 2053, 8, 853, 0.7); }

// The keys each query sees by the attention rule's seen_keys on the chain's scores, as the importer
// has them when it reaches the last MatMul (seq 5, head size 2).
std::optional<SeenKeys> seen_in(Mask mask, int64_t seq, int64_t window) {
  ::onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(masked_attention_model(mask, 1, seq, 2, window)));
  int softmax = -1;
  for (int n = 0; n < m.graph().node_size(); ++n)
    if (m.graph().node(n).op_type() == "Softmax") softmax = n;
  if (softmax < 0) {
    ADD_FAILURE() << "the model has no Softmax";
    return std::nullopt;
  }
  std::map<std::string, Value> env;
  for (const auto& t : m.graph().initializer()) env.insert_or_assign(t.name(), detail::constant_from_proto(t, "."));
  env.insert_or_assign("q", Tensor::from_vector(inputs(seq * 2, 1), {1, 1, seq, 2}));
  env.insert_or_assign("kt", Tensor::from_vector(inputs(seq * 2, 2), {1, 1, 2, seq}));
  env.insert_or_assign("v", Tensor::from_vector(inputs(seq * 2, 3), {1, 1, seq, 2}));
  if (mask == Mask::kCausalInput)  // an input's buffer, which a program may rewrite: not known when the graph is built
    env.insert_or_assign("future", Tensor::from_vector(std::vector<bool>(static_cast<size_t>(seq * seq), true), {seq, seq}));
  detail::run_nodes(m.graph(), env, 17, ".");
  return lathe::detail::seen_keys(env.at(m.graph().node(softmax).input(0)).tensor());
}

void expect_window(const std::optional<SeenKeys>& seen, int64_t seq, int64_t window) {
  ASSERT_TRUE(seen.has_value());
  for (int64_t i = 0; i < seq; ++i) {
    EXPECT_EQ(seen->begin[static_cast<size_t>(i)], window ? std::max<int64_t>(0, i - window + 1) : 0) << i;
    EXPECT_EQ(seen->end[static_cast<size_t>(i)], i + 1) << i;
  }
}

TEST(OnnxAttentionMask, WhereAndAddOfMinusInfinityGiveTheKeysEachQuerySees) {
  expect_window(seen_in(Mask::kCausalInitializer, 5, 0), 5, 0);  // Where(future, -inf, scores)
  expect_window(seen_in(Mask::kAllowedWhere, 5, 2), 5, 2);       // Where(allowed, scores, -inf)
  expect_window(seen_in(Mask::kWindowBias, 5, 2), 5, 2);         // scores + bias
}

// A bias broadcast along queries shuts the same keys for every query; one broadcast along keys
// shuts whole queries (they see no key) and leaves the others every key.
TEST(OnnxAttentionMask, ABiasBroadcastAlongQueriesOrKeysIsScannedPerQuery) {
  std::optional<SeenKeys> padding = seen_in(Mask::kKeyPadding, 5, 2);
  ASSERT_TRUE(padding.has_value());
  EXPECT_EQ(padding->begin, (std::vector<int64_t>{0, 0, 0, 0, 0}));
  EXPECT_EQ(padding->end, (std::vector<int64_t>{3, 3, 3, 3, 3}));
  std::optional<SeenKeys> odd = seen_in(Mask::kOddQueries, 5, 0);
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->begin, (std::vector<int64_t>{0, 5, 0, 5, 0}));
  EXPECT_EQ(odd->end, (std::vector<int64_t>{5, 0, 5, 0, 5}));
}

// The attention kernel's key range from the keys each query sees: a causal mask, a sliding window
// and a padding of the last keys are each exactly one of its forms; an irregular mask gets the
// range of the fewest keys that holds every key it lets a query see; one that shuts no key out
// of every query, none.
TEST(OnnxAttentionMask, AKeyRangeHoldsEveryKeyAQuerySees) {
  auto range = [](std::vector<int64_t> begin, std::vector<int64_t> end) { return key_range({std::move(begin), std::move(end)}, 5); };
  auto same = [](const std::optional<AttentionKeys>& r, AttentionKeys want) {
    return r && r->begin_step == want.begin_step && r->begin == want.begin && r->end_step == want.end_step && r->end == want.end;
  };
  EXPECT_TRUE(same(range({0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}), {0, 0, 1, 1}));   // causal
  EXPECT_TRUE(same(range({0, 0, 1, 2, 3}, {1, 2, 3, 4, 5}), {1, -1, 1, 1}));  // a window of 2
  EXPECT_TRUE(same(range({0, 0, 0, 0, 0}, {3, 3, 3, 3, 3}), {0, 0, 0, 3}));   // the last 2 keys padding
  EXPECT_TRUE(same(range({0, 0, 0, 0, 0}, {2, 1, 4, 3, 5}), {0, 0, 1, 2}));   // irregular: min(5, i + 2) holds each end
  EXPECT_FALSE(range({0, 0, 0, 0, 0}, {5, 5, 5, 5, 5}).has_value());
  EXPECT_FALSE(range({0, 5, 0, 5, 0}, {5, 0, 5, 0, 5}).has_value());  // odd queries see nothing, the others all
}

// An initializer the graph also lists as an input is the initializer (the main graph's inputs that
// name initializers are none), as older exporters write every weight.
TEST(OnnxAttentionMask, AnInitializerListedAsAnInputIsStillKnown) { expect_window(seen_in(Mask::kCausalListedInput, 5, 0), 5, 0); }

TEST(OnnxAttentionMask, AMaskGivenAsAnInputShutsNothing) { EXPECT_FALSE(seen_in(Mask::kCausalInput, 5, 0).has_value()); }

TEST(OnnxAttentionMask, ANegativeScaleAfterTheMaskShutsNothing) { EXPECT_FALSE(seen_in(Mask::kNegatedAfterMask, 5, 2).has_value()); }

TEST(OnnxAttentionMask, KeysSeenSpanEveryQueryOfTheBlock) {
  // 3 queries of 6 keys: query 0 sees 2..3, query 1 sees 1, query 2 sees none.
  SeenKeys seen{{2, 1, 6}, {4, 2, 0}};
  EXPECT_EQ(keys_seen(seen, 6, 0, 1), (std::pair<int64_t, int64_t>{2, 4}));
  EXPECT_EQ(keys_seen(seen, 6, 0, 2), (std::pair<int64_t, int64_t>{1, 4}));
  EXPECT_EQ(keys_seen(seen, 6, 1, 2), (std::pair<int64_t, int64_t>{1, 2}));
  EXPECT_EQ(keys_seen(seen, 6, 2, 1), (std::pair<int64_t, int64_t>{0, 1}));  // none seen: the first key, NaN either way
}

}  // namespace
}  // namespace lathe::onnx
