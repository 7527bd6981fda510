// Sequences and optionals: a sequence is a list of tensors known when the graph is built, so
// every op here is list manipulation; the tensors inside stay lazy and fuse as usual. A sequence
// a loop step appended to (Value::stacked, its length decided as the plan runs) is one tensor,
// which ConcatFromSequence and SequenceLength read.
#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Value>;

// A position in a sequence of `n` (negative counts from the end); `n` itself when `end_ok`.
size_t position(const OpContext& c, size_t i, size_t n, bool end_ok) {
  int64_t given = c.int_at0(i), p = given, size = static_cast<int64_t>(n);
  if (p < 0) p += size;
  if (p < 0 || p > size || (p == size && !end_ok)) c.fail("position " + std::to_string(given) + " is outside a sequence of " + std::to_string(n));
  return static_cast<size_t>(p);
}

V sequence_construct(const OpContext& c) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < c.num_inputs(); ++i) items.push_back(c.in(i));
  if (items.empty()) c.fail("needs at least one tensor");
  DType dt = items[0].dtype();
  for (const Tensor& t : items)
    if (t.dtype() != dt) c.fail("tensors of different dtypes (" + dt.name() + ", " + t.dtype().name() + ")");
  return V{Value::sequence(items, dt)};
}

V sequence_insert(const OpContext& c) {
  std::vector<Tensor> items = c.items(0);
  const Tensor& t = c.in(1);
  if (t.dtype() != c.value(0).dtype()) c.fail("inserting " + t.dtype().name() + " into a sequence of " + c.value(0).dtype().name());
  size_t at = c.has(2) ? position(c, 2, items.size(), true) : items.size();
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), t);
  return V{Value::sequence(items, t.dtype())};
}

V sequence_erase(const OpContext& c) {
  std::vector<Tensor> items = c.items(0);
  if (items.empty()) c.fail("erasing from an empty sequence");
  size_t at = c.has(1) ? position(c, 1, items.size(), false) : items.size() - 1;
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
  return V{Value::sequence(items, c.value(0).dtype())};
}

V split_to_sequence(const OpContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = axis_of(c, c.attr_i("axis", 0), x.ndim()), n = x.shape()[axis];
  std::vector<Tensor> parts;
  if (!c.has(1)) {
    parts = x.split(int64_t{1}, axis);
    if (c.attr_i("keepdims", 1) == 0)
      for (Tensor& p : parts) p = p.squeeze(axis);
  } else if (c.in(1).ndim() == 0) {
    int64_t size = c.int_at0(1);
    if (size <= 0) c.fail("split size " + std::to_string(size) + " is not positive");
    parts = x.split(size, axis);
  } else {
    std::vector<int64_t> sizes = c.ints(1);
    int64_t total = 0;
    for (int64_t s : sizes) total += s;
    if (total != n) c.fail("split sizes add up to " + std::to_string(total) + ", the axis has " + std::to_string(n));
    parts = x.split(sizes, axis);
  }
  return V{Value::sequence(parts, x.dtype())};
}

// A stacked sequence (its length decided as the plan runs) concatenated: stacked along `axis`
// is its tensor with the stacking axis moved there; joined along `axis`, that axis merged with
// the one after it.
Tensor concat_stacked(const OpContext& c, const Tensor& all, bool new_axis) {
  int64_t item_rank = all.ndim() - 1;
  int64_t axis = axis_of(c, c.attr_i("axis", 0), item_rank + (new_axis ? 1 : 0));
  std::vector<int64_t> order;
  for (int64_t d = 1; d <= item_rank; ++d) order.push_back(d);
  order.insert(order.begin() + axis, 0);
  Tensor moved = all.permute(order);
  if (new_axis) return moved;
  SymShape s = moved.symbolic_shape(), joined;
  for (size_t d = 0; d < s.size(); ++d) {
    if (static_cast<int64_t>(d) == axis + 1) continue;
    joined.push_back(static_cast<int64_t>(d) == axis ? s[d] * s[d + 1] : s[d]);
  }
  return moved.reshape(joined);
}

V concat_from_sequence(const OpContext& c) {
  bool stacked = c.value(0).is_stacked();
  if (stacked && !c.value(0).stacked_items().symbolic_shape()[0].is_static())
    return V{concat_stacked(c, c.value(0).stacked_items(), c.attr_i("new_axis", 0) != 0)};
  const std::vector<Tensor>& items = c.items(0);
  if (items.empty()) c.fail("concatenating an empty sequence");
  bool new_axis = c.attr_i("new_axis", 0) != 0;
  int64_t axis = axis_of(c, c.attr_i("axis", 0), items[0].ndim() + (new_axis ? 1 : 0));
  return V{new_axis ? Tensor::stack(items, axis) : Tensor::cat(items, axis)};
}

// Runs the body once per element: sequence inputs give their i-th tensor, tensor inputs
// themselves; each body output becomes a sequence.
V sequence_map(const OpContext& c) {
  size_t n = c.items(0).size();
  for (size_t k = 1; k < c.num_inputs(); ++k)
    if (c.value(k).is_sequence() && c.items(k).size() != n) c.fail("input sequences differ in length");
  std::vector<std::vector<Tensor>> outs(c.num_outputs());
  std::vector<DType> dtypes_out(c.num_outputs(), dtypes::float32);
  for (size_t i = 0; i < n; ++i) {
    V in;
    for (size_t k = 0; k < c.num_inputs(); ++k) in.emplace_back(c.value(k).is_sequence() ? c.items(k)[i] : c.in(k));
    V out = c.run_graph("body", in);
    if (out.size() != outs.size()) c.fail("the body returns " + std::to_string(out.size()) + " values");
    for (size_t k = 0; k < out.size(); ++k) {
      outs[k].push_back(out[k].tensor(c.where() + ": body output " + std::to_string(k)));
      dtypes_out[k] = outs[k].back().dtype();
    }
  }
  V result;
  for (size_t k = 0; k < outs.size(); ++k) result.push_back(Value::sequence(outs[k], dtypes_out[k]));
  return result;
}

// The dtype named by a `dtype` attribute, or float32.
DType dtype_attr(const OpContext& c) { return dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)), c.where()); }

V optional(const OpContext& c) {
  if (c.given(0)) return V{c.value(0)};
  if (!c.has_attr("type")) c.fail("an Optional without an input needs the 'type' attribute");
  return V{Value::none()};
}

}  // namespace

void register_sequence_ops(std::map<std::string, ValueOpFn>& t) {
  t["Identity"] = [](const OpContext& c) { return V{c.value(0)}; };
  t["SequenceEmpty"] = [](const OpContext& c) { return V{Value::sequence({}, dtype_attr(c))}; };
  t["SequenceConstruct"] = sequence_construct;
  t["SequenceInsert"] = sequence_insert;
  t["SequenceErase"] = sequence_erase;
  t["SequenceAt"] = [](const OpContext& c) { return V{c.items(0)[position(c, 1, c.items(0).size(), false)]}; };
  t["SequenceLength"] = [](const OpContext& c) {
    if (c.value(0).is_stacked()) return V{size_as_tensor(c.value(0).stacked_items().symbolic_shape()[0])};
    return V{Tensor::full({}, static_cast<int64_t>(c.items(0).size()), dtypes::int64)};
  };
  t["SplitToSequence"] = split_to_sequence;
  t["ConcatFromSequence"] = concat_from_sequence;
  t["SequenceMap"] = sequence_map;
  t["Optional"] = optional;
  t["OptionalHasElement"] = [](const OpContext& c) {
    bool has = c.num_inputs() > 0 && c.has(0);
    return V{Tensor::full({}, has, dtypes::bool_)};
  };
  t["OptionalGetElement"] = [](const OpContext& c) {
    if (!c.has(0)) c.fail("the optional input holds no value");
    return V{c.value(0)};
  };
}

}  // namespace lathe::onnx::detail
