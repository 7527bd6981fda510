#include "schedule/shape.hpp"

#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape node_shape(const UOp& u, const std::vector<const Shape*>& src) {
  auto vec = [&]() -> const std::vector<int64_t>& { return u.arg_as<std::vector<int64_t>>(); };
  switch (u.op()) {
    case Ops::BUFFER: return Shape(vec().begin() + 1, vec().end());
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
    default: break;
  }
  if (src.empty()) throw InternalError("no shape rule for " + to_string(u));
  // Elementwise ops, CAST, BITCAST, CONTIGUOUS, FLIP: the shape of their (broadcast) sources.
  for (const Shape* s : src)
    if (!s->empty()) return *s;
  return *src[0];
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
