#include "schedule/buffer_assignment.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "schedule/concat_in_place.hpp"
#include "schedule/padded_in_place.hpp"
#include "schedule/realize.hpp"
#include "schedule/split_reduction.hpp"

namespace lathe {
namespace {

Shape strides_of(const Shape& shape) {
  Shape st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

// A node that is only reshapes and shrinks of a stored buffer, landing on a contiguous range of
// it, needs no kernel: its buffer is a view. Returns the stored node and the element offset.
std::optional<std::pair<UOpPtr, int64_t>> contiguous_view(const UOpPtr& root, const std::unordered_map<const UOp*, Shape>& shapes,
                                                          const std::unordered_map<const UOp*, bool>& realized) {
  std::vector<UOpPtr> chain;
  UOpPtr u = root;
  bool copies = false;  // a CONTIGUOUS on the way: a copy asked for
  while (!is_stored(*u, root.get(), realized)) {
    if (u->op() == Ops::CONTIGUOUS) {
      copies = true;
      u = u->src(0);
      continue;
    }
    if (u->op() != Ops::RESHAPE && u->op() != Ops::SHRINK) return std::nullopt;
    // A symbolic shrink is a view only as a prefix of the first axis: packed data stays packed.
    if (u->op() == Ops::SHRINK && u->src().size() > 1) {
      const Shape& in = shapes.at(u->src(0).get());
      for (size_t i = 0; i < in.size(); ++i) {
        const UOpPtr& s = u->src(1 + 2 * i);
        const UOpPtr& e = u->src(2 + 2 * i);
        bool zero_start = s->is_const() && const_as_int(s->const_value()) == 0;
        bool full = e->is_const() && const_as_int(e->const_value()) == in[i];
        if (!zero_start || (i > 0 && !full)) return std::nullopt;
      }
    }
    chain.push_back(u);
    u = u->src(0);
  }
  // A contiguous copy of a value this schedule already stores is that store: only an input
  // buffer is copied (the copy must not change with the input).
  if ((chain.empty() && !copies) || (copies && u->op() == Ops::BUFFER)) return std::nullopt;
  Shape shape = shapes.at(u.get());
  Shape strides = strides_of(shape);
  int64_t offset = 0;
  auto contiguous = [&] {
    Shape want = strides_of(shape);
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] != 1 && strides[i] != want[i]) return false;
    return true;
  };
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const auto& arg = (*it)->arg_as<std::vector<int64_t>>();
    if ((*it)->op() == Ops::RESHAPE) {
      if (!contiguous()) return std::nullopt;
      shape = arg;
      strides = strides_of(shape);
      continue;
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      offset += arg[2 * i] * strides[i];
      shape[i] = arg[2 * i + 1] - arg[2 * i];
    }
  }
  if (!contiguous()) return std::nullopt;
  return std::make_pair(u, offset);
}

// `node`, followed through the views of it that start at its first element, to the node whose
// kernel stores the memory.
UOpPtr through_views(UOpPtr node, const Schedule& sched) {
  for (const Placement* p = sched.placement(*node); p && p->kind == Placement::Kind::view && p->offset == 0; p = sched.placement(*node))
    node = p->base;
  return node;
}

}  // namespace

std::unordered_map<const UOp*, Placement> place_before_lowering(const std::vector<UOpPtr>& order,
                                                                const std::vector<UOpPtr>& outputs,
                                                                const Schedule& sched,
                                                                std::unordered_map<const UOp*, bool>& realized) {
  std::unordered_map<const UOp*, Placement> placed;
  std::unordered_map<const UOp*, std::vector<const UOp*>>
      viewed;  // nodes a view reads in their own layout: those views
  for (const UOpPtr& u : order) {
    auto r = realized.find(u.get());
    if (u->op() == Ops::BUFFER || u->op() == Ops::CUSTOM || r == realized.end() || !r->second) continue;
    if (auto view = contiguous_view(u, sched.shapes, realized)) {
      placed[u.get()] = {Placement::Kind::view, view->first, view->second, shape_numel(sched.shapes.at(u.get()))};
      viewed[view->first.get()].push_back(u.get());
    }
  }
  // A view that is its base whole (a layout copy of a value stored in the copy's layout) and
  // that no view reads in turn can be read as its base wherever that is stored; any other view
  // reads the base in its own layout.
  auto whole = [&](const UOp* v, const UOp* base) {
    const Placement& p = placed.at(v);
    return p.offset == 0 && v->op() == Ops::CONTIGUOUS && sched.shapes.at(v) == sched.shapes.at(base) && !viewed.count(v);
  };
  // A padded copy written in place, unless its producer's reduction is split in two kernels or a
  // view reads the producer in its own layout. Views that are the producer whole are dissolved:
  // their readers read the producer, in the padded buffer's interior.
  for (const auto& [producer, pad] : padded_in_place(order, outputs, sched.sym_shapes, realized)) {
    const UOp* x = producer;  // a name the lambda below can capture (clang 14 captures no structured binding)
    if (x->op() == Ops::CUSTOM || wants_split(pad->src(0), sched.shapes, sched.sym_shapes)) continue;
    auto v = viewed.find(x);
    if (v != viewed.end() && !std::all_of(v->second.begin(), v->second.end(), [&](const UOp* u) { return whole(u, x); }))
      continue;
    if (v != viewed.end())
      for (const UOp* u : v->second) placed.erase(u), realized[u] = false;
    placed[x] = {Placement::Kind::padded_interior, pad, 0, shape_numel(sched.shapes.at(pad.get()))};
  }
  return placed;
}

void place_concatenations(Schedule& sched) {
  std::unordered_map<const UOp*, const ScheduleItem*> item_of;
  for (const ScheduleItem& item : sched.items) item_of[item.bufs[0].get()] = &item;
  // Nodes that are or hold a padded copy's memory, and the outputs with every node an output views:
  // a part inside the joined buffer would make two outputs share memory.
  std::unordered_set<const UOp*> padded, outputs;
  for (const auto& [node, p] : sched.placements)
    if (p.kind == Placement::Kind::padded_interior) padded.insert({node, p.base.get()});
  for (const UOpPtr& o : sched.outputs)
    for (UOpPtr node = o;;) {
      outputs.insert(node.get());
      const Placement* p = sched.placement(*node);
      if (!p || p->kind != Placement::Kind::view) break;
      node = p->base;
    }
  std::vector<bool> joined(sched.items.size(), false);
  for (size_t i = 0; i < sched.items.size(); ++i) {
    const ScheduleItem& item = sched.items[i];
    if (!item.ast || outputs.count(item.bufs[0].get()) || padded.count(item.bufs[0].get())) continue;
    std::optional<std::vector<ConcatPart>> parts = concatenated_parts(item.ast);
    if (!parts) continue;
    std::vector<std::pair<UOpPtr, int64_t>> runs;
    for (const ConcatPart& part : *parts) {
      const UOpPtr& read = item.bufs.at(part.slot);
      UOpPtr node = through_views(read, sched);
      auto it = item_of.find(node.get());
      bool taken = sched.placement(*node) != nullptr;
      for (const auto& r : runs) taken = taken || r.first == node;
      if (it == item_of.end() || !it->second->ast || outputs.count(node.get()) || padded.count(node.get()) || taken ||
          shape_numel(sched.shapes.at(node.get())) != shape_numel(sched.shapes.at(read.get())))
        break;
      runs.emplace_back(node, part.offset);
    }
    if (runs.size() != parts->size()) continue;
    for (const auto& [node, offset] : runs)
      sched.placements[node.get()] = {Placement::Kind::concatenation_run, item.bufs[0], offset, shape_numel(sched.shapes.at(node.get()))};
    joined[i] = true;
  }
  std::vector<ScheduleItem> kept;
  for (size_t i = 0; i < sched.items.size(); ++i)
    if (!joined[i]) kept.push_back(std::move(sched.items[i]));
  sched.items = std::move(kept);
}

}  // namespace lathe
