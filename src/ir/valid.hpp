// Simplification under gates: the address of a load or store gated by `gate` is only used where
// the gate holds, so it is simplified knowing that. Each clause of the gate (an AND of
// comparisons) that bounds a loop index or variable (`i < 48`, `!(i < 48)`) narrows that index
// inside the address, so index arithmetic that is non-negative or in range only where the gate
// holds folds: the second half of a concatenation reads `x[(i - 48) % 48]`, which becomes
// `x[i - 48]` once `i >= 48` is known.
// A WHERE that repeats its load's own gate with a zero fallback is dropped: a gated load already
// reads 0 where its gate is false.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// `ast` with every gated value simplified as described above.
UOpPtr simplify_valid(const UOpPtr& ast);

}  // namespace lathe
