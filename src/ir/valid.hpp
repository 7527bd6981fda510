// Simplification under gates: the address of a load or store gated by `gate` is only used where
// the gate holds, so it is simplified knowing that. Each clause of the gate (an AND of
// comparisons) that bounds a loop index or variable (`i < 48`, `!(i < 48)`) narrows that index
// inside the address, so index arithmetic that is non-negative or in range only where the gate
// holds folds: the second half of a concatenation reads `x[(i - 48) % 48]`, which becomes
// `x[i - 48]` once `i >= 48` is known. Each leaf of the gate is simplified the same way under the
// others: a mask computed from an offset that is non-negative only inside one piece of a
// concatenation (Swin's shifted windows) folds once the piece's bounds are known, so a vector of
// channels then has one gate for all its lanes instead of a mask computed lane by lane.
// A WHERE whose condition is the load's gate, or some of its leaves, with a zero fallback is
// dropped: a gated load already reads 0 where its gate is false.
#pragma once

#include <optional>
#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// A leaf of a gate's AND tree that compares an index expression: `x < bound`, or when `negated`
/// `x >= bound` (spelled `(x < bound) != true`).
struct GateClause {
  UOpPtr clause;  // the leaf itself, as the gate holds it
  UOpPtr x, bound;
  bool negated;
};
/// The leaves of `gate`'s AND tree.
std::vector<UOpPtr> and_leaves(const UOpPtr& gate);
/// `leaf` as a clause when it compares an index expression.
std::optional<GateClause> as_clause(const UOpPtr& leaf);
/// The clauses of `gate` that compare an index expression; its other leaves are left out.
std::vector<GateClause> gate_clauses(const UOpPtr& gate);

/// What a clause says of loop `r` when its x is `r + rest` (r's coefficient 1): it holds exactly
/// where r < value, or r >= value when `lower`, with value = bound - rest.
struct LoopBound {
  bool lower;
  UOpPtr value;
};
std::optional<LoopBound> bound_on(const GateClause& clause, const UOpPtr& r);

/// `ast` with every gated value simplified as described above.
UOpPtr simplify_valid(const UOpPtr& ast);

}  // namespace lathe
