#include "ir/symbolic.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "ir/alu.hpp"
#include "ir/bounds.hpp"
#include "ir/rewrite.hpp"
#include "ir/toposort.hpp"

namespace lathe {

int64_t floordiv(int64_t a, int64_t b) {  // b > 0
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

namespace {

bool intlike(const UOpPtr& u) {
  DType d = u->dtype();
  return !d.is_ptr() && d.count() == 1 && d.is_int();
}

UOpPtr cst(const UOpPtr& like, ConstValue v) { return UOp::const_(like->dtype(), v); }
UOpPtr boolean(bool v) { return UOp::const_(dtypes::bool_, v); }

// An integer expression as sum(coefficient * term) + constant, the form term collection and
// division folding work on. `ok` is false when a coefficient overflowed int64.
struct Linear {
  std::vector<std::pair<UOpPtr, int64_t>> terms;
  int64_t constant = 0;
  bool ok = true;

  void add_const(int64_t v) { ok &= !__builtin_add_overflow(constant, v, &constant); }
  void add(const UOpPtr& t, int64_t k) {
    for (auto& [u, c] : terms) {
      if (u != t) continue;
      ok &= !__builtin_add_overflow(c, k, &c);
      return;
    }
    terms.emplace_back(t, k);
  }
  bool scale(int64_t k) {
    for (auto& [u, c] : terms) ok &= !__builtin_mul_overflow(c, k, &c);
    ok &= !__builtin_mul_overflow(constant, k, &constant);
    return ok;
  }
  int64_t gcd(int64_t with) const {
    int64_t g = std::gcd(with, constant);
    for (const auto& [u, c] : terms) g = std::gcd(g, c);
    return g;
  }
};

int64_t int_value(const UOpPtr& u) { return const_as_int(u->const_value()); }

Linear decompose(const UOpPtr& x) {
  Linear lin;
  std::vector<std::pair<const UOp*, int64_t>> stack{{x.get(), 1}};
  while (!stack.empty() && lin.ok) {
    auto [n, k] = stack.back();
    stack.pop_back();
    if (n->op() == Ops::ADD) {
      stack.emplace_back(n->src(1).get(), k);
      stack.emplace_back(n->src(0).get(), k);
      continue;
    }
    int64_t c = 1;
    const UOp* t = n;
    if (n->op() == Ops::CONST) {
      int64_t v;
      lin.ok &= !__builtin_mul_overflow(int_value(n->ptr()), k, &v);
      lin.add_const(v);
      continue;
    }
    if (n->op() == Ops::MUL && n->src(1)->is_const())
      c = int_value(n->src(1)), t = n->src(0).get();
    else if (n->op() == Ops::MUL && n->src(0)->is_const())
      c = int_value(n->src(0)), t = n->src(1).get();
    int64_t ck;
    lin.ok &= !__builtin_mul_overflow(c, k, &ck);
    lin.add(t->ptr(), ck);
  }
  std::erase_if(lin.terms, [](const auto& t) { return t.second == 0; });
  return lin;
}

// k*c*(y/c) + k*(y%c) == k*y in C semantics, whatever the sign of y: the pair a reshape leaves.
// y/c may appear folded: for y = x/d it is x/(d*c) (truncating division by positive constants
// composes), so chains of reshapes recombine level by level.
void recombine_divmod(Linear& lin) {
  for (size_t i = 0; i < lin.terms.size(); ++i) {
    const UOpPtr m = lin.terms[i].first;
    const int64_t k = lin.terms[i].second;
    if (m->op() != Ops::MOD || !m->src(1)->is_const()) continue;
    int64_t c = int_value(m->src(1)), kc;
    if (c <= 0 || __builtin_mul_overflow(k, c, &kc)) continue;
    const UOpPtr& y = m->src(0);
    // y/c as a node: IDIV(y, c), or IDIV(x, d*c) when y is IDIV(x, d).
    UOpPtr num = y, den = m->src(1);
    if (y->op() == Ops::IDIV && y->src(1)->is_const() && int_value(y->src(1)) > 0) {
      int64_t dc;
      if (!__builtin_mul_overflow(int_value(y->src(1)), c, &dc)) num = y->src(0), den = cst(y, dc);
    }
    auto is_div = [&](const auto& t) {
      if (t.first->op() != Ops::IDIV || t.second != kc) return false;
      const UOpPtr& q = t.first;
      return (q->src(0) == y && q->src(1) == m->src(1)) || (q->src(0) == num && q->src(1) == den);
    };
    auto d = std::find_if(lin.terms.begin(), lin.terms.end(), is_div);
    if (d == lin.terms.end()) continue;
    lin.terms.erase(d);
    lin.terms.erase(std::find_if(lin.terms.begin(), lin.terms.end(), [&](const auto& t) { return t.first == m; }));
    lin.add(y, k);
    std::erase_if(lin.terms, [](const auto& t) { return t.second == 0; });
    i = static_cast<size_t>(-1);  // start over: the new term may pair up again
  }
}

// The canonical node for `lin`: terms sorted by structural hash, each `t` or `t * c`, constant last.
UOpPtr rebuild(Linear lin, DType dt) {
  std::sort(lin.terms.begin(), lin.terms.end(), [](const auto& a, const auto& b) {
    return a.first->hash() != b.first->hash() ? a.first->hash() < b.first->hash() : a.first->id() < b.first->id();
  });
  UOpPtr sum;
  for (const auto& [t, c] : lin.terms) {
    UOpPtr term = c == 1 ? t : UOp::alu(Ops::MUL, {t, UOp::const_(dt, c)});
    sum = sum ? UOp::alu(Ops::ADD, {sum, term}) : term;
  }
  if (!sum) return UOp::const_(dt, lin.constant);
  if (lin.constant != 0) sum = UOp::alu(Ops::ADD, {sum, UOp::const_(dt, lin.constant)});
  return sum;
}

UOpPtr unchanged_or(const UOpPtr& before, UOpPtr after) { return after == before ? nullptr : after; }

// ---- folding ---------------------------------------------------------------------------------

UOpPtr fold_constants(const Match& m) {
  UOpPtr n = m.root();
  std::vector<ConstValue> vals;
  for (const UOpPtr& s : n->src()) {
    if (!s->is_const()) return nullptr;
    vals.push_back(s->const_value());
  }
  if (n->op() == Ops::CAST) return n->dtype().count() == 1 ? UOp::const_(n->dtype(), vals[0]) : nullptr;
  std::optional<ConstValue> v = exec_alu(n->op(), n->dtype(), vals);
  return v && n->dtype().count() == 1 ? UOp::const_(n->dtype(), *v) : nullptr;
}

UOpPtr fold_by_bounds(const Match& m) {
  UOpPtr n = m.root();
  DType d = n->dtype();
  if (d.is_ptr() || d.count() != 1 || !(d.is_int() || d.is_bool()) || n->vmin() != n->vmax()) return nullptr;
  return d.is_bool() ? boolean(n->vmin() != 0) : cst(n, n->vmin());
}

// ---- canonical integer forms -------------------------------------------------------------------

UOpPtr canonical_sum(const Match& m) {
  UOpPtr n = m.root();
  if (!intlike(n)) return nullptr;
  Linear lin = decompose(n);
  if (!lin.ok) return nullptr;
  recombine_divmod(lin);
  return unchanged_or(n, rebuild(std::move(lin), n->dtype()));
}

UOpPtr canonical_product(const Match& m) {
  UOpPtr n = m.root();
  if (!intlike(n)) return nullptr;
  const UOpPtr& a = n->src(0);
  const UOpPtr& b = n->src(1);
  if (a->is_const() && !b->is_const()) return b * a;
  if (!b->is_const()) return a->hash() > b->hash() ? b * a : nullptr;
  int64_t c = int_value(b);
  if (a->op() == Ops::MUL && a->src(1)->is_const()) {
    int64_t cd;
    if (__builtin_mul_overflow(c, int_value(a->src(1)), &cd)) return nullptr;
    return a->src(0) * cst(n, cd);
  }
  if (a->op() == Ops::ADD) {  // distribute, so the terms can meet their likes in the enclosing sum
    Linear lin = decompose(a);
    if (!lin.ok || !lin.scale(c)) return nullptr;
    return rebuild(std::move(lin), n->dtype());
  }
  return nullptr;
}

// Splits x = c*Q + R with every coefficient of R in [0, c): the quotient and remainder of each
// term, which are x's own when x and R are non-negative.
struct DivSplit {
  UOpPtr quotient;  // null when Q is zero
  UOpPtr remainder;
};

DivSplit split_by(const Linear& lin, int64_t c, DType dt) {
  Linear q, r;
  for (const auto& [t, k] : lin.terms) {
    int64_t qk = floordiv(k, c);
    q.add(t, qk);
    r.add(t, k - qk * c);
  }
  int64_t qc = floordiv(lin.constant, c);
  q.add_const(qc);
  r.add_const(lin.constant - qc * c);
  std::erase_if(q.terms, [](const auto& t) { return t.second == 0; });
  std::erase_if(r.terms, [](const auto& t) { return t.second == 0; });
  bool q_zero = q.terms.empty() && q.constant == 0;
  return {q_zero ? nullptr : rebuild(std::move(q), dt), rebuild(std::move(r), dt)};
}

// x = g*B + S where g divides c and every coefficient of B's terms, and S (the other terms and
// the constant's remainder) always lies in [0, g): then x/c = B/(c/g) and x%c = (B%(c/g))*g + S
// for x >= 0. This is what folds (32*a + b)/96 to a/3 when 0 <= b < 32. Tries the largest g first.
struct GcdSplit {
  int64_t g = 0;
  UOpPtr big;    // B
  UOpPtr small;  // S
};

std::optional<GcdSplit> split_by_gcd(const Linear& lin, int64_t c, DType dt) {
  std::vector<int64_t> candidates;
  for (const auto& [t, k] : lin.terms)
    if (int64_t g = std::gcd(c, k); g > 1 && g < c) candidates.push_back(g);
  std::sort(candidates.rbegin(), candidates.rend());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (int64_t g : candidates) {
    Linear big, small;
    for (const auto& [t, k] : lin.terms) {
      if (k % g == 0) big.add(t, k / g);
      else small.add(t, k);
    }
    if (small.terms.empty()) continue;  // the plain gcd rule's case
    int64_t q0 = floordiv(lin.constant, g);
    big.add_const(q0);
    small.add_const(lin.constant - q0 * g);
    UOpPtr s = rebuild(std::move(small), dt);
    if (s->vmin() < 0 || s->vmax() >= g) continue;
    return GcdSplit{g, rebuild(std::move(big), dt), s};
  }
  return std::nullopt;
}

UOpPtr fold_div(const Match& m) {
  UOpPtr x = m["x"];
  int64_t c = m.i("c");
  if (!intlike(x) || c <= 0) return nullptr;
  if (x->op() == Ops::IDIV && x->src(1)->is_const() && int_value(x->src(1)) > 0) {
    int64_t cd;
    if (!__builtin_mul_overflow(c, int_value(x->src(1)), &cd)) return idiv(x->src(0), cd);
  }
  Linear lin = decompose(x);
  if (!lin.ok) return nullptr;
  if (int64_t g = lin.gcd(c); g > 1) {
    for (auto& [t, k] : lin.terms) k /= g;
    lin.constant /= g;
    return idiv(rebuild(std::move(lin), x->dtype()), c / g);
  }
  if (x->vmin() < 0) return nullptr;
  if (x->op() == Ops::MOD && x->src(1)->is_const() && int_value(x->src(1)) % c == 0)  // (y % (c*m)) / c
    return idiv(x->src(0), c) % (int_value(x->src(1)) / c);
  DivSplit s = split_by(lin, c, x->dtype());
  if (s.quotient && s.remainder->vmin() >= 0)
    return s.remainder->vmax() < c ? s.quotient : s.quotient + idiv(s.remainder, c);
  if (auto g = split_by_gcd(lin, c, x->dtype())) return idiv(g->big, c / g->g);
  return nullptr;
}

UOpPtr fold_mod(const Match& m) {
  UOpPtr x = m["x"];
  int64_t c = m.i("c");
  if (!intlike(x) || c <= 0) return nullptr;
  if (x->vmin() >= 0 && x->vmax() < c) return x;
  if (x->vmin() >= 0 && x->vmin() / c == x->vmax() / c) return x + cst(x, -(x->vmin() / c) * c);  // one quotient throughout
  if (x->op() == Ops::MOD && x->src(1)->is_const() && int_value(x->src(1)) > 0 && int_value(x->src(1)) % c == 0)
    return x->src(0) % c;
  Linear lin = decompose(x);
  if (!lin.ok) return nullptr;
  if (int64_t g = lin.gcd(c); g > 1) {
    for (auto& [t, k] : lin.terms) k /= g;
    lin.constant /= g;
    return (rebuild(std::move(lin), x->dtype()) % (c / g)) * g;
  }
  if (x->vmin() < 0) return nullptr;
  DivSplit s = split_by(lin, c, x->dtype());
  if (s.quotient && s.remainder->vmin() >= 0) return s.remainder->vmax() < c ? s.remainder : s.remainder % c;
  if (auto g = split_by_gcd(lin, c, x->dtype())) return (g->big % (c / g->g)) * g->g + g->small;
  return nullptr;
}

// Whether `v` is a value of `d` (a rewritten bound must be: a narrow integer would wrap it).
bool holds_value(DType d, int64_t v) {
  Bounds b = detail::dtype_bounds(d);
  return b.min <= v && v <= b.max;
}

// sum + k < c  ->  sum < c - k;   g*y < c  ->  y < floor((c - 1) / g) + 1;   y / d < c  ->  y < c*d.
UOpPtr fold_lt(const Match& m) {
  UOpPtr x = m["x"];
  int64_t c = m.i("c");
  if (!intlike(x)) return nullptr;
  // y / d < c  ->  y < c*d for d > 0 and c >= 1, whatever y's sign (a negative y / d is at most 0).
  if (x->op() == Ops::IDIV && x->src(1)->is_const() && int_value(x->src(1)) > 0 && c >= 1) {
    int64_t cd;
    if (!__builtin_mul_overflow(c, int_value(x->src(1)), &cd) && holds_value(x->dtype().scalar(), cd)) return lt(x->src(0), cd);
  }
  Linear lin = decompose(x);
  if (!lin.ok || lin.terms.empty()) return nullptr;
  if (lin.constant != 0) {
    int64_t bound;
    if (__builtin_sub_overflow(c, lin.constant, &bound) || !holds_value(x->dtype().scalar(), bound)) return nullptr;
    lin.constant = 0;
    return lt(rebuild(std::move(lin), x->dtype()), bound);
  }
  int64_t g = std::abs(lin.gcd(0));
  if (g <= 1 || c == std::numeric_limits<int64_t>::min()) return nullptr;
  for (auto& [t, k] : lin.terms) k /= g;
  return lt(rebuild(std::move(lin), x->dtype()), floordiv(c - 1, g) + 1);
}

UOpPtr int_only(const UOpPtr& like, UOpPtr result) { return intlike(like) ? std::move(result) : nullptr; }

UOpPtr x_of(const Match& m) { return m["x"]; }

// x * (1 / y) as x / y where y is computed from x with no reduction between (a SiLU's
// x * sigmoid(x)), so y varies along every loop x does: one division rounds once and the multiply
// goes. Where y comes from a reduction of x (a softmax's 1 / sum) or not from x (a gate per
// channel), 1 / y may be computed once for many x, and the multiply stays.
UOpPtr divide_by_reciprocals_denominator(const Match& m) {
  const UOpPtr& x = m["x"];
  if (!x->dtype().is_float()) return nullptr;
  for (const UOpPtr& n : toposort(m["y"], [](const UOp& u) { return u.op() != Ops::REDUCE; }))
    if (n == x) return UOp::alu(Ops::FDIV, {x, m["y"]});
  return nullptr;
}

}  // namespace

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm({
      // folding
      {UPat::alu(), fold_constants},
      {UPat(Ops::CAST), fold_constants},
      {UPat::alu(), fold_by_bounds},
      {UPat(Ops::CAST), fold_by_bounds},
      // identities
      {UPat::var("x") + 0, x_of},
      {UPat::var("x") * 1, x_of},
      {UPat::var("x") - UPat::cnst(0), x_of},
      {idiv(UPat::var("x"), UPat::cnst(1)), x_of},
      {UPat::binary(Ops::FDIV, UPat::var("x"), UPat::cnst(1)), x_of},
      {UPat::var("x") * 0, [](const Match& m) { return int_only(m["x"], cst(m["x"], 0)); }},
      {UPat::var("x") % 1, [](const Match& m) { return int_only(m["x"], cst(m["x"], 0)); }},
      {max(UPat::var("x"), UPat::var("x")), x_of},
      {UPat::binary(Ops::AND, UPat::var("x"), UPat::var("x")), x_of},
      {UPat::binary(Ops::OR, UPat::var("x"), UPat::var("x")), x_of},
      {UPat(Ops::WHERE).src({UPat::var(), UPat::var("x"), UPat::var("x")}), x_of},
      {UPat(Ops::WHERE).src({UPat::cvar("c"), UPat::var("t"), UPat::var("f")}),
       [](const Match& m) { return m.i("c") ? m["t"] : m["f"]; }},
      {lt(UPat::var("x"), UPat::var("x")), [](const Match& m) { return int_only(m["x"], boolean(false)); }},
      {UPat::binary(Ops::CMPNE, UPat::var("x"), UPat::var("x")),
       [](const Match& m) { return int_only(m["x"], boolean(false)); }},
      {UPat::binary(Ops::CMPEQ, UPat::var("x"), UPat::var("x")),
       [](const Match& m) { return int_only(m["x"], boolean(true)); }},
      {UPat(Ops::CAST).named("c").src({UPat::var("x")}),
       [](const Match& m) { return m["c"]->dtype() == m["x"]->dtype() ? m["x"] : nullptr; }},
      // booleans
      {UPat::binary(Ops::AND, UPat::var("x", dtypes::bool_), UPat::cnst(1)), x_of},
      {UPat::binary(Ops::AND, UPat::var("x", dtypes::bool_), UPat::cnst(0)),
       [](const Match&) { return boolean(false); }},
      {UPat::binary(Ops::OR, UPat::var("x", dtypes::bool_), UPat::cnst(0)), x_of},
      {UPat::binary(Ops::OR, UPat::var("x", dtypes::bool_), UPat::cnst(1)), [](const Match&) { return boolean(true); }},
      {UPat::binary(Ops::CMPNE, UPat::binary(Ops::CMPNE, UPat::var("x", dtypes::bool_), UPat::cnst(1)), UPat::cnst(1)),
       x_of},
  });
  return pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm =
      symbolic_simple() +
      PatternMatcher({
          // canonical forms: no SUB or NEG, sums collected and sorted, constants on the right
          {UPat(Ops::SUB).src({UPat::var("x"), UPat::var("y")}),
           [](const Match& m) { return intlike(m["x"]) ? m["x"] + m["y"] * cst(m["y"], -1) : nullptr; }},
          {UPat(Ops::NEG).src({UPat::var("x")}),
           [](const Match& m) { return intlike(m["x"]) ? m["x"] * cst(m["x"], -1) : nullptr; }},
          {UPat(Ops::ADD), canonical_sum},
          {UPat(Ops::MUL), canonical_product},
          {UPat::binary(Ops::MUL, UPat::var("x"), UPat::binary(Ops::FDIV, UPat::cnst(1), UPat::var("y"))),
           divide_by_reciprocals_denominator},
          // division, modulo and comparisons against constants
          {idiv(UPat::var("x"), UPat::cvar("c")), fold_div},
          {UPat::var("x") % UPat::cvar("c"), fold_mod},
          {lt(UPat::var("x"), UPat::cvar("c")), fold_lt},
          // max decided by bounds
          {max(UPat::var("x"), UPat::var("y")),
           [](const Match& m) { return int_only(m["x"], m["x"]->vmin() >= m["y"]->vmax() ? m["x"] : nullptr); }},
      });
  return pm;
}

namespace {
thread_local RewriteMemo* active_memo = nullptr;  // the outermost live SimplifyMemo's on this thread
}

SimplifyMemo::SimplifyMemo() : memo_(active_memo ? nullptr : std::make_unique<RewriteMemo>()) {
  if (memo_) active_memo = memo_.get();
}

SimplifyMemo::~SimplifyMemo() {
  if (memo_) active_memo = nullptr;
}

UOpPtr simplify(const UOpPtr& u) { return active_memo ? graph_rewrite(u, symbolic(), *active_memo) : graph_rewrite(u, symbolic()); }

std::optional<LinearForm> linear_form(const UOpPtr& x) {
  Linear lin = decompose(x);
  if (!lin.ok) return std::nullopt;
  return LinearForm{std::move(lin.terms), lin.constant};
}

UOpPtr from_linear_form(const LinearForm& f, DType dt) {
  Linear lin;
  lin.terms = f.terms;
  lin.constant = f.constant;
  return rebuild(std::move(lin), dt);
}

}  // namespace lathe
