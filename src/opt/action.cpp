#include "opt/action.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "ir/alu.hpp"
#include "ir/axis.hpp"
#include "ir/step.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "opt/tensor_core.hpp"

namespace lathe {
namespace {

constexpr const char* kNames[] = {"UPCAST", "UNROLL", "TILE", "PADTO", "SWAP", "THREAD", "GROUP", "TC", "LOCAL"};

std::string describe(const Loop& l) {
  return "loop " + std::to_string(l.axis) + " (" + (l.reduce ? "a reduction's, " : "") + "size " + std::to_string(l.size) + ")";
}

[[noreturn]] void refuse(const Opt& o, const std::string& why) { throw OptError(to_string(o) + " does not fit: " + why); }

// The loop of `axis` among `loops`, or a refusal of `o`.
const Loop& find(const std::vector<Loop>& loops, const Opt& o, int64_t axis) {
  for (const Loop& l : loops)
    if (l.axis == axis) return l;
  refuse(o, "the kernel has no loop " + std::to_string(axis));
}

// Whether the trip count `size` is a multiple of n for every value of its variables: its linear
// form's constant and coefficients all are (what PADTO makes of a symbolic loop, ceil(s/n)*n).
bool multiple_of(const UOpPtr& size, int64_t n) {
  std::optional<LinearForm> f = linear_form(size);
  return f && f->constant % n == 0 &&
         std::all_of(f->terms.begin(), f->terms.end(), [n](const std::pair<UOpPtr, int64_t>& t) { return t.second % n == 0; });
}

// The loop splits into (outer, a new inner loop of n of `kind`, axis `new_axis`): its index is
// outer * n + inner. A symbolic loop (a multiple of n) keeps a symbolic outer loop.
UOpPtr split(const UOpPtr& ast, const Loop& l, int64_t n, AxisKind kind, int64_t new_axis) {
  UOpPtr outer = make_range(l.symbolic ? simplify(idiv(l.range->src(0), n)) : UOp::index_const(l.size / n), l.axis);
  UOpPtr inner = make_range(UOp::index_const(n), new_axis, kind);
  UOpPtr out = l.reduce ? relist_reductions(ast, {{l.range.get(), {outer, inner}}}) : ast;
  return simplify(substitute(out, {{l.range.get(), outer * n + inner}}));
}

// Whether every address `idx` can take lies inside its buffer.
bool inside_buffer(const UOpPtr& idx) {
  int64_t n = idx->src(0)->dtype().ptr_size();
  return n >= 0 && idx->src(1)->vmin() >= 0 && idx->src(1)->vmax() < n;
}

// The loop runs to a multiple of n. Past its size, an output loop's stores are gated and its loads
// clamped; a reduction's loop's accesses are gated and the reduction adds its identity there. A
// symbolic output loop runs to the next multiple of n of its run's size (rows of a register tile
// over the boxes a detector kept).
UOpPtr pad(const UOpPtr& ast, const Loop& l, int64_t n) {
  const UOpPtr& size = l.range->src(0);
  UOpPtr padded_size = l.symbolic ? simplify(idiv(size + (n - 1), n) * n) : UOp::index_const((l.size + n - 1) / n * n);
  int64_t padded = padded_size->vmax();
  UOpPtr r = make_range(padded_size, l.axis, l.kind);
  UOpPtr out = substitute(l.reduce ? relist_reductions(ast, {{l.range.get(), {r}}}) : ast, {{l.range.get(), r}});
  // Past the end of an output loop the kernel computes what is never stored: its stores are gated,
  // and its loads read the last position's operands (clamped: never out of bounds, and no branch
  // in a reduction's loop), or read on unchanged where the address stays inside the buffer (a
  // weight stored with its channels padded to a block: a vector of channels stays one load; an
  // integer division of what such a lane reads is defined, codegen/integer_division).
  // Past the end of a reduction's loop, loads are gated (they read 0).
  UOpPtr last = l.reduce ? nullptr : min(r, size - 1);
  if (last) {
    // Through a placeholder: the clamp holds the loop itself, which a substitution cannot map into.
    UOpPtr held = UOp::variable("padded position", 0, padded - 1);
    Substitution clamped;
    for (const UOpPtr& u : toposort(out)) {
      if (u->op() != Ops::LOAD || u->src(0)->op() != Ops::INDEX || !varies_with(u->src(0)->src(1), r.get())) continue;
      if (inside_buffer(u->src(0))) continue;
      std::vector<UOpPtr> idx = u->src(0)->src();
      for (size_t k = 1; k < idx.size(); ++k) idx[k] = substitute(idx[k], {{r.get(), held}});
      std::vector<UOpPtr> ld = u->src();
      ld[0] = UOp::make(Ops::INDEX, u->src(0)->dtype(), std::move(idx));
      clamped[u.get()] = UOp::make(Ops::LOAD, u->dtype(), std::move(ld), u->arg());
    }
    out = substitute(substitute(out, clamped), {{held.get(), last}});
  }
  struct Ctx {
    UOpPtr r, inside;
    bool output_loop;
    // `i` gated to the loop's real positions, or null when it needs no gate (or has it).
    UOpPtr gated(const UOpPtr& i) const {
      if (!varies_with(i->src(1), r.get())) return nullptr;
      if (i->src().size() == 3 && varies_with(i->src(2), inside.get())) return nullptr;
      UOpPtr gate = i->src().size() == 3 ? logical_and(i->src(2), inside) : inside;
      return UOp::make(Ops::INDEX, i->dtype(), {i->src(0), i->src(1), gate});
    }
  } ctx{r, lt(r, size), !l.reduce};
  static const PatternMatcher pm({
      // An output loop's stores (its loads are clamped above); a reduction's loop's every access.
      {UPat(Ops::STORE).named("st"), [](const Match& m) -> UOpPtr {
         const auto& c = m.ctx<const Ctx>();
         const UOpPtr& st = m["st"];
         if (!c.output_loop || st->src(0)->op() != Ops::INDEX) return nullptr;
         UOpPtr idx = c.gated(st->src(0));
         if (!idx) return nullptr;
         std::vector<UOpPtr> src = st->src();
         src[0] = idx;
         return UOp::make(Ops::STORE, st->dtype(), std::move(src), st->arg());
       }},
      {UPat(Ops::INDEX).named("i"), [](const Match& m) -> UOpPtr {
         const auto& c = m.ctx<const Ctx>();
         return c.output_loop ? nullptr : c.gated(m["i"]);
       }},
      {UPat(Ops::REDUCE).named("red"), [](const Match& m) -> UOpPtr {
         const auto& c = m.ctx<const Ctx>();
         const UOpPtr& red = m["red"];
         if (std::find(red->src().begin() + 1, red->src().end(), c.r) == red->src().end()) return nullptr;
         const UOpPtr& x = red->src(0);
         if (x->op() == Ops::WHERE && x->src(0) == c.inside) return nullptr;  // masked already
         std::vector<UOpPtr> src(red->src().begin(), red->src().end());
         src[0] = where(c.inside, x, reduce_identity(red->arg_as<Ops>(), x->dtype()));
         return UOp::make(Ops::REDUCE, red->dtype(), std::move(src), red->arg());
       }},
  });
  return simplify(graph_rewrite(out, pm, &ctx));
}

}  // namespace

std::string to_string(const Opt& o) {
  return std::string(kNames[static_cast<int>(o.op)]) + "(" + std::to_string(o.axis) + ", " + std::to_string(o.amount) + ")";
}

std::string to_string(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : " ") + to_string(o);
  return s;
}

std::vector<Opt> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    std::string rest;
    while (word.find(')') == std::string::npos && in >> rest) word += " " + rest;
    size_t open = word.find('('), comma = word.find(','), close = word.find(')');
    if (open == std::string::npos || comma == std::string::npos || close == std::string::npos)
      throw OptError("not an optimization action: '" + word + "'");
    std::string name = word.substr(0, open);
    auto it = std::find(std::begin(kNames), std::end(kNames), name);
    if (it == std::end(kNames)) throw OptError("unknown optimization action '" + name + "'");
    try {
      out.push_back({static_cast<OptOp>(it - std::begin(kNames)), std::stoll(word.substr(open + 1, comma - open - 1)),
                     std::stoll(word.substr(comma + 1, close - comma - 1))});
    } catch (const std::logic_error&) {
      throw OptError("not an optimization action: '" + word + "'");
    }
  }
  return out;
}

std::vector<Loop> kernel_loops(const UOpPtr& ast) {
  std::set<const UOp*> reduce_loops;
  std::vector<UOpPtr> order = toposort(ast);
  for (const UOpPtr& u : order)
    if (u->op() == Ops::REDUCE)
      for (size_t i = 1; i < u->src().size(); ++i) reduce_loops.insert(u->src(i).get());
  std::vector<Loop> loops;
  for (const UOpPtr& u : order)
    if (u->op() == Ops::RANGE)
      loops.push_back({u, axis_of(*u), u->src(0)->vmax(), !u->src(0)->is_const(), reduce_loops.count(u.get()) > 0,
                       axis_kind(*u)});
  std::sort(loops.begin(), loops.end(), [](const Loop& a, const Loop& b) { return a.axis < b.axis; });
  return loops;
}

std::optional<Loop> find_loop(const UOpPtr& ast, int64_t axis) {
  for (const Loop& l : kernel_loops(ast))
    if (l.axis == axis) return l;
  return std::nullopt;
}

int64_t next_axis(const UOpPtr& ast) {
  int64_t n = 0;
  for (const Loop& l : kernel_loops(ast)) n = std::max(n, l.axis + 1);
  return n;
}

UOpPtr apply_opt(const UOpPtr& ast, const Opt& o) {
  const std::vector<Loop> loops = kernel_loops(ast);  // one walk: every check below reads it
  const Loop& l = find(loops, o, o.axis);
  int64_t n = o.amount, new_axis = 0;
  for (const Loop& other : loops) new_axis = std::max(new_axis, other.axis + 1);
  auto need = [&](bool ok, const std::string& why) {
    if (!ok) refuse(o, describe(l) + " " + why);
  };
  need(l.kind == AxisKind::Loop, "is not an ordinary loop");
  // A symbolic loop is padded to a multiple of a tile (an output loop's), then split by it.
  bool takes_symbolic = o.op == OptOp::SWAP || o.op == OptOp::THREAD || o.op == OptOp::LOCAL ||
                        ((o.op == OptOp::PADTO || o.op == OptOp::UPCAST || o.op == OptOp::TILE) && !l.reduce);
  if (!takes_symbolic) need(!l.symbolic, "has a symbolic size");
  // A grouped reduction's partial results are one value per output: no output loop in registers,
  // and the cores go to the group, not to an output loop.
  bool grouped = false, upcast = false, threaded = false, warps = false;
  for (const Loop& other : loops) {
    warps |= other.kind == AxisKind::Warp;
    grouped |= other.kind == AxisKind::Group;
    upcast |= other.kind == AxisKind::Upcast;
    threaded |= other.kind == AxisKind::Thread;
  }
  if (grouped) need(o.op != OptOp::UPCAST && o.op != OptOp::THREAD, "cannot take this action in a kernel with a GROUP");
  switch (o.op) {
    case OptOp::UPCAST:
    case OptOp::UNROLL:
    case OptOp::TILE:
      need(o.op == OptOp::TILE || l.reduce == (o.op == OptOp::UNROLL), o.op == OptOp::UNROLL ? "is not a reduction's" : "is a reduction's");
      need(n >= 2 && n <= l.size && multiple_of(l.range->src(0), n), "is not a multiple of " + std::to_string(n));
      need(o.op != OptOp::TILE || n < l.size, "is not larger than the tile");
      return split(ast, l, n, o.op == OptOp::UPCAST ? AxisKind::Upcast : o.op == OptOp::UNROLL ? AxisKind::Unroll : AxisKind::Loop,
                   new_axis);
    case OptOp::PADTO:
      need(n >= 2 && !multiple_of(l.range->src(0), n), "needs no padding to a multiple of " + std::to_string(n));
      return pad(ast, l, n);
    case OptOp::SWAP: {
      const Loop& b = find(loops, o, n);
      need(!l.reduce && !b.reduce && b.kind == AxisKind::Loop && b.axis != l.axis,
           "cannot trade places with loop " + std::to_string(n));
      // Through a placeholder: with equal sizes, one loop's new range is the other's old one.
      UOpPtr ra = make_range(l.range->src(0), b.axis), rb = make_range(b.range->src(0), l.axis);
      UOpPtr held = make_range(l.range->src(0), new_axis);
      UOpPtr out = substitute(ast, {{l.range.get(), held}});
      out = substitute(out, {{b.range.get(), rb}});
      return substitute(out, {{held.get(), ra}});
    }
    case OptOp::THREAD: {
      need(!l.reduce, "is a reduction's");
      for (const Loop& other : loops)
        need(other.reduce || other.axis >= l.axis || other.kind != AxisKind::Loop, "is not the outermost loop");
      need(n >= 2 && n <= l.size, "cannot be split across " + std::to_string(n) + " threads");
      return substitute(ast, {{l.range.get(), make_range(l.range->src(0), l.axis, AxisKind::Thread, n)}});
    }
    case OptOp::GROUP: {
      need(l.reduce, "is not a reduction's");
      need(!warps, "cannot be grouped in a kernel on tensor cores (its block is whole warps)");
      need(!grouped && !threaded, "cannot be grouped in a kernel already split across threads");
      need(!upcast, "cannot be grouped in a kernel with an upcast output loop");
      need(n >= 2 && n <= l.size, "cannot be split across " + std::to_string(n) + " threads");
      int reductions = 0;
      for (const UOpPtr& u : toposort(ast)) reductions += u->op() == Ops::REDUCE;
      need(reductions == 1, "is in a kernel of " + std::to_string(reductions) + " reductions (GROUP takes one)");
      for (const Loop& other : loops) need(other.reduce || !other.symbolic, "has outputs of a symbolic count");
      UOpPtr g = make_range(l.range->src(0), l.axis, AxisKind::Group, n);
      return substitute(ast, {{l.range.get(), g}});
    }
    case OptOp::LOCAL:
      need(!l.reduce, "is a reduction's");
      need(n >= 2 && n <= 1024, "cannot take blocks of " + std::to_string(n) + " threads");
      return substitute(ast, {{l.range.get(), make_range(l.range->src(0), l.axis, AxisKind::Local, n)}});
    case OptOp::TC:
      need(n == 0, "takes the one tensor-core shape, m16n8k16 (amount 0)");
      return tensor_core(ast, l.axis, new_axis);
  }
  refuse(o, "unknown action");
}

UOpPtr apply_opts(const UOpPtr& ast, const std::vector<Opt>& opts) {
  UOpPtr out = ast;
  for (const Opt& o : opts) out = apply_opt(out, o);
  return out;
}

}  // namespace lathe
