// ONNX operators that move, select or describe data: shapes, slices, gathers, constants.
#include <algorithm>
#include <limits>

#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"

namespace lathe::onnx::detail {

int64_t axis_of(const OpContext& c, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    c.fail("axis " + std::to_string(axis) + " is out of range for " + std::to_string(ndim) + " dimensions");
  return axis < 0 ? axis + ndim : axis;
}

namespace {

using V = std::vector<Tensor>;

// Axes from the attribute (older opsets) or from input `i` (newer ones).
std::vector<int64_t> axes_arg(const OpContext& c, size_t i, int64_t ndim) {
  std::vector<int64_t> axes = c.has(i) ? c.ints(i) : c.attr_ints("axes");
  for (int64_t& a : axes) a = axis_of(c, a, ndim);
  return axes;
}

// Reshape: a 0 in the target copies the input's size there (unless allowzero), a -1 is what is
// left of the element count. Sizes may be symbolic on either side (a target computed from a
// decided size); a computed size that is 0 at run time (no boxes) is taken as 0, an empty axis,
// where ONNX would copy the input's size, which is a count of the same thing in the exports this
// serves.
Tensor reshape(const OpContext& c) {
  const Tensor& x = c.in(0);
  SymShape shape;
  if (c.opset() < 5) {
    std::vector<int64_t> v = c.attr_ints("shape");
    shape.assign(v.begin(), v.end());
  } else {
    shape = c.sizes(1);
  }
  SymShape xs = x.symbolic_shape();
  bool allowzero = c.attr_i("allowzero", 0) != 0;
  std::optional<size_t> rest;
  SInt total = 1, known = 1;
  for (const SInt& d : xs) total = total * d;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static() && shape[i].value() == 0 && !allowzero) {
      if (i >= xs.size()) c.fail("a 0 in the shape copies a dimension the input does not have");
      shape[i] = xs[i];
    }
    if (shape[i].is_static() && shape[i].value() == -1) {
      if (rest) c.fail("more than one -1 in the shape");
      rest = i;
      continue;
    }
    if (shape[i].min() < 0) c.fail("a negative size " + shape[i].to_string() + " in the shape");
    known = known * shape[i];
  }
  if (rest) {
    if (known.is_static() && known.value() == 0) c.fail("-1 beside a size of 0");
    shape[*rest] = size_quotient(total, known, true);
  }
  return after_decided_sizes(x.reshape(shape), shape);
}

Tensor slice(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  SymShape sym_starts, sym_ends;  // starts and ends computed from symbolic sizes (a split per image)
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    sym_starts = c.sizes(1);
    sym_ends = c.sizes(2);
    for (const SInt& v : sym_starts) starts.push_back(v.is_static() ? v.value() : 0);
    for (const SInt& v : sym_ends) ends.push_back(v.is_static() ? v.value() : 0);
    if (c.has(3)) axes = c.ints(3);
    if (c.has(4)) steps = c.ints(4);
  }
  if (sym_starts.empty()) sym_starts.assign(starts.begin(), starts.end()), sym_ends.assign(ends.begin(), ends.end());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  Tensor r = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axis_of(c, axes[i], x.ndim()), n = x.shape()[a], step = steps[i];
    if (step == 0) c.fail("a step of 0");
    if (SInt sn = x.symbolic_shape()[static_cast<size_t>(a)]; !sn.is_static() || !sym_starts[i].is_static() || !sym_ends[i].is_static()) {
      // A symbolic axis or bounds: the bounds are expressions, clamped as ONNX clamps numbers.
      if (step != 1) c.fail("a step of " + std::to_string(step) + " along axis " + std::to_string(a) + ", whose size or bounds are symbolic");
      auto bound = [&](const SInt& v) {
        if (!v.is_static()) {
          if (v.min() < 0) c.fail("a symbolic bound " + v.to_string() + " that may be negative");
          return size_min(v, sn);
        }
        return v.value() < 0 ? size_max(sn + SInt(std::max(v.value(), -sn.max())), 0) : size_min(SInt(v.value()), sn);
      };
      SInt s = bound(sym_starts[i]), e = size_max(s, bound(sym_ends[i]));
      r = after_decided_sizes(r, {s, e});
      std::vector<std::pair<SInt, SInt>> b;
      for (const SInt& d : r.symbolic_shape()) b.emplace_back(0, d);
      b[static_cast<size_t>(a)] = {s, e};
      r = r.shrink(b);
      continue;
    }
    // ONNX clamps out-of-range starts and ends (INT64 extremes mean "to the end").
    auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + n : v, lo, hi); };
    int64_t s = step > 0 ? clampi(starts[i], 0, n) : clampi(starts[i], -1, n - 1);
    int64_t e = step > 0 ? clampi(ends[i], 0, n) : clampi(ends[i], -1, n - 1);
    if (step > 0) {
      r = r.slice(a, s, std::max(s, e), step);
    } else {
      std::optional<int64_t> stop = e < 0 ? std::nullopt : std::optional<int64_t>(e);
      if (s < 0) {
        std::vector<std::pair<SInt, SInt>> b;
        for (int64_t d : r.shape()) b.emplace_back(0, d);
        b[a] = {0, 0};
        r = r.shrink(b);
      } else {
        r = r.slice(a, s, stop, step);
      }
    }
  }
  return r;
}

Tensor pad(const OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> pads = c.opset() < 11 ? c.attr_ints("pads") : c.ints(1);
  double value = c.opset() < 11 ? c.attr_f("value", 0.0) : (c.has(2) ? c.double_at0(2) : 0.0);
  int64_t n = x.ndim();
  std::vector<int64_t> axes;
  if (c.has(3)) axes = axes_arg(c, 3, n);
  else
    for (int64_t i = 0; i < n; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  std::vector<std::pair<SInt, SInt>> p(static_cast<size_t>(n), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) p[axes[i]] = {pads[i], pads[i + axes.size()]};
  std::string mode = c.attr_s("mode", "constant");
  static const std::map<std::string, PadMode> kModes{
      {"constant", PadMode::constant}, {"edge", PadMode::edge}, {"reflect", PadMode::reflect}, {"wrap", PadMode::wrap}};
  auto m = kModes.find(mode);
  if (m == kModes.end()) c.fail("mode '" + mode + "' is not constant, edge, reflect or wrap");
  return x.pad(p, m->second, value);
}

Tensor gather(const OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor idx = c.in(1);
  int64_t a = axis_of(c, c.attr_i("axis", 0), x.ndim());
  if (!idx.dtype().is_int()) c.fail("indices must be integers, not " + idx.dtype().name());
  // Along an axis of symbolic size a negative index counts from the run's end, not the largest.
  if (SInt n = x.symbolic_shape()[static_cast<size_t>(a)]; !n.is_static()) {
    Tensor i64 = idx.cast(dtypes::int64);
    idx = (i64 < Tensor::zeros({}, dtypes::int64)).where(i64 + size_as_tensor(n), i64);
  }
  // out[p.., i.., q..] = x[p.., idx[i..], q..]: x gains the index's leading axes (a free
  // broadcast), the index is broadcast over x's other axes, and one Tensor::gather picks.
  SymShape xs = x.symbolic_shape(), ishape = idx.symbolic_shape();  // sizes may be symbolic (a host step's)
  SymShape pre(xs.begin(), xs.begin() + a), post(xs.begin() + a + 1, xs.end());
  SymShape lead = ishape.empty() ? SymShape{} : SymShape(ishape.begin(), ishape.end() - 1);
  SymShape xv = pre, xe = pre, iv(pre.size(), SInt(1)), ie = pre;
  for (const SInt& d : lead) xv.push_back(1), xe.push_back(d);
  xv.push_back(xs[static_cast<size_t>(a)]), xe.push_back(xs[static_cast<size_t>(a)]);
  SInt last = ishape.empty() ? SInt(1) : ishape.back();
  iv.insert(iv.end(), ishape.begin(), ishape.end());
  if (ishape.empty()) iv.push_back(1);
  ie.insert(ie.end(), lead.begin(), lead.end());
  ie.push_back(last);
  for (const SInt& d : post) xv.push_back(d), xe.push_back(d), iv.push_back(1), ie.push_back(d);
  Tensor picked = x.reshape(xv).expand(xe).gather(a + static_cast<int64_t>(lead.size()), idx.reshape(iv).expand(ie));
  return ishape.empty() ? picked.squeeze(a) : picked;
}

// Sizes as an int64 vector: a symbolic one (a variable the plan binds, or a size a host step
// decides, read from the step's vector of sizes) is computed as the plan runs.
Tensor sizes_tensor(const SymShape& sizes) {
  if (sizes.empty()) return Tensor::from_vector(std::vector<int64_t>{}, Shape{0});
  std::vector<Tensor> parts;
  for (const SInt& d : sizes) parts.push_back(size_as_tensor(d).reshape(Shape{1}));
  return Tensor::cat(parts, 0);
}

Tensor arange_like_axis(int64_t n, int64_t axis, int64_t ndim) {
  Shape pos(static_cast<size_t>(ndim), 1);
  pos[axis] = n;
  return Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64).reshape(pos);
}

Tensor non_negative(const Tensor& idx, int64_t n) {
  Tensor id = idx.cast(dtypes::int64);
  return (id < Tensor::full({}, int64_t{0}, dtypes::int64)).where(id + n, id);
}

// TopK by k rounds of argmax, masking each pick: exact, and cheap for the small k of most models;
// any other on the host (ops_data_dependent.cpp).
V topk(const OpContext& c) {
  const Tensor& x = c.in(0);
  int64_t a = axis_of(c, c.attr_i("axis", -1), x.ndim());
  // A k known only at run time, a large one, or an axis of symbolic size: sorted on the host.
  constexpr int64_t kMostRounds = 8;
  if (!c.known_at_build(c.in(1)) || !x.symbolic_shape()[static_cast<size_t>(a)].is_static() || c.int_at0(1) > kMostRounds)
    return topk_as_host_step(c, a);
  int64_t k = c.int_at0(1), n = x.shape()[a];
  if (k < 0 || k > n) c.fail("k = " + std::to_string(k) + " for an axis of " + std::to_string(n));
  bool largest = c.attr_i("largest", 1) != 0;
  Tensor work = x.cast(dtypes::float64);
  if (!largest) work = -work;
  Tensor pos = arange_like_axis(n, a, x.ndim());
  Tensor neg_inf = Tensor::full({}, -std::numeric_limits<double>::infinity(), dtypes::float64);
  std::vector<Tensor> vals, idxs;
  for (int64_t i = 0; i < k; ++i) {
    Tensor idx = work.argmax(a, true).cast(dtypes::int64);
    Tensor hot = idx == pos;
    vals.push_back(hot.where(x, Tensor::zeros({}, x.dtype())).sum({a}, true).cast(x.dtype()));
    idxs.push_back(idx);
    work = hot.where(neg_inf, work).contiguous();
  }
  if (k == 0) {
    std::vector<std::pair<SInt, SInt>> b;
    for (int64_t d : x.shape()) b.emplace_back(0, d);
    b[a] = {0, 0};
    return {x.shrink(b), x.shrink(b).cast(dtypes::int64)};
  }
  return {Tensor::cat(vals, a), Tensor::cat(idxs, a)};
}

// ScatterElements / Scatter: each update lands at its index along `axis`; the rest keep data.
Tensor scatter_elements(const OpContext& c) {
  if (c.in(0).is_symbolic() || c.in(1).is_symbolic() || c.in(2).is_symbolic()) return scatter_elements_on_host(c);
  const Tensor &data = c.in(0), &upd = c.in(2);
  int64_t a = axis_of(c, c.attr_i("axis", 0), data.ndim()), n = data.shape()[a];
  Tensor idx = non_negative(c.in(1), n).unsqueeze(a + 1);
  Tensor hot = idx == arange_like_axis(n, a + 1, data.ndim() + 1);  // indices' shape with n at a+1
  std::string red = c.attr_s("reduction", "none");
  Tensor u = upd.unsqueeze(a + 1);
  Tensor zero = Tensor::zeros({}, data.dtype());
  Tensor hit = hot.any({a});
  Tensor value;
  if (red == "mul") value = hot.where(u, Tensor::ones({}, data.dtype())).prod({a});
  else if (red == "max") value = hot.where(u, Tensor::full({}, -std::numeric_limits<double>::infinity(), data.dtype())).max({a});
  else if (red == "min") value = hot.where(u, Tensor::full({}, std::numeric_limits<double>::infinity(), data.dtype())).min({a});
  else value = hot.where(u, zero).sum({a});
  // The indices may cover less than data outside `axis`: pad the result up to data's shape.
  std::vector<std::pair<SInt, SInt>> p;
  for (int64_t d = 0; d < data.ndim(); ++d) p.emplace_back(0, data.shape()[d] - hit.shape()[d]);
  hit = hit.pad(p, 0).cast(dtypes::bool_);
  value = value.cast(data.dtype()).pad(p, 0);
  if (red == "add") return hit.where(data + value, data);
  if (red == "mul") return hit.where(data * value, data);
  if (red == "max") return hit.where(data.maximum(value), data);
  if (red == "min") return hit.where(data.minimum(value), data);
  return hit.where(value, data);
}

// The first m axes of data flattened, and each index tuple turned into a position in them. The
// index tuples may be of symbolic count (a host step's, NonZero's); the m axes are static.
std::pair<Tensor, Tensor> flat_positions(const OpContext& c, const Tensor& data, const Tensor& indices) {
  SymShape ds = data.symbolic_shape();
  if (!indices.symbolic_shape().back().is_static()) c.fail("the index tuples' length is symbolic");
  int64_t m = indices.shape().back();
  if (m > data.ndim()) c.fail("index tuples longer than the data's rank");
  SymShape rest(ds.begin() + m, ds.end());
  int64_t p = 1;
  for (int64_t i = 0; i < m; ++i) {
    if (!ds[static_cast<size_t>(i)].is_static()) c.fail("indexing axis " + std::to_string(i) + ", whose size is symbolic, is not supported");
    p *= data.shape()[i];
  }
  SymShape flat_shape{p};
  flat_shape.insert(flat_shape.end(), rest.begin(), rest.end());
  std::vector<int64_t> strides(static_cast<size_t>(m), 1);
  for (int64_t i = m - 2; i >= 0; --i) strides[i] = strides[i + 1] * data.shape()[i + 1];
  Tensor lin = Tensor::zeros({}, dtypes::int64);
  for (int64_t i = 0; i < m; ++i) {
    Tensor comp = non_negative(indices.slice(-1, i, i + 1).squeeze(-1), data.shape()[i]);
    lin = lin + comp * Tensor::full({}, strides[i], dtypes::int64);
  }
  return {data.reshape(flat_shape), lin};
}

// (L, P): row l is the one-hot of position lin[l] among P.
Tensor positions_one_hot(const Tensor& lin, int64_t p) {
  int64_t l = std::max<int64_t>(1, lin.numel());
  return lin.reshape({l, 1}) == Tensor::arange(0, static_cast<double>(p), 1, dtypes::int64).reshape({1, p});
}

Tensor gather_nd(const OpContext& c, const Tensor& data, const Tensor& indices) {
  auto [flat, lin] = flat_positions(c, data, indices);
  SymShape ls = lin.symbolic_shape(), fs = flat.symbolic_shape();
  SInt l = 1;
  for (const SInt& d : ls) l = l * d;
  SymShape iv{l}, ie{l};
  for (size_t i = 1; i < fs.size(); ++i) iv.push_back(1), ie.push_back(fs[i]);
  Tensor picked = flat.gather(0, lin.reshape(iv).expand(ie));
  SymShape out = ls;
  out.insert(out.end(), fs.begin() + 1, fs.end());
  return picked.reshape(out);
}

// GatherND; with batch_dims b, the first b axes of data and indices pair up, one gather each.
Tensor gather_nd(const OpContext& c) {
  const Tensor &data = c.in(0), &indices = c.in(1);
  int64_t b = c.attr_i("batch_dims", 0);
  if (b == 0) return gather_nd(c, data, indices);
  if (data.is_symbolic() || indices.is_symbolic()) c.fail("batch_dims over inputs of symbolic size is not supported");
  if (b < 0 || b >= std::min(data.ndim(), indices.ndim())) c.fail("batch_dims " + std::to_string(b) + " does not fit the inputs");
  int64_t batch = 1;
  for (int64_t i = 0; i < b; ++i) {
    if (data.shape()[i] != indices.shape()[i]) c.fail("data and indices differ in batch axis " + std::to_string(i));
    batch *= data.shape()[i];
  }
  Tensor d = data.flatten(0, b - 1), ix = indices.flatten(0, b - 1);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < batch; ++i) parts.push_back(gather_nd(c, d.slice(0, i, i + 1).squeeze(0), ix.slice(0, i, i + 1).squeeze(0)));
  Tensor out = Tensor::stack(parts, 0);
  Shape shape(data.shape().begin(), data.shape().begin() + b);
  shape.insert(shape.end(), out.shape().begin() + 1, out.shape().end());
  return out.reshape(shape);
}

Tensor scatter_nd(const OpContext& c) {
  const Tensor &data = c.in(0), &indices = c.in(1), &upd = c.in(2);
  if (c.attr_i("batch_dims", 0) != 0) c.fail("batch_dims is not supported");
  auto [flat, lin] = flat_positions(c, data, indices);
  int64_t p = flat.shape()[0], l = std::max<int64_t>(1, lin.numel());
  Tensor hot = positions_one_hot(lin, p);
  Shape hv{l, p};
  hv.insert(hv.end(), static_cast<size_t>(flat.ndim() - 1), 1);
  Shape uv{l, 1};
  uv.insert(uv.end(), flat.shape().begin() + 1, flat.shape().end());
  Tensor h = hot.reshape(hv);
  Tensor value = h.where(upd.reshape(uv), Tensor::zeros({}, data.dtype())).sum({0}).cast(data.dtype());
  Shape mv{p};
  mv.insert(mv.end(), static_cast<size_t>(flat.ndim() - 1), 1);
  Tensor hit = hot.any({0}).reshape(mv);
  std::string red = c.attr_s("reduction", "none");
  Tensor out = red == "add" ? hit.where(flat + value, flat) : red == "mul" ? hit.where(flat * h.where(upd.reshape(uv), Tensor::ones({}, data.dtype())).prod({0}).cast(data.dtype()), flat)
                                                                           : hit.where(value, flat);
  return out.reshape(data.shape());
}

}  // namespace

void register_shape_ops(std::map<std::string, OpFn>& t) {
  t["Reshape"] = [](const OpContext& c) { return V{reshape(c)}; };
  t["Transpose"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    std::vector<int64_t> perm = c.attr_ints("perm");
    if (perm.empty())
      for (int64_t i = x.ndim() - 1; i >= 0; --i) perm.push_back(i);
    return V{x.permute(perm)};
  };
  t["Concat"] = [](const OpContext& c) {
    std::vector<Tensor> xs;
    for (size_t i = 0; i < c.num_inputs(); ++i) xs.push_back(c.in(i));
    if (xs.empty()) c.fail("needs at least one input");
    int64_t a = axis_of(c, c.attr_i("axis", 0), xs[0].ndim());
    for (const Tensor& x : xs)  // the kernels place pieces by their sizes as numbers; symbolic ones are placed on the host
      if (x.ndim() > a && !x.symbolic_shape()[static_cast<size_t>(a)].is_static()) return V{concat_on_host(c, xs, a)};
    return V{Tensor::cat(xs, a)};
  };
  t["Split"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = axis_of(c, c.attr_i("axis", 0), x.ndim());
    std::vector<int64_t> sizes = c.has(1) ? c.ints(1) : c.attr_ints("split");
    if (!x.symbolic_shape()[static_cast<size_t>(a)].is_static()) c.fail("splitting axis " + std::to_string(a) + ", whose size is symbolic, is not supported");
    if (sizes.empty()) {
      int64_t parts = static_cast<int64_t>(c.num_outputs()), n = x.shape()[a];
      int64_t each = c.has_attr("num_outputs") ? (n + parts - 1) / parts : n / parts;
      for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, n - each * i));
    }
    return x.split(sizes, a);
  };
  t["Slice"] = [](const OpContext& c) { return V{slice(c)}; };
  t["Pad"] = [](const OpContext& c) { return V{pad(c)}; };
  t["Gather"] = [](const OpContext& c) { return V{gather(c)}; };
  t["GatherElements"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    return V{x.gather(axis_of(c, c.attr_i("axis", 0), x.ndim()), c.in(1))};
  };
  t["Squeeze"] = [](const OpContext& c) {
    Tensor x = c.in(0);
    std::vector<int64_t> axes = axes_arg(c, 1, x.ndim());
    if (axes.empty()) return V{x.squeeze()};
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
      if (x.shape()[*it] != 1) c.fail("cannot squeeze axis " + std::to_string(*it) + " of size " + x.symbolic_shape()[*it].to_string());
      x = x.squeeze(*it);
    }
    return V{x};
  };
  t["Unsqueeze"] = [](const OpContext& c) {
    Tensor x = c.in(0);
    std::vector<int64_t> axes = c.has(1) ? c.ints(1) : c.attr_ints("axes");
    int64_t n = x.ndim() + static_cast<int64_t>(axes.size());
    for (int64_t& a : axes) a = axis_of(c, a, n);
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("an axis appears twice");
    for (int64_t a : axes) x = x.unsqueeze(a);  // ascending: each lands where the output wants it
    return V{x};
  };
  t["Flatten"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = c.attr_i("axis", 1);
    if (a < 0) a += x.ndim();
    if (a < 0 || a > x.ndim()) c.fail("axis " + std::to_string(a) + " is out of range");
    // Two groups of axes, each multiplied out (sizes may be symbolic).
    SymShape dims = x.symbolic_shape();
    SInt outer = 1, inner = 1;
    for (int64_t i = 0; i < x.ndim(); ++i) (i < a ? outer : inner) = (i < a ? outer : inner) * dims[static_cast<size_t>(i)];
    return V{x.reshape(SymShape{outer, inner})};
  };
  t["Expand"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    SymShape target = c.sizes(1), xs = x.symbolic_shape();
    // Expand broadcasts both ways: a 1 in the target keeps the input's size. Sizes may be symbolic.
    SymShape out(std::max(target.size(), xs.size()), SInt(1));
    for (size_t i = 0; i < out.size(); ++i) {
      SInt xd = i + xs.size() >= out.size() ? xs[i + xs.size() - out.size()] : SInt(1);
      SInt sd = i + target.size() >= out.size() ? target[i + target.size() - out.size()] : SInt(1);
      out[i] = sd.is_static() && sd.value() == 1 ? xd : sd;
    }
    return V{after_decided_sizes(x.expand(out), out)};
  };
  // ReverseSequence: along the time axis, each batch entry's first sequence_lens[b] steps reversed.
  t["ReverseSequence"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t ta = axis_of(c, c.attr_i("time_axis", 0), x.ndim()), ba = axis_of(c, c.attr_i("batch_axis", 1), x.ndim());
    if (ta == ba) c.fail("time_axis and batch_axis are the same axis");
    std::vector<int64_t> lens = c.ints(1);
    int64_t steps = x.shape()[ta], batch = x.shape()[ba];
    if (static_cast<int64_t>(lens.size()) != batch) c.fail("sequence_lens has " + std::to_string(lens.size()) + " entries for a batch of " + std::to_string(batch));
    std::vector<int64_t> idx(static_cast<size_t>(steps * batch));
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t b = 0; b < batch; ++b) {
        int64_t len = lens[static_cast<size_t>(b)];
        if (len < 0 || len > steps) c.fail("sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(steps) + "]");
        // Laid out as (time, batch) when the time axis comes first, else (batch, time).
        size_t at = static_cast<size_t>(ta < ba ? t * batch + b : b * steps + t);
        idx[at] = t < len ? len - 1 - t : t;
      }
    Shape ishape(static_cast<size_t>(x.ndim()), 1);
    ishape[ta] = steps, ishape[ba] = batch;
    Tensor index = Tensor::from_vector(idx, ishape).expand(x.shape());
    return V{x.gather(ta, index)};
  };
  t["Tile"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    SymShape reps = c.sizes(1);  // numbers, or counts computed from a size a host step decides
    if (static_cast<int64_t>(reps.size()) != x.ndim())
      c.fail(std::to_string(reps.size()) + " repeats for an input of rank " + std::to_string(x.ndim()));
    return V{after_decided_sizes(x.repeat(reps), reps)};
  };
  t["Shape"] = [](const OpContext& c) {
    SymShape s = c.in(0).symbolic_shape();
    int64_t n = static_cast<int64_t>(s.size());
    int64_t start = c.attr_i("start", 0), end = c.attr_i("end", n);
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    end = std::clamp<int64_t>(end < 0 ? end + n : end, start, n);
    SymShape picked(s.begin() + start, s.begin() + end);
    Tensor out = sizes_tensor(picked);
    note_size_values(out, picked);
    return V{out};
  };
  t["Size"] = [](const OpContext& c) {
    SInt n = 1;
    for (const SInt& d : c.in(0).symbolic_shape()) n = n * d;
    Tensor out = sizes_tensor({n}).reshape(Shape{});
    note_size_values(out, {n});
    return V{out};
  };
  t["ConstantOfShape"] = [](const OpContext& c) {
    SymShape shape = c.sizes(0);  // symbolic where the shape was computed from symbolic sizes
    for (SInt& d : shape) {
      if (d.max() < 0) c.fail("negative size " + d.to_string());
      if (d.min() < 0) d = size_max(d, 0);  // a computed size that may go below 0 at run time: an empty axis, not a wrapped one
    }
    if (!c.has_attr("value")) return V{after_decided_sizes(Tensor::zeros(shape), shape)};
    Tensor v = c.attr_t("value");
    return V{after_decided_sizes(v.reshape(Shape{}).expand(shape), shape).contiguous()};
  };
  t["Range"] = [](const OpContext& c) {
    // A limit that is a size known only as the plan runs (an arange over the boxes a detector
    // kept, or up to a dynamic length), with a start and a positive step known at build: the
    // values up to the limit's largest, cut to this run's count, so nothing is built again.
    if (c.in(1).dtype().is_int() && c.known_at_build(c.in(0)) && c.known_at_build(c.in(2))) {
      std::optional<SymShape> limits = size_values_of(c.in(1));
      int64_t start = c.int_at0(0), delta = c.int_at0(2);
      if (limits && limits->size() == 1 && !(*limits)[0].is_static() && delta > 0) {
        SInt limit = (*limits)[0];
        // ceil((limit - start) / delta), and none below the start: a quotient of a size that is not negative.
        SInt count = delta == 1 ? size_max(limit - start, 0) : size_quotient(size_max(limit - start + (delta - 1), 0), SInt(delta));
        int64_t most = std::max<int64_t>(0, (limit.max() - start + delta - 1) / delta);
        Tensor all = Tensor::arange(static_cast<double>(start), static_cast<double>(start + most * delta), static_cast<double>(delta), c.in(0).dtype());
        return V{after_decided_sizes(all.shrink({{SInt(0), count}}), {count})};
      }
    }
    double start = c.double_at0(0), limit = c.double_at0(1), delta = c.double_at0(2);
    if (delta == 0) c.fail("delta is zero");
    return V{Tensor::arange(start, limit, delta, c.in(0).dtype())};
  };
  t["Constant"] = [](const OpContext& c) {
    if (c.has_attr("value")) return V{c.attr_t("value")};
    if (c.has_attr("value_float")) return V{Tensor::full({}, c.attr_f("value_float", 0), dtypes::float32)};
    if (c.has_attr("value_int")) return V{Tensor::full({}, c.attr_i("value_int", 0), dtypes::int64)};
    if (c.has_attr("value_floats")) {
      std::vector<float> v;
      for (double d : c.attr_floats("value_floats")) v.push_back(static_cast<float>(d));
      return V{Tensor::from_vector(v)};
    }
    if (c.has_attr("value_ints")) return V{Tensor::from_vector(c.attr_ints("value_ints"))};
    c.fail("no supported value attribute");
  };
  t["CumSum"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t a = axis_of(c, c.int_at0(1), x.ndim());
    Tensor r = c.attr_i("reverse", 0) ? x.flip({a}) : x;
    Tensor s = r.cumsum(a);
    if (c.attr_i("exclusive", 0)) s = s - r;
    if (c.attr_i("reverse", 0)) s = s.flip({a});
    return V{s.cast(x.dtype())};
  };
  t["OneHot"] = [](const OpContext& c) {
    const Tensor& idx = c.in(0);
    int64_t depth = static_cast<int64_t>(c.double_at0(1));
    const Tensor& values = c.in(2);
    int64_t a = c.attr_i("axis", -1);
    int64_t nd = idx.ndim() + 1;
    a = axis_of(c, a, nd);
    Tensor id = idx.cast(dtypes::int64);
    id = (id < Tensor::full({}, int64_t{0}, dtypes::int64)).where(id + depth, id).unsqueeze(a);
    Shape pos(static_cast<size_t>(nd), 1);
    pos[a] = depth;
    Tensor hot = id == Tensor::arange(0, static_cast<double>(depth), 1, dtypes::int64).reshape(pos);
    Tensor off = values.slice(0, 0, 1).reshape(Shape{}), on = values.slice(0, 1, 2).reshape(Shape{});
    return V{hot.where(on, off)};
  };
  t["TopK"] = [](const OpContext& c) { return topk(c); };
  t["ScatterElements"] = [](const OpContext& c) { return V{scatter_elements(c)}; };
  t["Scatter"] = [](const OpContext& c) { return V{scatter_elements(c)}; };
  t["GatherND"] = [](const OpContext& c) { return V{gather_nd(c)}; };
  t["ScatterND"] = [](const OpContext& c) { return V{scatter_nd(c)}; };
  t["EyeLike"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 2) c.fail("input must be 2-D");
    DType dt = c.has_attr("dtype") ? dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)), c.where()) : x.dtype();
    int64_t k = c.attr_i("k", 0), r = x.shape()[0], cols = x.shape()[1];
    Tensor i = Tensor::arange(0, static_cast<double>(r), 1, dtypes::int64).reshape({r, 1});
    Tensor j = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int64).reshape({1, cols});
    return V{(j - i == Tensor::full({}, k, dtypes::int64)).cast(dt)};
  };
  t["Trilu"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    int64_t k = c.has(1) ? c.int_at0(1) : 0, r = x.shape()[x.ndim() - 2], cols = x.shape().back();
    Tensor i = Tensor::arange(0, static_cast<double>(r), 1, dtypes::int64).reshape({r, 1});
    Tensor j = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int64).reshape({1, cols});
    Tensor kk = Tensor::full({}, k, dtypes::int64);
    Tensor keep = c.attr_i("upper", 1) ? (j - i >= kk) : (j - i <= kk);
    return V{keep.where(x, Tensor::zeros({}, x.dtype()))};
  };
}

}  // namespace lathe::onnx::detail
