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

#include "lathe/target.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// The attention kernel `ast` (a kernel that builds its own loops, storing an ATTENTION) as loops,
/// registers and vectors for `target`; any other kernel as it is. The ATTENTION's AttentionArg
/// names the keys each query sees: the kernel reads only the key blocks some query of a tile sees
/// and takes the others in a block as -inf.
UOpPtr attention_as_one_kernel(const UOpPtr& ast, const Target& target);

}  // namespace lathe
