// Operators whose output shape depends on their input values (NonZero, Unique,
// NonMaxSuppression): the inputs are computed when the graph is built and the answer is built on
// the host, the way If and Loop decide their conditions.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// A tensor's values, exact for every integer and float dtype (long double holds int64 and double).
std::vector<long double> exact_values(const OpContext& c, const Tensor& t) {
  c.require_build_time(t, "input 0");
  std::vector<long double> out;
  if (t.dtype().is_int() || t.dtype() == dtypes::bool_) {
    for (int64_t v : t.cast(dtypes::int64).to_vector<int64_t>()) out.push_back(static_cast<long double>(v));
  } else {
    for (double v : t.cast(dtypes::float64).to_vector<double>()) out.push_back(static_cast<long double>(v));
  }
  return out;
}

Tensor int64_tensor(const std::vector<int64_t>& v, Shape shape) { return Tensor::from_vector(v, std::move(shape)); }

V non_zero(const OpContext& c) {
  Tensor x = c.in(0);
  if (x.ndim() == 0) x = x.reshape(Shape{1});  // a scalar counts as one element (numpy's nonzero does the same)
  std::vector<long double> v = exact_values(c, x);
  std::vector<int64_t> flat;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0) flat.push_back(static_cast<int64_t>(i));
  auto nnz = static_cast<int64_t>(flat.size());
  std::vector<int64_t> out(static_cast<size_t>(x.ndim() * nnz));
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t rest = flat[static_cast<size_t>(j)];
    for (int64_t d = x.ndim() - 1; d >= 0; --d) {
      out[static_cast<size_t>(d * nnz + j)] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
  }
  return V{int64_tensor(out, Shape{x.ndim(), nnz})};
}

// Unique over elements (no axis: flattened) or over slices along `axis`.
V unique(const OpContext& c) {
  Tensor x = c.in(0);
  bool by_axis = c.has_attr("axis");
  int64_t axis = by_axis ? axis_of(c, c.attr_i("axis", 0), x.ndim()) : 0;
  if (!by_axis) x = x.reshape(Shape{x.numel()});
  // Each slice along `axis` as a row of values, its other axes in their order (as numpy's moveaxis).
  std::vector<int64_t> axes_order{axis};
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != axis) axes_order.push_back(i);
  Tensor rows_t = x.permute(axes_order);
  int64_t n = x.shape()[axis], width = n == 0 ? 0 : x.numel() / n;
  std::vector<long double> v = exact_values(c, rows_t);
  auto row = [&](int64_t i) { return std::vector<long double>(v.begin() + i * width, v.begin() + (i + 1) * width); };
  std::vector<int64_t> firsts, inverse(static_cast<size_t>(n)), counts;
  std::vector<std::vector<long double>> keys;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<long double> r = row(i);
    auto it = std::find(keys.begin(), keys.end(), r);
    if (it == keys.end()) {
      keys.push_back(r);
      firsts.push_back(i);
      counts.push_back(0);
      it = keys.end() - 1;
    }
    auto k = static_cast<size_t>(it - keys.begin());
    inverse[static_cast<size_t>(i)] = static_cast<int64_t>(k);
    ++counts[k];
  }
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  // A total order: NaN after every number (a plain < is no strict weak order with NaNs).
  auto less = [](long double a, long double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
  if (c.attr_i("sorted", 1) != 0)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::lexicographical_compare(keys[a].begin(), keys[a].end(), keys[b].begin(), keys[b].end(), less);
    });
  std::vector<size_t> rank(order.size());
  for (size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  std::vector<int64_t> idx, cnt;
  for (size_t k : order) idx.push_back(firsts[k]), cnt.push_back(counts[k]);
  for (int64_t& i : inverse) i = static_cast<int64_t>(rank[static_cast<size_t>(i)]);
  std::vector<Tensor> picked;
  for (int64_t i : idx) picked.push_back(x.slice(axis, i, i + 1));
  Tensor y = picked.empty() ? x.slice(axis, 0, 0) : Tensor::cat(picked, axis);
  auto k = static_cast<int64_t>(idx.size());
  return V{y, int64_tensor(idx, Shape{k}), int64_tensor(inverse, Shape{n}), int64_tensor(cnt, Shape{k})};
}

struct Box {
  double y1, x1, y2, x2;
  double area() const { return (y2 - y1) * (x2 - x1); }
};

Box box_at(const std::vector<double>& b, size_t i, bool center) {
  double a = b[4 * i], bb = b[4 * i + 1], cc = b[4 * i + 2], d = b[4 * i + 3];
  if (center) return {bb - d / 2, a - cc / 2, bb + d / 2, a + cc / 2};  // x_center, y_center, width, height
  return {std::min(a, cc), std::min(bb, d), std::max(a, cc), std::max(bb, d)};
}

double iou(const Box& a, const Box& b) {
  if (a.area() <= 0 || b.area() <= 0) return 0;
  double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  double inter = h * w;
  return inter / (a.area() + b.area() - inter);
}

// Greedy per batch and class: the best-scoring box left wins and removes those overlapping it
// by more than iou_threshold. Output rows are (batch, class, box).
V non_max_suppression(const OpContext& c) {
  const Tensor &boxes_t = c.in(0), &scores_t = c.in(1);
  if (boxes_t.ndim() != 3 || boxes_t.shape()[2] != 4 || scores_t.ndim() != 3 || scores_t.shape()[0] != boxes_t.shape()[0] ||
      scores_t.shape()[2] != boxes_t.shape()[1])
    c.fail("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " + shape_to_string(boxes_t.shape()) + " and " +
           shape_to_string(scores_t.shape()));
  int64_t max_out = c.has(2) && c.in(2).numel() > 0 ? c.int_at0(2) : 0;
  double iou_max = c.has(3) && c.in(3).numel() > 0 ? c.double_at0(3) : 0;
  bool has_min_score = c.has(4) && c.in(4).numel() > 0;
  double min_score = has_min_score ? c.double_at0(4) : 0;
  bool center = c.attr_i("center_point_box", 0) != 0;
  c.require_build_time(boxes_t, "boxes");
  c.require_build_time(scores_t, "scores");
  std::vector<double> boxes = boxes_t.cast(dtypes::float64).to_vector<double>();
  std::vector<double> scores = scores_t.cast(dtypes::float64).to_vector<double>();
  int64_t batches = scores_t.shape()[0], classes = scores_t.shape()[1], n = scores_t.shape()[2];
  std::vector<int64_t> out;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t k = 0; k < classes && max_out > 0; ++k) {
      const double* s = scores.data() + (b * classes + k) * n;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < n; ++i)
        if (!has_min_score || s[i] > min_score) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return std::isnan(s[j]) ? !std::isnan(s[i]) : s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        Box bi = box_at(boxes, static_cast<size_t>(b * n + i), center);
        bool suppressed = std::any_of(kept.begin(), kept.end(),
                                      [&](int64_t j) { return iou(bi, box_at(boxes, static_cast<size_t>(b * n + j), center)) > iou_max; });
        if (!suppressed) kept.push_back(i);
      }
      for (int64_t i : kept) out.insert(out.end(), {b, k, i});
    }
  return V{int64_tensor(out, Shape{static_cast<int64_t>(out.size() / 3), 3})};
}

}  // namespace

void register_data_dependent_ops(std::map<std::string, OpFn>& t) {
  t["NonZero"] = non_zero;
  t["Unique"] = unique;
  t["NonMaxSuppression"] = non_max_suppression;
}

}  // namespace lathe::onnx::detail
