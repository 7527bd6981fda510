#include "codegen/transpose.hpp"

#include <map>
#include <utility>

#include "lathe/error.hpp"

namespace lathe {
namespace {

using Tag = std::pair<int, int>;                  // a lane's (row, column) in the tile
using Layout = std::vector<std::vector<Tag>>;     // per vector, per lane

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The butterfly's layouts from stage 0 (K rows of N lanes) to stage log2(K). At stage s a vector
// holds 2^s rows of N/2^s columns, each column's rows in consecutive lanes; two vectors holding the
// same columns for neighbouring row groups become two vectors with twice the rows, one per half of
// those columns. At the last stage vector h holds columns [h*N/K, (h+1)*N/K) in full.
std::vector<Layout> stages(int K, int N) {
  Layout cur(static_cast<size_t>(K));
  for (int r = 0; r < K; ++r)
    for (int c = 0; c < N; ++c) cur[r].push_back({r, c});
  std::vector<Layout> out{cur};
  for (int k = 1; k < K; k *= 2) {  // k rows per column now, in k parts of N/k columns
    int cols = N / k;
    Layout next(static_cast<size_t>(K));
    for (int g = 0; g < K / k; g += 2)
      for (int h = 0; h < k; ++h) {
        const std::vector<Tag>& a = cur[g * k + h];
        const std::vector<Tag>& b = cur[(g + 1) * k + h];
        for (int half = 0; half < 2; ++half) {
          std::vector<Tag>& o = next[(g / 2) * (2 * k) + 2 * h + half];
          for (int c = half * cols / 2; c < (half + 1) * cols / 2; ++c) {
            o.insert(o.end(), a.begin() + c * k, a.begin() + (c + 1) * k);
            o.insert(o.end(), b.begin() + c * k, b.begin() + (c + 1) * k);
          }
        }
      }
    out.push_back(next);
    cur = std::move(next);
  }
  return out;
}

// Vectors laid out as `layout`, where each lane's tag can be found.
class Pool {
 public:
  Pool(std::vector<UOpPtr> vs, const Layout& layout) : vs_(std::move(vs)) {
    for (size_t i = 0; i < layout.size(); ++i)
      for (size_t l = 0; l < layout[i].size(); ++l) where_[layout[i][l]] = {i, static_cast<int64_t>(l)};
  }

  // A vector holding `want`'s lanes: the source itself when it already is that, else a shuffle.
  UOpPtr gather(const std::vector<Tag>& want) const {
    std::vector<std::pair<size_t, int64_t>> at;
    for (const Tag& t : want) at.push_back(where_.at(t));
    const UOpPtr& first = vs_[at[0].first];
    bool same = static_cast<size_t>(first->dtype().count()) == want.size();
    for (size_t l = 0; l < at.size(); ++l) same &= at[l].first == at[0].first && at[l].second == static_cast<int64_t>(l);
    if (same) return first;
    DType elem = first->dtype().scalar();
    std::vector<UOpPtr> lanes;
    for (auto& [v, l] : at) lanes.push_back(UOp::make(Ops::GEP, elem, {vs_[v]}, l));
    return UOp::make(Ops::VECTORIZE, elem.vec(static_cast<int>(want.size())), std::move(lanes));
  }

  std::vector<UOpPtr> gather_all(const Layout& layout) const {
    std::vector<UOpPtr> out;
    for (const std::vector<Tag>& want : layout) out.push_back(gather(want));
    return out;
  }

 private:
  std::vector<UOpPtr> vs_;
  std::map<Tag, std::pair<size_t, int64_t>> where_;
};

void check_tile(const std::vector<UOpPtr>& vs, int K, int N) {
  if (vs.empty() || !power_of_two(K) || !power_of_two(N) || K < 2 || K > N)
    throw InternalError("a tile transpose needs K <= N, powers of two from 2, not " + std::to_string(K) + "x" + std::to_string(N));
  for (const UOpPtr& v : vs)
    if (v->dtype() != vs[0]->dtype()) throw InternalError("a tile transpose needs vectors of one type");
}

}  // namespace

std::vector<UOpPtr> rows_to_columns(const std::vector<UOpPtr>& rows) {
  int K = static_cast<int>(rows.size()), N = rows.empty() ? 0 : rows[0]->dtype().count();
  check_tile(rows, K, N);
  std::vector<Layout> layouts = stages(K, N);
  std::vector<UOpPtr> cur = rows;
  for (size_t s = 1; s < layouts.size(); ++s) cur = Pool(cur, layouts[s - 1]).gather_all(layouts[s]);
  Pool last(cur, layouts.back());
  std::vector<UOpPtr> columns;
  for (int c = 0; c < N; ++c) {
    std::vector<Tag> want;
    for (int r = 0; r < K; ++r) want.push_back({r, c});
    columns.push_back(last.gather(want));
  }
  return columns;
}

std::vector<UOpPtr> columns_to_rows(const std::vector<UOpPtr>& columns) {
  int N = static_cast<int>(columns.size()), K = columns.empty() ? 0 : columns[0]->dtype().count();
  check_tile(columns, K, N);
  // Neighbouring columns are joined until each vector holds N/K of them (the last stage's layout).
  std::vector<UOpPtr> cur = columns;
  Layout layout;
  for (int c = 0; c < N; ++c) {
    layout.emplace_back();
    for (int r = 0; r < K; ++r) layout.back().push_back({r, c});
  }
  while (layout.size() > static_cast<size_t>(K)) {
    Layout joined;
    for (size_t i = 0; i < layout.size(); i += 2) {
      joined.push_back(layout[i]);
      joined.back().insert(joined.back().end(), layout[i + 1].begin(), layout[i + 1].end());
    }
    cur = Pool(cur, layout).gather_all(joined);
    layout = std::move(joined);
  }
  std::vector<Layout> layouts = stages(K, N);
  for (size_t s = layouts.size() - 1; s > 0; --s) cur = Pool(cur, layouts[s]).gather_all(layouts[s - 1]);
  return cur;
}

}  // namespace lathe
