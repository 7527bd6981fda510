#include "tensor/attention_keys.hpp"

#include <algorithm>
#include <string>

#include "lathe/error.hpp"

namespace lathe {

std::optional<SeenKeys> seen_keys_of(const std::vector<uint8_t>& shut, int64_t rows, int64_t cols, int64_t queries, int64_t keys) {
  LATHE_CHECK((rows == 1 || rows == queries) && (cols == 1 || cols == keys) && static_cast<int64_t>(shut.size()) == rows * cols,
              "seen_keys_of: " + std::to_string(rows) + " x " + std::to_string(cols) + " flags for " + std::to_string(queries) + " x " +
                  std::to_string(keys) + " scores");
  SeenKeys out{std::vector<int64_t>(static_cast<size_t>(queries), keys), std::vector<int64_t>(static_cast<size_t>(queries), 0)};
  for (int64_t q = 0; q < queries; ++q) {
    const uint8_t* row = shut.data() + (rows == 1 ? 0 : q) * cols;
    for (int64_t k = 0; k < keys; ++k)
      if (!row[cols == 1 ? 0 : k]) {
        out.begin[static_cast<size_t>(q)] = std::min(out.begin[static_cast<size_t>(q)], k);
        out.end[static_cast<size_t>(q)] = k + 1;
      }
  }
  for (size_t q = 0; q < out.begin.size(); ++q)
    if (out.begin[q] != 0 || out.end[q] != keys) return out;
  return std::nullopt;
}

std::pair<int64_t, int64_t> keys_seen(const SeenKeys& seen, int64_t keys, int64_t first, int64_t count) {
  LATHE_CHECK(first >= 0 && count >= 0 && static_cast<size_t>(first + count) <= seen.begin.size() && seen.end.size() == seen.begin.size(),
              "keys_seen: queries [" + std::to_string(first) + ", " + std::to_string(first + count) + ") of " + std::to_string(seen.begin.size()));
  int64_t begin = keys, end = 0;
  for (int64_t q = first; q < first + count; ++q) {
    begin = std::min(begin, seen.begin[static_cast<size_t>(q)]);
    end = std::max(end, seen.end[static_cast<size_t>(q)]);
  }
  if (begin >= end) return {0, std::min<int64_t>(keys, 1)};
  return {begin, end};
}

std::optional<AttentionKeys> key_range(const SeenKeys& seen, int64_t keys) {
  // Over the queries that see some key: the constant first key at or below every query's (0, or
  // later where a padding shuts the first keys), or the query's position plus the least offset;
  // the same for the end from above. Each side keeps the form that holds fewer keys.
  int64_t lowest = keys, least_offset = keys, highest = 0, most_offset = -keys, sees = 0;
  for (size_t q = 0; q < seen.begin.size(); ++q) {
    int64_t b = seen.begin[q], e = seen.end[q], i = static_cast<int64_t>(q);
    if (b >= e) continue;
    ++sees;
    lowest = std::min(lowest, b), least_offset = std::min(least_offset, b - i);
    highest = std::max(highest, e), most_offset = std::max(most_offset, e - i);
  }
  if (sees == 0) return std::nullopt;
  auto queries = static_cast<int64_t>(seen.begin.size());
  int64_t fixed_begin = 0, moving_begin = 0, fixed_end = 0, moving_end = 0;  // keys left out before, kept before the end
  for (int64_t i = 0; i < queries; ++i) {
    fixed_begin += lowest, moving_begin += std::max<int64_t>(0, i + least_offset);
    fixed_end += highest, moving_end += std::min<int64_t>(keys, i + most_offset);
  }
  if (std::max(fixed_begin, moving_begin) == 0 && std::min(fixed_end, moving_end) == queries * keys) return std::nullopt;
  AttentionKeys r{0, lowest, 0, highest};
  if (moving_begin > fixed_begin) r.begin_step = 1, r.begin = least_offset;
  if (moving_end < fixed_end) r.end_step = 1, r.end = most_offset;
  return r;
}

}  // namespace lathe
