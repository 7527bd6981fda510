#include "codegen/expand.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "codegen/half_arithmetic.hpp"
#include "codegen/transpose.hpp"
#include "ir/alu.hpp"
#include "ir/axis.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

UOpPtr at(const UOpPtr& x, const UOpPtr& r, int64_t i) { return simplify(substitute(x, {{r.get(), UOp::index_const(i)}})); }

// x copied once per position of each range of `rs`.
std::vector<UOpPtr> copies(const UOpPtr& x, const std::vector<UOpPtr>& rs) {
  std::vector<UOpPtr> out{x};
  for (const UOpPtr& r : rs) {
    std::vector<UOpPtr> next;
    for (const UOpPtr& c : out)
      for (int64_t i = 0; i < r->src(0)->vmax(); ++i) next.push_back(at(c, r, i));
    out = std::move(next);
  }
  return out;
}

// The vectors a register tile keeps live while its copies run in the order of `rs` (the first
// varying slowest): its accumulators, every operand of the faster axes (each reused on every
// position of the slowest), and the slowest axis's current one.
int64_t live_vectors(const std::vector<UOpPtr>& rs) {
  int64_t accumulators = 1, faster = 1;
  for (size_t i = 0; i < rs.size(); ++i) {
    accumulators *= rs[i]->src(0)->vmax();
    if (i > 0) faster *= rs[i]->src(0)->vmax();
  }
  return accumulators + faster + 1;
}

// The register axes of `store` (`rs`) in the order its copies are listed: as they come, unless
// that keeps more vectors live than `registers` holds and the largest axis slowest keeps fewer,
// for a store of a reduction where every load its reductions read varies with at most one of them (a matmul's rows of A
// and vectors of B; a depthwise convolution's input, read per pixel and channel, keeps its order).
// A 6 x 2 tile on 16 registers, listed vector by vector, keeps the 6 rows' broadcasts live
// across both vectors: 12 + 6 + 1 vectors, and the innermost loop spills; row by row each
// broadcast dies after its two multiply-adds: 12 + 2 + 1.
std::vector<UOpPtr> copy_order(const UOpPtr& store, std::vector<UOpPtr> rs, int registers) {
  if (registers <= 0 || rs.size() < 2 || live_vectors(rs) <= registers) return rs;
  std::vector<UOpPtr> sorted = rs;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const UOpPtr& a, const UOpPtr& b) { return a->src(0)->vmax() > b->src(0)->vmax(); });
  if (live_vectors(sorted) >= live_vectors(rs)) return rs;
  bool reduces = false;  // the count is a register tile's: accumulators over a reduction
  for (const UOpPtr& red : toposort(store)) {
    if (red->op() != Ops::REDUCE) continue;
    reduces = true;
    for (const UOpPtr& u : toposort(red->src(0)))
      if (u->op() == Ops::LOAD &&
          std::count_if(rs.begin(), rs.end(), [&](const UOpPtr& r) { return varies_with(u, r.get()); }) > 1)
        return rs;
  }
  return reduces ? sorted : rs;
}

// ---- unrolling --------------------------------------------------------------------------------

struct Unrolled {
  const UOp* vector_axis;
};

// A reduction over register axes (other than the vector axis) combines its copies in the body.
UOpPtr unroll_reduce(const Match& m) {
  const UOpPtr& red = m.root();
  const auto& ctx = m.ctx<const Unrolled>();
  std::vector<UOpPtr> unroll, keep;
  for (size_t i = 1; i < red->src().size(); ++i) {
    const UOpPtr& r = red->src(i);
    (is_register_range(*r) && r.get() != ctx.vector_axis ? unroll : keep).push_back(r);
  }
  if (unroll.empty()) return nullptr;
  // 16-bit floats combine in float, as their accumulators do.
  DType d = red->dtype(), acc = accumulator_dtype(d);
  std::vector<UOpPtr> parts = copies(red->src(0), unroll);
  if (acc != d)
    for (UOpPtr& p : parts) p = cast(p, acc);
  UOpPtr body = combine(red->arg_as<Ops>(), std::move(parts));
  if (!keep.empty()) {
    std::vector<UOpPtr> src{body};
    src.insert(src.end(), keep.begin(), keep.end());
    body = UOp::make(Ops::REDUCE, acc, std::move(src), red->arg());
  }
  return acc != d ? cast(body, d) : body;
}

}  // namespace

// A vector's lanes are combined by halving it: its upper half combined with its lower half as
// vectors of half the width (a shuffle and one vector op a step), down to two lanes.
UOpPtr fold_lanes(Ops op, UOpPtr r) {
  if (r->dtype().count() == 1) return r;
  auto lane = [](const UOpPtr& v, int i) { return UOp::make(Ops::GEP, v->dtype().scalar(), {v}, int64_t{i}); };
  for (int w = r->dtype().count(); w > 2 && w % 2 == 0; w /= 2) {
    std::vector<UOpPtr> lo, hi;
    for (int i = 0; i < w / 2; ++i) {
      lo.push_back(lane(r, i));
      hi.push_back(lane(r, w / 2 + i));
    }
    DType half = r->dtype().scalar().vec(w / 2);
    r = UOp::alu(op, {UOp::make(Ops::VECTORIZE, half, std::move(lo)), UOp::make(Ops::VECTORIZE, half, std::move(hi))});
  }
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < r->dtype().count(); ++i) lanes.push_back(lane(r, i));
  return combine(op, std::move(lanes));
}

namespace {

// ---- vectorizing ------------------------------------------------------------------------------

class Vectorizer {
 public:
  Vectorizer(const UOpPtr& axis) : v_(axis), w_(static_cast<int>(axis->src(0)->vmax())) {
    std::vector<UOpPtr> lanes;
    for (int i = 0; i < w_; ++i) lanes.push_back(UOp::index_const(i));
    lanes_ = UOp::make(Ops::VECTORIZE, dtypes::index.vec(w_), std::move(lanes));
  }

  // `u` vectorized along the axis (a reduction over it: one value, its lanes combined).
  UOpPtr value(const UOpPtr& u) { return vec(u); }

  std::vector<UOpPtr> store(const UOpPtr& st) {
    if (!dep(st)) return {st};
    const UOpPtr& idx = st->src(0);
    const UOpPtr &buf = idx->src(0), &off = idx->src(1);
    UOpPtr gate = idx->src().size() == 3 ? idx->src(2) : nullptr;
    UOpPtr value = vec(st->src(1));
    if (UOpPtr o = vec(off), g = gate ? vec(gate) : nullptr; !is_vector(value) && !is_vector(o) && !(g && is_vector(g)))
      return {UOp::make(Ops::STORE, dtypes::void_, {index(idx, o, g), value})};
    if (whole_vector(buf->dtype().base(), off, gate)) {
      UOpPtr slot = index(idx, at(off, v_, 0), lane_gate(gate));
      return {UOp::make(Ops::STORE, dtypes::void_, {slot, broadcast(value)})};
    }
    std::vector<UOpPtr> out;
    for (int i = 0; i < w_; ++i)
      out.push_back(UOp::make(Ops::STORE, dtypes::void_, {index(idx, at(off, v_, i), gate ? at(gate, v_, i) : nullptr), lane(value, i)}));
    return out;
  }

  // A register axis of `rs` whose positions go through tiles transposed in registers (in windows
  // of up to a vector's width): one along which `st` stores contiguously while it does not along
  // the vector axis (a convolution's channels in lanes, its pixels in rows: `stores`), else one
  // along which some load of the stored value does (a residual read as (N, C, H, W) by a kernel
  // storing channel blocks). Null when none.
  struct Across {
    UOpPtr axis;
    bool stores = false;
  };
  Across transpose_axis(const UOpPtr& st, const std::vector<UOpPtr>& rs) {
    std::vector<UOpPtr> loads;
    for (const UOpPtr& u : toposort(st->src(1)))
      if (u->op() == Ops::LOAD) loads.push_back(u);
    for (bool stores : {true, false})
      for (const UOpPtr& r : rs) {
        if (r->src(0)->vmax() < 2) continue;
        bool fits = stores ? dep(st->src(1)) && transposable(st, r)
                           : std::any_of(loads.begin(), loads.end(), [&](const UOpPtr& u) { return transposable(u, r); });
        if (fits) return {r, stores};
      }
    return {};
  }

  // `st` once per position of `r` (from transpose_axis), its loads along `r` read as transposed
  // tiles (transposed_load). With `stores`, the positions' values are transposed in windows (as
  // transposed_load takes them) so that each lane of the vector axis stores a window's positions
  // as one vector: a last window overlapping the one before stores its shared positions twice,
  // with the same values (7 pixels: 0..3 and 3..6). Otherwise (and for a single position) each
  // position is stored as store() makes it.
  std::vector<UOpPtr> transposed(const UOpPtr& st, const UOpPtr& r, bool stores) {
    int n = static_cast<int>(r->src(0)->vmax()), b = window(n);
    for (const UOpPtr& u : toposort(st->src(1)))
      if (u->op() == Ops::LOAD && transposable(u, r)) transposed_load(u, r, n);
    std::vector<UOpPtr> out;
    if (!stores || b == 1) {
      for (int j = 0; j < n; ++j)
        for (const UOpPtr& one : store(at(st, r, j))) out.push_back(one);
      return out;
    }
    for (int first = 0; first < n; first += b) {
      int start = std::min(first, n - b);
      std::vector<UOpPtr> rows;
      for (int j = start; j < start + b; ++j) rows.push_back(broadcast(vec(at(st, r, j)->src(1))));
      std::vector<UOpPtr> columns = rows_to_columns(rows);
      for (int l = 0; l < w_; ++l) out.push_back(UOp::make(Ops::STORE, dtypes::void_, {run(st, r, start, l), columns[l]}));
    }
    return out;
  }

 private:
  // Whether the access through `idx` is strided along the vector axis and contiguous along `r`,
  // under a gate the same for all of `r`'s positions (it may differ from lane to lane: a weight
  // of 1000 rows copied to blocks of 16 reads rows 992..999 in the last block's first 8 lanes
  // only), of a type kept whole in vectors.
  bool transposable(const UOpPtr& access, const UOpPtr& r) {
    const UOpPtr& idx = access->src(0);
    DType elem = idx->src(0)->dtype().base();
    UOpPtr gate = idx->src().size() == 3 ? idx->src(2) : nullptr;
    if (elem.is_bool() || is_16bit_float(elem) || (gate && varies_with(gate, r.get()))) return false;
    return dep(idx->src(1)) && step_along(idx->src(1), v_) != 1 && step_along(idx->src(1), r) == 1;
  }

  // The load `u` at each of `r`'s `n` positions (a residual a convolution adds, in the layout its
  // stores have; a weight's taps copied to channel blocks): in windows of the largest power of
  // two `b` <= n positions, each lane's window read as one vector and transposed into one vector
  // per position, remembered as the vectorized value of that position's copy of `u`. The positions
  // past the last whole window come from one more window that ends at n and overlaps the one
  // before (9 taps: 0..7, then 1..8 for tap 8), so no position is read lane by lane.
  void transposed_load(const UOpPtr& u, const UOpPtr& r, int n) {
    int b = window(n);
    if (b == 1) return;  // one position: load() reads it
    for (int first = 0; first < n; first += b) {
      int start = std::min(first, n - b);
      std::vector<UOpPtr> columns;
      for (int l = 0; l < w_; ++l) columns.push_back(UOp::make(Ops::LOAD, u->dtype().vec(b), {run(u, r, start, l)}));
      std::vector<UOpPtr> rows = columns_to_rows(columns);
      for (int j = first; j < std::min(first + b, n); ++j) memo_[at(u, r, j)] = rows[static_cast<size_t>(j - start)];
    }
  }

  // The INDEX of `access` (strided along the vector axis, contiguous along `r`) at lane `l` and
  // position `first` of `r`: where that lane's run of positions starts, under that lane's gate.
  UOpPtr run(const UOpPtr& access, const UOpPtr& r, int first, int l) {
    const UOpPtr& idx = access->src(0);
    UOpPtr gate = idx->src().size() == 3 ? idx->src(2) : nullptr;
    if (gate && dep(gate)) gate = at(gate, v_, l);
    if (gate == UOp::const_(dtypes::bool_, true)) gate = nullptr;
    return index(idx, at(at(idx->src(1), r, first), v_, l), gate);
  }

  // The positions a transposed window holds: the largest power of two up to n and up to the
  // vector's width (a tile is at most as many rows as it has lanes: 16 pixels of 8 channels are two
  // windows of 8).
  int window(int n) const {
    int b = 1;
    while (b * 2 <= std::min(n, w_)) b *= 2;
    return b;
  }

  bool dep(const UOpPtr& u) {
    if (auto it = dep_.find(u); it != dep_.end()) return it->second;
    bool d = u == v_;
    for (const UOpPtr& s : u->src()) d = d || dep(s);
    dep_.emplace(u, d);
    return d;
  }

  static bool is_vector(const UOpPtr& u) { return u->dtype().count() > 1; }

  UOpPtr broadcast(const UOpPtr& s) const {
    if (is_vector(s)) return s;
    return UOp::make(Ops::VECTORIZE, s->dtype().vec(w_), std::vector<UOpPtr>(static_cast<size_t>(w_), s));
  }

  static UOpPtr lane(const UOpPtr& v, int i) {
    return v->dtype().count() > 1 ? UOp::make(Ops::GEP, v->dtype().scalar(), {v}, int64_t{i}) : v;
  }

  static UOpPtr index(const UOpPtr& idx, const UOpPtr& off, const UOpPtr& gate) {
    std::vector<UOpPtr> src{idx->src(0), off};
    if (gate) src.push_back(gate);
    return UOp::make(Ops::INDEX, idx->dtype(), std::move(src));
  }

  // Whether the access at `off` is one vector: contiguous along the axis, under a gate the same for
  // every lane, of a type kept whole in vectors.
  bool whole_vector(DType elem, const UOpPtr& off, const UOpPtr& gate) {
    if (!plain_lanes(elem) || (gate && !same_on_every_lane(gate))) return false;
    return step_along(off, v_) == 1;
  }

  // Elements kept whole in vectors (bools are bytes in memory, 16-bit floats are widened).
  static bool plain_lanes(DType elem) { return !elem.is_bool() && !is_16bit_float(elem); }

  // Whether `gate` has one value on all lanes: it does not read the vector axis, or each of its
  // clauses that does moves one way along the axis (`x < c` with x linear in it) and reads the same
  // at the first and the last lane (`16q + l < 186624` is `q < 11664` for every lane l < 16).
  bool same_on_every_lane(const UOpPtr& gate) {
    for (const UOpPtr& leaf : and_leaves(gate)) {
      if (!dep(leaf)) continue;
      std::optional<GateClause> c = as_clause(leaf);
      if (!c || dep(c->bound) || !step_along(c->x, v_) || at(leaf, v_, 0) != at(leaf, v_, w_ - 1)) return false;
    }
    return true;
  }

  // The gate of a whole-vector access, read at its first lane.
  UOpPtr lane_gate(const UOpPtr& gate) { return gate && dep(gate) ? at(gate, v_, 0) : gate; }

  UOpPtr vec(const UOpPtr& u) {
    if (!dep(u)) return u;
    if (auto it = memo_.find(u); it != memo_.end()) return it->second;
    UOpPtr out;
    if (u == v_) out = lanes_;
    else if (u->op() == Ops::LOAD) out = load(u);
    else if (u->op() == Ops::REDUCE) out = reduce(u);
    else if (is_alu(u->op()) || u->op() == Ops::CAST || u->op() == Ops::BITCAST) out = elementwise(u);
    else throw InternalError("cannot vectorize " + to_string(*u));
    memo_.emplace(u, out);
    return out;
  }

  UOpPtr load(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    const UOpPtr& off = idx->src(1);
    UOpPtr gate = idx->src().size() == 3 ? idx->src(2) : nullptr;
    if (UOpPtr o = vec(off), g = gate ? vec(gate) : nullptr; !is_vector(o) && !(g && is_vector(g)))
      return UOp::make(Ops::LOAD, u->dtype(), {index(idx, o, g)});
    if (whole_vector(u->dtype(), off, gate)) return UOp::make(Ops::LOAD, u->dtype().vec(w_), {index(idx, at(off, v_, 0), lane_gate(gate))});
    // Contiguous under a gate that differs by lane (a padded row's edge): one vector load of the
    // lanes whose gate holds, zero in the others (the renderers spell it as a masked load).
    if (gate && plain_lanes(u->dtype()) && step_along(off, v_) == 1)
      return UOp::make(Ops::LOAD, u->dtype().vec(w_), {index(idx, at(off, v_, 0), broadcast(vec(gate)))});
    std::vector<UOpPtr> lanes;
    for (int i = 0; i < w_; ++i) lanes.push_back(UOp::make(Ops::LOAD, u->dtype(), {index(idx, at(off, v_, i), gate ? at(gate, v_, i) : nullptr)}));
    return UOp::make(Ops::VECTORIZE, u->dtype().vec(w_), std::move(lanes));
  }

  // A reduction of vectors keeps a vector accumulator; one over the vector axis itself then
  // combines its lanes (and its result is one scalar). 16-bit floats accumulate in float.
  UOpPtr reduce(const UOpPtr& u) {
    Ops op = u->arg_as<Ops>();
    DType d = u->dtype(), acc = accumulator_dtype(d);
    UOpPtr x = vec(u->src(0));
    bool over_axis = std::find(u->src().begin() + 1, u->src().end(), v_) != u->src().end();
    if (over_axis) x = broadcast(x);
    if (acc != d) x = convert(x, is_vector(x) ? acc.vec(w_) : acc);
    std::vector<UOpPtr> src{x};
    for (size_t i = 1; i < u->src().size(); ++i)
      if (u->src(i) != v_) src.push_back(u->src(i));
    UOpPtr r = src.size() == 1 ? x : UOp::make(Ops::REDUCE, x->dtype(), std::move(src), op);
    if (over_axis) r = fold_lanes(op, r);
    return acc != d ? convert(r, is_vector(r) ? d.vec(w_) : d) : r;
  }

  // A cast of a vector: whole when the target can, else lane by lane.
  UOpPtr convert(const UOpPtr& x, DType to) {
    if (!is_vector(x)) return cast(x, to);
    if (!is_16bit_float(x->dtype()) && !is_16bit_float(to)) return UOp::make(Ops::CAST, to, {x});
    std::vector<UOpPtr> lanes;
    for (int i = 0; i < w_; ++i) lanes.push_back(cast(lane(x, i), to.scalar()));
    return UOp::make(Ops::VECTORIZE, to, std::move(lanes));
  }

  static bool per_lane(const UOp& u) {
    switch (u.op()) {
      case Ops::SQRT:
      case Ops::POW:
      case Ops::EXP2:
      case Ops::LOG2:
      case Ops::SIN: return true;
      case Ops::CAST:
      case Ops::BITCAST: return is_16bit_float(u.dtype()) || is_16bit_float(u.src(0)->dtype());
      default: return false;
    }
  }

  UOpPtr elementwise(const UOpPtr& u) {
    std::vector<UOpPtr> src;
    bool any_vector = false;
    for (const UOpPtr& s : u->src()) {
      src.push_back(vec(s));
      any_vector = any_vector || is_vector(src.back());
    }
    // Only a reduction over the axis made this depend on it: the value is the same in every lane.
    if (!any_vector) return UOp::make(u->op(), u->dtype(), std::move(src), u->arg());
    if (per_lane(*u)) {
      std::vector<UOpPtr> lanes;
      for (int i = 0; i < w_; ++i) {
        std::vector<UOpPtr> ls;
        for (const UOpPtr& s : src) ls.push_back(lane(s, i));
        lanes.push_back(UOp::make(u->op(), u->dtype(), std::move(ls), u->arg()));
      }
      return UOp::make(Ops::VECTORIZE, u->dtype().vec(w_), std::move(lanes));
    }
    for (UOpPtr& s : src) s = broadcast(s);
    if (u->op() == Ops::TRUNC && u->dtype().is_float()) return trunc(src[0], u->dtype());
    return UOp::make(u->op(), u->dtype().vec(w_), std::move(src), u->arg());
  }

  // trunc(x) on float lanes: a conversion to integers and back, exact below 2^23 (2^52 for
  // float64), where every larger float is whole already.
  UOpPtr trunc(const UOpPtr& x, DType d) {
    bool dbl = d.scalar() == dtypes::float64;
    DType ints = (dbl ? dtypes::int64 : dtypes::int32).vec(w_), vd = d.vec(w_);
    UOpPtr whole = UOp::make(Ops::CAST, vd, {UOp::make(Ops::CAST, ints, {x})});
    UOpPtr big = broadcast(UOp::const_(d.scalar(), dbl ? 4503599627370496.0 : 8388608.0));
    UOpPtr magnitude = UOp::alu(Ops::MAX, {x, UOp::alu(Ops::NEG, {x})});
    return UOp::alu(Ops::WHERE, {UOp::alu(Ops::CMPLT, {magnitude, big}), whole, x});
  }

  UOpPtr v_;
  int w_;
  UOpPtr lanes_;
  // Keyed by the node itself, not its address: a copy made here and freed could otherwise leave
  // its address to a new node that would hit its entry.
  std::unordered_map<UOpPtr, bool> dep_;
  std::unordered_map<UOpPtr, UOpPtr> memo_;
};

// The axis whose positions become vector lanes: the first register axis the optimizer made (the
// smallest axis id) of a power-of-two size up to `max_lanes` along which some load or store is
// contiguous.
UOpPtr pick_vector_axis(const UOpPtr& ast, int max_lanes) {
  std::vector<UOpPtr> regs;
  for (const UOpPtr& u : toposort(ast))
    if (is_register_range(*u)) regs.push_back(u);
  std::sort(regs.begin(), regs.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
  for (const UOpPtr& r : regs) {
    int64_t n = r->src(0)->vmax();
    if (n < 2 || n > max_lanes || (n & (n - 1)) != 0) continue;
    for (const UOpPtr& u : toposort(ast))
      if ((u->op() == Ops::LOAD || u->op() == Ops::STORE) && step_along(u->src(0)->src(1), r) == 1) return r;
  }
  return nullptr;
}

// Whether `u` is a reduction over the loop `axis`.
bool reduces_over(const UOp& u, const UOpPtr& axis) {
  return u.op() == Ops::REDUCE && std::find(u.src().begin() + 1, u.src().end(), axis) != u.src().end();
}

// A second vector axis for what a kernel stores after a reduction along its vector axis: a register
// axis other than `reduced` (a power of two up to `max_lanes`) along which some store is
// contiguous and which no reduction over `reduced` varies with (softmax's exp(x - max) stored
// along the row whose max was reduced in vectors). Null when none.
UOpPtr pick_tail_axis(const UOpPtr& ast, const UOpPtr& reduced, int max_lanes) {
  std::vector<UOpPtr> nodes = toposort(ast), reductions;
  for (const UOpPtr& u : nodes)
    if (reduces_over(*u, reduced)) reductions.push_back(u);
  if (reductions.empty()) return nullptr;
  for (const UOpPtr& r : nodes) {
    if (!is_register_range(*r) || r == reduced) continue;
    int64_t n = r->src(0)->vmax();
    if (n < 2 || n > max_lanes || (n & (n - 1)) != 0) continue;
    if (std::any_of(reductions.begin(), reductions.end(), [&](const UOpPtr& red) { return varies_with(red, r.get()); })) continue;
    for (const UOpPtr& st : ast->src())
      if (st->op() == Ops::STORE && step_along(st->src(0)->src(1), r) == 1) return r;
  }
  return nullptr;
}

}  // namespace

UOpPtr vectorize_along(const UOpPtr& value, const UOpPtr& axis) { return Vectorizer(axis).value(value); }

std::vector<UOpPtr> vectorize_store(const UOpPtr& store, const UOpPtr& axis) { return Vectorizer(axis).store(store); }

UOpPtr expand_upcasts(const UOpPtr& ast, int max_lanes, int registers) {
  std::vector<UOpPtr> regs;
  for (const UOpPtr& u : toposort(ast))
    if (is_register_range(*u)) regs.push_back(u);
  if (regs.empty()) return ast;
  UOpPtr vector_axis = pick_vector_axis(ast, max_lanes);
  Unrolled ctx{vector_axis.get()};
  static const PatternMatcher reduces({{UPat(Ops::REDUCE), unroll_reduce}});
  UOpPtr unrolled = graph_rewrite(ast, reduces, &ctx);
  // Reductions along the vector axis that the stores use as scalars: each is vectorized along
  // it on its own (its lanes combined into one value), and the stores along the tail axis.
  if (UOpPtr tail = vector_axis ? pick_tail_axis(unrolled, vector_axis, max_lanes) : nullptr) {
    Vectorizer inner(vector_axis);
    Substitution reduced;
    for (const UOpPtr& u : toposort(unrolled))
      if (reduces_over(*u, vector_axis)) reduced.emplace(u.get(), inner.value(u));
    unrolled = substitute(unrolled, reduced);
    vector_axis = tail;
  }
  std::optional<Vectorizer> vz;
  if (vector_axis) vz.emplace(vector_axis);
  std::vector<UOpPtr> stores;
  for (const UOpPtr& st : unrolled->src()) {
    std::vector<UOpPtr> rs;
    for (const UOpPtr& r : regs)
      if (r != vector_axis && varies_with(st, r.get())) rs.push_back(r);
    Vectorizer::Across across = vz ? vz->transpose_axis(st, rs) : Vectorizer::Across{};
    if (across.axis) rs.erase(std::find(rs.begin(), rs.end(), across.axis));
    for (const UOpPtr& c : copies(st, copy_order(st, rs, registers))) {
      std::vector<UOpPtr> done = across.axis ? vz->transposed(c, across.axis, across.stores) : vz ? vz->store(c) : std::vector<UOpPtr>{c};
      stores.insert(stores.end(), done.begin(), done.end());
    }
  }
  return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
}

}  // namespace lathe
