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
#include "lathe/uop.hpp"
#include "schedule/attention_keys.hpp"
#include "onnx/attention_chain.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx::detail {

using lathe::key_range;
using lathe::keys_seen;
using lathe::SeenKeys;

/// The keys each query of the chain's scores sees, for every batch and head: [begin[q], end[q]).
/// Outside it the score is -inf whatever the model's inputs: the chain's Where and Add / Sub
/// nodes put -inf there from values known at build time, and the nodes after them keep it (Mul or
/// Div by positive constants, Cast to a float type). A query that sees no key has begin >= end.
/// The trim is exact for finite scores; a NaN or +inf score at a key an Add of -inf shuts would
/// have made the whole row NaN, and no longer does (a Where replaces the score, so it never did).
/// Nothing when every query sees every key: the chain has no such mask, or a node after it could
/// turn -inf into something else.
std::optional<SeenKeys> seen_keys(const ::onnx::GraphProto& g, const AttentionChain& chain, const std::map<std::string, Value>& env);

}  // namespace lathe::onnx::detail
