// Loading ONNX models and building their graphs as Tensor calls.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx/op_context.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe::onnx {
namespace {

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw OnnxError(what + ": cannot open '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

namespace detail {

DType dtype_from_onnx(int32_t t, const std::string& what) {
  using TP = ::onnx::TensorProto;
  switch (t) {
    case TP::FLOAT: return dtypes::float32;
    case TP::UINT8: return dtypes::uint8;
    case TP::INT8: return dtypes::int8;
    case TP::UINT16: return dtypes::uint16;
    case TP::INT16: return dtypes::int16;
    case TP::INT32: return dtypes::int32;
    case TP::INT64: return dtypes::int64;
    case TP::BOOL: return dtypes::bool_;
    case TP::FLOAT16: return dtypes::float16;
    case TP::DOUBLE: return dtypes::float64;
    case TP::UINT32: return dtypes::uint32;
    case TP::UINT64: return dtypes::uint64;
    case TP::BFLOAT16: return dtypes::bfloat16;
    default: break;
  }
  throw OnnxError(what + ": element type " + std::to_string(t) + " (" +
                  (::onnx::TensorProto_DataType_IsValid(t) ? ::onnx::TensorProto_DataType_Name(t) : std::string("invalid")) +
                  ") is not supported");
}

namespace {

// Copies typed repeated fields into little-endian element bytes of `dt`.
template <class Field>
std::string pack(const Field& field, DType dt) {
  std::string out(static_cast<size_t>(field.size()) * static_cast<size_t>(dt.itemsize()), '\0');
  for (int i = 0; i < field.size(); ++i) {
    char* dst = out.data() + static_cast<size_t>(i) * static_cast<size_t>(dt.itemsize());
    auto v = field.Get(i);
    if (dt == dtypes::float32) {
      float f = static_cast<float>(v);
      std::memcpy(dst, &f, 4);
    } else if (dt == dtypes::float64) {
      double d = static_cast<double>(v);
      std::memcpy(dst, &d, 8);
    } else {
      uint64_t bits = static_cast<uint64_t>(v);  // ints, bool, and 16-bit float bit patterns
      std::memcpy(dst, &bits, static_cast<size_t>(dt.itemsize()));
    }
  }
  return out;
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir) {
  std::string what = "tensor '" + t.name() + "'";
  DType dt = dtype_from_onnx(t.data_type(), what);
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw OnnxError(what + ": negative dimension");
  size_t n = static_cast<size_t>(shape_numel(shape));
  size_t nbytes = n * static_cast<size_t>(dt.itemsize());
  std::string bytes;
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    }
    if (location.empty() || location.find("..") != std::string::npos)
      throw OnnxError(what + ": external data without a valid location");
    std::string file = read_file(base_dir + "/" + location, what);
    size_t len = length < 0 ? nbytes : static_cast<size_t>(length);
    if (offset < 0 || static_cast<size_t>(offset) + len > file.size())
      throw OnnxError(what + ": external data range is outside '" + location + "'");
    bytes = file.substr(static_cast<size_t>(offset), len);
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else if (dt == dtypes::float32) {
    bytes = pack(t.float_data(), dt);
  } else if (dt == dtypes::float64) {
    bytes = pack(t.double_data(), dt);
  } else if (dt == dtypes::int64) {
    bytes = pack(t.int64_data(), dt);
  } else if (dt == dtypes::uint32 || dt == dtypes::uint64) {
    bytes = pack(t.uint64_data(), dt);
  } else {
    bytes = pack(t.int32_data(), dt);
  }
  if (bytes.size() != nbytes)
    throw OnnxError(what + ": holds " + std::to_string(bytes.size()) + " bytes of data, its shape " + shape_to_string(shape) +
                    " of " + dt.name() + " needs " + std::to_string(nbytes));
  return lathe::detail::tensor_from_bytes(bytes.data(), bytes.size(), dt, shape);
}

}  // namespace detail

namespace detail {

void run_nodes(const ::onnx::GraphProto& g, std::map<std::string, Tensor>& env, int64_t opset, const std::string& base_dir) {
  const auto& table = op_table();
  for (const auto& node : g.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx" && node.domain() != "ai.onnx.preview.training")
      throw OnnxError("node '" + node.name() + "' (" + node.op_type() + "): domain '" + node.domain() + "' is not supported");
    std::vector<std::optional<Tensor>> ins;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        ins.emplace_back(std::nullopt);
        continue;
      }
      auto it = env.find(name);
      if (it == env.end())
        throw OnnxError("node '" + node.name() + "' (" + node.op_type() + "): input '" + name + "' is not defined before it");
      ins.emplace_back(it->second);
    }
    OpContext ctx(node, std::move(ins), opset, base_dir, &env);
    auto op = table.find(node.op_type());
    if (op == table.end()) ctx.fail("operator " + node.op_type() + " is not supported");
    std::vector<Tensor> outs;
    try {
      outs = op->second(ctx);
    } catch (const OnnxError&) {
      throw;
    } catch (const Error& e) {
      ctx.fail(e.what());
    }
    for (size_t i = 0; i < outs.size() && i < static_cast<size_t>(node.output_size()); ++i)
      if (!node.output(static_cast<int>(i)).empty()) env.insert_or_assign(node.output(static_cast<int>(i)), outs[i]);
  }
}

std::vector<Tensor> run_subgraph(const ::onnx::GraphProto& g, const std::map<std::string, Tensor>& outer,
                                 const std::vector<Tensor>& inputs, int64_t opset, const std::string& base_dir) {
  std::map<std::string, Tensor> env = outer;  // a subgraph sees its enclosing graph's values
  for (const auto& t : g.initializer()) env.insert_or_assign(t.name(), tensor_from_proto(t, base_dir));
  if (inputs.size() > static_cast<size_t>(g.input_size()))
    throw OnnxError("subgraph '" + g.name() + "' takes " + std::to_string(g.input_size()) + " inputs, given " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) env.insert_or_assign(g.input(static_cast<int>(i)).name(), inputs[i]);
  run_nodes(g, env, opset, base_dir);
  std::vector<Tensor> out;
  for (const auto& o : g.output()) {
    auto it = env.find(o.name());
    if (it == env.end()) throw OnnxError("subgraph output '" + o.name() + "' is never computed");
    out.push_back(it->second);
  }
  return out;
}

}  // namespace detail

struct Model::Impl {
  ::onnx::ModelProto proto;
  std::string base_dir;
  int64_t opset = 1;
  std::vector<ValueInfo> inputs, outputs;
};

namespace {

ValueInfo value_info(const ::onnx::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  const auto& type = v.type();
  if (!type.has_tensor_type()) throw OnnxError("graph value '" + v.name() + "' is not a tensor (sequences and maps are not supported)");
  info.dtype = detail::dtype_from_onnx(type.tensor_type().elem_type(), "graph value '" + v.name() + "'");
  for (const auto& d : type.tensor_type().shape().dim()) {
    info.dims.push_back(d.has_dim_value() ? std::optional<int64_t>(d.dim_value()) : std::nullopt);
    info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
  }
  return info;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::string& path) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return from_bytes(read_file(path, "model"), dir);
}

Model Model::from_bytes(const std::string& bytes, const std::string& base_dir) {
  auto impl = std::make_unique<Impl>();
  impl->base_dir = base_dir;
  if (!impl->proto.ParseFromString(bytes)) throw OnnxError("model: not a valid ONNX file (truncated or corrupt protobuf)");
  if (!impl->proto.has_graph()) throw OnnxError("model: the file has no graph");
  for (const auto& o : impl->proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") impl->opset = o.version();
  const auto& g = impl->proto.graph();
  std::vector<std::string> init_names;
  for (const auto& t : g.initializer()) init_names.push_back(t.name());
  for (const auto& v : g.input())
    if (std::find(init_names.begin(), init_names.end(), v.name()) == init_names.end()) impl->inputs.push_back(value_info(v));
  for (const auto& v : g.output()) impl->outputs.push_back(value_info(v));
  return Model(std::move(impl));
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
int64_t Model::opset() const { return impl_->opset; }

std::vector<Tensor> Model::build(const std::map<std::string, Tensor>& given) const {
  const auto& g = impl_->proto.graph();
  std::map<std::string, Tensor> env;
  for (const auto& t : g.initializer()) env.insert_or_assign(t.name(), detail::tensor_from_proto(t, impl_->base_dir));
  for (const ValueInfo& in : impl_->inputs) {
    auto it = given.find(in.name);
    if (it == given.end()) throw OnnxError("input '" + in.name + "' is not given");
    Tensor t = it->second;
    // numpy has no bfloat16: 16-bit float data often travels as uint16 bits.
    if (t.dtype() == dtypes::uint16 && (in.dtype == dtypes::bfloat16 || in.dtype == dtypes::float16)) t = t.bitcast(in.dtype);
    if (t.dtype() != in.dtype)
      throw OnnxError("input '" + in.name + "' is " + t.dtype().name() + ", the model expects " + in.dtype.name());
    if (!in.dims.empty() || t.ndim() == 0) {
      bool fits = static_cast<size_t>(t.ndim()) == in.dims.size();
      for (size_t i = 0; fits && i < in.dims.size(); ++i) fits = !in.dims[i] || *in.dims[i] == t.shape()[i];
      if (!fits) throw OnnxError("input '" + in.name + "' has shape " + shape_to_string(t.shape()) + ", which does not fit the model's");
    }
    env.insert_or_assign(in.name, t);
  }
  detail::run_nodes(g, env, impl_->opset, impl_->base_dir);
  std::vector<Tensor> result;
  for (const ValueInfo& o : impl_->outputs) {
    auto it = env.find(o.name);
    if (it == env.end()) throw OnnxError("output '" + o.name + "' is never computed");
    result.push_back(it->second);
  }
  return result;
}

Tensor load_tensor_pb(const std::string& path, std::string* name) {
  ::onnx::TensorProto t;
  if (!t.ParseFromString(read_file(path, "tensor file"))) throw OnnxError("'" + path + "' is not a TensorProto");
  if (name) *name = t.name();
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return detail::tensor_from_proto(t, dir);
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : detail::op_table()) out.push_back(name);
  return out;
}

}  // namespace lathe::onnx
