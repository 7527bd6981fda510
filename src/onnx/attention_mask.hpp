// The keys an attention chain's mask shuts out of a query's softmax whatever the scores: where a
// mask known while the graph is built (a causal triangle sliced from an initializer, a constant
// padding bias) makes the score -inf, that key adds exactly 0 to the query's softmax and its
// weighted values. A block of queries (model.cpp's attention_in_blocks) then reads only the keys
// some of its queries see: a causal block of queries reads the keys up to its last query's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/attention.hpp"
#include "lathe/onnx.hpp"
#include "onnx/attention_chain.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx::detail {

/// The keys each query of the chain's scores sees, for every batch and head: [begin[q], end[q]).
/// Outside it the score is -inf whatever the model's inputs: the chain's Where and Add / Sub
/// nodes put -inf there from values known at build time, and the nodes after them keep it (Mul or
/// Div by positive constants, Cast to a float type). A query that sees no key has begin >= end.
/// The trim is exact for finite scores; a NaN or +inf score at a key an Add of -inf shuts would
/// have made the whole row NaN, and no longer does (a Where replaces the score, so it never did).
/// Nothing when every query sees every key: the chain has no such mask, or a node after it could
/// turn -inf into something else.
struct SeenKeys {
  std::vector<int64_t> begin, end;
};
std::optional<SeenKeys> seen_keys(const ::onnx::GraphProto& g, const AttentionChain& chain, const std::map<std::string, Value>& env);

/// The keys [begin, end) some query in rows [first, first + count) sees, of `keys`. A block whose
/// queries see no key keeps the first (its softmax is NaN either way).
std::pair<int64_t, int64_t> keys_seen(const SeenKeys& seen, int64_t keys, int64_t first, int64_t count);

/// A range of keys per query, of the attention kernel's form (codegen/attention's AttentionKeys:
/// each end a constant or the query's position plus one), that holds every key `seen` lets each
/// query see, and as few others as that form allows: a causal mask is one, a sliding window or a
/// padding of the last keys another. Nothing when it would hold every key.
std::optional<AttentionKeys> key_range(const SeenKeys& seen, int64_t keys);

}  // namespace lathe::onnx::detail
