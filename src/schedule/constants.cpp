#include "schedule/constants.hpp"

#include "ir/toposort.hpp"

namespace lathe {
namespace {

// A property of `u` from its leaves' (`leaf`: a node without sources, or a variable) and its
// sources' (all of them must have it, or any one), each node walked once across questions, sources
// first (a graph may be deeper than the stack).
template <class Leaf>
bool walked(const UOpPtr& u, std::unordered_map<const UOp*, bool>& memo, const Leaf& leaf, bool all) {
  if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
  for (const UOpPtr& n : toposort(u, [&](const UOp& x) { return !memo.count(&x); })) {
    if (memo.count(n.get())) continue;
    bool v;
    if (n->src().empty() || n->op() == Ops::DEFINE_VAR || n->op() == Ops::BIND) {
      v = leaf(*n);
    } else {
      v = all;
      for (const UOpPtr& src : n->src()) v = all ? v && memo.at(src.get()) : v || memo.at(src.get());
    }
    memo.emplace(n.get(), v);
  }
  return memo.at(u.get());
}

}  // namespace

bool made_of_constants(const UOpPtr& u, const IsConstantBuffer& constant, std::unordered_map<const UOp*, bool>& memo) {
  auto leaf = [&](const UOp& n) { return n.is_const() || (n.op() == Ops::BUFFER && constant && constant(n)); };
  return walked(u, memo, leaf, true);
}

bool has_variables(const UOpPtr& u, std::unordered_map<const UOp*, bool>& memo) {
  auto leaf = [](const UOp& n) { return n.op() == Ops::DEFINE_VAR || n.op() == Ops::BIND; };
  return walked(u, memo, leaf, false);
}

}  // namespace lathe
