// Optimization actions: each changes one loop of a kernel AST. A kernel's loops are its RANGEs,
// named by axis id (RANGE arg {axis, kind...}, ir/axis.hpp): output loops nest by axis, a
// reduction's loops are its REDUCE's.
//
//   UPCAST(axis, n)  an output loop's innermost n positions go to registers (vector lanes or
//                    unrolled copies, codegen/expand.hpp): axis -> axis * n + new upcast axis
//   UNROLL(axis, n)  the same for a reduction's loop: n positions combined per iteration
//   TILE(axis, n)    an ordinary loop of n inside the loop (cache blocking): the new axis nests
//                    inside every earlier output loop
//   PADTO(axis, m)   the loop runs to the next multiple of m; loads past the end read 0, stores
//                    past it do not happen, a reduction adds its identity there. A symbolic
//                    output loop runs to the next multiple of m of its size at each run, and
//                    then takes UPCAST or TILE by m
//   SWAP(axis, b)    two output loops trade places in the nest
//   THREAD(axis, n)  the outermost output loop is split across n threads
//   GROUP(axis, n)   a reduction's loop is split across n threads: each reduces its part of it
//                    for every output into a partial result, the last to finish combines them
//                    (for kernels with few outputs and a long reduction; one reduction per
//                    kernel, no upcast output loop, no THREAD)
//   LOCAL(axis, n)   an output loop a GPU launches n threads a block along one of its grid's
//                    dimensions (codegen/launch_grid; other launched loops take what is left of
//                    the block); the pipeline refuses it on a Target without blocks
//   TC(axis, 0)      the reduction over `axis` runs on a GPU's tensor cores: a contraction of
//                    16-bit floats as warps' m16n8k16 multiply-adds (opt/tensor_core.hpp); its
//                    rows, columns and loop multiples of 16, 8 and 16 (PADTOs before it); after
//                    those PADTOs alone and before any other action, on a Target with tensor
//                    cores for its inputs (the pipeline refuses it elsewhere)
//
// An action that does not fit (no such loop, a loop of the wrong kind, a size it does not
// divide, a symbolic size other than an output loop's padded one) throws OptError: a search can try anything. The applied list is part
// of a kernel's identity (cache key, ProgramSpec::opts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/axis.hpp"
#include "lathe/error.hpp"
#include "lathe/uop.hpp"

namespace lathe {

class OptError : public Error {
 public:
  using Error::Error;
};

enum class OptOp : uint8_t { UPCAST, UNROLL, TILE, PADTO, SWAP, THREAD, GROUP, TC, LOCAL };

struct Opt {
  OptOp op;
  int64_t axis;
  int64_t amount;
  friend bool operator==(const Opt&, const Opt&) = default;
};

/// "UPCAST(3, 16)".
std::string to_string(const Opt& opt);
/// "UPCAST(3, 16) UNROLL(5, 4)": the list as one string (empty for none).
std::string to_string(const std::vector<Opt>& opts);
/// The list back from to_string; throws OptError for anything else.
std::vector<Opt> parse_opts(const std::string& s);

/// One loop of a kernel, as the actions see it.
struct Loop {
  UOpPtr range;
  int64_t axis;
  int64_t size;    // its trip count (the maximum for a symbolic one)
  bool symbolic;   // the trip count is a variable's
  bool reduce;     // one of a reduction's loops
  AxisKind kind;
};

/// The kernel's loops, by axis.
std::vector<Loop> kernel_loops(const UOpPtr& ast);
/// The kernel's loop of `axis`, if it has one.
std::optional<Loop> find_loop(const UOpPtr& ast, int64_t axis);
/// The axis id a new loop of `ast` takes (one past the largest).
int64_t next_axis(const UOpPtr& ast);

/// `ast` with `opt` applied; throws OptError when it does not fit.
UOpPtr apply_opt(const UOpPtr& ast, const Opt& opt);
UOpPtr apply_opts(const UOpPtr& ast, const std::vector<Opt>& opts);

}  // namespace lathe
