// Attention as one node, whichever front end built the graph.
//
// The rule finds softmax(scores, last axis) @ values in a tensor graph, in the form Tensor::softmax
// and Tensor::matmul build it: exp2((x - max(x)) * log2 e) over its sum, multiplied by the values'
// columns and summed over the keys. Where the scores carry a mask known when the graph is built
// (Where / Add / Sub of constants putting -inf at some keys, then scales by positive constants and
// float casts), the keys each query sees form a range of the attention kernel's form (a causal
// mask, a sliding window, a padding of the last keys): the product and softmax become one ATTENTION
// node over that range (an online softmax that reads only the key blocks a tile of queries sees,
// codegen/attention), with the scores' product of queries and keys read with the keys innermost.
// Without such a mask nothing changes: over every key, two matmuls and a softmax are faster
// (docs/decisions/attention-kernel-only-with-key-range.md).
//
// "Known when the graph is built" means made only of constants: CONST nodes and buffers marked
// constant (ONNX initializers, Tensor::arange and what is built from them). The mask's flags are
// computed once, when the graph is prepared.
#pragma once

#include <vector>

#include "lathe/target.hpp"
#include "lathe/tensor.hpp"
#include "lathe/uop.hpp"
#include "tensor/attention_keys.hpp"

namespace lathe::detail {

/// `outputs` with every softmax @ values over a mask-restricted key range as one ATTENTION node,
/// and scores too large for half of `target`'s L3 computed a block of queries at a time; the same
/// nodes when there is neither (or a size is symbolic).
std::vector<UOpPtr> attention_as_one_node(const std::vector<UOpPtr>& outputs, const Target& target);

/// The keys each query of `scores` (..., queries, keys, static) sees, where the mask nodes above
/// its product (as the rule follows them) put -inf at the others whatever the inputs: the flags
/// are computed now. Nothing when every query sees every key, or no such mask. The rule's own
/// analysis of a mask, exposed for the tests that check it on ONNX exports' masks.
std::optional<SeenKeys> seen_keys(const Tensor& scores);

}  // namespace lathe::detail
