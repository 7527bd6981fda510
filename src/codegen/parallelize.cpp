#include "codegen/parallelize.hpp"

#include <algorithm>
#include <set>

#include "codegen/half_arithmetic.hpp"
#include "ir/alu.hpp"
#include "ir/substitute.hpp"
#include "lathe/error.hpp"

#include "ir/axis.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
UOpPtr loop_of_kind(const UOpPtr& ast, AxisKind kind) {
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::RANGE && axis_kind(*u) == kind) return u;
  return nullptr;
}

namespace {

UOpPtr core_id(int64_t threads) {
  return UOp::make(Ops::SPECIAL, dtypes::index, {UOp::index_const(threads)}, std::string("core_id"));
}

}  // namespace

Chunk chunk_of(const UOpPtr& end, const UOpPtr& core, int64_t n) {
  UOpPtr chunk = simplify(idiv(end + (n - 1), UOp::index_const(n)));
  UOpPtr start = simplify(core * chunk);
  return {start, simplify(min(chunk, end - start))};  // the last cores may get less, or nothing
}

int threads_of(const UOpPtr& ast) {
  UOpPtr r = loop_of_kind(ast, AxisKind::Thread);
  if (!r) r = loop_of_kind(ast, AxisKind::Group);
  if (r) return static_cast<int>(thread_count(*r));
  // A kernel split across cores by its own construction (codegen/attention) reads the core id.
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::SPECIAL && u->arg_as<std::string>() == "core_id") return static_cast<int>(u->src(0)->vmax());
  return 1;
}

CoreShare share_of_core(const UOpPtr& n, int64_t threads, int64_t axis) {
  Chunk part = chunk_of(n, core_id(threads), threads);
  UOpPtr loop = make_range(part.mine, axis);
  return {part.start + loop, loop};
}

UOpPtr split_for_threads(const UOpPtr& ast) {
  UOpPtr outer = loop_of_kind(ast, AxisKind::Thread);
  if (!outer) return ast;
  UOpPtr position = share_of_core(outer->src(0), thread_count(*outer), axis_of(*outer)).position;
  PatternMatcher swap({{UPat(Ops::RANGE).named("r"), [&](const Match& m) -> UOpPtr {
                          return m["r"] == outer ? position : nullptr;
                        }}});
  return simplify(graph_rewrite(ast, swap, nullptr, Direction::TopDown));
}

namespace {

// Fresh loops over the outputs `outs` (from axis `axis` on), and the offset of their position in
// a row of `count` partials (the outputs' positions, the first slowest).
struct OwnRows {
  std::vector<UOpPtr> loops;
  UOpPtr at = UOp::index_const(0);
};
OwnRows own_rows(const std::vector<UOpPtr>& outs, int64_t count, int64_t& axis) {
  OwnRows r;
  for (const UOpPtr& f : outs) {
    count /= f->src(0)->vmax();
    r.loops.push_back(make_range(f->src(0), axis++));
    r.at = r.at + r.loops.back() * count;
  }
  return r;
}

// `body` (a store) run in `loops`, closed after it (no loops: the store as it is).
UOpPtr in_loops(const UOpPtr& body, const std::vector<UOpPtr>& loops) {
  if (loops.empty()) return body;
  std::vector<UOpPtr> src{body};
  src.insert(src.end(), loops.begin(), loops.end());
  return UOp::make(Ops::END, dtypes::void_, std::move(src));
}

// `ast` with its Group loop `g` (over n threads) split: thread `core` reduces its share of the loop
// (a contiguous chunk, or every n-th position from its own where `interleaved`) into its row of
// the scratch, then the last to arrive combines the rows.
UOpPtr split_group_with(const UOpPtr& ast, const UOpPtr& g, const UOpPtr& core, bool interleaved) {
  int64_t n = thread_count(*g);
  std::vector<UOpPtr> order = toposort(ast);
  UOpPtr red;
  int64_t axis = 0;
  for (const UOpPtr& u : order) {
    if (u->op() == Ops::RANGE) axis = std::max(axis, axis_of(*u) + 1);
    if (u->op() != Ops::REDUCE || std::find(u->src().begin() + 1, u->src().end(), g) == u->src().end()) continue;
    if (red) throw InternalError("a GROUP loop in two reductions");
    red = u;
  }
  if (!red) throw InternalError("a GROUP loop outside any reduction");
  Ops op = red->arg_as<Ops>();
  DType t = red->dtype().scalar(), acc = accumulator_dtype(t);  // partials kept in full precision
  int lanes = red->dtype().count();

  // The outputs: the loops the reduction's value or its own loops' bounds depend on (a loop
  // bounded by its gates, codegen/gate_bounds), other than its own.
  std::set<const UOp*> own;
  for (size_t i = 1; i < red->src().size(); ++i) own.insert(red->src(i).get());
  std::vector<UOpPtr> outs;
  for (const UOpPtr& u : toposort(red))
    if (u->op() == Ops::RANGE && !own.count(u.get())) outs.push_back(u);
  std::sort(outs.begin(), outs.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
  int64_t count = 1;
  for (const UOpPtr& f : outs) {
    if (!f->src(0)->is_const()) throw InternalError("a GROUP over outputs of a symbolic count");
    count *= f->src(0)->vmax();
  }

  // Each core: its share of the loop, for every output (in loops of its own), into its row.
  UOpPtr part_loop, position;
  if (interleaved) {
    part_loop = make_range(simplify(idiv(g->src(0) - core + (n - 1), UOp::index_const(n))), axis++);
    position = part_loop * n + core;
  } else {
    Chunk chunk = chunk_of(g->src(0), core, n);
    part_loop = make_range(chunk.mine, axis++);
    position = chunk.start + part_loop;
  }
  Substitution mine_only{{g.get(), position}}, outputs;
  OwnRows mine = own_rows(outs, count, axis);
  for (size_t i = 0; i < outs.size(); ++i) mine_only[outs[i].get()] = mine.loops[i], outputs[mine.loops[i].get()] = outs[i];
  UOpPtr at_b = substitute(mine.at, outputs);  // the same offset, at the kernel's own output position
  std::vector<UOpPtr> part_src{substitute(red->src(0), mine_only)};
  // The reduction's loops as the body now names them: one bounded by an output position (its
  // part of the grouped loop too) is bounded by the core's own loop over that output.
  for (size_t i = 1; i < red->src().size(); ++i) part_src.push_back(substitute(red->src(i) == g ? part_loop : red->src(i), mine_only));
  UOpPtr part = UOp::make(Ops::REDUCE, red->dtype(), std::move(part_src), op);
  if (lanes > 1) {
    std::vector<UOpPtr> each;
    for (int i = 0; i < lanes; ++i) each.push_back(UOp::make(Ops::GEP, t, {part}, int64_t{i}));
    part = combine(op, std::move(each));
  }
  if (acc != t) part = cast(part, acc);
  UOpPtr scratch = UOp::make(Ops::DEFINE_LOCAL, acc.ptr(AddrSpace::Local, n * count), {}, int64_t{0});
  UOpPtr stored =
      in_loops(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, scratch->dtype(), {scratch, simplify(core * count + mine.at)}), part}), mine.loops);
  // The CPU's cores count arrivals: the last combines the n rows. A GPU block's threads meet at
  // barriers (block_sync; a barrier's value is the thread's index in the block) in two rounds:
  // the first `leaders` threads each combine every leaders-th row from their own into it, then
  // the block's first thread combines those rows (a chain of about 2 sqrt(n), not n).
  UOpPtr last;
  int64_t rows = n;
  if (!interleaved) {
    last = UOp::make(Ops::BARRIER, dtypes::bool_, {stored}, n);
  } else {
    int64_t leaders = 1;
    while (leaders * leaders < n) leaders *= 2;
    UOpPtr me = UOp::make(Ops::BARRIER, dtypes::index, {stored, block_sync()}, n);
    UOpPtr leads = lt(me, leaders), step = make_range(UOp::index_const((n + leaders - 1) / leaders), axis++);
    OwnRows led_rows = own_rows(outs, count, axis);
    UOpPtr from = me + step * leaders, inside = logical_and(leads, lt(from, n));
    UOpPtr read = UOp::make(Ops::LOAD, acc, {UOp::make(Ops::INDEX, scratch->dtype(), {scratch, simplify(from * count + led_rows.at), inside})});
    UOpPtr gathered = UOp::make(Ops::REDUCE, acc, {where(inside, read, reduce_identity(op, acc)), step}, op);
    UOpPtr led = in_loops(
        UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, scratch->dtype(), {scratch, simplify(me * count + led_rows.at), leads}), gathered}),
        led_rows.loops);
    last = eq(UOp::make(Ops::BARRIER, dtypes::index, {led, block_sync()}, n), UOp::index_const(0));
    rows = leaders;
  }

  // The last core: the rows combined in core order, then the kernel as it was.
  UOpPtr row = make_range(UOp::index_const(rows), axis++);
  UOpPtr partial = UOp::make(Ops::LOAD, acc, {UOp::make(Ops::INDEX, scratch->dtype(), {scratch, simplify(row * count + at_b), last})});
  UOpPtr total = UOp::make(Ops::REDUCE, acc, {partial, row}, op);
  if (acc != t) total = cast(total, t);
  if (lanes > 1) {
    std::vector<UOpPtr> each{total};
    for (int i = 1; i < lanes; ++i) each.push_back(reduce_identity(op, t));
    total = UOp::make(Ops::VECTORIZE, red->dtype(), std::move(each));
  }
  UOpPtr out = substitute(ast, {{red.get(), total}});
  static const PatternMatcher only_last({{UPat(Ops::STORE).named("s"), [](const Match& m) -> UOpPtr {
                                            const UOpPtr& s = m["s"];
                                            const UOpPtr& idx = s->src(0);
                                            if (idx->src(0)->op() != Ops::DEFINE_GLOBAL) return nullptr;
                                            const UOpPtr& last = m.ctx<const UOpPtr>();
                                            if (idx->src().size() == 3) {
                                              std::vector<UOpPtr> in_gate = toposort(idx->src(2));
                                              if (std::find(in_gate.begin(), in_gate.end(), last) != in_gate.end()) return nullptr;
                                            }
                                            UOpPtr gate = idx->src().size() == 3 ? logical_and(idx->src(2), last) : last;
                                            std::vector<UOpPtr> src(s->src().begin(), s->src().end());
                                            src[0] = UOp::make(Ops::INDEX, idx->dtype(), {idx->src(0), idx->src(1), gate});
                                            return UOp::make(Ops::STORE, s->dtype(), std::move(src));
                                          }}});
  return graph_rewrite(out, only_last, const_cast<UOpPtr*>(&last));
}

}  // namespace

UOpPtr split_group(const UOpPtr& ast) {
  UOpPtr g = loop_of_kind(ast, AxisKind::Group);
  return g ? split_group_with(ast, g, core_id(thread_count(*g)), false) : ast;
}

UOpPtr split_group_in_block(const UOpPtr& ast, const UOpPtr& lane) {
  UOpPtr g = loop_of_kind(ast, AxisKind::Group);
  return g ? split_group_with(ast, g, lane, true) : ast;
}

bool has_shared_scratch(const UOpPtr& ast) {
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::DEFINE_LOCAL) return true;
  return false;
}

}  // namespace lathe
