// The ONNX importer: a model file becomes lathe Tensor calls (so kernels fuse across ONNX nodes),
// then an ExecutionPlan like any other graph. Link lathe::onnx.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lathe/tensor.hpp"

namespace lathe::onnx {

/// A malformed or unsupported model, or an input that does not fit it. The message names the
/// node, the operator and the tensor involved.
class OnnxError : public Error {
 public:
  using Error::Error;
};

/// A graph input or output: name, element type and shape; a dimension is a number, or a name
/// (`dim_param`), or unknown.
struct ValueInfo {
  std::string name;
  DType dtype = dtypes::float32;
  std::vector<std::optional<int64_t>> dims;
  std::vector<std::string> dim_params;  // one per dim; empty where the dim is a number or unknown
};

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

  /// Builds the model's outputs over `inputs` (by name), lazily: nothing runs until the outputs
  /// are realized or prepared. Throws OnnxError naming the node for an unsupported operator or
  /// inputs of the wrong dtype or rank.
  std::vector<Tensor> build(const std::map<std::string, Tensor>& inputs) const;

  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Reads a serialized TensorProto (the backend tests' input_N.pb / output_N.pb files).
/// `name` receives the tensor's name when given.
Tensor load_tensor_pb(const std::string& path, std::string* name = nullptr);

/// The operators the importer knows, sorted.
std::vector<std::string> supported_ops();

}  // namespace lathe::onnx
