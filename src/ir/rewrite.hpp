// graph_rewrite: applies a PatternMatcher to a whole graph until nothing more matches.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/pattern.hpp"

namespace lathe {

enum class Direction {
  /// Sources are rewritten first, then the node rebuilt from them is offered to the rules.
  BottomUp,
  /// The node is offered to the rules first (to a fixed point), then its sources are rewritten
  /// and, if any changed, the rebuilt node is offered again. Rules see unrewritten sources.
  TopDown,
};

/// Rewrites every node reachable from `root` with `pm` to a fixed point and returns the new root.
/// Each node is rewritten once per call (memoised); no recursion on the C stack, so graphs of any
/// depth work. Throws RewriteError when the rules cycle (a node's rewrite leads back to itself)
/// or keep growing the graph without converging.
UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, void* ctx = nullptr,
                     Direction direction = Direction::BottomUp);

/// The results of earlier graph_rewrite calls, so that a node met again (nodes are hash-consed:
/// the same node is the same expression) is not rewritten again. For one matcher whose rules read
/// nothing but the node, in one direction; it keeps every node it has seen alive.
struct RewriteMemo {
  const PatternMatcher* pm = nullptr;  // the matcher of its first use; another one is an error
  Direction direction = Direction::BottomUp;
  std::unordered_map<const UOp*, UOpPtr> done;
  std::vector<UOpPtr> keep;
};

/// graph_rewrite without a context, reusing and extending `memo`.
UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, RewriteMemo& memo, Direction direction = Direction::BottomUp);

}  // namespace lathe
