// Text features: TfIdfVectorizer counts the n-grams (with skips) of integer token ids from a pool,
// on the host, from the input computed when the graph is built.
#include <algorithm>
#include <map>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

V tfidf_vectorizer(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (!x.dtype().is_int() || x.ndim() < 1 || x.ndim() > 2) c.fail("X must be a 1-D or 2-D integer tensor (string tokens are not supported)");
  int64_t min_n = c.attr_i("min_gram_length", 1), max_n = c.attr_i("max_gram_length", 1), max_skip = c.attr_i("max_skip_count", 0);
  std::string mode = c.attr_s("mode", "TF");
  std::vector<int64_t> counts_at = c.attr_ints("ngram_counts"), out_index = c.attr_ints("ngram_indexes"), pool = c.attr_ints("pool_int64s");
  std::vector<double> weights = c.attr_floats("weights");
  if (min_n < 1 || max_n < min_n || max_skip < 0 || static_cast<int64_t>(counts_at.size()) < max_n)
    c.fail("min/max_gram_length, max_skip_count and ngram_counts do not agree");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") c.fail("mode '" + mode + "' is not TF, IDF or TFIDF");
  // Each pooled n-gram, by length, to its output column.
  std::vector<std::map<std::vector<int64_t>, int64_t>> columns(static_cast<size_t>(max_n + 1));
  size_t gram = 0;
  for (int64_t n = 1; n <= max_n; ++n) {
    int64_t begin = counts_at[static_cast<size_t>(n - 1)];
    int64_t end = n < static_cast<int64_t>(counts_at.size()) ? counts_at[static_cast<size_t>(n)] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end > static_cast<int64_t>(pool.size()) || end < begin || (end - begin) % n != 0) c.fail("ngram_counts does not fit the pool");
    for (int64_t p = begin; p < end; p += n, ++gram) {
      if (gram >= out_index.size()) c.fail("ngram_indexes has fewer entries than the pool has n-grams");
      columns[static_cast<size_t>(n)][std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n)] = out_index[gram];
    }
  }
  for (int64_t i : out_index)
    if (i < 0 || i >= (int64_t{1} << 24)) c.fail("ngram_indexes entry " + std::to_string(i) + " is outside [0, 2^24)");
  int64_t width = out_index.empty() ? 0 : *std::max_element(out_index.begin(), out_index.end()) + 1;
  int64_t rows = x.ndim() == 2 ? x.shape()[0] : 1, len = x.shape().back();
  c.require_build_time(x, "X");
  std::vector<int64_t> tokens = x.cast(dtypes::int64).to_vector<int64_t>();
  std::vector<float> y(static_cast<size_t>(rows * width), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = tokens.data() + r * len;
    for (int64_t skip = 0; skip <= max_skip; ++skip)
      for (int64_t start = 0; start < len; ++start)
        // Unigrams do not depend on the skip: count them once.
        for (int64_t n = std::max(min_n, skip > 0 ? int64_t{2} : int64_t{1}); n <= max_n; ++n) {
          int64_t last = start + (n - 1) * (skip + 1);
          if (last >= len) break;
          std::vector<int64_t> key;
          for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * (skip + 1)]);
          auto hit = columns[static_cast<size_t>(n)].find(key);
          if (hit != columns[static_cast<size_t>(n)].end()) y[static_cast<size_t>(r * width + hit->second)] += 1;
        }
  }
  for (size_t i = 0; i < y.size(); ++i) {
    auto col = static_cast<size_t>(static_cast<int64_t>(i) % std::max<int64_t>(width, 1));
    // weights are given per pooled n-gram, in pool order; find the one for this column.
    double wt = 1;
    if (!weights.empty())
      for (size_t j = 0; j < out_index.size() && j < weights.size(); ++j)
        if (out_index[j] == static_cast<int64_t>(col)) wt = weights[j];
    if (mode == "IDF") y[i] = y[i] > 0 ? static_cast<float>(wt) : 0.0f;
    if (mode == "TFIDF") y[i] = static_cast<float>(y[i] * wt);
  }
  Shape shape = x.ndim() == 2 ? Shape{rows, width} : Shape{width};
  return V{Tensor::from_vector(y, shape)};
}

}  // namespace

void register_text_ops(std::map<std::string, OpFn>& t) { t["TfIdfVectorizer"] = tfidf_vectorizer; }

}  // namespace lathe::onnx::detail
