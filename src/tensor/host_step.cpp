// Tensor::host_step: a step run on the host inside a plan, whose outputs' sizes it decides.
#include <algorithm>

#include "ir/eval.hpp"
#include "lathe/plan.hpp"
#include "lathe/tensor.hpp"
#include "runtime/host_steps.hpp"
#include "schedule/shape.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {

std::vector<Tensor> Tensor::host_step(std::shared_ptr<const HostStep> step, const std::vector<Tensor>& inputs) {
  if (!step || !step->run) throw Error("host_step: the step has no run function");
  if (step->outputs.empty()) throw Error("host step '" + step->name + "': it has no outputs");
  std::vector<UOpPtr> sources;
  std::vector<SymShape> shapes;
  for (const Tensor& t : inputs) {
    // The step reads each input packed, at its sizes: a buffer as it is, anything else stored first.
    sources.push_back(t.is_realized() ? t.uop() : t.contiguous().uop());
    shapes.push_back(t.symbolic_shape());
  }
  uint64_t key = new_host_step_key();
  std::vector<Tensor> outs;
  std::vector<HostOutput> held = held_outputs(*step);
  for (size_t k = 0; k < held.size(); ++k) {
    const SymShape& shape = held[k].shape;
    Shape largest = detail::max_shape(shape);
    detail::check_shape(largest, "host_step");
    int64_t elements = shape_numel(largest);
    Tensor flat(host_step_node(step, key, k, elements, sources, shapes), {elements});
    outs.push_back(flat.shrink({{0, detail::sym_numel(shape)}}).reshape(shape));
  }
  return outs;
}

namespace detail {

SymShape with_values(const SymShape& shape, const std::unordered_map<std::string, int64_t>& vars) {
  SymShape out = shape;
  for (SInt& d : out)
    if (!d.is_static() && !free_variables(d.uop()).empty()) d = SInt(d.value_at(vars));
  return out;
}

Tensor view_at(const Buffer& buffer, const Shape& shape) {
  auto n = static_cast<size_t>(shape_numel(shape));
  return Tensor::from_buffer(n == buffer.size() ? buffer : Buffer::view(buffer, 0, n, buffer.dtype()), shape);
}

}  // namespace detail

Tensor Tensor::read_from(const ExecutionPlan& plan, size_t position) const {
  const Buffer* out = plan.output_buffer_at(position);
  if (!out) throw Error("read_from: the plan has no output " + std::to_string(position));
  Shape sizes;  // every variable at the run's value: as the plan bound it, or as a host step decided it
  for (const SInt& d : symbolic_shape()) sizes.push_back(d.value_at(plan.variable_values()));
  return detail::view_at(*out, sizes);
}

}  // namespace lathe
