// The keys each query of an attention sees, where a mask known while the graph is built shuts the
// others out, and the range of the attention kernel's form (AttentionKeys) that holds them: what
// the attention rule (attention_rule.hpp) makes of a mask, for the kernel and for query blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// The keys each query sees, for every batch and head: [begin[q], end[q]); outside it the score is
/// -inf whatever the inputs. A query that sees no key has begin >= end.
struct SeenKeys {
  std::vector<int64_t> begin, end;
};

/// The keys each query sees from `shut` (queries x keys flags, row-major: 1 where the score is -inf
/// whatever the inputs; `rows` and `cols` each 1, broadcast, or whole). Nothing when every query
/// sees every key.
std::optional<SeenKeys> seen_keys_of(const std::vector<uint8_t>& shut, int64_t rows, int64_t cols, int64_t queries, int64_t keys);

/// The keys [begin, end) some query in rows [first, first + count) sees, of `keys`. A block whose
/// queries see no key keeps the first (its softmax is NaN either way).
std::pair<int64_t, int64_t> keys_seen(const SeenKeys& seen, int64_t keys, int64_t first, int64_t count);

/// A range of keys per query, of the attention kernel's form (AttentionKeys,
/// each end a constant or the query's position plus one), that holds every key `seen` lets each
/// query see, and as few others as that form allows: a causal mask is one, a sliding window or a
/// padding of the last keys another. Nothing when it would hold every key.
std::optional<AttentionKeys> key_range(const SeenKeys& seen, int64_t keys);

}  // namespace lathe
