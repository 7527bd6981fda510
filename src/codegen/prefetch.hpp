// Software prefetch of streamed operands, for the CPU renderers (render_llvm, render_c). A vector
// load in a reduction's innermost loop that steps through its buffer a cache line or more per
// iteration (a convolution's weights, a matmul's packed B), over kLeastPrefetchedSpan or more,
// asks for the bytes kPrefetchBytes ahead of it. The hardware prefetcher, paced by the loop's
// multiply-adds, falls behind such a stream where it comes from memory rather than a cache
// (ResNet's layer-4 weights, 9.4 MB a layer). A prefetch never faults, so the address may be past
// the buffer's end.
//
// A prefetch asks for a whole cache line, and takes a load port as a load does: in a loop whose
// body streams two lines or more, loads of one line (at 8 lanes, the two 32-byte halves of a
// 16-channel block) ask once. A 2 x 4 convolution tile at 8 lanes issued 4 prefetches beside 6
// loads per 8 multiply-adds, more than two load ports serve in the 4 cycles the multiply-adds
// take; asking once per line made such convolutions 3-7% faster. A loop streaming one line (a
// matmul's column block of B at 8 lanes) keeps a prefetch per load: asked once there, the 1024
// and 2048 matmuls at 8 lanes ran 8% slower on two threads (not on one), for a reason not found
// (docs/decisions/prefetch-once-per-line.md).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lathe/target.hpp"
#include "lathe/uop.hpp"

namespace lathe {

// A step of at least a cache line (a smaller one is a sequential stream the hardware follows)
// and at most 1 KB (beyond, a row of a strided walk, not a stream); 4 KB ahead (ResNet-18 was
// fastest at 4 of 1, 4 and 16 KB); operands under 256 KB stay in a core's L2 and are read from it
// again (a 1x1 convolution's 64 KB weight: prefetching it cost 4-10%).
constexpr int64_t kMostPrefetchedStep = 1024, kPrefetchBytes = 4096, kLeastPrefetchedSpan = 256 << 10;

// A loop whose body streams this many lines or more (each address of a stream that is not whole
// lines counting as one) asks for each line once.
constexpr size_t kLeastSharedLines = 2;

/// What a renderer prefetches in one linearized program (a renderer makes one per program).
class Prefetcher {
 public:
  Prefetcher() = default;
  explicit Prefetcher(const std::vector<UOpPtr>& program);

  /// How many elements ahead of `load` (a LOAD of a buffer) to prefetch, inside the innermost
  /// open loop `innermost` (null: none); none where it
  /// is not a streamed operand, or where the loop's body streams kLeastSharedLines lines or more
  /// and a load before it asked for its line already: the same buffer, the same terms that
  /// change, each a whole number of lines, and a constant part in the same line (the line counted
  /// from the buffer's start, which the allocator aligns to one). Where a changing term is not
  /// whole lines, only a load at the same address counts as the same line.
  std::optional<int64_t> distance(const UOp& load, const UOpPtr& innermost);

 private:
  // (loop, buffer, the address's terms that are not constant with their coefficients, whether
  // each is whole lines, its constant part: in lines where they are, else in elements)
  using Line = std::tuple<const UOp*, const UOp*, std::vector<std::pair<const UOp*, int64_t>>, bool, int64_t>;
  // The line `load` streams through in `innermost` and the elements ahead to ask for, where it is
  // a streamed operand.
  std::optional<std::pair<Line, int64_t>> streamed(const UOp& load, const UOpPtr& innermost) const;

  std::unordered_set<const UOp*> accumulating_;   // the loops a reduction accumulates in
  std::unordered_map<const UOp*, size_t> lines_;  // how many lines each loop's body streams
  std::set<Line> asked_;
};

}  // namespace lathe
