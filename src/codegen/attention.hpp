// Attention as one kernel: softmax(scores, last axis) @ values with an online softmax, so no
// queries x keys matrix is ever stored (the FlashAttention scheme, on CPU vectors).
//
// The scheduler lowers an ATTENTION node to a kernel whose stored value is ATTENTION(score, value,
// keys, query, value position): the score at (..., query, key) is any fused expression (a product
// of queries and keys, scaled, masked), the value at (..., key, value position) another. Here that
// kernel becomes loops, registers and vectors, built directly rather than by the optimizer's
// actions: each core takes tiles of R queries (one outer loop over batch, heads, query tiles and
// chunks of value positions); a tile walks the keys in blocks of one vector's lanes. For each row
// of a block, the scores are one vector (the product a reduction of vectors, its key operand
// loaded along the keys), their maximum updates the row's running maximum m, the row's sum l and
// its value accumulators o (up to 4 vectors of value positions) are rescaled by 2^(m_old - m_new)
// and take 2^(score - m_new) times the block's values, one broadcast lane per key. After the last
// block, o / l is stored. A row whose scores are all -inf has l = 0 and stores NaN, as softmax does.
// Tails: keys past the end read as -inf (their loads gated), query rows past the end read the last
// row and are not stored, value positions past the end are gated lanes.
#pragma once

#include <vector>

#include "lathe/target.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// The keys of a block, the lanes of one vector of scores. A key operand stored as (..., keys /
/// 16, D, 16) (tensor/nn's attention_scores) gives a block's keys as one run per step of D; the
/// kernel reads any layout, that one fastest.
constexpr int64_t kAttentionKeyBlock = 16;

/// The keys query i sees, where a mask known when the graph is built shuts the others out:
/// [max(0, begin_step * i + begin), min(keys, end_step * i + end)), each step 0 or 1. A causal mask
/// is {0, 0, 1, 1}; a sliding window of w keys {1, 1 - w, 1, 1}; keys padded after the n-th
/// {0, 0, 0, n}. The kernel reads only the key blocks some query of a tile sees and takes the
/// others in a block as -inf; a range may hold keys the scores also mask (then they add 0).
struct AttentionKeys {
  int64_t begin_step = 0, begin = 0, end_step = 0, end = 0;
  std::vector<int64_t> arg() const { return {begin_step, begin, end_step, end}; }
  static AttentionKeys from(const std::vector<int64_t>& arg) { return {arg.at(0), arg.at(1), arg.at(2), arg.at(3)}; }
};

/// Whether `ast` is a kernel storing an ATTENTION.
bool is_attention_kernel(const UOpPtr& ast);

/// The attention kernel `ast` as loops, registers and vectors for `target`; any other kernel as it is.
UOpPtr attention_as_one_kernel(const UOpPtr& ast, const Target& target);

}  // namespace lathe
