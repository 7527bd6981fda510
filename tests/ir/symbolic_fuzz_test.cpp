// Randomized property test of the symbolic simplifier: for thousands of random expressions over
// bounded variables, the simplified expression must evaluate like the original, and every node's
// value must lie within its vmin/vmax.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>

#include "ir/eval.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

struct VarSpec {
  const char* name;
  int64_t lo, hi;
};
constexpr VarSpec kVars[] = {{"a", 0, 10}, {"b", 0, 3}, {"c", -6, 6}, {"d", 1, 64}, {"e", -20, -1}};

class ExprGen {
 public:
  explicit ExprGen(uint64_t seed) : rng_(seed) {}

  UOpPtr expr(int depth) {  // NOLINT(misc-no-recursion): depth is at most 5
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(13)) {
      case 0:
      case 1: return expr(depth - 1) + expr(depth - 1);
      case 2: return expr(depth - 1) - expr(depth - 1);
      case 3: return expr(depth - 1) * small_const();
      case 4: return expr(depth - 1) * expr(depth - 1);
      case 5: return idiv(expr(depth - 1), positive_divisor(depth));
      case 6: return expr(depth - 1) % positive_divisor(depth);
      case 7: return max(expr(depth - 1), expr(depth - 1));
      case 8: return min(expr(depth - 1), expr(depth - 1));
      case 9: return where(lt(expr(depth - 1), expr(depth - 1)), expr(depth - 1), expr(depth - 1));
      case 10: {  // what a chain of reshapes leaves: x split into (x / cm, x / c % m, x % c), recombined
        UOpPtr x = expr(depth - 1);
        int64_t c = 1 + pick(6), m = 1 + pick(6);
        return idiv(x, c * m) * (c * m) + (idiv(x, c) % m) * c + x % c;
      }
      case 11: {  // a partial common factor: (g*k*x + y) over a multiple of g
        int64_t g = 2 + pick(8);
        UOpPtr sum = expr(depth - 1) * UOp::index_const(g * (1 + pick(3))) + expr(depth - 1);
        return pick(2) ? idiv(sum, UOp::index_const(g * (1 + pick(4)))) : sum % UOp::index_const(g * (1 + pick(4)));
      }
      default: return -expr(depth - 1);
    }
  }

  VarValues assignment() {
    VarValues v;
    for (const VarSpec& s : kVars) v[s.name] = std::uniform_int_distribution<int64_t>(s.lo, s.hi)(rng_);
    return v;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  UOpPtr leaf() {
    if (pick(3) == 0) return small_const();
    const VarSpec& s = kVars[pick(std::size(kVars))];
    return UOp::variable(s.name, s.lo, s.hi);
  }
  UOpPtr small_const() { return UOp::index_const(std::uniform_int_distribution<int64_t>(-8, 8)(rng_)); }
  // Divisors are positive constants or expressions whose bounds exclude zero.
  UOpPtr positive_divisor(int depth) {
    if (pick(4) == 0) return UOp::variable("d", 1, 64) + pick(3);
    if (pick(5) == 0 && depth > 1) return max(expr(depth - 2), UOp::index_const(1 + pick(4)));
    return UOp::index_const(1 + pick(12));
  }
  std::mt19937_64 rng_;
};

void check_bounds(const UOpPtr& root, const VarValues& vars, const char* which, const UOpPtr& original) {
  for (const UOpPtr& u : toposort(root)) {
    if (u->dtype() != dtypes::index && u->dtype() != dtypes::bool_) continue;
    int64_t v = evaluate_int(u, vars);
    ASSERT_LE(u->vmin(), v) << which << " node " << to_string(*u) << "\noriginal:\n" << print_graph(original);
    ASSERT_GE(u->vmax(), v) << which << " node " << to_string(*u) << "\noriginal:\n" << print_graph(original);
  }
}

TEST(SymbolicFuzz, SimplifiedExpressionsEvaluateLikeTheOriginals) {
  uint64_t seed = 20261121;
  if (const char* s = std::getenv("LATHE_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 10);
  ExprGen gen(seed);
  constexpr int kExpressions = 4000;
  constexpr int kAssignments = 12;
  int checked = 0, changed = 0, evaluations = 0;
  for (int i = 0; i < kExpressions; ++i) {
    UOpPtr e = gen.expr(1 + i % 5);
    UOpPtr s = simplify(e);
    ASSERT_EQ(simplify(s), s) << "simplify is not idempotent on\n" << print_graph(e);
    changed += s != e;
    for (int k = 0; k < kAssignments; ++k) {
      VarValues vars = gen.assignment();
      int64_t want = evaluate_int(e, vars);
      int64_t got = evaluate_int(s, vars);
      ASSERT_EQ(got, want) << "seed " << seed << ", expression " << i << "\noriginal:\n"
                           << print_graph(e) << "simplified:\n"
                           << print_graph(s);
      check_bounds(e, vars, "original", e);
      check_bounds(s, vars, "simplified", e);
      if (HasFatalFailure()) return;
      ++evaluations;
    }
    ++checked;
  }
  std::cout << "symbolic fuzz: checked " << checked << " expressions (" << changed << " simplified) at " << evaluations
            << " assignments, seed " << seed << "\n";
  RecordProperty("expressions_checked", checked);
  EXPECT_EQ(checked, kExpressions);
  EXPECT_GT(changed, kExpressions / 4);  // the generator really exercises the rules
}

// A SimplifyMemo shares results across calls (expressions here share their variables and many
// subexpressions); every expression must simplify to the node it simplifies to without one.
TEST(SymbolicFuzz, AMemoChangesNoResult) {
  ExprGen gen(20261123);
  std::vector<UOpPtr> exprs, plain;
  for (int i = 0; i < 2000; ++i) {
    exprs.push_back(gen.expr(1 + i % 5));
    plain.push_back(simplify(exprs.back()));
  }
  SimplifyMemo memo;
  for (size_t i = 0; i < exprs.size(); ++i) {
    ASSERT_EQ(simplify(exprs[i]), plain[i]) << "expression " << i << "\n" << print_graph(exprs[i]);
    ASSERT_EQ(simplify(plain[i]), plain[i]);
  }
}

}  // namespace
}  // namespace lathe
