// Movement ops: views that cost nothing until a kernel reads through them.
#include <algorithm>
#include <numeric>

#include "tensor/tensor_util.hpp"

namespace lathe {

namespace detail {

int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for " + std::to_string(ndim) +
                     " dimensions");
  return axis < 0 ? axis + ndim : axis;
}

Tensor constant(ConstValue value, DType dtype, const Shape& shape) {
  Tensor c(UOp::const_(dtype, value), {});
  return broadcast_to(c, shape);
}

}  // namespace detail

namespace {

UOpPtr movement(Ops op, const Tensor& t, std::vector<int64_t> arg, std::vector<UOpPtr> extra = {}) {
  std::vector<UOpPtr> src{t.uop()};
  src.insert(src.end(), extra.begin(), extra.end());
  return UOp::make(op, t.dtype(), std::move(src), std::move(arg));
}

}  // namespace

Tensor Tensor::reshape(Shape shape) const {
  if (is_symbolic()) {
    // -1 is inferred from the symbolic element count (which must divide evenly).
    SymShape target = detail::to_sym(shape);
    auto infer = std::find(shape.begin(), shape.end(), -1);
    if (infer != shape.end()) {
      int64_t known = 1;
      for (int64_t d : shape)
        if (d != -1) known *= d;
      if (known <= 0) throw ShapeError("reshape: cannot infer the -1 in " + shape_to_string(shape));
      target[infer - shape.begin()] = SInt(lathe::idiv(detail::sym_numel(symbolic_shape()).uop(), known));
    }
    return reshape(target);
  }
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: more than one -1 in " + shape_to_string(shape));
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      throw ShapeError("reshape: negative dimension in " + shape_to_string(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      throw ShapeError("reshape: cannot infer the -1 in " + shape_to_string(shape) + " for " + shape_to_string(shape_));
    shape[infer] = numel() / known;
    known *= shape[infer];
  }
  if (known != numel())
    throw ShapeError("reshape: cannot reshape " + shape_to_string(shape_) + " (" + std::to_string(numel()) +
                     " elements) to " + shape_to_string(shape));
  if (shape == shape_) return *this;
  return Tensor(movement(Ops::RESHAPE, *this, shape), shape);
}

Tensor Tensor::reshape(const SymShape& shape) const {
  if (detail::is_static(shape) && !is_symbolic()) return reshape(detail::max_shape(shape));
  for (const SInt& d : shape)
    if (d.min() < 0) throw ShapeError("reshape: negative dimension in " + shape_to_string(shape));
  SymShape mine = symbolic_shape();
  if (!detail::same_numel(mine, shape))
    throw ShapeError("reshape: cannot reshape " + shape_to_string(mine) + " to " + shape_to_string(shape) +
                     ": the element counts differ");
  bool same = mine.size() == shape.size();
  for (size_t i = 0; same && i < shape.size(); ++i) same = mine[i] == shape[i];
  if (same) return *this;
  Shape maxs = detail::max_shape(shape);
  std::vector<UOpPtr> dims;
  for (const SInt& d : shape) dims.push_back(d.uop());
  return Tensor(movement(Ops::RESHAPE, *this, maxs, dims), maxs, detail::sym_entries(shape));
}

// A braced list may mix numbers, -1 and variables: all-number lists keep the -1 handling of
// the static overloads.
Tensor Tensor::reshape(std::initializer_list<SInt> shape) const {
  SymShape s(shape);
  return detail::is_static(s) ? reshape(detail::max_shape(s)) : reshape(s);
}

Tensor Tensor::expand(std::initializer_list<SInt> shape) const {
  SymShape s(shape);
  return detail::is_static(s) ? expand(detail::max_shape(s)) : expand(s);
}

Tensor Tensor::permute(std::vector<int64_t> order) const {
  if (static_cast<int64_t>(order.size()) != ndim())
    throw ShapeError("permute: order of " + std::to_string(order.size()) + " axes for shape " + shape_to_string(shape_));
  std::vector<bool> seen(order.size());
  Shape out;
  std::vector<UOpPtr> sym;
  for (int64_t& a : order) {
    a = detail::normalize_axis(a, ndim(), "permute");
    if (seen[a]) throw ShapeError("permute: axis " + std::to_string(a) + " appears twice");
    seen[a] = true;
    out.push_back(shape_[a]);
    if (!sym_.empty()) sym.push_back(sym_[a]);
  }
  std::vector<int64_t> identity(order.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (order == identity) return *this;
  return Tensor(movement(Ops::PERMUTE, *this, order), out, sym);
}

Tensor Tensor::expand(Shape shape) const {
  if (is_symbolic()) {
    SymShape target = detail::to_sym(shape);
    size_t lead = shape.size() >= shape_.size() ? shape.size() - shape_.size() : 0;
    SymShape mine = symbolic_shape();
    for (size_t i = lead; i < shape.size(); ++i)
      if (shape[i] == -1) target[i] = mine[i - lead];
    return expand(target);
  }
  if (shape.size() < shape_.size())
    throw ShapeError("expand: cannot expand " + shape_to_string(shape_) + " to fewer dimensions " + shape_to_string(shape));
  size_t lead = shape.size() - shape_.size();
  Shape src(lead, 1);
  src.insert(src.end(), shape_.begin(), shape_.end());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) shape[i] = src[i];
    if (shape[i] != src[i] && src[i] != 1)
      throw ShapeError("expand: cannot expand " + shape_to_string(shape_) + " to " + shape_to_string(shape));
    if (shape[i] < 0) throw ShapeError("expand: negative dimension in " + shape_to_string(shape));
  }
  Tensor r = lead ? reshape(src) : *this;
  if (shape == src) return r;
  return Tensor(movement(Ops::EXPAND, r, shape), shape);
}

Tensor Tensor::expand(const SymShape& shape) const {
  if (detail::is_static(shape) && !is_symbolic()) return expand(detail::max_shape(shape));
  SymShape mine = symbolic_shape();
  if (shape.size() < mine.size())
    throw ShapeError("expand: cannot expand " + shape_to_string(mine) + " to fewer dimensions " +
                     shape_to_string(shape));
  SymShape src(shape.size() - mine.size(), SInt(1));
  src.insert(src.end(), mine.begin(), mine.end());
  for (size_t i = 0; i < shape.size(); ++i) {
    bool one = src[i].is_static() && src[i].value() == 1;
    if (!(shape[i] == src[i]) && !one)
      throw ShapeError("expand: cannot expand " + shape_to_string(mine) + " to " + shape_to_string(shape));
  }
  Tensor r = src.size() != mine.size() ? reshape(src) : *this;
  Shape maxs = detail::max_shape(shape);
  std::vector<UOpPtr> dims;
  for (const SInt& d : shape) dims.push_back(d.uop());
  return Tensor(movement(Ops::EXPAND, r, maxs, dims), maxs, detail::sym_entries(shape));
}

Tensor Tensor::pad(std::vector<std::pair<SInt, SInt>> padding, double value) const {
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw ShapeError("pad: " + std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_to_string(shape_));
  bool symbolic = is_symbolic();
  for (auto& [b, a] : padding) symbolic = symbolic || !b.is_static() || !a.is_static();
  if (symbolic) {
    // Symbolic padding must not be negative; the amounts travel as extra sources.
    SymShape mine = symbolic_shape(), out;
    std::vector<UOpPtr> extra{UOp::const_(dtype(), value)};
    std::vector<int64_t> arg;
    for (size_t i = 0; i < padding.size(); ++i) {
      auto& [b, a] = padding[i];
      if (b.min() < 0 || a.min() < 0) throw ShapeError("pad: symbolic padding must be non-negative");
      out.push_back(mine[i] + b + a);
      extra.push_back(b.uop());
      extra.push_back(a.uop());
      arg.push_back(0);
      arg.push_back(out.back().max() - shape_[i]);
    }
    Shape maxs = detail::max_shape(out);
    return Tensor(movement(Ops::PAD, *this, arg, extra), maxs, detail::sym_entries(out));
  }
  // Negative padding removes elements: shrink first, then pad what remains.
  std::vector<std::pair<SInt, SInt>> keep;
  std::vector<int64_t> arg;
  Shape out;
  bool shrinks = false, pads = false;
  for (size_t i = 0; i < padding.size(); ++i) {
    int64_t b = padding[i].first.value(), a = padding[i].second.value();
    int64_t start = b < 0 ? -b : 0, end = shape_[i] - (a < 0 ? -a : 0);
    if (start > end) throw ShapeError("pad: padding removes more than axis " + std::to_string(i) + " of " + shape_to_string(shape_) + " holds");
    keep.emplace_back(start, end);
    shrinks |= start != 0 || end != shape_[i];
    arg.push_back(std::max<int64_t>(b, 0));
    arg.push_back(std::max<int64_t>(a, 0));
    pads |= b > 0 || a > 0;
    out.push_back(end - start + arg[arg.size() - 2] + arg.back());
  }
  Tensor r = shrinks ? shrink(keep) : *this;
  if (!pads) return r;
  return Tensor(movement(Ops::PAD, r, arg, {UOp::const_(dtype(), value)}), out);
}

namespace {

// The element of an axis of `n` that position `j` of the padded axis reads (j counted from the
// axis' first element: negative before it, n and up after it).
int64_t source_of(PadMode mode, int64_t j, int64_t n) {
  switch (mode) {
    case PadMode::edge:
      return std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::wrap:
      return (j % n + n) % n;
    case PadMode::reflect: {
      if (n == 1) return 0;
      int64_t period = 2 * (n - 1), k = (j % period + period) % period;
      return k < n ? k : period - k;
    }
    case PadMode::constant:
      break;
  }
  return j;
}

const char* mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::constant: return "constant";
    case PadMode::edge: return "edge";
    case PadMode::reflect: return "reflect";
    case PadMode::wrap: return "wrap";
  }
  return "?";
}

// `x` padded along axis `a` by (before, after) as `mode` says: the positions' source elements in
// runs that step by +1 (a slice), -1 (a slice flipped) or 0 (one element expanded), joined. Views
// only: they fuse into the kernel that reads the result.
Tensor padded_along(const Tensor& x, int64_t a, int64_t before, int64_t after, PadMode mode) {
  int64_t n = x.shape()[static_cast<size_t>(a)], end = n + after;
  std::vector<Tensor> parts;
  for (int64_t j = -before; j < end;) {
    int64_t first = source_of(mode, j, n), step = j + 1 < end ? source_of(mode, j + 1, n) - first : 0;
    if (step < -1 || step > 1) step = 0;  // wrap jumps from the last element to the first: a new run
    int64_t len = 1;
    while (j + len < end && source_of(mode, j + len, n) == first + step * len) ++len;
    if (step == 1) {
      parts.push_back(x.slice(a, first, first + len));
    } else if (step == -1) {
      parts.push_back(x.slice(a, first - len + 1, first + 1).flip({a}));
    } else {
      Shape sh = x.shape();
      sh[static_cast<size_t>(a)] = len;
      parts.push_back(x.slice(a, first, first + 1).expand(sh));
    }
    j += len;
  }
  return parts.size() == 1 ? parts[0] : Tensor::cat(parts, a);
}

}  // namespace

Tensor Tensor::pad(std::vector<std::pair<SInt, SInt>> padding, PadMode mode, double value) const {
  if (mode == PadMode::constant) return pad(std::move(padding), value);
  std::string what = std::string("pad (") + mode_name(mode) + ")";
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw ShapeError(what + ": " + std::to_string(padding.size()) + " (before, after) pairs for shape " + shape_to_string(shape_));
  if (is_symbolic()) throw ShapeError(what + ": needs static sizes, not " + shape_to_string(symbolic_shape()));
  Tensor r = *this;
  for (int64_t i = 0; i < ndim(); ++i) {
    auto& [b, e] = padding[static_cast<size_t>(i)];
    if (!b.is_static() || !e.is_static() || b.value() < 0 || e.value() < 0)
      throw ShapeError(what + ": padding of axis " + std::to_string(i) + " must be static and at least 0");
    if (b.value() == 0 && e.value() == 0) continue;
    if (shape_[static_cast<size_t>(i)] == 0)
      throw ShapeError(what + ": axis " + std::to_string(i) + " of " + shape_to_string(shape_) + " is empty: there is nothing to repeat");
    r = padded_along(r, i, b.value(), e.value(), mode);
  }
  return r;
}

Tensor Tensor::shrink(std::vector<std::pair<SInt, SInt>> bounds) const {
  if (static_cast<int64_t>(bounds.size()) != ndim())
    throw ShapeError("shrink: " + std::to_string(bounds.size()) + " (start, end) pairs for shape " + shape_to_string(shape_));
  bool symbolic = is_symbolic();
  for (auto& [s, e] : bounds) symbolic = symbolic || !s.is_static() || !e.is_static();
  SymShape mine = symbolic_shape(), out;
  std::vector<int64_t> arg;
  std::vector<UOpPtr> extra;
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto& [s, e] = bounds[i];
    if (s.min() < 0 || e.max() > shape_[i] || s.max() > e.min() || (mine[i].is_static() && e.max() > mine[i].value()))
      throw ShapeError("shrink: (" + s.to_string() + ", " + e.to_string() + ") is not within axis " + std::to_string(i) +
                       " of " + shape_to_string(mine));
    out.push_back(e - s);
    extra.push_back(s.uop());
    extra.push_back(e.uop());
    arg.push_back(symbolic ? 0 : s.value());
    arg.push_back(symbolic ? out.back().max() : e.value());
  }
  if (!symbolic) {
    Shape o = detail::max_shape(out);
    if (o == shape_) return *this;
    return Tensor(movement(Ops::SHRINK, *this, arg), o);
  }
  Shape maxs = detail::max_shape(out);
  return Tensor(movement(Ops::SHRINK, *this, arg, extra), maxs, detail::sym_entries(out));
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  std::vector<int64_t> flags(shape_.size(), 0);
  for (int64_t a : axes) {
    a = detail::normalize_axis(a, ndim(), "flip");
    if (flags[a]) throw ShapeError("flip: axis " + std::to_string(a) + " appears twice");
    flags[a] = 1;
  }
  if (std::all_of(flags.begin(), flags.end(), [](int64_t f) { return f == 0; })) return *this;
  return Tensor(movement(Ops::FLIP, *this, flags), shape_, sym_);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  std::vector<int64_t> order(shape_.size());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[detail::normalize_axis(dim0, ndim(), "transpose")], order[detail::normalize_axis(dim1, ndim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::squeeze(std::optional<int64_t> axis) const {
  SymShape mine = symbolic_shape(), out;
  auto is_one = [](const SInt& d) { return d.is_static() && d.value() == 1; };
  if (!axis) {
    for (const SInt& d : mine)
      if (!is_one(d)) out.push_back(d);
    return reshape(out);
  }
  int64_t a = detail::normalize_axis(*axis, ndim(), "squeeze");
  if (!is_one(mine[a])) return *this;
  out = mine;
  out.erase(out.begin() + a);
  return reshape(out);
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  int64_t a = detail::normalize_axis(axis, ndim() + 1, "unsqueeze");
  SymShape out = symbolic_shape();
  out.insert(out.begin() + a, SInt(1));
  return reshape(out);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (ndim() == 0) return reshape(Shape{1});
  int64_t s = detail::normalize_axis(start_dim, ndim(), "flatten"), e = detail::normalize_axis(end_dim, ndim(), "flatten");
  if (s > e) throw ShapeError("flatten: start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim));
  SymShape mine = symbolic_shape();
  SymShape out(mine.begin(), mine.begin() + s);
  SInt n = 1;
  for (int64_t i = s; i <= e; ++i) n = n * mine[i];
  out.push_back(n);
  out.insert(out.end(), mine.begin() + e + 1, mine.end());
  return reshape(out);
}

Tensor Tensor::slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "slice");
  if (step == 0) throw ShapeError("slice: step cannot be zero");
  if (!symbolic_shape()[a].is_static()) throw ShapeError("slice: axis " + std::to_string(a) + " is symbolic; use shrink");
  int64_t n = shape_[a];
  if (step < 0) {
    // x[start:stop:-k] is the flipped x sliced forward: index i maps to n - 1 - i.
    int64_t s = start ? (*start < 0 ? *start + n : *start) : n - 1;
    int64_t e = stop ? (*stop < 0 ? *stop + n : *stop) : -1;
    s = std::clamp<int64_t>(s, -1, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
    return flip({a}).slice(a, n - 1 - s, n - 1 - e, -step);
  }
  int64_t s = start ? (*start < 0 ? *start + n : *start) : 0;
  int64_t e = stop ? (*stop < 0 ? *stop + n : *stop) : n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  SymShape mine = symbolic_shape();
  std::vector<std::pair<SInt, SInt>> b;
  for (int64_t i = 0; i < ndim(); ++i) b.emplace_back(0, mine[i]);
  b[a] = {s, e};
  Tensor r = shrink(b);
  if (step == 1) return r;
  // Every step-th element: pad to a multiple of step, fold the axis into (count, step), keep column 0.
  int64_t len = e - s, count = (len + step - 1) / step;
  std::vector<std::pair<SInt, SInt>> p(ndim(), {0, 0});
  p[a] = {0, count * step - len};
  r = r.pad(p);
  SymShape folded = r.symbolic_shape();
  folded[a] = count;
  folded.insert(folded.begin() + a + 1, SInt(step));
  r = r.reshape(folded);
  std::vector<std::pair<SInt, SInt>> keep;
  for (const SInt& d : folded) keep.emplace_back(0, d);
  keep[a + 1] = {0, 1};
  SymShape out = r.symbolic_shape();
  out.erase(out.begin() + a + 1);
  return r.shrink(keep).reshape(out);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t axis) {
  if (tensors.empty()) throw ShapeError("cat: no tensors");
  const Tensor& first = tensors[0];
  int64_t a = detail::normalize_axis(axis, first.ndim(), "cat");
  std::vector<DType> dts;
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    bool same = t.ndim() == first.ndim();
    for (int64_t i = 0; same && i < t.ndim(); ++i) same = i == a || t.shape()[i] == first.shape()[i];
    if (!same)
      throw ShapeError("cat: shape " + shape_to_string(t.shape()) + " does not match " + shape_to_string(first.shape()) +
                       " outside axis " + std::to_string(a));
    dts.push_back(t.dtype());
    total += t.shape()[a];
  }
  DType dt = least_upper_dtype(dts);
  // (A join of convolutions' channels is joined in channel blocks by the schedule:
  // schedule/concat_blocks.)
  // Each piece padded with zeros to the full length, then added pairwise (a balanced tree, so
  // the graph stays shallow for many pieces): one fused kernel.
  std::vector<Tensor> pieces;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    std::vector<std::pair<SInt, SInt>> p(t.ndim(), {0, 0});
    p[a] = {offset, total - offset - t.shape()[a]};
    pieces.push_back(t.cast(dt).pad(p));
    offset += t.shape()[a];
  }
  return detail::sum_in_pairs(std::move(pieces));
}

Tensor detail::sum_in_pairs(std::vector<Tensor> terms) {
  if (terms.empty()) throw Error("sum_in_pairs: no terms");
  while (terms.size() > 1) {
    std::vector<Tensor> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] + terms[i + 1]);
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  return terms[0];
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t axis) {
  if (tensors.empty()) throw ShapeError("stack: no tensors");
  int64_t a = detail::normalize_axis(axis, tensors[0].ndim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    if (t.shape() != tensors[0].shape())
      throw ShapeError("stack: shape " + shape_to_string(t.shape()) + " differs from " + shape_to_string(tensors[0].shape()));
    parts.push_back(t.unsqueeze(a));
  }
  return cat(parts, a);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t axis) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw ShapeError("split: negative size");
    total += s;
  }
  if (total != shape_[a])
    throw ShapeError("split: sizes add up to " + std::to_string(total) + ", not axis " + std::to_string(a) + " of " + shape_to_string(shape_));
  std::vector<Tensor> out;
  int64_t offset = 0;
  SymShape mine = symbolic_shape();
  for (int64_t s : sizes) {
    std::vector<std::pair<SInt, SInt>> b;
    for (int64_t i = 0; i < ndim(); ++i) b.emplace_back(0, mine[i]);
    b[a] = {offset, offset + s};
    out.push_back(shrink(b));
    offset += s;
  }
  return out;
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t axis) const {
  if (size <= 0) throw ShapeError("split: size must be positive, got " + std::to_string(size));
  int64_t a = detail::normalize_axis(axis, ndim(), "split");
  std::vector<int64_t> sizes;
  for (int64_t left = shape_[a]; left > 0; left -= size) sizes.push_back(std::min(size, left));
  if (sizes.empty()) sizes.push_back(0);
  return split(sizes, a);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t axis) const {
  if (chunks <= 0) throw ShapeError("chunk: chunks must be positive, got " + std::to_string(chunks));
  int64_t a = detail::normalize_axis(axis, ndim(), "chunk");
  int64_t size = std::max<int64_t>(1, (shape_[a] + chunks - 1) / chunks);
  return split(size, a);
}

Tensor Tensor::repeat(std::vector<int64_t> repeats) const { return repeat(detail::to_sym(repeats)); }

// Each axis as (1, size), expanded to (repeats, size) and merged: static sizes take the static
// reshape and expand, so a static repeat is the graph it always was.
Tensor Tensor::repeat(const SymShape& repeats) const {
  if (static_cast<int64_t>(repeats.size()) < ndim())
    throw ShapeError("repeat: " + std::to_string(repeats.size()) + " repeats for shape " + shape_to_string(symbolic_shape()));
  SymShape base(repeats.size() - static_cast<size_t>(ndim()), SInt(1)), interleaved, expanded, out;
  for (const SInt& d : symbolic_shape()) base.push_back(d);
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i].min() < 0)
      throw ShapeError("repeat: repeat count " + repeats[i].to_string() + (repeats[i].is_static() ? " is negative" : " may be negative"));
    interleaved.insert(interleaved.end(), {SInt(1), base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
    out.push_back(repeats[i] * base[i]);
  }
  return reshape(interleaved).expand(expanded).reshape(out);
}

Tensor Tensor::gather(int64_t axis, const Tensor& index) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "gather");
  if (index.ndim() != ndim()) throw ShapeError("gather: index of shape " + shape_to_string(index.shape()) + " for input " + shape_to_string(shape_));
  if (!index.dtype().is_int()) throw DTypeError("gather: index must be an integer tensor, not " + index.dtype().name());
  std::vector<std::pair<SInt, SInt>> b;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (i != a && index.shape()[i] > shape_[i])
      throw ShapeError("gather: index shape " + shape_to_string(index.shape()) + " exceeds input " + shape_to_string(shape_) + " at axis " + std::to_string(i));
    b.emplace_back(0, i == a ? shape_[i] : index.shape()[i]);
  }
  int64_t n = shape_[a];
  // One indexed load per output: GATHER reads x at the index's value along axis a. Negative
  // indices count from the end; anything still outside [0, n) reads 0.
  Tensor x = shrink(b);
  Tensor idx = index.cast(dtypes::int32);
  idx = (idx < 0).where(idx + static_cast<int64_t>(n), idx);
  UOpPtr node = UOp::make(Ops::GATHER, dtype(), {x.uop(), idx.uop()}, int64_t{a});
  return Tensor(node, index.shape(), detail::sym_entries(index.symbolic_shape()));
}

}  // namespace lathe
