// Loading ONNX models and building their graphs as Tensor calls.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <unordered_set>

#include "ir/label_computed.hpp"
#include "onnx/initializer_data.hpp"
#include "onnx/input_names.hpp"
#include "onnx/op_context.hpp"
#include "onnx/size_values.hpp"

namespace lathe::onnx {
namespace {

// The file at `path` opened at `offset`, checked to hold `length` bytes from there (`what` names
// the tensor): called before the bytes' buffer is allocated, so a corrupt shape or length is an
// error naming the tensor, not a failed allocation of its claimed size.
std::ifstream open_range(const std::string& path, const std::string& what, uint64_t offset, uint64_t length) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw OnnxError(what + ": cannot open '" + path + "'");
  auto end = f.tellg();
  if (end < 0) throw OnnxError(what + ": cannot read '" + path + "'");
  auto size = static_cast<uint64_t>(end);
  if (offset > size || length > size - offset)
    throw OnnxError(what + ": the range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") is outside '" + path + "' (" +
                    std::to_string(size) + " bytes)");
  f.seekg(static_cast<std::streamoff>(offset));
  return f;
}

void read_into(std::ifstream& f, const std::string& path, const std::string& what, uint64_t length, void* dst) {
  if (!f.read(static_cast<char*>(dst), static_cast<std::streamsize>(length))) throw OnnxError(what + ": cannot read '" + path + "'");
}

// The whole file at `path`.
std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw OnnxError(what + ": cannot open '" + path + "'");
  std::ifstream f = open_range(path, what, 0, size);
  std::string bytes(static_cast<size_t>(size), '\0');
  read_into(f, path, what, bytes.size(), bytes.data());
  return bytes;
}

// A model file mapped for reading while it is parsed: only the pages the parse walks are read.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
      close();
      throw OnnxError("model: cannot open '" + path + "'");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      close();
      throw OnnxError("model: cannot read '" + path + "'");
    }
    data_ = static_cast<const char*>(p);
  }
  ~MappedFile() { close(); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

  // `length` bytes from `offset` into `dst`, by read (so the mapping's pages stay unread).
  bool read(uint64_t offset, uint64_t length, void* dst) const {
    auto* out = static_cast<char*>(dst);
    while (length > 0) {
      ssize_t n = ::pread(fd_, out, length, static_cast<off_t>(offset));
      if (n <= 0) return false;
      out += n;
      offset += static_cast<uint64_t>(n);
      length -= static_cast<uint64_t>(n);
    }
    return true;
  }

 private:
  void close() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
    data_ = nullptr;
    fd_ = -1;
  }

  int fd_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Initializer payloads of at least this many bytes are read straight into their buffers.
constexpr uint64_t kLeftOutBytes = 4096;

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

namespace {

// The bytes `t`'s dtype and shape need; an error naming it for a negative dimension or a size past
// 2^48 bytes (wrapped dimensions included), before anything is allocated.
uint64_t payload_bytes(const ::onnx::TensorProto& t, const std::string& what) {
  uint64_t bytes = static_cast<uint64_t>(dtype_from_onnx(t.data_type(), what).itemsize());
  constexpr uint64_t kMost = uint64_t{1} << 48;
  for (int64_t d : t.dims()) {
    if (d < 0) throw OnnxError(what + ": negative dimension");
    if (d != 0 && bytes > kMost / static_cast<uint64_t>(d)) throw OnnxError(what + ": its shape needs more than 2^48 bytes");
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes;
}

// A tensor of `t`'s dtype and shape whose `length` bytes of data (nothing: as many as the shape
// needs) `fill` writes into its buffer.
Tensor filled_tensor(const ::onnx::TensorProto& t, std::optional<uint64_t> length, const std::function<void(void*, uint64_t)>& fill) {
  std::string what = "tensor '" + t.name() + "'";
  DType dt = dtype_from_onnx(t.data_type(), what);
  Shape shape(t.dims().begin(), t.dims().end());
  uint64_t nbytes = payload_bytes(t, what);
  size_t n = static_cast<size_t>(nbytes / static_cast<uint64_t>(dt.itemsize()));
  if (length && *length != nbytes)
    throw OnnxError(what + ": holds " + std::to_string(*length) + " bytes of data, its shape " + shape_to_string(shape) + " of " +
                    dt.name() + " needs " + std::to_string(nbytes));
  Buffer b(dt, n);
  if (nbytes && b.host_visible()) {
    fill(b.data(), nbytes);
  } else if (nbytes) {  // a device the host cannot address: filled on the host, then copied
    std::vector<char> staged(static_cast<size_t>(nbytes));
    fill(staged.data(), nbytes);
    b.copyin(staged.data(), staged.size());
  }
  return Tensor::from_buffer(b, shape);
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir) {
  std::string what = "tensor '" + t.name() + "'";
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    if (t.has_raw_data()) throw OnnxError(what + ": has both raw data and external data");  // as constant_from_raw
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") location = kv.value();
      auto number = [&] {
        try {
          size_t used = 0;
          int64_t v = std::stoll(kv.value(), &used);
          if (used == kv.value().size()) return v;
        } catch (const std::exception&) {
        }
        throw OnnxError(what + ": external data " + kv.key() + " '" + kv.value() + "' is not a number");
      };
      if (kv.key() == "offset") offset = number();
      if (kv.key() == "length") length = number();
    }
    if (location.empty() || location.find("..") != std::string::npos)
      throw OnnxError(what + ": external data without a valid location");
    if (offset < 0) throw OnnxError(what + ": external data at a negative offset in '" + location + "'");
    std::optional<uint64_t> bytes;
    if (length >= 0) bytes = static_cast<uint64_t>(length);
    std::string path = base_dir + "/" + location;
    std::ifstream f = open_range(path, what, static_cast<uint64_t>(offset), bytes ? *bytes : payload_bytes(t, what));
    return filled_tensor(t, bytes, [&](void* dst, uint64_t n) { read_into(f, path, what, n, dst); });
  }
  std::string packed;  // typed data as bytes, unless the proto has raw_data
  const std::string* bytes = &t.raw_data();
  if (!t.has_raw_data()) {
    DType dt = dtype_from_onnx(t.data_type(), what);
    if (dt == dtypes::float32) {
      packed = pack(t.float_data(), dt);
    } else if (dt == dtypes::float64) {
      packed = pack(t.double_data(), dt);
    } else if (dt == dtypes::int64) {
      packed = pack(t.int64_data(), dt);
    } else if (dt == dtypes::uint32 || dt == dtypes::uint64) {
      packed = pack(t.uint64_data(), dt);
    } else {
      packed = pack(t.int32_data(), dt);
    }
    bytes = &packed;
  }
  return filled_tensor(t, bytes->size(), [&](void* dst, uint64_t n) { std::memcpy(dst, bytes->data(), n); });
}

Tensor constant_from_raw(const ::onnx::TensorProto& t, uint64_t length, const std::function<void(void*, uint64_t)>& fill) {
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL)
    throw OnnxError("tensor '" + t.name() + "': has both raw data and external data");
  Tensor out = filled_tensor(t, length, fill);
  out.buffer().set_constant();
  return out;
}

Tensor constant_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir) {
  Tensor out = tensor_from_proto(t, base_dir);
  if (out.is_realized()) out.buffer().set_constant();
  return out;
}

}  // namespace detail

namespace detail {

// Labels every graph node a node's operator made (its outputs and what it built on the way from
// its inputs) with the node's name, so a profile can say which ONNX nodes a kernel computes.
void label_node(const ::onnx::NodeProto& node, const std::unordered_set<const UOp*>& inputs, const std::vector<Value>& outs) {
  const std::string& who = !node.name().empty() ? node.name() : node.output_size() ? node.output(0) : node.op_type();
  std::string label = who + " (" + node.op_type() + ")";
  // Only what is computed from the inputs; what an earlier node labelled (a value reached through
  // a subgraph's outer scope) stays its own.
  for (const Value& out : outs)
    if (out.is_tensor()) label_computed(out.tensor().uop(), inputs, {label});
}

namespace {

// Runs one node on `ins`, its outputs labelled with its name.
std::vector<Value> run_node(const ::onnx::NodeProto& node, std::vector<std::optional<Value>> ins, int64_t opset, const std::string& base_dir,
                            const std::map<std::string, Value>& env) {
  const auto& table = op_table();
  const auto& value_table = value_op_table();
  std::unordered_set<const UOp*> input_nodes;
  for (const std::optional<Value>& in : ins)
    if (in && in->is_tensor()) input_nodes.insert(in->tensor().uop().get());
  OpContext ctx(node, std::move(ins), opset, base_dir, &env);
  auto op = table.find(node.op_type());
  auto value_op = value_table.find(node.op_type());
  if (op == table.end() && value_op == value_table.end()) ctx.fail("operator " + node.op_type() + " is not supported");
  std::vector<Value> outs;
  try {
    if (value_op != value_table.end()) {
      outs = value_op->second(ctx);
    } else {
      for (Tensor& t : op->second(ctx)) outs.emplace_back(std::move(t));
    }
  } catch (const OnnxError&) {
    throw;
  } catch (const std::exception& e) {  // lathe errors, and std::out_of_range, bad_alloc... from an operator
    ctx.fail(e.what());
  }
  label_node(node, input_nodes, outs);
  follow_size_values(ctx, outs);
  return outs;
}

}  // namespace

void run_nodes(const ::onnx::GraphProto& g, std::map<std::string, Value>& env, int64_t opset, const std::string& base_dir) {
  for (int n = 0; n < g.node_size(); ++n) {
    const ::onnx::NodeProto& node = g.node(n);
    if (!node.domain().empty() && node.domain() != "ai.onnx" && node.domain() != "ai.onnx.preview.training")
      throw OnnxError("node '" + node.name() + "' (" + node.op_type() + "): domain '" + node.domain() + "' is not supported");
    std::vector<std::optional<Value>> ins;
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
    std::vector<Value> outs = run_node(node, std::move(ins), opset, base_dir, env);
    for (size_t i = 0; i < outs.size() && i < static_cast<size_t>(node.output_size()); ++i)
      if (!node.output(static_cast<int>(i)).empty()) env.insert_or_assign(node.output(static_cast<int>(i)), outs[i]);
  }
}

std::vector<Value> run_subgraph(const ::onnx::GraphProto& g, const std::map<std::string, Value>& outer,
                                const std::vector<Value>& inputs, int64_t opset, const std::string& base_dir) {
  std::map<std::string, Value> env = outer;  // a subgraph sees its enclosing graph's values
  for (const auto& t : g.initializer()) env.insert_or_assign(t.name(), constant_from_proto(t, base_dir));
  if (inputs.size() > static_cast<size_t>(g.input_size()))
    throw OnnxError("subgraph '" + g.name() + "' takes " + std::to_string(g.input_size()) + " inputs, given " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) env.insert_or_assign(g.input(static_cast<int>(i)).name(), inputs[i]);
  run_nodes(g, env, opset, base_dir);
  std::vector<Value> out;
  for (const auto& o : g.output()) {
    auto it = env.find(o.name());
    if (it == env.end()) throw OnnxError("subgraph output '" + o.name() + "' is never computed");
    out.push_back(it->second);
  }
  return out;
}

}  // namespace detail

struct Model::Impl {
  ::onnx::ModelProto proto;  // the main graph's initializers hold no data: they are `initializers`
  std::string base_dir;
  int64_t opset = 1;
  std::vector<ValueInfo> inputs, outputs;
  // The main graph's initializers as constant tensors, made once at load and shared by every
  // build (and every plan prepared from one): a model's weights are in memory once, not once in
  // the parsed file and again per build.
  std::vector<std::pair<std::string, Tensor>> initializers;
};

namespace {

ValueInfo value_info(const ::onnx::ValueInfoProto& v) {
  ValueInfo info;
  info.name = v.name();
  const ::onnx::TypeProto* type = &v.type();
  bool optional = type->has_optional_type();
  if (optional) type = &type->optional_type().elem_type();
  bool sequence = type->has_sequence_type();
  if (sequence) type = &type->sequence_type().elem_type();
  if (!type->has_tensor_type())
    throw OnnxError("graph value '" + v.name() + "' is not a tensor, a sequence of tensors or an optional one (maps are not supported)");
  info.kind = optional ? (sequence ? ValueKind::kOptionalSequence : ValueKind::kOptionalTensor)
                       : (sequence ? ValueKind::kSequence : ValueKind::kTensor);
  info.dtype = detail::dtype_from_onnx(type->tensor_type().elem_type(), "graph value '" + v.name() + "'");
  for (const auto& d : type->tensor_type().shape().dim()) {
    info.dims.push_back(d.has_dim_value() ? std::optional<int64_t>(d.dim_value()) : std::nullopt);
    info.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
  }
  return info;
}

}  // namespace

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

namespace {

// Reads a payload that split_initializer_data left out of the proto into `dst`; false on failure.
using ReadRange = std::function<bool(const detail::ByteRange&, void* dst)>;

// Parses `bytes` (a ModelProto) into `impl` without its large initializer payloads, and makes
// each main-graph initializer a constant: a left-out payload `read` straight into its buffer, the
// others from the proto (external data under `base_dir`), whose data is then dropped. Bytes the
// split cannot walk are parsed whole. False when they are not a ModelProto.
bool parse_model(std::string_view bytes, Model::Impl& impl, const std::string& base_dir, const ReadRange& read) {
  std::optional<detail::SplitModel> split = detail::split_initializer_data(bytes, kLeftOutBytes);
  bool parsed = split ? impl.proto.ParseFromString(split->proto)
                      : bytes.size() <= INT32_MAX && impl.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  if (!parsed) return false;
  if (!impl.proto.has_graph()) return true;  // from_proto says what is wrong
  auto& inits = *impl.proto.mutable_graph()->mutable_initializer();
  if (split && split->initializer_data.size() != static_cast<size_t>(inits.size()))
    throw InternalError("model: " + std::to_string(split->initializer_data.size()) + " initializer payloads were set aside for " +
                        std::to_string(inits.size()) + " initializers");
  for (int i = 0; i < inits.size(); ++i) {
    ::onnx::TensorProto& t = inits[i];
    if (const std::optional<detail::ByteRange>& range = split ? split->initializer_data[static_cast<size_t>(i)] : std::nullopt; range) {
      impl.initializers.emplace_back(t.name(), detail::constant_from_raw(t, range->length, [&](void* dst, uint64_t) {
        if (!read(*range, dst)) throw OnnxError("tensor '" + t.name() + "': cannot read its data from the model file");
      }));
      continue;
    }
    impl.initializers.emplace_back(t.name(), detail::constant_from_proto(t, base_dir));
    std::string().swap(*t.mutable_raw_data());  // the bytes now live in the tensor's buffer
    t.clear_float_data();
    t.clear_int32_data();
    t.clear_int64_data();
    t.clear_double_data();
    t.clear_uint64_data();
  }
  return true;
}

}  // namespace

Model Model::load(const std::string& path) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  MappedFile file(path);
  auto impl = std::make_unique<Impl>();
  if (!parse_model(file.bytes(), *impl, dir, [&file](const detail::ByteRange& r, void* dst) { return file.read(r.offset, r.length, dst); }))
    throw OnnxError("model: '" + path + "' is not a valid ONNX file (truncated or corrupt protobuf)");
  return from_proto(std::move(impl), dir);
}

Model Model::from_bytes(const std::string& bytes, const std::string& base_dir) {
  auto impl = std::make_unique<Impl>();
  auto read = [&bytes](const detail::ByteRange& r, void* dst) {
    std::memcpy(dst, bytes.data() + r.offset, r.length);
    return true;
  };
  if (!parse_model(bytes, *impl, base_dir, read)) throw OnnxError("model: not a valid ONNX file (truncated or corrupt protobuf)");
  return from_proto(std::move(impl), base_dir);
}

Model Model::from_proto(std::unique_ptr<Impl> impl, const std::string& base_dir) {
  impl->base_dir = base_dir;
  if (!impl->proto.has_graph()) throw OnnxError("model: the file has no graph");
  for (const auto& o : impl->proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") impl->opset = o.version();
  const auto& g = impl->proto.graph();
  std::vector<std::string> init_names;
  for (const auto& t : g.initializer()) init_names.push_back(t.name());
  for (const auto& v : g.input())
    if (std::find(init_names.begin(), init_names.end(), v.name()) == init_names.end()) impl->inputs.push_back(value_info(v));
  for (const auto& v : g.output()) {
    if (v.has_type()) {
      impl->outputs.push_back(value_info(v));
    } else {  // an output without a declared type is whatever tensor its node makes
      ValueInfo info;
      info.name = v.name();
      impl->outputs.push_back(info);
    }
  }
  return Model(std::move(impl));
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
int64_t Model::opset() const { return impl_->opset; }

namespace {

// `t` checked against the model's declaration of an input tensor (`what` names it).
Tensor fit_input(const ValueInfo& in, Tensor t, const std::string& what) {
  // numpy has no bfloat16: 16-bit float data often travels as uint16 bits.
  if (t.dtype() == dtypes::uint16 && (in.dtype == dtypes::bfloat16 || in.dtype == dtypes::float16)) t = t.bitcast(in.dtype);
  if (t.dtype() != in.dtype) throw OnnxError(what + " is " + t.dtype().name() + ", the model expects " + in.dtype.name());
  if (!in.dims.empty() || t.ndim() == 0) {
    bool fits = static_cast<size_t>(t.ndim()) == in.dims.size();
    for (size_t i = 0; fits && i < in.dims.size(); ++i) fits = !in.dims[i] || *in.dims[i] == t.shape()[i];
    if (!fits) throw OnnxError(what + " has shape " + shape_to_string(t.shape()) + ", which does not fit the model's");
  }
  return t;
}

Value fit_input(const ValueInfo& in, const Value& v) {
  std::string what = "input '" + in.name + "'";
  bool optional = in.kind == ValueKind::kOptionalTensor || in.kind == ValueKind::kOptionalSequence;
  bool sequence = in.kind == ValueKind::kSequence || in.kind == ValueKind::kOptionalSequence;
  if (v.is_none()) {
    if (!optional) throw OnnxError(what + " is an empty optional, the model expects a value");
    return v;
  }
  if (!sequence) return fit_input(in, v.tensor(what + " (the model expects a tensor)"), what);
  std::vector<Tensor> items;
  for (const Tensor& t : v.items(what + " (the model expects a sequence)"))
    items.push_back(fit_input(in, t, what + "[" + std::to_string(items.size()) + "]"));
  return Value::sequence(std::move(items), in.dtype);  // an empty one takes the declared element type
}

}  // namespace

void Model::check_input_names(const std::vector<std::string>& names) const { require_known_inputs(impl_->inputs, names); }

std::vector<Value> Model::build_values(const std::map<std::string, Value>& given) const {
  require_known_inputs(impl_->inputs, given);
  const auto& g = impl_->proto.graph();
  std::map<std::string, Value> env;
  for (const auto& [name, t] : impl_->initializers) env.insert_or_assign(name, t);
  for (const ValueInfo& in : impl_->inputs) {
    auto it = given.find(in.name);
    if (it == given.end()) throw OnnxError("input '" + in.name + "' is not given");
    env.insert_or_assign(in.name, fit_input(in, it->second));
  }
  // What the graph computes from its inputs is known only when it runs (a prepared model opened
  // its own scope, which holds).
  detail::SizeValuesScope sizes;  // shapes computed in the graph followed as expressions of its sizes
  std::optional<detail::RunTimeInputsScope> scope;
  if (!detail::RunTimeInputsScope::active()) {
    std::set<uint64_t> ids;
    for (const ValueInfo& in : impl_->inputs) {
      const Value& v = env.at(in.name);
      if (v.is_tensor()) ids.insert(v.tensor().uop_id());
      if (v.is_sequence())
        for (const Tensor& t : v.items()) ids.insert(t.uop_id());
    }
    scope.emplace(std::move(ids), false);
  }
  detail::run_nodes(g, env, impl_->opset, impl_->base_dir);
  std::vector<Value> result;
  for (const ValueInfo& o : impl_->outputs) {
    auto it = env.find(o.name);
    if (it == env.end()) throw OnnxError("output '" + o.name + "' is never computed");
    result.push_back(it->second);
  }
  return result;
}

std::vector<Tensor> Model::build(const std::map<std::string, Tensor>& given) const {
  std::map<std::string, Value> values(given.begin(), given.end());
  std::vector<Tensor> result;
  for (size_t i = 0; const Value& v : build_values(values)) result.push_back(v.tensor("output '" + impl_->outputs[i++].name + "'"));
  return result;
}

Tensor load_tensor_pb(const std::string& path, std::string* name) {
  ::onnx::TensorProto t;
  if (!t.ParseFromString(read_file(path, "tensor file"))) throw OnnxError("'" + path + "' is not a TensorProto");
  if (name) *name = t.name();
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  return detail::tensor_from_proto(t, dir);
}

namespace {

Value value_from_proto(const ::onnx::SequenceProto& s, const std::string& dir);

// An optional with no value is empty, whatever element type it names.
Value value_from_proto(const ::onnx::OptionalProto& o, const std::string& dir) {
  if (o.has_tensor_value()) return detail::tensor_from_proto(o.tensor_value(), dir);
  if (o.has_sequence_value()) return value_from_proto(o.sequence_value(), dir);
  if (o.has_map_value() || o.has_optional_value() || o.has_sparse_tensor_value())
    throw OnnxError("optional '" + o.name() + "': only optional tensors and sequences are supported");
  return Value::none();
}

Value value_from_proto(const ::onnx::SequenceProto& s, const std::string& dir) {
  if ((s.elem_type() != ::onnx::SequenceProto::TENSOR && s.elem_type() != ::onnx::SequenceProto::UNDEFINED) || s.sequence_values_size() > 0 ||
      s.map_values_size() > 0 || s.optional_values_size() > 0 || s.sparse_tensor_values_size() > 0)
    throw OnnxError("sequence '" + s.name() + "': only sequences of tensors are supported");
  std::vector<Tensor> items;
  for (const auto& t : s.tensor_values()) items.push_back(detail::tensor_from_proto(t, dir));
  return Value::sequence(items, items.empty() ? dtypes::float32 : items[0].dtype());
}

template <class Proto>
Proto parse_file(const std::string& path, const char* type) {
  Proto p;
  if (!p.ParseFromString(read_file(path, "tensor file"))) throw OnnxError("'" + path + "' is not " + type);
  return p;
}

}  // namespace

Value load_value_pb(const std::string& path, ValueKind kind, std::string* name) {
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  switch (kind) {
    case ValueKind::kTensor: return load_tensor_pb(path, name);
    case ValueKind::kSequence: {
      auto s = parse_file<::onnx::SequenceProto>(path, "a SequenceProto");
      if (name) *name = s.name();
      return value_from_proto(s, dir);
    }
    case ValueKind::kOptionalTensor:
    case ValueKind::kOptionalSequence: {
      auto o = parse_file<::onnx::OptionalProto>(path, "an OptionalProto");
      if (name) *name = o.name();
      return value_from_proto(o, dir);
    }
  }
  throw OnnxError("'" + path + "': unknown value kind");
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : detail::op_table()) out.push_back(name);
  for (const auto& [name, fn] : detail::value_op_table()) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lathe::onnx
