// A model prepared once for a range of sizes: named input dimensions become Variables, inputs
// are copied into buffers sized for the maxima, and each run rebinds the variables.
#include <algorithm>
#include <cstdio>

#include "ir/toposort.hpp"
#include "onnx/input_names.hpp"
#include "onnx/op_context.hpp"
#include "lathe/onnx.hpp"
#include "support/settings.hpp"

namespace lathe::onnx {

struct PreparedModel::Impl {
  struct Input {
    ValueInfo info;
    Buffer buffer;  // sized for the maxima; a run packs its data at the front
  };
  std::vector<Input> inputs;
  std::map<std::string, Variable> variables;
  std::vector<Tensor> outputs;  // the graph's outputs, read from the plan at each run's sizes
  std::map<std::string, int64_t> sizes;
  ExecutionPlan plan;
  std::vector<std::string> bound;  // the variables the plan's kernels read (a size may only shape a view)

  // A model built again for each input (rebuilds_because): a plan per input sizes and deciding
  // values, the most recently used last.
  struct Built {
    std::string key;
    ExecutionPlan plan;
    std::vector<Buffer> inputs;   // the plan's input buffers, one per model input
    std::vector<Tensor> outputs;  // the graph's outputs, read from the plan at each run's sizes
  };
  std::string rebuilds_because;
  std::shared_ptr<Model::Impl> model;
  PrepareOptions options;
  std::vector<Built> built;
  size_t last = 0;
  static constexpr size_t kMostBuilt = 8;
};

PreparedModel::PreparedModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedModel::PreparedModel(PreparedModel&&) noexcept = default;
PreparedModel& PreparedModel::operator=(PreparedModel&&) noexcept = default;
PreparedModel::~PreparedModel() = default;

PreparedModel Model::prepare(const std::map<std::string, int64_t>& max_sizes, const PrepareOptions& options) const {
  auto impl = std::make_unique<PreparedModel::Impl>();
  std::map<std::string, Tensor> given;
  for (const ValueInfo& in : inputs()) {
    std::string what = "input '" + in.name + "'";
    if (in.kind != ValueKind::kTensor) throw OnnxError(what + ": only tensor inputs can be prepared for a range of sizes");
    SymShape shape;
    for (size_t d = 0; d < in.dims.size(); ++d) {
      if (in.dims[d]) {
        if (*in.dims[d] < 0) throw OnnxError(what + ": dimension " + std::to_string(d) + " is negative");
        shape.emplace_back(*in.dims[d]);
        continue;
      }
      const std::string& name = in.dim_params[d];
      if (name.empty()) throw OnnxError(what + ": dimension " + std::to_string(d) + " has neither a size nor a name");
      auto max = max_sizes.find(name);
      if (max == max_sizes.end()) throw OnnxError(what + ": dimension '" + name + "' needs a maximum size");
      if (max->second < 1) throw OnnxError("the maximum size of '" + name + "' must be at least 1");
      auto var = impl->variables.try_emplace(name, name, 1, max->second).first;
      shape.push_back(var->second.bind(max->second));
      impl->sizes[name] = max->second;
    }
    int64_t elements = 1;
    for (const SInt& size : shape) {
      int64_t d = size.max();
      if (d != 0 && elements > (int64_t{1} << 40) / d) throw OnnxError(what + ": its largest size has more than 2^40 elements");
      elements *= d;
    }
    Buffer buffer(in.dtype, static_cast<size_t>(elements));
    given.insert_or_assign(in.name, Tensor::from_buffer(buffer, shape));
    impl->inputs.push_back({in, buffer});
  }
  for (const auto& [name, max] : max_sizes)
    if (!impl->variables.count(name)) throw OnnxError("no input has a dimension named '" + name + "'");
  // While the graph is built, no node may read a value computed from these inputs.
  std::set<uint64_t> input_nodes;
  for (const auto& [name, t] : given)
    for (const UOpPtr& u : toposort(t.uop()))
      if (u->op() == Ops::BUFFER) input_nodes.insert(u->id());
  detail::RunTimeInputsScope scope(std::move(input_nodes), true);
  scope.use_options(options);
  std::vector<Tensor> outs;
  try {
    outs = build(given);
  } catch (const detail::NeedsRunTimeValue& e) {
    // No plan step covers it: the model is built again for each input (its sizes and deciding
    // values key the plans kept).
    impl->rebuilds_because = e.what();
    impl->model = impl_;
    impl->options = options;
    if (settings::debug_level() >= 2) std::fprintf(stderr, "lathe: the prepared model is built again for each input: %s\n", e.what());
    return PreparedModel(std::move(impl));
  }
  impl->plan = Tensor::prepare(outs, options);
  impl->outputs = outs;
  // The input sizes the plan reads (a size may only shape a view); a size a host step decides is its own.
  auto note = [&](const std::vector<RuntimeVar>& vars) {
    for (const RuntimeVar& v : vars)
      if (impl->variables.count(v.name) && std::find(impl->bound.begin(), impl->bound.end(), v.name) == impl->bound.end())
        impl->bound.push_back(v.name);
  };
  for (const PreparedOp& op : impl->plan.prepared_ops()) {
    if (const auto* k = std::get_if<PreparedKernel>(&op)) note(k->runtime_vars);
    if (const auto* f = std::get_if<PreparedCustom>(&op)) note(f->runtime_vars);
  }
  return PreparedModel(std::move(impl));
}

namespace {

// Copies of `plan`'s outputs (`outputs` the graph's) at the last run's sizes (`sizes`, the input
// sizes it ran at, with what its host steps decided), on the plan's device: the plan reuses its
// buffers. On a GPU the copies are queued behind the plan's kernels: they are whole when this
// returns.
std::vector<Tensor> output_copies(const ExecutionPlan& plan, const std::vector<Tensor>& outputs, const std::map<std::string, int64_t>& sizes) {
  std::unordered_map<std::string, int64_t> vals = plan.variable_values();
  for (const auto& [name, value] : sizes) vals[name] = value;  // an input size no kernel reads (an output that views an input)
  std::vector<Tensor> copies;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Shape shape;
    for (const SInt& d : outputs[i].symbolic_shape()) shape.push_back(d.value_at(vals));
    size_t elements = 1;
    for (int64_t d : shape) elements *= static_cast<size_t>(d);
    const Buffer* out = plan.output_buffer_at(i);
    Buffer copy(outputs[i].dtype(), elements, out->device());
    if (elements > 0) copy.copy_from(Buffer::view(*out, 0, elements, outputs[i].dtype()));
    copies.push_back(Tensor::from_buffer(copy, shape));
  }
  if (const Buffer* first = plan.output_buffer_at(0)) first->synchronize();
  return copies;
}

// A key's bytes for a value the build read: its dtype's name, shape and elements (exact, as int64
// or float64).
void append_value(std::string& key, const Tensor& t) {
  key += t.dtype().name() + shape_to_string(t.shape()) + ":";
  if (t.dtype().is_float()) {
    std::vector<double> v = t.cast(dtypes::float64).to_vector<double>();
    key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  } else {
    std::vector<int64_t> v = t.cast(dtypes::int64).to_vector<int64_t>();
    key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
  }
  key += ";";
}

}  // namespace

std::vector<Tensor> PreparedModel::run_rebuilt(const std::vector<std::vector<uint8_t>>& data, const std::vector<Shape>& shapes,
                                               std::vector<KernelProfile>* profile) {
  Impl& m = *impl_;
  // The inputs in memory of their own (the plan may keep them); the graph built over them, noting
  // every value it computes from them.
  std::map<std::string, Tensor> given;
  std::vector<Buffer> buffers;
  std::set<uint64_t> ids;
  std::string key;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const ValueInfo& info = m.inputs[i].info;
    size_t elements = 1;
    for (int64_t d : shapes[i]) elements *= static_cast<size_t>(d);
    Buffer b(info.dtype, elements);
    if (!data[i].empty()) b.copyin(data[i].data(), data[i].size());
    Tensor t = Tensor::from_buffer(b, shapes[i]);
    ids.insert(t.uop_id());
    given.insert_or_assign(info.name, t);
    buffers.push_back(b);
    key += info.name + shape_to_string(shapes[i]) + ";";
  }
  std::vector<Tensor> reads, outs;
  {
    detail::RunTimeInputsScope scope(std::move(ids), false);
    scope.record_reads(&reads);
    scope.use_options(m.options);
    outs = Model(m.model).build(given);
  }
  for (const Tensor& t : reads) append_value(key, t);
  auto found = std::find_if(m.built.begin(), m.built.end(), [&](const Impl::Built& b) { return b.key == key; });
  if (found != m.built.end()) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].nbytes()) found->inputs[i].copy_from(buffers[i]);
    std::rotate(found, found + 1, m.built.end());  // the most recently used last
  } else {
    if (m.built.size() == Impl::kMostBuilt) m.built.erase(m.built.begin());
    m.built.push_back({key, Tensor::prepare(outs, m.options), buffers, outs});
  }
  Impl::Built& b = m.built.back();
  if (profile) *profile = b.plan.execute_profiled();
  else b.plan.execute();
  return output_copies(b.plan, b.outputs, {});
}

const std::string& PreparedModel::rebuilds_because() const { return impl_->rebuilds_because; }

std::map<std::string, int64_t> PreparedModel::check(const std::vector<InputShape>& given) const {
  std::map<std::string, int64_t> sizes;
  std::vector<ValueInfo> infos;
  std::vector<std::string> names;
  for (const Impl::Input& in : impl_->inputs) infos.push_back(in.info);
  for (const InputShape& g : given) names.push_back(g.name);
  require_known_inputs(infos, names);
  for (const Impl::Input& in : impl_->inputs) {
    std::string what = "input '" + in.info.name + "'";
    auto it = std::find_if(given.begin(), given.end(), [&](const InputShape& g) { return g.name == in.info.name; });
    if (it == given.end()) throw OnnxError(what + " is not given");
    if (it->dtype != in.info.dtype) throw OnnxError(what + " is " + it->dtype.name() + ", the model expects " + in.info.dtype.name());
    const Shape& shape = it->shape;
    if (shape.size() != in.info.dims.size())
      throw OnnxError(what + " has shape " + shape_to_string(shape) + ", the model expects " + std::to_string(in.info.dims.size()) + " axes");
    for (size_t d = 0; d < in.info.dims.size(); ++d) {
      int64_t size = shape[d];
      if (in.info.dims[d]) {
        if (*in.info.dims[d] != size)
          throw OnnxError(what + " has shape " + shape_to_string(shape) + ": axis " + std::to_string(d) + " must be " +
                          std::to_string(*in.info.dims[d]));
        continue;
      }
      const std::string& name = in.info.dim_params[d];
      const Variable& var = impl_->variables.at(name);
      if (size < var.min() || size > var.max())
        throw OnnxError(what + ": dimension '" + name + "' is " + std::to_string(size) + ", outside the prepared range [" +
                        std::to_string(var.min()) + ", " + std::to_string(var.max()) + "]");
      auto [at, fresh] = sizes.emplace(name, size);
      if (!fresh && at->second != size)
        throw OnnxError(what + ": dimension '" + name + "' is " + std::to_string(size) + ", another input has it " + std::to_string(at->second));
    }
  }
  return sizes;
}

std::vector<Tensor> PreparedModel::run(const std::map<std::string, Tensor>& given, std::vector<KernelProfile>* profile) {
  // Every check first, so a bad input leaves the buffers and bindings as they were.
  std::vector<InputShape> shapes_given;
  for (const auto& [name, t] : given) shapes_given.push_back({name, t.dtype(), t.shape()});
  std::map<std::string, int64_t> sizes = check(shapes_given);
  std::vector<std::vector<uint8_t>> data;  // an input's bytes, staged on the host; or
  std::vector<Buffer> direct;              // its buffer, where it is on the plan's device already
  std::vector<Shape> shapes;
  for (const Impl::Input& in : impl_->inputs) {
    const Tensor& t = given.at(in.info.name);
    bool on_the_device = !impl_->model && t.is_realized() && t.buffer().device() == in.buffer.device();
    data.push_back(on_the_device ? std::vector<uint8_t>{} : lathe::detail::tensor_bytes(t, t.dtype(), "PreparedModel::run"));
    direct.push_back(on_the_device ? t.buffer() : Buffer());
    shapes.push_back(t.shape());
  }
  if (impl_->model) {
    std::vector<Tensor> outs = run_rebuilt(data, shapes, profile);
    impl_->sizes = sizes;
    return outs;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    const Buffer& whole = impl_->inputs[i].buffer;
    size_t nbytes = direct[i].valid() ? direct[i].nbytes() : data[i].size();
    if (nbytes == 0) continue;
    Buffer front = Buffer::view(whole, 0, nbytes / static_cast<size_t>(whole.dtype().itemsize()), whole.dtype());
    if (direct[i].valid()) {
      front.copy_from(direct[i]);  // on the plan's device already: no trip through the host
    } else {
      front.copyin(data[i].data(), data[i].size());
    }
  }
  std::vector<std::pair<std::string, int64_t>> binds;
  for (const std::string& name : impl_->bound) binds.emplace_back(name, sizes.at(name));
  if (profile) *profile = impl_->plan.execute_with_vars_profiled(binds);
  else impl_->plan.execute_with_vars(binds);
  impl_->sizes = sizes;
  return output_copies(impl_->plan, impl_->outputs, sizes);
}

const std::map<std::string, int64_t>& PreparedModel::sizes() const { return impl_->sizes; }
ExecutionPlan& PreparedModel::plan() { return impl_->model && !impl_->built.empty() ? impl_->built.back().plan : impl_->plan; }

}  // namespace lathe::onnx
