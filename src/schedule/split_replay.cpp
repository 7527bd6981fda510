#include "schedule/split_replay.hpp"

#include "ir/label.hpp"
#include "schedule/reader_layout.hpp"

namespace lathe {
namespace {

bool is_const_index(const UOpPtr& u, int64_t v) { return u->is_const() && const_as_int(u->const_value()) == v; }

// Whether the sizes of `dims` from axis `from` on are constants.
bool static_from(const SymDims& dims, size_t from) {
  for (size_t i = from; i < dims.size(); ++i)
    if (!dims[i]->is_const()) return false;
  return true;
}

}  // namespace

std::optional<Replayed> SplitReplay::step(const UOpPtr& u, size_t a, int64_t b, const UOpPtr& src) const {
  const Shape& in = shapes_.at(u->src(0).get());
  const Shape& out = shapes_.at(u.get());
  const SymDims& in_dims = dims_.at(u->src(0).get());
  if (in[a] % b != 0) return std::nullopt;  // the split must be whole
  std::vector<std::string> labels = src ? labels_of(*u) : std::vector<std::string>{};
  auto vec = [&] { return u->arg_as<std::vector<int64_t>>(); };
  auto make = [&](std::vector<UOpPtr> extra, std::vector<int64_t> arg) {
    if (!src) return UOpPtr{};
    std::vector<UOpPtr> s{src};
    s.insert(s.end(), extra.begin(), extra.end());
    return labelled_as(UOp::make(u->op(), u->dtype(), std::move(s), std::move(arg)), labels);
  };
  std::vector<UOpPtr> extra(u->src().begin() + 1, u->src().end());
  switch (u->op()) {
    case Ops::CONTIGUOUS:  // a copy the split's own copy stands in for: dropped
      if (!plain_copy(*u)) return std::nullopt;
      return Replayed{a, src};
    case Ops::PERMUTE: {
      std::vector<int64_t> order;
      size_t at = 0;
      for (int64_t o : vec()) {
        if (o == static_cast<int64_t>(a)) at = order.size();
        order.push_back(o + (o > static_cast<int64_t>(a) ? 1 : 0));
        if (o == static_cast<int64_t>(a)) order.push_back(o + 1);
      }
      return Replayed{at, make({}, order)};
    }
    case Ops::RESHAPE:
    case Ops::EXPAND: {
      // The b elements are the input's flat index over `post` modulo b: an output axis whose
      // inner axes hold `post` elements and whose size b divides keeps them as its innermost.
      size_t k = a;
      if (u->op() == Ops::RESHAPE) {
        int64_t post = 1, inner = 1;
        for (size_t i = a + 1; i < in.size(); ++i) post *= in[i];
        std::optional<size_t> found;
        for (size_t i = out.size(); i-- > 0;) {
          if (inner == post && out[i] % b == 0 && (out[i] != 1 || in[a] == 1)) {
            found = i;
            break;
          }
          inner *= out[i];
          if (inner > post) break;
        }
        if (!found) return std::nullopt;
        k = *found;
      } else if (in.size() != out.size() || in[a] != out[a]) {
        return std::nullopt;
      }
      if (!static_from(in_dims, a) || !static_from(dims_.at(u.get()), k)) return std::nullopt;
      if (!extra.empty()) extra = split_dims(extra, k, out[k], b);
      return Replayed{k, make(extra, split_shape(out, k, b))};
    }
    case Ops::FLIP: {  // a flipped split axis reverses both the block index and the lane
      std::vector<int64_t> flags = vec();
      flags.insert(flags.begin() + static_cast<int64_t>(a) + 1, flags[a]);
      return Replayed{a, make({}, flags)};
    }
    case Ops::PAD: {
      std::vector<int64_t> arg = vec();
      if (arg[2 * a] != 0 || arg[2 * a + 1] != 0) return std::nullopt;
      if (extra.size() > 1) {  // the fill, then the symbolic amounts
        if (!is_const_index(extra[1 + 2 * a], 0) || !is_const_index(extra[2 + 2 * a], 0)) return std::nullopt;
        extra.insert(extra.begin() + 3 + 2 * static_cast<int64_t>(a), {UOp::index_const(0), UOp::index_const(0)});
      }
      arg.insert(arg.begin() + 2 * static_cast<int64_t>(a) + 2, {0, 0});
      return Replayed{a, make(extra, arg)};
    }
    case Ops::SHRINK: {
      std::vector<int64_t> arg = vec();
      if (arg[2 * a] != 0 || arg[2 * a + 1] != in[a]) return std::nullopt;
      if (!extra.empty()) {
        if (!is_const_index(extra[2 * a], 0) || !is_const_index(extra[2 * a + 1], in[a])) return std::nullopt;
        extra[2 * a + 1] = UOp::index_const(in[a] / b);
        extra.insert(extra.begin() + 2 + 2 * static_cast<int64_t>(a), {UOp::index_const(0), UOp::index_const(b)});
      }
      arg[2 * a + 1] = in[a] / b;
      arg.insert(arg.begin() + 2 * static_cast<int64_t>(a) + 2, {0, b});
      return Replayed{a, make(extra, arg)};
    }
    default: return std::nullopt;
  }
}

std::optional<Replayed> SplitReplay::chain(const std::vector<UOpPtr>& steps, size_t a, int64_t b, const UOpPtr& split_base) const {
  Replayed r{a, split_base};
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    std::optional<Replayed> next = step(*it, r.axis, b, r.node);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace lathe
