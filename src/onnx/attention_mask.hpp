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

#include "lathe/onnx.hpp"
#include "onnx/attention_chain.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx::detail {

/// For each (query, key) of the chain's scores, 1 where every batch and head's score is -inf
/// whatever the model's inputs: the chain's Where and Add / Sub nodes put -inf there from values
/// known at build time, and the nodes after them keep it (Mul or Div by positive constants, Cast
/// to a float type). Nothing when no key is shut: the chain has no such mask, or a node after it
/// could turn -inf into something else. Row-major, queries x keys.
std::optional<std::vector<uint8_t>> shut_keys(const ::onnx::GraphProto& g, const AttentionChain& chain, const std::map<std::string, Value>& env);

/// The keys [begin, end) some query in rows [first, first + count) sees, given shut_keys' flags
/// over `keys` keys: those outside are shut for every one of them. A block whose queries see no
/// key keeps the first (its softmax is NaN either way).
std::pair<int64_t, int64_t> keys_seen(const std::vector<uint8_t>& shut, int64_t keys, int64_t first, int64_t count);

}  // namespace lathe::onnx::detail
