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

UOpPtr relist_reductions(const UOpPtr& root, const LoopLists& with) {
  if (with.empty()) return root;
  static const PatternMatcher pm({{UPat(Ops::REDUCE), [](const Match& m) -> UOpPtr {
                                     const auto& lists = m.ctx<const LoopLists>();
                                     const UOpPtr& red = m.root();
                                     std::vector<UOpPtr> src{red->src(0)};
                                     bool changed = false;
                                     for (size_t i = 1; i < red->src().size(); ++i) {
                                       auto it = lists.find(red->src(i).get());
                                       if (it == lists.end()) {
                                         src.push_back(red->src(i));
                                         continue;
                                       }
                                       src.insert(src.end(), it->second.begin(), it->second.end());
                                       changed = true;
                                     }
                                     return changed ? UOp::make(Ops::REDUCE, red->dtype(), std::move(src), red->arg()) : nullptr;
                                   }}});
  return graph_rewrite(root, pm, const_cast<LoopLists*>(&with));
}

}  // namespace lathe
