// Symbolic simplification: the rewrite rules that keep index arithmetic small.
//
// Integer expressions are brought to a canonical form (sums of terms with constant coefficients,
// sorted by structural hash, constant last; products with their constant on the right), so equal
// expressions become the same node. Value bounds (UOp::vmin/vmax) decide comparisons and fold
// `/` and `%` by constants. Every rule keeps C semantics: `/` and `%` truncate toward zero, so
// rules that need floor semantics first check that their operands are non-negative.
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ir/pattern.hpp"

namespace lathe {

/// Constant folding and identities (x + 0, x * 1, where with a known condition, ...); safe for
/// every dtype.
const PatternMatcher& symbolic_simple();

/// symbolic_simple plus the integer rules: canonical sums and products, term collection,
/// division and modulo by constants, comparisons and max decided or reduced with bounds.
const PatternMatcher& symbolic();

/// `u` rewritten with symbolic() to a fixed point.
UOpPtr simplify(const UOpPtr& u);

struct RewriteMemo;

/// While one lives, simplify() on its thread remembers every node it has simplified and reuses
/// the result (an index expression shares most of its nodes with the ones simplified before it:
/// the scheduler and the code generator ask for thousands). One per thread at a time: a second
/// one made while the first lives adds nothing. The nodes it remembers are freed with it, and
/// until then they stay alive: a schedule's memo holds every index node the model's schedule
/// simplified, a kernel's every candidate the optimizer tried; keep its scope to one of those.
class SimplifyMemo {
 public:
  SimplifyMemo();
  ~SimplifyMemo();
  SimplifyMemo(const SimplifyMemo&) = delete;
  SimplifyMemo& operator=(const SimplifyMemo&) = delete;

 private:
  std::unique_ptr<RewriteMemo> memo_;
};

/// An integer expression as sum(coefficient * term) + constant, each term neither a sum nor a
/// product with a constant; the form the canonical sums are built from.
struct LinearForm {
  std::vector<std::pair<UOpPtr, int64_t>> terms;
  int64_t constant = 0;
};
/// The floor of a / b, for b > 0.
int64_t floordiv(int64_t a, int64_t b);
/// `x` as a LinearForm; nothing when a coefficient overflows int64.
std::optional<LinearForm> linear_form(const UOpPtr& x);
/// The canonical sum of `f` in dtype `dt`.
UOpPtr from_linear_form(const LinearForm& f, DType dt);

}  // namespace lathe
