#include "schedule/realize.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "ir/axis.hpp"

namespace lathe {
namespace {

// A loop of some kernel: trips is how many times its body runs in one execution of the kernel
// (its size times the trips of the loop around it).
struct Loop {
  int depth;
  double trips;
  bool in_reduce;  // a reduction's loop, or inside one
  int parent;      // the loop around it (-1: none)
  int64_t size;
  int split_from = -1;   // the loop a reshape split this one out of (-1: none)
  int split_inner = -1;  // of such a part, the innermost part of that split
};

// How a kernel reads a node: `sig` names the path of movement ops and reductions from the
// kernel's root (two paths with one signature read the same index, which the lowering computes
// once); `axis_loop[i]` is the innermost loop the index of axis i depends on (-1: none).
struct View {
  uint64_t sig;
  int kernel;  // the stored node whose kernel reads it
  std::vector<int> axis_loop;
  bool tiled = false;  // read as an attention kernel's scores, which that kernel tiles as a contraction
  // Loops the index depends on besides axis_loop's: a reshape that merges axes keeps only the
  // innermost of their loops in axis_loop.
  std::vector<int> merged = {};
};

struct NodeViews {
  std::vector<View> views;
  bool overflow = false;  // read in more distinct ways than are worth tracking: store it
};

constexpr size_t kMaxViews = 32;
constexpr size_t kMaxCostWalk = 4096;

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

bool is_leaf(Ops op) { return op == Ops::BUFFER || op == Ops::CONST || op == Ops::DEFINE_VAR || op == Ops::BIND; }


// A sum of products read through broadcasts (matmul, convolution, einsum): what the optimizer
// tiles, as long as it has the kernel to itself.
bool is_contraction(const UOp& u) {
  if (u.op() != Ops::REDUCE_AXIS || u.arg_as<ReduceArg>().op != Ops::ADD) return false;
  const UOp* s = u.src(0).get();
  while (s->op() == Ops::CAST) s = s->src(0).get();
  return s->op() == Ops::MUL;
}

bool is_elementwise(Ops op) { return is_alu(op) || op == Ops::CAST || op == Ops::BITCAST || op == Ops::CONTIGUOUS; }

// A reshape as groups of axes whose element counts agree: (out axes, source axes) per group.
std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>> reshape_groups(const Shape& out, const Shape& src) {
  std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>> groups;
  auto product = [](const Shape& s) {
    int64_t p = 1;
    for (int64_t d : s) p *= d;
    return p;
  };
  // Empty tensors, and maximum sizes of symbolic ones that need not agree: one group.
  if (product(out) == 0 || product(src) == 0 || product(out) != product(src)) {
    groups.emplace_back();
    for (size_t i = 0; i < out.size(); ++i) groups.back().first.push_back(i);
    for (size_t j = 0; j < src.size(); ++j) groups.back().second.push_back(j);
    return groups;
  }
  size_t i = 0, j = 0;
  while (i < out.size() || j < src.size()) {
    groups.emplace_back();
    auto& [go, gs] = groups.back();
    int64_t po = 1, ps = 1;
    do {
      // Axes of size 1 join the group they follow, before a larger axis opens the next one: a
      // (4, 4) read as (1, 4, 1, 4) is two groups.
      if (po == ps && j < src.size() && src[j] == 1)
        gs.push_back(j++);
      else if (po == ps && i < out.size() && out[i] == 1)
        go.push_back(i++);
      else if (po <= ps && i < out.size())
        po *= out[i], go.push_back(i++);
      else if (j < src.size()) ps *= src[j], gs.push_back(j++);
      else po *= out[i], go.push_back(i++);
    } while (po != ps || (i < out.size() && out[i] == 1) || (j < src.size() && src[j] == 1));
  }
  return groups;
}

class Decider {
 public:
  Decider(const std::unordered_map<const UOp*, Shape>& shapes, std::unordered_map<const UOp*, bool>& realized,
          const FusionPrices& prices)
      : shapes_(shapes), realized_(realized), p_(prices) {}

  void run(const std::vector<UOpPtr>& order) {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const UOp& u = **it;
      if (is_leaf(u.op())) continue;
      auto found = views_.find(&u);
      NodeViews mine = found == views_.end() ? NodeViews{} : std::move(found->second);
      if (found != views_.end()) views_.erase(found);
      if (!stored(u) && is_computed(u) && worth_storing(u, mine)) realized_[&u] = true;
      if (stored(u)) {
        propagate(u, root_view(u), views_);
        continue;
      }
      if (mine.overflow) {  // read in too many ways to track: so are its sources, until one is stored
        for (const UOpPtr& s : u.src())
          if (!is_leaf(s->op()) && !stored(*s)) views_[s.get()] = NodeViews{{}, true};
        continue;
      }
      for (const View& v : mine.views) propagate(u, v, views_);
    }
  }

 private:
  bool stored(const UOp& u) const {
    auto it = realized_.find(&u);
    return u.op() == Ops::BUFFER || (it != realized_.end() && it->second);
  }

  const Shape& shape(const UOp& u) const { return shapes_.at(&u); }
  static double numel(const Shape& s) {
    double n = 1;
    for (int64_t d : s) n *= static_cast<double>(d);
    return n;
  }

  int new_loop(int parent, int64_t size, bool reduce, int split_from = -1) {
    const Loop* p = parent < 0 ? nullptr : &loops_[static_cast<size_t>(parent)];
    loops_.push_back({p ? p->depth + 1 : 0, static_cast<double>(size) * (p ? p->trips : 1.0),
                      reduce || (p && p->in_reduce), parent, size, split_from});
    return static_cast<int>(loops_.size() - 1);
  }

  // The innermost of the loops: the one with the most trips, and of those the deepest (a loop
  // split by a reshape hangs its parts where the whole was, so a part may be deeper in the tree
  // than a loop inside the whole, but never runs more often).
  int deepest(const std::vector<int>& axis_loop) const {
    int best = -1;
    for (int l : axis_loop) {
      if (l < 0) continue;
      const Loop &a = loops_[static_cast<size_t>(l)], *b = best < 0 ? nullptr : &loops_[static_cast<size_t>(best)];
      if (!b || a.trips > b->trips || (a.trips == b->trips && a.depth > b->depth)) best = l;
    }
    return best;
  }

  // Whether v's index depends on loop a: a loop it reads, one it reads merged into another axis,
  // or one a reshape split into loops it reads.
  bool reads(const View& v, int a) const { return split_part(v, a, true) >= 0; }

  // The first loop v reads (or merged) that is a part a reshape split from a, or (with `itself`)
  // is a: -1 where none is.
  int split_part(const View& v, int a, bool itself) const {
    for (const std::vector<int>* ls : {&v.axis_loop, &v.merged})
      for (int l : *ls)
        for (; l >= 0; l = loops_[static_cast<size_t>(l)].split_from)
          if ((itself && l == a) || loops_[static_cast<size_t>(l)].split_from == a) return l;
    return -1;
  }

  // How many times a kernel evaluates a node it reads through v: once per trip of the innermost
  // loop its index depends on, except in a kernel without a reduction, where the innermost output
  // loop of at most kSharedWorkLoop positions that the index does not depend on counts once: the
  // optimizer upcasts such a loop whole where work does not depend on it (opt/heuristic.cpp), and
  // its copies share that work (the second pass of a Winograd transform and the first, which it
  // reads six times). One loop only, as the optimizer upcasts one. A loop a reshape split for v
  // counts as its parts, innermost first (a Winograd output transform's first pass does not
  // depend on the column within a tile, which the kernel storing channel blocks loops over
  // outside the channels it reads).
  double evals(const View& v) const {
    int l = deepest(v.axis_loop);
    if (l < 0) return 1.0;
    const Loop& at = loops_[static_cast<size_t>(l)];
    if (at.in_reduce || reducing_.count(v.kernel)) {
      // In a kernel with a reduction, a loop a reshape split counts whole: its register tile
      // takes output loops apart, and no upcast of the innermost part shares work the outer one
      // reads (a Winograd output transform's first pass beside a 1x1 convolution's reduction
      // spilled on a GPU).
      std::vector<int> wholes;
      for (int a : v.axis_loop) {
        while (a >= 0 && loops_[static_cast<size_t>(a)].split_from >= 0) a = loops_[static_cast<size_t>(a)].split_from;
        wholes.push_back(a);
      }
      return loops_[static_cast<size_t>(deepest(wholes))].trips;
    }
    auto shared = [&](int a) { return !reads(v, a) && loops_[static_cast<size_t>(a)].size <= kSharedWorkLoop; };
    for (int a = l; a >= 0; a = loops_[static_cast<size_t>(a)].parent) {
      int part = split_part(v, a, false), p = part >= 0 ? loops_[static_cast<size_t>(part)].split_inner : a;
      for (; p >= 0 && (p == a || loops_[static_cast<size_t>(p)].split_from == a);
           p = loops_[static_cast<size_t>(p)].parent)
        if (shared(p)) return at.trips / static_cast<double>(loops_[static_cast<size_t>(p)].size);
    }
    return at.trips;
  }

  // A kernel storing u: one loop per axis of size > 1, outermost first.
  View root_view(const UOp& u) {
    View v{mix(0x5EED, u.id()), static_cast<int>(u.id()), {}, false, {}};
    int parent = -1;
    for (int64_t d : shape(u)) {
      if (d > 1) parent = new_loop(parent, d, false);
      v.axis_loop.push_back(d > 1 ? parent : -1);
    }
    return v;
  }

  // How source i of u is read, given how u is read.
  View source_view(const UOp& u, const View& v, size_t i) {
    const UOp& s = *u.src(i);
    const Shape& ss = shape(s);
    if (is_elementwise(u.op()))
      return {v.sig, v.kernel, ss.empty() ? std::vector<int>{} : v.axis_loop, v.tiled, v.merged};
    View out{mix(v.sig, u.id() * 8 + i), v.kernel, std::vector<int>(ss.size(), -1),
             op_has(u.op(), kMovement) && v.tiled, v.merged};
    // A movement op's other sources are its symbolic sizes and a pad's value: scalars.
    if (i > 0 && u.op() != Ops::GATHER && u.op() != Ops::ATTENTION) return out;
    const Shape& us = shape(u);
    switch (u.op()) {
      case Ops::EXPAND:
        for (size_t a = 0; a < ss.size(); ++a) out.axis_loop[a] = ss[a] == 1 && us[a] != 1 ? -1 : v.axis_loop[a];
        break;
      case Ops::PERMUTE: {
        const auto& order = u.arg_as<std::vector<int64_t>>();
        for (size_t a = 0; a < order.size(); ++a) out.axis_loop[static_cast<size_t>(order[a])] = v.axis_loop[a];
        break;
      }
      case Ops::RESHAPE:
        for (const auto& [go, gs] : reshape_groups(us, ss)) {
          std::vector<int> in_group;
          for (size_t a : go) in_group.push_back(v.axis_loop[a]);
          int l = deepest(in_group);
          // One loop, read by this axis alone, split into several axes whose sizes multiply to the
          // loop's: as the lowering splits it (ir/split_loops), a loop per axis, each inside the
          // one before, where the whole hung (the loops inside the whole stay inside it: evals
          // reads the whole as read where a part is).
          int64_t whole = 1;
          size_t parts = 0;
          for (size_t b : gs) whole *= ss[b], parts += ss[b] > 1;
          bool own = std::count(v.axis_loop.begin(), v.axis_loop.end(), l) == 1 &&
                     std::find(v.merged.begin(), v.merged.end(), l) == v.merged.end();  // no other axis reads it
          if (l >= 0 && own && parts > 1 && whole == loops_[static_cast<size_t>(l)].size &&
              std::count_if(go.begin(), go.end(), [&](size_t a) { return us[a] > 1; }) == 1) {
            int parent = loops_[static_cast<size_t>(l)].parent;
            bool reduce = loops_[static_cast<size_t>(l)].in_reduce;
            for (size_t b : gs) out.axis_loop[b] = ss[b] > 1 ? parent = new_loop(parent, ss[b], reduce, l) : -1;
            for (size_t b : gs)
              if (ss[b] > 1) loops_[static_cast<size_t>(out.axis_loop[b])].split_inner = parent;
            continue;
          }
          for (size_t b : gs) out.axis_loop[b] = ss[b] > 1 ? l : -1;
          for (int m : in_group)
            if (m >= 0 && m != l) out.merged.push_back(m);
        }
        break;
      case Ops::PAD:
      case Ops::SHRINK:
      case Ops::FLIP: out.axis_loop = v.axis_loop; break;
      case Ops::REDUCE_AXIS: {
        out.axis_loop = v.axis_loop;
        int parent = deepest(v.axis_loop);
        reducing_.insert(v.kernel);
        for (int64_t a : u.arg_as<ReduceArg>().axes) {
          auto ax = static_cast<size_t>(a);
          out.axis_loop[ax] = -1;
          if (ss[ax] > 1) out.axis_loop[ax] = parent = new_loop(parent, ss[ax], true);
        }
        break;
      }
      case Ops::GATHER:
        out.axis_loop = v.axis_loop;
        if (i == 0) out.axis_loop[static_cast<size_t>(u.arg_as<int64_t>())] = deepest(v.axis_loop);
        break;
      case Ops::ATTENTION: {
        // The scores once per (..., query, key), the key loop inside the query's (the kernel keeps
        // every value position of a query in registers); the values once per query too.
        size_t last = ss.size() - 1, keys = i == 0 ? last : last - 1;
        reducing_.insert(v.kernel);
        out.axis_loop = v.axis_loop;
        std::vector<int> around = v.axis_loop;
        if (i == 0) around[last] = -1;  // the scores do not depend on the value position
        out.axis_loop[keys] = ss[keys] > 1 ? new_loop(deepest(around), ss[keys], true) : -1;
        out.tiled = i == 0;
        break;
      }
      default: break;
    }
    return out;
  }

  void propagate(const UOp& u, const View& v, std::unordered_map<const UOp*, NodeViews>& into) {
    for (size_t i = 0; i < u.src().size(); ++i) {
      const UOp& s = *u.src(i);
      if (is_leaf(s.op()) || stored(s)) continue;
      NodeViews& nv = into[&s];
      if (nv.overflow) continue;
      View sv = source_view(u, v, i);
      if (std::any_of(nv.views.begin(), nv.views.end(), [&](const View& w) { return w.sig == sv.sig; })) continue;
      if (nv.views.size() == kMaxViews) {
        nv.overflow = true;
        nv.views.clear();
        continue;
      }
      nv.views.push_back(std::move(sv));
    }
  }

  // The cost of one evaluation of u itself (its sources not included).
  double unit_cost(const UOp& u) const {
    switch (u.op()) {
      case Ops::EXP2:
      case Ops::LOG2:
      case Ops::SIN:
      case Ops::POW: return p_.transcendental;
      case Ops::CAST: return p_.alu;
      case Ops::GATHER: return p_.pad_gate;
      case Ops::PAD: {
        double axes = 0;
        if (u.src().size() > 2) {
          for (size_t a = 0; 2 + 2 * a + 1 < u.src().size(); ++a)
            axes += !(u.src(2 + 2 * a)->is_const() && const_as_int(u.src(2 + 2 * a)->const_value()) == 0 &&
                      u.src(3 + 2 * a)->is_const() && const_as_int(u.src(3 + 2 * a)->const_value()) == 0);
        } else {
          const auto& pad = u.arg_as<std::vector<int64_t>>();
          for (size_t a = 0; a + 1 < pad.size(); a += 2) axes += pad[a] != 0 || pad[a + 1] != 0;
        }
        return p_.pad_gate * axes;
      }
      case Ops::RESHAPE: {
        double splits = 0;
        const Shape& src = shape(*u.src(0));
        for (const auto& [go, gs] : reshape_groups(shape(u), src)) {
          auto big = [](const Shape& sh, const std::vector<size_t>& axes) {
            return std::count_if(axes.begin(), axes.end(), [&](size_t a) { return sh[a] > 1; });
          };
          auto outs = big(shape(u), go), ins = big(src, gs);
          if (ins > 1) splits += static_cast<double>(outs == 1 ? ins - 1 : ins);
        }
        return p_.div_mod * splits;
      }
      default: return is_alu(u.op()) ? p_.alu : 0.0;
    }
  }

  // The cost of one evaluation of u's fused subgraph, per element of u; stops (returning
  // infinity) once it exceeds `limit`.
  double cost_per_element(const UOp& u, double limit) {
    size_t saved_loops = loops_.size();
    double n = numel(shape(u)), budget = limit * n, total = 0;
    std::unordered_set<uint64_t> seen;
    std::vector<std::pair<const UOp*, View>> stack{{&u, root_view(u)}};
    while (!stack.empty() && total <= budget) {
      auto [x, v] = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(mix(v.sig, reinterpret_cast<uintptr_t>(x))).second) continue;
      if (seen.size() > kMaxCostWalk) total = std::numeric_limits<double>::infinity();
      double e = evals(v);
      if (x != &u && (x->op() == Ops::BUFFER || stored(*x))) {
        total += p_.load * e;
        continue;
      }
      if (is_leaf(x->op())) continue;
      total += unit_cost(*x) * e;
      for (size_t i = 0; i < x->src().size(); ++i) {
        View sv = source_view(*x, v, i);
        if (x->op() == Ops::REDUCE_AXIS) total += p_.alu * evals(sv);  // the accumulate
        stack.emplace_back(x->src(i).get(), std::move(sv));
      }
    }
    loops_.resize(saved_loops);
    return total > budget ? std::numeric_limits<double>::infinity() : total / n;
  }

  // Store u iff E*c*speed_fused > n*c*speed_alone + n*S + E*L + K. The speeds are 1 except for a
  // contraction, which runs at the optimizer's speed in a kernel of its own, and in its reader's
  // kernel only when it is that kernel's only contraction, read once and not inside another
  // reduction's loop.
  bool worth_storing(const UOp& u, const NodeViews& nv) {
    if (nv.overflow) return true;
    double n = numel(shape(u));
    if (n == 0) return false;
    double e = 0;
    for (const View& v : nv.views) e += evals(v);
    double alone = 1, fused = 1;
    if (is_contraction(u) && nv.views.size() == 1 && nv.views.front().tiled) {
      alone = fused = p_.optimized;  // an attention kernel's scores: it tiles them itself
    } else if (is_contraction(u) && numel(shape(*u.src(0))) >= p_.optimized_min) {
      alone = p_.optimized;
      const View& v = nv.views.front();
      int placed = deepest(v.axis_loop);
      bool nested = placed >= 0 && loops_[static_cast<size_t>(placed)].in_reduce;
      if (nv.views.size() == 1 && !nested && !contractions_.count(v.kernel)) fused = p_.optimized;
    }
    double extra = e * fused - n * alone;  // c's multiplier
    if (extra <= n * 1e-9) {
      note_fused(u, nv);
      return false;
    }
    // The kernel price excuses recomputation only up to half of u's own work (K becomes
    // min(K, c*n/2)): for a small tensor a kernel launch outweighs any arithmetic, yet fusion must
    // never add more than half of a node's work, whatever the tensor's size.
    double limit = (n * p_.store + e * p_.load + p_.kernel) / extra;
    double c = cost_per_element(u, limit);
    if (c > limit || c * extra > n * p_.store + e * p_.load + 0.5 * c * n) return true;
    note_fused(u, nv);
    return false;
  }

  void note_fused(const UOp& u, const NodeViews& nv) {
    if (!is_contraction(u)) return;
    for (const View& v : nv.views) contractions_.insert(v.kernel);
  }

  const std::unordered_map<const UOp*, Shape>& shapes_;
  std::unordered_map<const UOp*, bool>& realized_;
  FusionPrices p_;
  std::vector<Loop> loops_;
  std::unordered_map<const UOp*, NodeViews> views_;
  std::unordered_set<int> reducing_;      // kernels (by stored node) seen to hold a reduction
  std::unordered_set<int> contractions_;  // kernels (by stored node) that have fused a contraction
};

}  // namespace

bool is_stored(const UOp& u, const UOp* root, const std::unordered_map<const UOp*, bool>& realized) {
  if (u.op() == Ops::BUFFER) return true;
  auto it = realized.find(&u);
  return &u != root && it != realized.end() && it->second;
}

bool is_computed(const UOp& u) {
  if (u.dtype() == dtypes::index) return false;  // a symbolic size, not data
  return is_alu(u.op()) || u.op() == Ops::CAST || u.op() == Ops::BITCAST || u.op() == Ops::REDUCE_AXIS || u.op() == Ops::GATHER ||
         u.op() == Ops::ATTENTION;
}

void choose_realized(const std::vector<UOpPtr>& order, const std::unordered_map<const UOp*, Shape>& shapes,
                     std::unordered_map<const UOp*, bool>& realized, const FusionPrices& prices) {
  Decider(shapes, realized, prices).run(order);
}

}  // namespace lathe
