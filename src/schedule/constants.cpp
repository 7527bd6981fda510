#include "schedule/constants.hpp"

#include "ir/toposort.hpp"

namespace lathe {

bool made_of_constants(const UOpPtr& u, const IsConstantBuffer& constant, std::unordered_map<const UOp*, bool>& memo) {
  if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
  for (const UOpPtr& n : toposort(u, [&](const UOp& x) { return !memo.count(&x); })) {
    if (memo.count(n.get())) continue;
    bool k;
    if (n->is_const())
      k = true;
    else if (n->op() == Ops::BUFFER)
      k = constant && constant(*n);
    else if (n->op() == Ops::DEFINE_VAR || n->op() == Ops::BIND || n->src().empty())
      k = false;
    else {
      k = true;
      for (const UOpPtr& src : n->src()) k = k && memo.at(src.get());
    }
    memo.emplace(n.get(), k);
  }
  return memo.at(u.get());
}

}  // namespace lathe
