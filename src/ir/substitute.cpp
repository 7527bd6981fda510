#include "ir/substitute.hpp"

#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"

namespace lathe {

UOpPtr substitute(const UOpPtr& root, const Substitution& map) {
  if (map.empty()) return root;
  static const PatternMatcher pm({{UPat(), [](const Match& m) -> UOpPtr {
                                     const auto& mp = m.ctx<const Substitution>();
                                     auto it = mp.find(m.root().get());
                                     return it == mp.end() ? nullptr : it->second;
                                   }}});
  return graph_rewrite(root, pm, const_cast<Substitution*>(&map), Direction::TopDown);
}

}  // namespace lathe
