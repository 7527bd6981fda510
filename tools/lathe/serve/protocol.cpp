#include "tools/lathe/serve/protocol.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "src/ir/half.hpp"

namespace lathe::serve {
namespace {

using nlohmann::json;

const std::vector<std::pair<std::string, DType>>& datatypes() {
  static const std::vector<std::pair<std::string, DType>> table = {
      {"BOOL", dtypes::bool_},     {"UINT8", dtypes::uint8},   {"UINT16", dtypes::uint16}, {"UINT32", dtypes::uint32},
      {"UINT64", dtypes::uint64},  {"INT8", dtypes::int8},     {"INT16", dtypes::int16},   {"INT32", dtypes::int32},
      {"INT64", dtypes::int64},    {"FP16", dtypes::float16},  {"BF16", dtypes::bfloat16}, {"FP32", dtypes::float32},
      {"FP64", dtypes::float64},
  };
  return table;
}

[[noreturn]] void bad(const std::string& message) { throw RequestError(400, message); }

// The flattened elements of `data` (a number, a bool or nested arrays of them), in row-major order.
void flatten(const json& data, std::vector<const json*>& out, const std::string& field) {
  if (data.is_array()) {
    for (const json& d : data) flatten(d, out, field);
  } else if (data.is_number() || data.is_boolean()) {
    out.push_back(&data);
  } else {
    bad(field + ": holds " + std::string(data.type_name()) + ", not numbers");
  }
}

template <class T>
void put(std::vector<uint8_t>& bytes, size_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

// One JSON element as `dtype`'s bytes at position i; integers must be whole and in range.
void store(const json& v, DType dtype, std::vector<uint8_t>& bytes, size_t i, const std::string& field) {
  if (dtype == dtypes::bool_) {
    if (v.is_boolean()) return put<uint8_t>(bytes, i, v.get<bool>() ? 1 : 0);
    if (v.is_number() && (v.get<double>() == 0 || v.get<double>() == 1)) return put<uint8_t>(bytes, i, v.get<double>() != 0);
    bad(field + ": element " + std::to_string(i) + " is not a BOOL (true, false, 0 or 1)");
  }
  if (v.is_boolean()) bad(field + ": element " + std::to_string(i) + " is a boolean in a " + datatype_name(dtype).value_or("?") + " tensor");
  if (dtype.is_float()) {
    double d = v.get<double>();
    if (dtype == dtypes::float64) return put<double>(bytes, i, d);
    if (dtype == dtypes::float32) return put<float>(bytes, i, static_cast<float>(d));
    if (dtype == dtypes::float16) return put<uint16_t>(bytes, i, detail::float_to_half(static_cast<float>(d)));
    return put<uint16_t>(bytes, i, detail::float_to_bf16(static_cast<float>(d)));
  }
  // An integer: whole, and within the dtype's range [lo, hi], kept as its two's-complement bits.
  bool whole = v.is_number_integer() || (std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
  if (!whole) bad(field + ": element " + std::to_string(i) + " (" + v.dump() + ") is not a whole number");
  int bits = static_cast<int>(dtype.itemsize()) * 8;
  bool is_unsigned = dtype.is_unsigned();
  int64_t lo = is_unsigned ? 0 : bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
  uint64_t hi = is_unsigned ? (bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1) : (uint64_t{1} << (bits - 1)) - 1;
  uint64_t value = 0;
  bool inside = false;
  if (v.is_number_unsigned()) {
    value = v.get<uint64_t>(), inside = value <= hi;
  } else if (v.is_number_integer()) {
    int64_t s = v.get<int64_t>();
    value = static_cast<uint64_t>(s), inside = s >= lo && (s < 0 || static_cast<uint64_t>(s) <= hi);
  } else {
    double d = v.get<double>();
    inside = d >= static_cast<double>(lo) && d <= static_cast<double>(hi) && d < 18446744073709551616.0;
    if (inside) value = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
  }
  if (!inside) bad(field + ": element " + std::to_string(i) + " (" + v.dump() + ") is outside " + datatype_name(dtype).value_or("?") + "'s range");
  std::memcpy(bytes.data() + i * static_cast<size_t>(bits / 8), &value, static_cast<size_t>(bits / 8));  // little-endian: the low bytes
}

// The elements of a tensor's bytes as JSON numbers (booleans for BOOL).
json elements(const std::vector<uint8_t>& bytes, DType dtype) {
  json out = json::array();
  auto n = static_cast<size_t>(bytes.size() / static_cast<size_t>(dtype.itemsize()));
  auto at = [&](auto type_tag, size_t i) {
    decltype(type_tag) v;
    std::memcpy(&v, bytes.data() + i * sizeof(v), sizeof(v));
    return v;
  };
  for (size_t i = 0; i < n; ++i) {
    if (dtype == dtypes::bool_) out.push_back(at(uint8_t{}, i) != 0);
    else if (dtype == dtypes::float32) out.push_back(at(float{}, i));
    else if (dtype == dtypes::float64) out.push_back(at(double{}, i));
    else if (dtype == dtypes::float16) out.push_back(detail::half_to_float(at(uint16_t{}, i)));
    else if (dtype == dtypes::bfloat16) out.push_back(detail::bf16_to_float(at(uint16_t{}, i)));
    else if (dtype == dtypes::int8) out.push_back(at(int8_t{}, i));
    else if (dtype == dtypes::uint8) out.push_back(at(uint8_t{}, i));
    else if (dtype == dtypes::int16) out.push_back(at(int16_t{}, i));
    else if (dtype == dtypes::uint16) out.push_back(at(uint16_t{}, i));
    else if (dtype == dtypes::int32) out.push_back(at(int32_t{}, i));
    else if (dtype == dtypes::uint32) out.push_back(at(uint32_t{}, i));
    else if (dtype == dtypes::int64) out.push_back(at(int64_t{}, i));
    else out.push_back(at(uint64_t{}, i));
  }
  return out;
}

}  // namespace

std::optional<std::string> datatype_name(DType dtype) {
  for (const auto& [name, d] : datatypes())
    if (d == dtype) return name;
  return std::nullopt;
}

DType datatype_of(const std::string& name, const std::string& field) {
  for (const auto& [n, d] : datatypes())
    if (n == name) return d;
  bad(field + ": datatype '" + name + "' is not one this server takes (BOOL, UINT8-64, INT8-64, FP16, BF16, FP32, FP64)");
}

InferRequest parse_infer_request(const std::string& body, std::optional<size_t> json_length, int64_t most_elements) {
  if (json_length && *json_length > body.size())
    bad("Inference-Header-Content-Length is " + std::to_string(*json_length) + ", more than the body's " + std::to_string(body.size()) + " bytes");
  size_t header = json_length.value_or(body.size());
  json doc = json::parse(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(header), nullptr, false);
  if (doc.is_discarded()) bad("the request is not valid JSON");
  if (!doc.is_object()) bad("the request is not a JSON object");
  InferRequest req;
  if (doc.contains("id")) {
    if (!doc["id"].is_string()) bad("id: not a string");
    req.id = doc["id"].get<std::string>();
  }
  if (doc.contains("parameters") && doc["parameters"].is_object() && doc["parameters"].contains("binary_data_output"))
    req.binary_by_default = doc["parameters"]["binary_data_output"].is_boolean() && doc["parameters"]["binary_data_output"].get<bool>();
  if (!doc.contains("inputs") || !doc["inputs"].is_array()) bad("inputs: missing or not an array");
  size_t offset = header;  // the next binary input's bytes
  for (size_t k = 0; k < doc["inputs"].size(); ++k) {
    const json& in = doc["inputs"][k];
    std::string field = "inputs[" + std::to_string(k) + "]";
    if (!in.is_object()) bad(field + ": not an object");
    if (!in.contains("name") || !in["name"].is_string()) bad(field + ".name: missing or not a string");
    WireTensor t;
    t.name = in["name"].get<std::string>();
    field = "input '" + t.name + "'";
    for (const WireTensor& before : req.inputs)
      if (before.name == t.name) bad(field + ": given twice");
    if (!in.contains("datatype") || !in["datatype"].is_string()) bad(field + ".datatype: missing or not a string");
    t.dtype = datatype_of(in["datatype"].get<std::string>(), field + ".datatype");
    if (!in.contains("shape") || !in["shape"].is_array()) bad(field + ".shape: missing or not an array");
    int64_t count = 1;
    for (const json& d : in["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad(field + ".shape: " + in["shape"].dump() + " is not a list of sizes >= 0");
      int64_t n = d.get<int64_t>();
      if (n > 0 && count > most_elements / n)
        throw RequestError(413, field + ".shape: " + in["shape"].dump() + " has more than the " + std::to_string(most_elements) + " elements this server takes");
      count *= n;
      t.shape.push_back(n);
    }
    auto nbytes = static_cast<size_t>(count) * static_cast<size_t>(t.dtype.itemsize());
    const json* params = in.contains("parameters") && in["parameters"].is_object() ? &in["parameters"] : nullptr;
    if (params && params->contains("binary_data_size")) {
      const json& size = (*params)["binary_data_size"];
      if (!json_length) bad(field + ": binary_data_size without an Inference-Header-Content-Length header");
      if (!size.is_number_integer() || size.get<int64_t>() < 0) bad(field + ".parameters.binary_data_size: not a size");
      if (static_cast<size_t>(size.get<int64_t>()) != nbytes)
        bad(field + ": binary_data_size is " + size.dump() + " bytes; shape " + in["shape"].dump() + " of " + in["datatype"].get<std::string>() +
            " needs " + std::to_string(nbytes));
      if (body.size() - offset < nbytes)
        bad(field + ": the binary data is truncated (" + std::to_string(body.size() - offset) + " bytes left, " + std::to_string(nbytes) + " needed)");
      t.bytes.assign(body.begin() + static_cast<std::ptrdiff_t>(offset), body.begin() + static_cast<std::ptrdiff_t>(offset + nbytes));
      offset += nbytes;
    } else {
      if (!in.contains("data")) bad(field + ".data: missing (and no binary_data_size)");
      std::vector<const json*> flat;
      flatten(in["data"], flat, field + ".data");
      if (static_cast<int64_t>(flat.size()) != count)
        bad(field + ".data: " + std::to_string(flat.size()) + " elements, shape " + in["shape"].dump() + " needs " + std::to_string(count));
      t.bytes.resize(nbytes);
      for (size_t i = 0; i < flat.size(); ++i) store(*flat[i], t.dtype, t.bytes, i, field + ".data");
    }
    req.inputs.push_back(std::move(t));
  }
  if (offset != body.size()) bad(std::to_string(body.size() - offset) + " bytes of binary data after the last binary input");
  if (doc.contains("outputs")) {
    if (!doc["outputs"].is_array()) bad("outputs: not an array");
    for (size_t k = 0; k < doc["outputs"].size(); ++k) {
      const json& o = doc["outputs"][k];
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) bad("outputs[" + std::to_string(k) + "].name: missing or not a string");
      std::string name = o["name"].get<std::string>();
      req.outputs.push_back(name);
      if (o.contains("parameters") && o["parameters"].is_object() && o["parameters"].contains("binary_data"))
        req.binary[name] = o["parameters"]["binary_data"].is_boolean() && o["parameters"]["binary_data"].get<bool>();
    }
  }
  return req;
}

EncodedResponse encode_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                      const std::vector<OutputTensor>& outputs) {
  json doc = {{"model_name", model}, {"model_version", version}, {"outputs", json::array()}};
  if (!id.empty()) doc["id"] = id;
  std::string binary;
  for (const OutputTensor& o : outputs) {
    std::vector<uint8_t> bytes = detail::tensor_bytes(o.value, o.value.dtype(), "an output");
    json out = {{"name", o.name}, {"datatype", datatype_name(o.value.dtype()).value_or("BYTES")}, {"shape", o.value.shape()}};
    if (o.binary) {
      out["parameters"] = {{"binary_data_size", bytes.size()}};
      binary.append(bytes.begin(), bytes.end());
    } else {
      out["data"] = elements(bytes, o.value.dtype());
    }
    doc["outputs"].push_back(std::move(out));
  }
  EncodedResponse r;
  r.body = doc.dump();
  if (!binary.empty() || std::any_of(outputs.begin(), outputs.end(), [](const OutputTensor& o) { return o.binary; })) {
    r.json_length = r.body.size();
    r.body += binary;
  }
  return r;
}

}  // namespace lathe::serve
