// Operators whose output sizes depend on their input values (NonZero, Unique, NonMaxSuppression,
// Compress, TopK with a k known only at run time): host steps of the plan (lathe/host_step.hpp).
// Each decides its sizes as the plan runs, writing into memory sized for their upper bound, and
// what follows reads them as symbolic sizes, so the model is prepared once. The step computes
// positions only; the values at them are gathered in the graph, in the input's own dtype.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// x's slices along `axis` at the positions `idx` (1-D int64, of any, even symbolic, length).
Tensor take(const Tensor& x, int64_t axis, const Tensor& idx) {
  SymShape shape = x.symbolic_shape(), at(shape.size(), SInt(1));
  SInt k = idx.symbolic_shape().at(0);
  at[static_cast<size_t>(axis)] = k;
  shape[static_cast<size_t>(axis)] = k;
  return x.gather(axis, idx.reshape(at).expand(shape));
}

std::shared_ptr<HostStep> new_step(const OpContext& c) {
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  return step;
}

V non_zero(const OpContext& c) {
  Tensor x = c.in(0);
  if (x.ndim() == 0) x = x.reshape(Shape{1});  // a scalar counts as one element (numpy's nonzero does the same)
  auto step = new_step(c);
  Variable n(c.size_name(), 0, x.numel());
  int64_t rank = x.ndim();
  step->sizes = {n};
  step->outputs = {{dtypes::int64, {rank, n}}};
  step->run = [rank](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    const bool* nz = in[0].as<bool>();
    const std::vector<int64_t>& shape = in[0].shape;
    int64_t total = in[0].numel(), count = 0;
    for (int64_t i = 0; i < total; ++i) count += nz[i];
    int64_t* rows = out[0].as<int64_t>();  // (rank, count), packed
    for (int64_t i = 0, j = 0; i < total; ++i) {
      if (!nz[i]) continue;
      for (int64_t d = rank - 1, rest = i; d >= 0; --d) {
        rows[d * count + j] = rest % shape[static_cast<size_t>(d)];
        rest /= shape[static_cast<size_t>(d)];
      }
      ++j;
    }
    return std::vector<int64_t>{count};
  };
  return host_step_outputs(step, {x != Tensor::zeros({}, x.dtype())});
}

// The key of each slice along the first axis of a (rows, width) host tensor, compared exactly:
// integers as int64, floats as double with NaN after every number.
template <class T>
bool less_row(const T* a, const T* b, int64_t width) {
  for (int64_t i = 0; i < width; ++i) {
    T x = a[i], y = b[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x) || std::isnan(y)) {
        if (std::isnan(x) != std::isnan(y)) return std::isnan(y);
        continue;
      }
    }
    if (x != y) return x < y;
  }
  return false;
}

template <class T>
bool same_row(const T* a, const T* b, int64_t width) {
  for (int64_t i = 0; i < width; ++i) {
    T x = a[i], y = b[i];
    bool both_nan = false;
    if constexpr (std::is_floating_point_v<T>) both_nan = std::isnan(x) && std::isnan(y);
    if (x != y && !both_nan) return false;
  }
  return true;
}

// Unique's positions over `rows` (n, width): the first position of each distinct row, each row's
// distinct index, and each distinct row's count; sorted by value, or in order of first appearance.
template <class T>
int64_t unique_rows(const T* rows, int64_t n, int64_t width, bool sorted, int64_t* firsts, int64_t* inverse, int64_t* counts) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto row = [&](int64_t i) { return rows + i * width; };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less_row(row(a), row(b), width); });
  // Groups of equal rows, each by its first position.
  std::vector<std::pair<int64_t, int64_t>> groups;  // (first position, count)
  std::vector<int64_t> group_of(static_cast<size_t>(n));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || !same_row(row(order[i - 1]), row(order[i]), width)) groups.emplace_back(order[i], 0);
    ++groups.back().second;
    group_of[static_cast<size_t>(order[i])] = static_cast<int64_t>(groups.size()) - 1;
  }
  std::vector<size_t> rank(groups.size());
  std::iota(rank.begin(), rank.end(), size_t{0});
  if (!sorted) {  // by first appearance
    std::vector<size_t> by_first(groups.size());
    std::iota(by_first.begin(), by_first.end(), size_t{0});
    std::sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) { return groups[a].first < groups[b].first; });
    for (size_t r = 0; r < by_first.size(); ++r) rank[by_first[r]] = r;
  }
  for (size_t g = 0; g < groups.size(); ++g) firsts[rank[g]] = groups[g].first, counts[rank[g]] = groups[g].second;
  for (int64_t i = 0; i < n; ++i) inverse[i] = static_cast<int64_t>(rank[static_cast<size_t>(group_of[static_cast<size_t>(i)])]);
  return static_cast<int64_t>(groups.size());
}

// Unique over elements (no axis: flattened) or over slices along `axis`.
V unique(const OpContext& c) {
  Tensor x = c.in(0);
  bool by_axis = c.has_attr("axis");
  int64_t axis = by_axis ? axis_of(c, c.attr_i("axis", 0), x.ndim()) : 0;
  if (!by_axis) x = x.flatten();
  // Each slice along `axis` as a row (its other axes in their order, as numpy's moveaxis).
  std::vector<int64_t> order{axis};
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != axis) order.push_back(i);
  bool exact_ints = x.dtype().is_int() || x.dtype() == dtypes::bool_;
  Tensor keys = x.permute(order).cast(exact_ints ? dtypes::int64 : dtypes::float64);
  SInt n = x.symbolic_shape()[static_cast<size_t>(axis)];
  auto step = new_step(c);
  Variable k(c.size_name(), 0, n.max());
  step->sizes = {k};
  step->outputs = {{dtypes::int64, {k}}, {dtypes::int64, {n}}, {dtypes::int64, {k}}};
  bool sorted = c.attr_i("sorted", 1) != 0;
  step->run = [sorted, exact_ints](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    int64_t rows = in[0].shape.empty() ? 1 : in[0].shape[0], total = in[0].numel();
    int64_t width = rows ? total / rows : 0;
    int64_t *firsts = out[0].as<int64_t>(), *inverse = out[1].as<int64_t>(), *counts = out[2].as<int64_t>();
    int64_t kept = exact_ints ? unique_rows(in[0].as<int64_t>(), rows, width, sorted, firsts, inverse, counts)
                              : unique_rows(in[0].as<double>(), rows, width, sorted, firsts, inverse, counts);
    return std::vector<int64_t>{kept};
  };
  V found = host_step_outputs(step, {keys});
  return V{take(x, axis, found[0]), found[0], found[1], found[2]};
}

struct Box {
  double y1, x1, y2, x2, area;
};

Box box_at(const double* b, int64_t i, bool center) {
  double p = b[4 * i], q = b[4 * i + 1], r = b[4 * i + 2], s = b[4 * i + 3];
  Box box = center ? Box{q - s / 2, p - r / 2, q + s / 2, p + r / 2, 0}  // x_center, y_center, width, height
                   : Box{std::min(p, r), std::min(q, s), std::max(p, r), std::max(q, s), 0};
  box.area = (box.y2 - box.y1) * (box.x2 - box.x1);
  return box;
}

double iou(const Box& a, const Box& b) {
  if (a.area <= 0 || b.area <= 0) return 0;
  double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (!(w > 0)) return 0;  // apart along x (or NaN): no overlap
  double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (!(h > 0)) return 0;
  double inter = h * w;
  return inter / (a.area + b.area - inter);
}

// The boxes kept so far, found by where they lie along x: a box can only suppress boxes whose
// x-ranges meet its own (an IoU of 0 never exceeds a threshold of 0 or more), so each candidate is
// checked against the kept boxes in the strips it spans, not against all of them. Greedy NMS over
// a detector's thousands of boxes is then linear in practice instead of quadratic. Boxes of no
// area suppress nothing and are not filed.
class KeptBoxes {
 public:
  KeptBoxes(const std::vector<Box>& all, double iou_max) : iou_max_(iou_max) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    bool finite = true;
    for (const Box& b : all) {
      finite = finite && std::isfinite(b.x1) && std::isfinite(b.x2);
      lo = std::min(lo, b.x1), hi = std::max(hi, b.x2);
    }
    // Strips only where they are sound: finite boxes and a threshold of 0 or more. No narrower than
    // a typical box: a candidate then looks through a few strips, not dozens of empty ones.
    std::vector<double> widths;
    for (const Box& b : all) widths.push_back(b.x2 - b.x1);
    double typical = 0;
    if (!widths.empty()) {
      std::nth_element(widths.begin(), widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2), widths.end());
      typical = widths[widths.size() / 2];
    }
    size_t strips = finite && iou_max >= 0 && hi > lo ? std::clamp<size_t>(all.size() / 4, 1, 4096) : 1;
    if (strips > 1 && typical > 0) strips = std::clamp<size_t>(static_cast<size_t>((hi - lo) / typical), 1, strips);
    lo_ = lo, width_ = strips > 1 ? (hi - lo) / static_cast<double>(strips) : 1;
    strips_.resize(strips);
  }

  // A kept box is filed in the strip where it starts: one that meets `b` starts at most the widest
  // kept box's width before b starts, and before b ends.
  bool suppresses(const Box& b) const {
    for (size_t s = at(b.x1 - widest_), last = at(b.x2); s <= last; ++s)
      for (const Box& k : strips_[s])
        if (iou(b, k) > iou_max_) return true;
    return false;
  }

  void keep(const Box& b) {
    if (strips_.size() > 1 && b.area <= 0) return;
    strips_[at(b.x1)].push_back(b);
    widest_ = std::max(widest_, b.x2 - b.x1);
  }

  void clear() {
    for (auto& s : strips_) s.clear();
    widest_ = 0;
  }

 private:
  size_t at(double x) const {
    if (strips_.size() == 1) return 0;
    return static_cast<size_t>(std::clamp((x - lo_) / width_, 0.0, static_cast<double>(strips_.size() - 1)));
  }

  double iou_max_, lo_ = 0, width_ = 1, widest_ = 0;
  std::vector<std::vector<Box>> strips_;
};

// Greedy per batch and class: the best-scoring box left wins and removes those overlapping it by
// more than iou_threshold. Output rows are (batch, class, box). The limits are inputs of the step,
// so they may be computed at run time too.
V non_max_suppression(const OpContext& c) {
  const Tensor &boxes = c.in(0), &scores = c.in(1);
  SymShape bs = boxes.symbolic_shape(), ss = scores.symbolic_shape();
  if (bs.size() != 3 || !(bs[2] == SInt(4)) || ss.size() != 3 || !(ss[0] == bs[0]) || !(ss[2] == bs[1]))
    c.fail("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " + shape_to_string(bs) + " and " +
           shape_to_string(ss));
  auto scalar = [&](size_t i, DType dt) { return c.has(i) && c.in(i).numel() > 0 ? c.in(i).flatten().slice(0, 0, 1).cast(dt) : Tensor::zeros({1}, dt); };
  bool has_min_score = c.has(4) && c.in(4).numel() > 0;
  // At most max_output_boxes_per_class of each batch's class, and never more than its boxes.
  int64_t per_class = bs[1].max();
  if (c.has(2) && c.in(2).numel() > 0 && c.known_at_build(c.in(2))) per_class = std::clamp<int64_t>(c.int_at0(2), 0, per_class);
  auto step = new_step(c);
  Variable kept(c.size_name(), 0, ss[0].max() * ss[1].max() * per_class);
  step->sizes = {kept};
  step->outputs = {{dtypes::int64, {kept, 3}}};
  bool center = c.attr_i("center_point_box", 0) != 0;
  std::string where = c.where();
  step->run = [center, has_min_score, where](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    const double *b = in[0].as<double>(), *s = in[1].as<double>();
    int64_t max_out = in[2].as<int64_t>()[0];
    double iou_max = in[3].as<double>()[0], min_score = in[4].as<double>()[0];
    int64_t batches = in[1].shape[0], classes = in[1].shape[1], n = in[1].shape[2];
    int64_t capacity = out[0].shape[0], rows = 0;
    int64_t* picked = out[0].as<int64_t>();
    std::vector<int64_t> cand;
    std::vector<Box> all(static_cast<size_t>(n));
    for (int64_t bi = 0; bi < batches; ++bi) {
      for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = box_at(b, bi * n + i, center);
      KeptBoxes kept(all, iou_max);
      for (int64_t k = 0; k < classes && max_out > 0; ++k) {
        const double* sc = s + (bi * classes + k) * n;
        cand.clear();
        for (int64_t i = 0; i < n; ++i)
          if (!has_min_score || sc[i] > min_score) cand.push_back(i);
        std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return std::isnan(sc[j]) ? !std::isnan(sc[i]) : sc[i] > sc[j]; });
        kept.clear();
        int64_t taken = 0;
        for (int64_t i : cand) {
          if (taken >= max_out) break;
          const Box& bx = all[static_cast<size_t>(i)];
          if (kept.suppresses(bx)) continue;
          kept.keep(bx);
          ++taken;
          if (rows >= capacity) throw Error(where + ": more boxes kept than max_output_boxes_per_class allows at prepare");
          picked[3 * rows] = bi, picked[3 * rows + 1] = k, picked[3 * rows + 2] = i, ++rows;
        }
      }
    }
    return std::vector<int64_t>{rows};
  };
  return host_step_outputs(step, {boxes.cast(dtypes::float64), scores.cast(dtypes::float64), scalar(2, dtypes::int64),
                                  scalar(3, dtypes::float64), has_min_score ? scalar(4, dtypes::float64) : Tensor::zeros({1}, dtypes::float64)});
}

// Compress: the slices along `axis` (or the elements) where the condition holds.
V compress(const OpContext& c) {
  Tensor x = c.in(0);
  int64_t a = 0;
  if (c.has_attr("axis")) a = axis_of(c, c.attr_i("axis", 0), x.ndim());
  else x = x.flatten();
  Tensor cond = c.in(1).flatten().cast(dtypes::bool_);
  SInt len = x.symbolic_shape()[static_cast<size_t>(a)], cond_len = cond.symbolic_shape()[0];
  if (!(size_min(cond_len, len) == cond_len)) cond = cond.shrink({{0, size_min(cond_len, len)}});  // beyond the axis: ignored
  auto step = new_step(c);
  Variable kept(c.size_name(), 0, std::min(len.max(), cond.symbolic_shape()[0].max()));
  step->sizes = {kept};
  step->outputs = {{dtypes::int64, {kept}}};
  step->run = [](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    const bool* keep = in[0].as<bool>();
    int64_t* at = out[0].as<int64_t>();
    int64_t k = 0;
    for (int64_t i = 0; i < in[0].numel(); ++i)
      if (keep[i]) at[k++] = i;
    return std::vector<int64_t>{k};
  };
  return V{take(x, a, host_step_outputs(step, {cond})[0])};
}

}  // namespace

// TopK on the host: each slice along `axis` sorted (stable: the lower position first among equal
// values, NaN above every number), the first k kept. For a k known only at run time, or one too
// large for rounds of argmax.
V topk_as_host_step(const OpContext& c, int64_t axis) {
  const Tensor& x = c.in(0);
  bool largest = c.attr_i("largest", 1) != 0;
  SymShape shape = x.symbolic_shape();
  SInt n = shape[static_cast<size_t>(axis)];
  if (c.in(1).numel() == 0) c.fail("input 1 (k) is empty, a value is needed");
  auto step = new_step(c);
  SymShape out = shape;
  std::optional<SymShape> ks = size_values_of(c.in(1));
  if (ks && ks->size() == 1) {  // a k computed from sizes (min(300, boxes kept)): the output's size is its expression
    out[static_cast<size_t>(axis)] = (*ks)[0];
  } else if (c.known_at_build(c.in(1))) {
    int64_t k = c.int_at0(1);
    if (k < 0 || k > n.max()) c.fail("k = " + std::to_string(k) + " for an axis of " + n.to_string());
    out[static_cast<size_t>(axis)] = k;
  } else {
    Variable k(c.size_name(), 0, n.max());
    step->sizes = {k};
    out[static_cast<size_t>(axis)] = k;
  }
  step->outputs = {{dtypes::int64, out}};
  // Sorted along the last axis: the axis moved there, the result moved back.
  std::vector<int64_t> to_last;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != axis) to_last.push_back(i);
  to_last.push_back(axis);
  std::string where = c.where();
  bool decides = !step->sizes.empty();
  step->run = [largest, where, decides](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out_t) {
    const double* v = in[0].as<double>();
    int64_t len = in[0].shape.empty() ? 1 : in[0].shape.back(), rows = len ? in[0].numel() / len : 0;
    int64_t k = in[1].as<int64_t>()[0];
    if (k < 0 || k > len) throw Error(where + ": k = " + std::to_string(k) + " for an axis of " + std::to_string(len));
    if (rows * k > out_t[0].numel()) throw Error(where + ": k = " + std::to_string(k) + " is more than the " + std::to_string(out_t[0].numel() / std::max<int64_t>(rows, 1)) + " prepared");
    int64_t* idx = out_t[0].as<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = v + r * len;
      std::iota(order.begin(), order.end(), 0);
      auto less = [](double p, double q) { return std::isnan(q) ? !std::isnan(p) : !std::isnan(p) && p < q; };  // NaN above all
      auto before = [&](int64_t a, int64_t b) { return largest ? less(row[b], row[a]) : less(row[a], row[b]); };
      std::stable_sort(order.begin(), order.end(), before);
      std::copy(order.begin(), order.begin() + k, idx + r * k);  // rows of k, packed
    }
    return decides ? std::vector<int64_t>{k} : std::vector<int64_t>{};
  };
  Tensor keys = x.permute(to_last).cast(dtypes::float64);
  Tensor k_in = c.in(1).flatten().slice(0, 0, 1).cast(dtypes::int64);
  Tensor idx = host_step_outputs(step, {keys, k_in})[0];
  // idx is laid out with `axis` last: move it back, and gather the values in x's dtype.
  std::vector<int64_t> back(static_cast<size_t>(x.ndim()));
  for (size_t i = 0; i < to_last.size(); ++i) back[static_cast<size_t>(to_last[i])] = static_cast<int64_t>(i);
  SymShape moved;
  for (int64_t d : to_last) moved.push_back(out[static_cast<size_t>(d)]);
  Tensor indices = idx.reshape(moved).permute(back);
  return V{x.gather(axis, indices), indices};
}


std::vector<Tensor> host_step_outputs(const std::shared_ptr<HostStep>& step, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs = Tensor::host_step(step, inputs);
  if (!step->sizes.empty()) {
    note_decided_sizes(*step, outs.back());
    outs.pop_back();
  }
  return outs;
}

// Concat along an axis whose sizes are symbolic: each piece copied into place on the host, in one
// pass whatever the number of pieces (a detector's per-class results are dozens), and the total
// size a variable the step sets.
Tensor concat_on_host(const OpContext& c, const std::vector<Tensor>& all, int64_t axis) {
  for (const Tensor& x : all)
    if (x.ndim() != all[0].ndim()) c.fail("inputs of different ranks");
  std::vector<Tensor> xs;  // pieces that are empty at every size add nothing
  for (const Tensor& x : all)
    if (x.symbolic_shape()[static_cast<size_t>(axis)].max() > 0) xs.push_back(x);
  if (xs.empty()) return all[0];
  if (xs.size() == 1) return xs[0];  // one piece (a batch of one image): itself, its size kept
  SymShape shape = xs[0].symbolic_shape();
  int64_t most = 0;
  for (const Tensor& x : xs) {
    SymShape s = x.symbolic_shape();
    if (s.size() != shape.size()) c.fail("inputs of different ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis && !(s[d] == shape[d])) c.fail("inputs differ in sizes off the axis: " + shape_to_string(s) + " and " + shape_to_string(shape));
    most += s[static_cast<size_t>(axis)].max();
  }
  // Named after the pieces' sizes: two concatenations of pieces of the same sizes (a detector's
  // boxes and their labels) have one total, so what combines them sees equal sizes.
  uint64_t key = 1469598103934665603ULL;
  for (const Tensor& x : xs) key = (key ^ x.symbolic_shape()[static_cast<size_t>(axis)].uop()->hash()) * 1099511628211ULL;
  char name[40];
  std::snprintf(name, sizeof name, "Concat_%016llx", static_cast<unsigned long long>(key));
  // (not own_size_name: a second concatenation of the same sizes is meant to share it)
  auto step = new_step(c);
  Variable total(name, 0, most);
  step->sizes = {total};
  shape[static_cast<size_t>(axis)] = total;
  step->outputs = {{xs[0].dtype(), shape}};
  step->run = [axis](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    auto a = static_cast<size_t>(axis);
    int64_t outer = 1, inner = 1, sum = 0;  // the sizes off the axis are the pieces' (they agree)
    for (size_t d = 0; d < a; ++d) outer *= in[0].shape[d];
    for (size_t d = a + 1; d < in[0].shape.size(); ++d) inner *= in[0].shape[d];
    for (const HostTensor& t : in) sum += t.shape[a];
    auto item = static_cast<size_t>(out[0].dtype.itemsize());
    auto* dst = static_cast<char*>(out[0].data);
    for (int64_t o = 0; o < outer; ++o)
      for (const HostTensor& t : in) {
        size_t run = static_cast<size_t>(t.shape[a] * inner) * item;
        if (run) std::memcpy(dst, static_cast<const char*>(t.data) + static_cast<size_t>(o) * run, run);
        dst += run;
      }
    return std::vector<int64_t>{sum};
  };
  return host_step_outputs(step, xs)[0];
}

// ScatterElements over symbolic sizes (a detector's regions merged back from their pyramid
// levels): data copied, then each update written where its index points along `axis`, on the
// host, in the data's own bytes. Indices count from the run's end when negative.
Tensor scatter_elements_on_host(const OpContext& c) {
  const Tensor &data = c.in(0), &indices = c.in(1), &updates = c.in(2);
  int64_t axis = axis_of(c, c.attr_i("axis", 0), data.ndim());
  if (indices.ndim() != data.ndim() || updates.ndim() != data.ndim()) c.fail("data, indices and updates need the same rank");
  if (c.attr_s("reduction", "none") != "none") c.fail("a reduction over inputs of symbolic size is not supported");
  if (data.dtype() != updates.dtype()) c.fail("updates are " + updates.dtype().name() + ", data " + data.dtype().name());
  auto step = new_step(c);
  step->outputs = {{data.dtype(), data.symbolic_shape()}};
  std::string where = c.where();
  step->run = [axis, where](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    const HostTensor &d = in[0], &ix = in[1], &u = in[2];
    auto item = static_cast<size_t>(d.dtype.itemsize());
    const int64_t* at = ix.as<int64_t>();
    size_t rank = d.shape.size();
    if (u.shape != ix.shape) throw Error(where + ": updates and indices differ in shape");
    // Along the first axis with the data's other sizes (a detector merging its levels' regions):
    // element q of row r goes to row at[r][q], same q.
    bool rows = axis == 0 && rank >= 1 && std::equal(ix.shape.begin() + 1, ix.shape.end(), d.shape.begin() + 1);
    if (rows) {
      int64_t inner = d.shape[0] == 0 ? 0 : d.numel() / d.shape[0], n_rows = inner > 0 ? ix.shape[0] : 0;
      auto* dst = static_cast<char*>(out[0].data);
      const auto* src = static_cast<const char*>(u.data);
      // The data copied, and whether each row's index is one value expanded over the row (moved
      // whole, else element by element) found, across the plan's threads. Rows moved whole to
      // distinct targets are then moved across them too; otherwise in order (the last one wins).
      int64_t bytes = d.numel() * static_cast<int64_t>(item), pieces = std::max<int64_t>(1, bytes >> 20);  // pieces of about 1 MB
      host_parallel_for(pieces, [&](int64_t k) {
        int64_t from = bytes * k / pieces, to = bytes * (k + 1) / pieces;
        std::memcpy(dst + from, static_cast<const char*>(d.data) + from, static_cast<size_t>(to - from));
      });
      std::vector<char> whole(static_cast<size_t>(n_rows), 0);
      host_parallel_for(n_rows, [&](int64_t row) {
        const int64_t* ir = at + row * inner;
        whole[static_cast<size_t>(row)] = std::all_of(ir, ir + inner, [&](int64_t v) { return v == ir[0]; });
      });
      auto target = [&](int64_t v) {
        int64_t t = v < 0 ? v + d.shape[0] : v;
        if (t < 0 || t >= d.shape[0]) throw Error(where + ": index " + std::to_string(v) + " is outside an axis of " + std::to_string(d.shape[0]));
        return t;
      };
      std::vector<char> hit(static_cast<size_t>(d.shape[0]), 0);
      bool distinct = true;
      for (int64_t row = 0; row < n_rows && distinct; ++row)
        distinct = whole[static_cast<size_t>(row)] && !std::exchange(hit[static_cast<size_t>(target(at[row * inner]))], char{1});
      auto move = [&](int64_t row) {
        const int64_t* ir = at + row * inner;
        bool all = whole[static_cast<size_t>(row)];
        for (int64_t q = 0; q < inner; q += all ? inner : 1) {
          size_t n = all ? static_cast<size_t>(inner) * item : item;
          std::memcpy(dst + static_cast<size_t>(target(ir[q]) * inner + q) * item, src + static_cast<size_t>(row * inner + q) * item, n);
        }
      };
      if (distinct) host_parallel_for(n_rows, move);
      else
        for (int64_t row = 0; row < n_rows; ++row) move(row);
      return std::vector<int64_t>{};
    }
    std::memcpy(out[0].data, d.data, static_cast<size_t>(d.numel()) * item);
    std::vector<int64_t> pos(rank, 0);
    for (int64_t p = 0; p < ix.numel(); ++p) {
      // pos: the index element's coordinates; the target is pos with axis replaced.
      int64_t target = 0, stride = 1;
      for (size_t k = rank; k-- > 0;) {
        int64_t coord = pos[k];
        if (static_cast<int64_t>(k) == axis) {
          coord = at[p] < 0 ? at[p] + d.shape[k] : at[p];
          if (coord < 0 || coord >= d.shape[k]) throw Error(where + ": index " + std::to_string(at[p]) + " is outside an axis of " + std::to_string(d.shape[k]));
        } else if (coord >= d.shape[k]) {
          throw Error(where + ": indices reach past the data along axis " + std::to_string(k));
        }
        target += coord * stride;
        stride *= d.shape[k];
      }
      // The update at the same position as the index: updates have the indices' shape.
      std::memcpy(static_cast<char*>(out[0].data) + static_cast<size_t>(target) * item, static_cast<const char*>(u.data) + static_cast<size_t>(p) * item, item);
      for (size_t k = rank; k-- > 0;) {  // the next index element
        if (++pos[k] < ix.shape[k]) break;
        pos[k] = 0;
      }
    }
    return std::vector<int64_t>{};
  };
  return Tensor::host_step(step, {data, indices.cast(dtypes::int64), updates})[0];
}

void register_data_dependent_ops(std::map<std::string, OpFn>& t) {
  t["NonZero"] = non_zero;
  t["Unique"] = unique;
  t["NonMaxSuppression"] = non_max_suppression;
  t["Compress"] = compress;
}

}  // namespace lathe::onnx::detail
