#include "schedule/create_schedule.hpp"

#include <map>
#include <unordered_set>

#include "ir/label.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"
#include "schedule/buffer_assignment.hpp"
#include "schedule/channel_blocks.hpp"
#include "schedule/column_blocks.hpp"
#include "schedule/concat_blocks.hpp"
#include "schedule/lowering.hpp"
#include "schedule/reader_layout.hpp"
#include "schedule/realize.hpp"
#include "schedule/split_reduction.hpp"

namespace lathe {
namespace {

// Kernels read variables, not their current values: BIND(var, value) becomes var, and the value
// is recorded as the variable's binding. One variable bound to two values is an error.
UOpPtr strip_binds(const UOpPtr& ast, std::map<std::string, int64_t>& var_vals) {
  PatternMatcher pm({{UPat(Ops::BIND).named("b"), [](const Match& m) -> UOpPtr {
                        UOpPtr b = m["b"];
                        auto& vals = m.ctx<std::map<std::string, int64_t>>();
                        const std::string& name = b->src(0)->arg_as<VarArg>().name;
                        int64_t v = const_as_int(b->src(1)->const_value());
                        auto [it, fresh] = vals.emplace(name, v);
                        if (!fresh && it->second != v)
                          throw Error("variable '" + name + "' is bound to both " + std::to_string(it->second) + " and " +
                                      std::to_string(v) + " in one graph");
                        return b->src(0);
                      }}});
  return graph_rewrite(ast, pm, &var_vals);
}

// The labels of the nodes computed in the kernel that stores `root`: root and what it reads that
// is not stored by a kernel of its own.
std::vector<std::string> fused_labels(const UOpPtr& root, const std::unordered_map<const UOp*, bool>& realized) {
  std::vector<std::string> labels;
  if (!any_labels()) return labels;
  auto stored = [&](const UOp& u) { return is_stored(u, root.get(), realized); };
  for (const UOpPtr& u : toposort(root, [&](const UOp& u) { return !stored(u); })) {
    if (stored(*u)) continue;
    for (std::string& l : labels_of(*u))
      if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(std::move(l));
  }
  return labels;
}

}  // namespace

Schedule create_schedule(const std::vector<UOpPtr>& roots, const ScheduleContext& context) {
  SimplifyMemo memo;
  Schedule sched;
  // Where values are stored: the layouts their readers want, then each value stored once.
  // Each rule records what it rebuilt in the graph the one before it returned.
  std::vector<UOpPtr> outputs = store_convolution_inputs(roots, {}, &sched.becomes);
  Rebuilt joins, channels, columns, relayouts;
  outputs = join_channels_in_blocks(outputs, context.target, &joins);
  sched.becomes.then(joins);
  outputs = store_channels_in_blocks(outputs, context.target, {}, &channels);
  sched.becomes.then(channels);
  outputs = store_columns_in_blocks(outputs, context.target, context.constant, {}, &columns);
  sched.becomes.then(columns);
  outputs = read_relayouts_from_copies(outputs, &relayouts);
  sched.becomes.then(relayouts);
  UOpPtr sink = UOp::make(Ops::SINK, dtypes::void_, outputs);
  sched.shapes = graph_shapes(sink);
  std::vector<UOpPtr> order = toposort(sink);
  order.pop_back();  // the SINK itself
  sched.sym_shapes = graph_sym_shapes(sink, sched.shapes);
  // The sizes of a node a split reduction adds, from its sources' (each added before it).
  auto add_sym_shape = [&, src_dims = std::vector<const SymDims*>{}](const UOpPtr& u) mutable {
    if (sched.sym_shapes.count(u.get())) return;
    src_dims.clear();
    for (const UOpPtr& s : u->src()) src_dims.push_back(&sched.sym_shapes.at(s.get()));
    sched.sym_shapes.emplace(u.get(), node_sym_shape(*u, src_dims, sched.shapes.at(u.get())));
  };

  std::unordered_map<const UOp*, bool> realized;
  for (const UOpPtr& o : outputs) realized[o.get()] = true;
  for (const UOpPtr& u : order) {
    if (u->op() == Ops::CONTIGUOUS || u->op() == Ops::ATTENTION || wants_split(u, sched.shapes, sched.sym_shapes)) realized[u.get()] = true;
    // What a CONTIGUOUS stores is its source's value: store the source, so its other readers load
    // it too, and the CONTIGUOUS is a view of it (an input buffer is still copied).
    if (u->op() == Ops::CONTIGUOUS && u->src(0)->op() != Ops::BUFFER) realized[u->src(0).get()] = true;
    // A host step reads its inputs from memory and writes its own.
    if (u->op() == Ops::CUSTOM) {
      realized[u.get()] = true;
      for (const UOpPtr& s : u->src()) realized[s.get()] = true;
    }
  }
  choose_realized(order, sched.shapes, realized);

  sched.placements = place_before_lowering(order, outputs, sched, realized);
  std::unordered_set<const UOp*> filled;  // PADs whose fill went before their producer's kernel
  std::vector<UOpPtr> keep_alive;  // nodes the split made: the shape map keys on their addresses
  for (const UOpPtr& u : order) {
    if (u->op() == Ops::BUFFER || !realized[u.get()] || filled.count(u.get())) continue;
    ScheduleItem item;
    item.labels = fused_labels(u, realized);
    const Placement* placed = sched.placement(*u);
    if (u->op() == Ops::CUSTOM) {
      item.host_step = true;
      item.bufs = {u};
      item.bufs.insert(item.bufs.end(), u->src().begin(), u->src().end());
    } else if (placed && placed->kind == Placement::Kind::padded_interior) {
      // The PAD's buffer is filled first, then this kernel writes its interior.
      ScheduleItem fill;
      fill.labels = fused_labels(placed->base, realized);
      fill.ast = lower_fill(placed->base, sched, realized, fill.bufs);
      sched.items.push_back(std::move(fill));
      filled.insert(placed->base.get());
      item.ast = strip_binds(lower_kernel(u, sched, realized, item.bufs), sched.var_vals);
    } else if (placed && placed->kind == Placement::Kind::view) {
      item.bufs = {u};
    } else if (auto split = wants_split(u, sched.shapes, sched.sym_shapes) ? split_reduction(u, sched.shapes) : std::nullopt) {
      auto [partials, replacement] = *split;
      keep_alive.insert(keep_alive.end(), {partials, replacement});
      realized[partials.get()] = true;
      for (const UOpPtr& n : toposort(replacement)) add_sym_shape(n);
      ScheduleItem first;
      first.ast = strip_binds(lower_kernel(partials, sched, realized, first.bufs), sched.var_vals);
      first.labels = item.labels;  // both kernels compute u
      sched.items.push_back(std::move(first));
      item.ast = strip_binds(lower_kernel(replacement, sched, realized, item.bufs), sched.var_vals);
      item.bufs[0] = u;  // the replacement computes u's value into u's buffer
    } else {
      item.ast = strip_binds(lower_kernel(u, sched, realized, item.bufs), sched.var_vals);
    }
    sched.items.push_back(std::move(item));
  }
  sched.keep_alive = std::move(keep_alive);
  sched.outputs = outputs;
  place_concatenations(sched);
  return sched;
}

}  // namespace lathe
