// A tile of values transposed in registers: K rows of N lanes become N columns of K lanes, and
// back, with shuffles that each draw on two vectors (the butterfly of unpack instructions a
// hand-written kernel would use), so a store or load that is strided along the vector axis but
// contiguous along another register axis becomes one vector access per column
// (codegen/expand.hpp). A shuffle is a VECTORIZE of GEPs; the LLVM renderer spells one that reads
// at most two vectors of one type as a single `shufflevector`.
#pragma once

#include <vector>

#include "lathe/uop.hpp"

namespace lathe {

/// `rows`: K vectors of N lanes (K and N powers of two, K <= N, all of one type). Returns N
/// vectors of K lanes: column c holds lane c of every row, in row order.
std::vector<UOpPtr> rows_to_columns(const std::vector<UOpPtr>& rows);

/// The inverse: `columns`, N vectors of K lanes (K <= N, powers of two), become K vectors of N
/// lanes: row r holds lane r of every column, in column order.
std::vector<UOpPtr> columns_to_rows(const std::vector<UOpPtr>& columns);

}  // namespace lathe
