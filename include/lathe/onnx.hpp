// The ONNX importer: a model file becomes lathe Tensor calls (so kernels fuse across ONNX nodes),
// then an ExecutionPlan like any other graph. Link lathe::onnx.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lathe/plan.hpp"
#include "lathe/tensor.hpp"
#include "lathe/variable.hpp"

namespace lathe::onnx {

/// A malformed or unsupported model, or an input that does not fit it. The message names the
/// node, the operator and the tensor involved.
class OnnxError : public Error {
 public:
  using Error::Error;
};

/// What a graph value is declared to hold: a tensor, a sequence of tensors, or an optional one
/// of those (which may hold nothing).
enum class ValueKind { kTensor, kSequence, kOptionalTensor, kOptionalSequence };

/// A graph input or output: name, kind, element type and shape (of the tensor, or of each of the
/// sequence's tensors); a dimension is a number, or a name (`dim_param`), or unknown.
struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DType dtype = dtypes::float32;
  std::vector<std::optional<int64_t>> dims;
  std::vector<std::string> dim_params;  // one per dim; empty where the dim is a number or unknown
};

/// A value flowing through a graph: a tensor, a sequence of tensors (all of one dtype), or an
/// optional that holds nothing. An optional that holds something is that thing.
class Value {
 public:
  Value(Tensor t);  // NOLINT(google-explicit-constructor): every tensor is a value
  static Value sequence(std::vector<Tensor> items, DType dtype);
  /// A sequence whose tensors are the slices of `items` along its first axis, however many the
  /// plan decides as it runs (a loop's appended values): `items` its tensors stacked.
  static Value stacked(Tensor items);
  static Value none();

  bool is_tensor() const { return tensor_.has_value(); }
  bool is_sequence() const { return !tensor_ && !none_; }
  bool is_none() const { return none_; }
  /// Whether this is a sequence held stacked (Value::stacked).
  bool is_stacked() const { return stacked_.has_value(); }
  /// The tensor; throws OnnxError naming `what` when this is a sequence or nothing.
  const Tensor& tensor(const std::string& what = "value") const;
  /// The sequence's tensors; throws OnnxError naming `what` when this is not a sequence, or is
  /// one held stacked whose length is decided as the plan runs.
  const std::vector<Tensor>& items(const std::string& what = "value") const;
  /// A stacked sequence's tensors, stacked; throws OnnxError naming `what` for any other value.
  const Tensor& stacked_items(const std::string& what = "value") const;
  /// The element type (of the tensor, or of the sequence's tensors).
  DType dtype() const { return dtype_; }

 private:
  Value() = default;
  std::optional<Tensor> tensor_;
  std::vector<Tensor> items_;
  std::optional<Tensor> stacked_;
  DType dtype_ = dtypes::float32;
  bool none_ = false;
};

class PreparedModel;

class Model {
 public:
  /// Parses `path` (external-data weights are read from beside it). Throws OnnxError for a file
  /// that is missing, truncated or not an ONNX model.
  static Model load(const std::string& path);
  /// Parses a model held in memory; external data is looked up relative to `base_dir`.
  static Model from_bytes(const std::string& bytes, const std::string& base_dir = ".");

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  /// Inputs the caller provides (graph inputs that are not initializers).
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset() const;
  /// Throws OnnxError for a name in `names` that is not one of inputs(), listing those (build,
  /// build_values and PreparedModel::run check the names they are given the same way).
  void check_input_names(const std::vector<std::string>& names) const;

  /// Builds the model's outputs over `inputs` (by name), lazily: nothing runs until the outputs
  /// are realized or prepared. Throws OnnxError naming the node for an unsupported operator or
  /// inputs of the wrong dtype or rank.
  std::vector<Tensor> build(const std::map<std::string, Tensor>& inputs) const;
  /// The same for models whose inputs or outputs are sequences or optionals.
  std::vector<Value> build_values(const std::map<std::string, Value>& inputs) const;
  /// Builds and prepares the model once for every size of its named input dimensions
  /// (`dim_param`) from 1 up to `max_sizes[name]`: each becomes a Variable, so running it at
  /// another size rebinds the variable and compiles nothing. Every named dimension needs a
  /// maximum. Throws OnnxError naming the node for an operator that needs static sizes.
  /// A model whose graph depends on its input values in a way no plan step covers (a Reshape to
  /// a shape given as an input) is built again for each input instead, with one plan kept per
  /// input sizes and deciding values: see PreparedModel::rebuilds_because.
  /// `options` are the plan's settings (threads, backend, ...); unset ones take the defaults.
  PreparedModel prepare(const std::map<std::string, int64_t>& max_sizes, const PrepareOptions& options = {}) const;

  struct Impl;

 private:
  friend class PreparedModel;
  explicit Model(std::shared_ptr<Impl> impl);
  static Model from_proto(std::unique_ptr<Impl> impl, const std::string& base_dir);  // the parsed proto, checked
  std::shared_ptr<Impl> impl_;  // shared with the PreparedModels that build it again
};

/// An input as PreparedModel::check sees it, before its data exists as a Tensor: its name, dtype
/// and sizes.
struct InputShape {
  std::string name;
  DType dtype = dtypes::float32;
  Shape shape;
};

/// A model built and compiled once for a range of input sizes (Model::prepare).
class PreparedModel {
 public:
  PreparedModel(PreparedModel&&) noexcept;
  PreparedModel& operator=(PreparedModel&&) noexcept;
  ~PreparedModel();

  /// Runs on `inputs` (by name): each named dimension takes its size from the inputs (inputs
  /// that share a name must agree) and must lie in [1, its maximum]. Returns the outputs at
  /// their sizes for these inputs, as copies on the plan's device (to_vector reads them from any
  /// device). A bad input throws OnnxError and changes nothing.
  /// With `profile`, it receives each kernel's time and work in this run, in the order they ran.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs, std::vector<KernelProfile>* profile = nullptr);
  /// The checks run() makes, without running: every input known and given, of its dtype and
  /// rank, its fixed sizes, and its named dimensions in range and agreeing. Throws OnnxError
  /// naming the first input that is wrong; returns each named dimension's size.
  std::map<std::string, int64_t> check(const std::vector<InputShape>& inputs) const;
  /// The sizes the last run bound, by dimension name.
  const std::map<std::string, int64_t>& sizes() const;
  /// The plan behind it (of the last run, for a model built again per input): kernels, buffers,
  /// profiles.
  ExecutionPlan& plan();
  /// Empty when one plan serves every input. Otherwise why the model is built again for each
  /// input: the node that reads an input's value to decide the graph. Each run then builds the
  /// graph (computing those values) and runs the plan kept for its input sizes and those values,
  /// compiling only for a combination not seen before (the last 8 are kept).
  const std::string& rebuilds_because() const;

  struct Impl;

 private:
  friend class Model;
  explicit PreparedModel(std::unique_ptr<Impl> impl);
  // A run of a model built again for each input: the inputs' bytes and shapes, checked.
  std::vector<Tensor> run_rebuilt(const std::vector<std::vector<uint8_t>>& data, const std::vector<Shape>& shapes,
                                  std::vector<KernelProfile>* profile);
  std::unique_ptr<Impl> impl_;
};

/// Reads a serialized TensorProto (the backend tests' input_N.pb / output_N.pb files).
/// `name` receives the tensor's name when given.
Tensor load_tensor_pb(const std::string& path, std::string* name = nullptr);
/// Reads a serialized TensorProto, SequenceProto or OptionalProto, as `kind` says.
Value load_value_pb(const std::string& path, ValueKind kind, std::string* name = nullptr);

/// The operators the importer knows, sorted.
std::vector<std::string> supported_ops();

}  // namespace lathe::onnx
