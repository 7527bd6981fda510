#include "schedule/shape.hpp"

#include <algorithm>

#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {

Shape split_shape(Shape s, size_t a, int64_t b) {
  s[a] /= b;
  s.insert(s.begin() + static_cast<int64_t>(a) + 1, b);
  return s;
}

SymDims split_dims(SymDims dims, size_t a, int64_t n, int64_t b) {
  dims[a] = UOp::index_const(n / b);
  dims.insert(dims.begin() + static_cast<int64_t>(a) + 1, UOp::index_const(b));
  return dims;
}

int64_t shape_numel(const Shape& s) {
  if (std::find(s.begin(), s.end(), 0) != s.end()) return 0;  // empty, however large the other sizes
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& order) {
  std::vector<int64_t> back(order.size());
  for (size_t i = 0; i < order.size(); ++i) back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return back;
}

Shape node_shape(const UOp& u, const std::vector<const Shape*>& src) {
  auto vec = [&]() -> const std::vector<int64_t>& { return u.arg_as<std::vector<int64_t>>(); };
  switch (u.op()) {
    case Ops::BUFFER: return Shape(vec().begin() + 1, vec().end());
    case Ops::CUSTOM: return Shape{vec().at(2)};  // a host step's output, flat at its largest (runtime/host_steps)
    case Ops::CONST:
    case Ops::DEFINE_VAR:
    case Ops::BIND: return {};
    case Ops::RESHAPE:
    case Ops::EXPAND: return vec();
    case Ops::PERMUTE: {
      Shape out;
      for (int64_t a : vec()) out.push_back(src[0]->at(a));
      return out;
    }
    case Ops::PAD: {
      Shape out = *src[0];
      for (size_t i = 0; i < out.size(); ++i) out[i] += vec()[2 * i] + vec()[2 * i + 1];
      return out;
    }
    case Ops::SHRINK: {
      Shape out = *src[0];
      for (size_t i = 0; i < out.size(); ++i) out[i] = vec()[2 * i + 1] - vec()[2 * i];
      return out;
    }
    case Ops::REDUCE_AXIS: {
      Shape out = *src[0];
      for (int64_t a : u.arg_as<ReduceArg>().axes) out[a] = 1;
      return out;
    }
    case Ops::GATHER: return *src[1];  // the index's shape
    case Ops::ATTENTION: {  // (..., queries, keys) and (..., keys, value size)
      Shape out = *src[0];
      out.back() = src[1]->back();
      return out;
    }
    default: break;
  }
  if (src.empty()) throw InternalError("no shape rule for " + to_string(u));
  // Elementwise ops, CAST, BITCAST, CONTIGUOUS, FLIP: the shape of their (broadcast) sources.
  for (const Shape* s : src)
    if (!s->empty()) return *s;
  return *src[0];
}

SymDims node_sym_shape(const UOp& u, const std::vector<const SymDims*>& src, const Shape& shape) {
  auto consts = [&] {
    SymDims d;
    for (int64_t x : shape) d.push_back(UOp::index_const(x));
    return d;
  };
  auto is_one = [](const UOpPtr& d) { return d->is_const() && const_as_int(d->const_value()) == 1; };
  switch (u.op()) {
    case Ops::BUFFER:
    case Ops::CUSTOM:
    case Ops::CONST:
    case Ops::DEFINE_VAR:
    case Ops::BIND: return consts();
    case Ops::RESHAPE:
    case Ops::EXPAND:
      if (u.src().size() == 1) return consts();
      return SymDims(u.src().begin() + 1, u.src().end());
    case Ops::PERMUTE: {
      SymDims out;
      for (int64_t a : u.arg_as<std::vector<int64_t>>()) out.push_back(src[0]->at(a));
      return out;
    }
    case Ops::SHRINK: {
      if (u.src().size() == 1) return consts();
      SymDims out;
      for (size_t i = 0; i < shape.size(); ++i) out.push_back(simplify(u.src(2 + 2 * i) - u.src(1 + 2 * i)));
      return out;
    }
    case Ops::PAD: {
      if (u.src().size() <= 2) return consts();
      SymDims out;
      for (size_t i = 0; i < shape.size(); ++i) out.push_back(simplify(src[0]->at(i) + u.src(2 + 2 * i) + u.src(3 + 2 * i)));
      return out;
    }
    case Ops::REDUCE_AXIS: {
      SymDims out = *src[0];
      for (int64_t a : u.arg_as<ReduceArg>().axes) out[a] = UOp::index_const(1);
      return out;
    }
    case Ops::GATHER: return *src[1];
    case Ops::ATTENTION: {
      SymDims out = *src[0];
      out.back() = src[1]->back();
      return out;
    }
    default: break;
  }
  // Elementwise and the like: a symbolic axis of any full-rank source is the result's.
  SymDims out = consts();
  for (const SymDims* s : src) {
    if (s->size() != out.size()) continue;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i]->is_const() && !(*s)[i]->is_const() && !is_one((*s)[i])) out[i] = (*s)[i];
  }
  return out;
}

std::unordered_map<const UOp*, SymDims> graph_sym_shapes(const UOpPtr& root, const std::unordered_map<const UOp*, Shape>& shapes) {
  std::unordered_map<const UOp*, SymDims> dims;
  std::vector<const SymDims*> src;
  for (const UOpPtr& u : toposort(root)) {
    if (u->op() == Ops::SINK) continue;
    src.clear();
    for (const UOpPtr& s : u->src()) src.push_back(&dims.at(s.get()));
    dims.emplace(u.get(), node_sym_shape(*u, src, shapes.at(u.get())));
  }
  return dims;
}

std::unordered_map<const UOp*, Shape> graph_shapes(const UOpPtr& root) {
  std::unordered_map<const UOp*, Shape> shapes;
  std::vector<const Shape*> src;
  for (const UOpPtr& u : toposort(root)) {
    src.clear();
    for (const UOpPtr& s : u->src()) src.push_back(&shapes.at(s.get()));
    shapes.emplace(u.get(), u->op() == Ops::SINK ? Shape{} : node_shape(*u, src));
  }
  return shapes;
}

}  // namespace lathe
