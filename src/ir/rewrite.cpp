#include "ir/rewrite.hpp"

#include <unordered_map>
#include <unordered_set>

#include "lathe/error.hpp"

namespace lathe {
namespace {

// A node's rewrite, as a little state machine on an explicit stack:
//   Visit:  (top-down) apply the rules to a fixed point, then push the sources;
//   Rebuild: sources are done; rebuild from their results, or (bottom-up) apply the rules;
//   Link:   the node was replaced by another whose own rewrite is now done; adopt its result.
enum class Stage : uint8_t { Visit, Rebuild, Link };

struct Frame {
  UOpPtr node;  // the node whose result is being computed
  Stage stage;
  UOpPtr current;  // what it has become so far
  uint32_t chain;  // how many rewrites led to `node` from a node of the original graph
};

// A chain of rewrites that keeps making new nodes for longer than this is taken as divergence
// (x -> f(x) -> f(f(x)) ...), and so is rewriting that nests deeper than any real graph. Steps
// to nodes that already existed do not count: they cannot go on for ever without a repeat,
// which the cycle checks catch.
constexpr uint32_t kMaxChain = 100000;
constexpr size_t kMaxDepth = 50000000;

class Rewriter {
 public:
  Rewriter(const PatternMatcher& pm, void* ctx, Direction dir, uint64_t first_new_id, RewriteMemo& memo)
      : pm_(pm), ctx_(ctx), dir_(dir), first_new_id_(first_new_id), done_(memo.done), keep_(memo.keep) {}

  UOpPtr run(const UOpPtr& root) {
    try {
      push_visit(root, 0);
      while (!stack_.empty()) {
        Frame f = std::move(stack_.back());
        stack_.pop_back();
        switch (f.stage) {
          case Stage::Visit: visit(std::move(f)); break;
          case Stage::Rebuild: rebuild(std::move(f)); break;
          case Stage::Link: finish(f.node, done_.at(f.current.get())); break;
        }
      }
    } catch (...) {
      // A memo outlives this rewrite: it keeps only finished results, not the marks of the
      // visits this one left unfinished.
      std::erase_if(done_, [](const auto& entry) { return !entry.second; });
      throw;
    }
    return done_.at(root.get());
  }

 private:
  // A node may be pushed several times (once per user); the first visit does the work and the
  // later frames find it done. A node whose visit has started but not finished is an ancestor of
  // the work on top of the stack, so meeting it again means its rewrite needs its own result.
  // A visit begun and not finished is marked in done_ by a null result.
  void push_visit(const UOpPtr& u, uint32_t chain) {
    auto it = done_.find(u.get());
    if (it != done_.end() && it->second) return;
    if (it != done_.end())
      throw RewriteError("graph_rewrite does not converge: rewriting " + to_string(*u) +
                         " needs the result of rewriting itself (a rule cycle)");
    if (chain > kMaxChain || stack_.size() > kMaxDepth)
      throw RewriteError("graph_rewrite does not converge: more than " + std::to_string(kMaxChain) +
                         " successive rewrites, last to " + to_string(*u));
    stack_.push_back({u, Stage::Visit, u, chain});
  }

  void visit(Frame f) {
    if (!done_.try_emplace(f.node.get(), nullptr).second) return;  // finished meanwhile
    if (dir_ == Direction::TopDown) f.current = fixed_point(f.current);
    UOpPtr cur = f.current;
    stack_.push_back({f.node, Stage::Rebuild, cur, f.chain});
    for (auto it = cur->src().rbegin(); it != cur->src().rend(); ++it) push_visit(*it, 0);
  }

  void rebuild(Frame f) {
    const UOpPtr& cur = f.current;
    // The sources' results, copied only when one of them changed (most nodes keep all theirs).
    std::vector<UOpPtr> srcs;
    for (size_t i = 0; i < cur->src().size(); ++i) {
      const UOpPtr& r = done_.at(cur->src(i).get());
      if (srcs.empty() && r == cur->src(i)) continue;
      if (srcs.empty()) {
        srcs.reserve(cur->src().size());
        srcs.assign(cur->src().begin(), cur->src().begin() + static_cast<std::ptrdiff_t>(i));
      }
      srcs.push_back(r);
    }
    UOpPtr next;
    if (!srcs.empty()) {
      next = UOp::make(cur->op(), cur->dtype(), std::move(srcs), cur->arg());
    } else if (dir_ == Direction::BottomUp) {
      next = pm_.rewrite(cur, ctx_);
    }
    if (!next || next == f.node) return finish(f.node, next ? next : cur);
    stack_.push_back({f.node, Stage::Link, next, f.chain});
    push_visit(next, f.chain + (next->id() >= first_new_id_ ? 1 : 0));
  }

  void finish(const UOpPtr& node, UOpPtr result) {
    done_[node.get()] = std::move(result);
    keep_.push_back(node);  // keeps `node` alive so its address stays a valid key
  }

  UOpPtr fixed_point(UOpPtr u) {
    UOpPtr first = pm_.rewrite(u, ctx_);
    if (!first) return u;  // most nodes: no rule applies, nothing to track
    std::unordered_set<const UOp*> seen{u.get()};
    std::vector<UOpPtr> chain{u};  // keeps every step alive, so `seen` holds no stale address
    uint32_t made = 0;
    for (UOpPtr next = std::move(first); next; next = pm_.rewrite(u, ctx_)) {
      if (!seen.insert(next.get()).second)
        throw RewriteError("graph_rewrite does not converge: the rules rewrite " + to_string(*next) +
                           " back to itself after " + std::to_string(chain.size()) + " steps");
      made += next->id() >= first_new_id_;
      if (made > kMaxChain)
        throw RewriteError("graph_rewrite does not converge: more than " + std::to_string(kMaxChain) +
                           " successive rewrites of one node, last to " + to_string(*next));
      chain.push_back(next);
      u = std::move(next);
    }
    return u;
  }

  const PatternMatcher& pm_;
  void* ctx_;
  Direction dir_;
  uint64_t first_new_id_;
  std::vector<Frame> stack_;
  std::unordered_map<const UOp*, UOpPtr>& done_;
  std::vector<UOpPtr>& keep_;
};

}  // namespace

UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, void* ctx, Direction direction) {
  RewriteMemo memo;
  return Rewriter(pm, ctx, direction, next_uop_id(), memo).run(root);
}

UOpPtr graph_rewrite(const UOpPtr& root, const PatternMatcher& pm, RewriteMemo& memo, Direction direction) {
  if (!memo.pm) {
    memo.pm = &pm;
    memo.direction = direction;
  } else if (memo.pm != &pm || memo.direction != direction) {
    throw InternalError("graph_rewrite: a RewriteMemo is reused with another matcher or direction");
  }
  return Rewriter(pm, nullptr, direction, next_uop_id(), memo).run(root);
}

}  // namespace lathe
