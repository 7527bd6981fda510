#include "tools/lathe/serve/protocol.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>


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

// Nested arrays deeper than this are refused (a tensor has at most this many axes; deeper nesting
// would only exhaust the stack).
constexpr int kDeepest = 64;

// The flattened elements of `data` (a number, a bool or nested arrays of them), in row-major order.
void flatten(const json& data, std::vector<const json*>& out, const std::string& field, int depth = 0) {
  if (data.is_array()) {
    if (depth >= kDeepest) bad(field + ": arrays nested more than " + std::to_string(kDeepest) + " deep");
    for (const json& d : data) flatten(d, out, field, depth + 1);
  } else if (data.is_number() || data.is_boolean()) {
    out.push_back(&data);
  } else {
    bad(field + ": holds " + std::string(data.type_name()) + ", not numbers");
  }
}

// One JSON element as `dtype`'s bytes at position i: a float that stays finite in the dtype, an
// integer whole and within the dtype's range (DType::min/max), a bool for BOOL.
void store(const json& v, DType dtype, std::vector<uint8_t>& bytes, size_t i, const std::string& field) {
  uint8_t* at = bytes.data() + i * static_cast<size_t>(dtype.itemsize());
  std::string element = field + ": element " + std::to_string(i);
  std::string name = datatype_name(dtype).value_or(dtype.name());
  if (dtype == dtypes::bool_) {
    if (v.is_boolean()) return write_const(v.get<bool>(), dtype, at);
    if (v.is_number() && (v.get<double>() == 0 || v.get<double>() == 1)) return write_const(v.get<double>() != 0, dtype, at);
    bad(element + " is not a BOOL (true, false, 0 or 1)");
  }
  if (v.is_boolean()) bad(element + " is a boolean in a " + name + " tensor");
  if (dtype.is_float()) {
    double d = v.get<double>();  // a literal beyond double's range parses as an infinity
    // Rounded to the dtype once (as the model's own casts round); what overflows it is refused.
    if (!std::isfinite(d) || !std::isfinite(const_as_double(cast_const(d, dtype)))) bad(element + " is outside " + name + "'s range");
    return write_const(d, dtype, at);
  }
  // An integer: whole, and within [min, max], compared without a round trip through double.
  bool whole = v.is_number_integer() || (std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>());
  if (!whole) bad(element + " (" + v.dump() + ") is not a whole number");
  ConstValue lo = dtype.min(), hi = dtype.max();
  auto below = [&](int64_t s) { return std::holds_alternative<int64_t>(lo) && s < std::get<int64_t>(lo); };
  auto above = [&](uint64_t u) {
    return std::holds_alternative<int64_t>(hi) ? u > static_cast<uint64_t>(std::get<int64_t>(hi)) : u > std::get<uint64_t>(hi);
  };
  ConstValue value;
  bool inside = false;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    value = u, inside = !above(u);
  } else if (v.is_number_integer()) {
    int64_t s = v.get<int64_t>();
    value = s, inside = s < 0 ? !below(s) && !dtype.is_unsigned() : !above(static_cast<uint64_t>(s));
  } else {
    double d = v.get<double>();
    // max as a double may round up past it (2^63 - 1 to 2^63): compare against the power of two above.
    double limit = std::ldexp(1.0, static_cast<int>(dtype.itemsize()) * 8 - (dtype.is_unsigned() ? 0 : 1));
    inside = d < limit && d >= (dtype.is_unsigned() ? 0.0 : -limit);
    if (inside) value = d < 0 ? ConstValue{static_cast<int64_t>(d)} : ConstValue{static_cast<uint64_t>(d)};
  }
  if (!inside) bad(element + " (" + v.dump() + ") is outside " + name + "'s range");
  write_const(value, dtype, at);
}

// A float as JSON text; NaN and the infinities as the tokens Python's json module and Triton's
// clients read (JSON itself has no spelling for them).
std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return json(v).dump();
}

// The elements of a tensor's bytes as a JSON array's text (booleans for BOOL).
std::string elements(const std::vector<uint8_t>& bytes, DType dtype) {
  std::string out = "[";
  auto item = static_cast<size_t>(dtype.itemsize());
  for (size_t i = 0; i * item < bytes.size(); ++i) {
    if (i) out += ',';
    ConstValue v = read_const(bytes.data() + i * item, dtype);
    if (const bool* b = std::get_if<bool>(&v)) out += *b ? "true" : "false";
    else if (const double* d = std::get_if<double>(&v)) out += number_text(*d);
    else out += const_to_string(v);
  }
  return out + "]";
}

// The boolean `key` of `holder`'s "parameters" object, if given; 400 naming `where` when the
// parameters are not an object or the value not a boolean.
std::optional<bool> flag(const json& holder, const std::string& key, const std::string& where) {
  if (!holder.contains("parameters")) return std::nullopt;
  const json& p = holder["parameters"];
  if (!p.is_object()) bad(where + ": not an object");
  if (!p.contains(key)) return std::nullopt;
  if (!p[key].is_boolean()) bad(where + "." + key + ": not true or false");
  return p[key].get<bool>();
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
  req.binary_by_default = flag(doc, "binary_data_output", "parameters").value_or(false);
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
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad(field + ".shape: not a list of whole sizes >= 0");
      int64_t n = d.get<int64_t>();
      if (n > 0 && count > most_elements / n)
        throw RequestError(413, field + ".shape: " + shape_to_string(t.shape) + "... has more than the " + std::to_string(most_elements) +
                                    " elements this server takes");
      count *= n;
      t.shape.push_back(n);
    }
    auto nbytes = static_cast<size_t>(count) * static_cast<size_t>(t.dtype.itemsize());
    if (in.contains("parameters") && !in["parameters"].is_object()) bad(field + ".parameters: not an object");
    const json* params = in.contains("parameters") ? &in["parameters"] : nullptr;
    if (params && params->contains("binary_data_size")) {
      const json& size = (*params)["binary_data_size"];
      if (!json_length) bad(field + ": binary_data_size without an Inference-Header-Content-Length header");
      if (!size.is_number_integer() || size.get<int64_t>() < 0) bad(field + ".parameters.binary_data_size: not a size");
      if (static_cast<size_t>(size.get<int64_t>()) != nbytes)
        bad(field + ": binary_data_size is " + size.dump() + " bytes; shape " + shape_to_string(t.shape) + " of " + in["datatype"].get<std::string>() +
            " needs " + std::to_string(nbytes));
      if (body.size() - offset < nbytes)
        bad(field + ": the binary data is truncated (" + std::to_string(body.size() - offset) + " bytes left, " + std::to_string(nbytes) + " needed)");
      t.bytes.assign(body.begin() + static_cast<std::ptrdiff_t>(offset), body.begin() + static_cast<std::ptrdiff_t>(offset + nbytes));
      offset += nbytes;
      if (t.dtype == dtypes::bool_)
        for (size_t i = 0; i < t.bytes.size(); ++i)
          if (t.bytes[i] > 1) bad(field + ": binary BOOL element " + std::to_string(i) + " is " + std::to_string(t.bytes[i]) + ", not 0 or 1");
    } else {
      if (!in.contains("data")) bad(field + ".data: missing (and no binary_data_size)");
      std::vector<const json*> flat;
      flatten(in["data"], flat, field + ".data");
      if (static_cast<int64_t>(flat.size()) != count)
        bad(field + ".data: " + std::to_string(flat.size()) + " elements, shape " + shape_to_string(t.shape) + " needs " + std::to_string(count));
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
      if (std::optional<bool> b = flag(o, "binary_data", "output '" + name + "'.parameters")) req.binary[name] = *b;
    }
  }
  return req;
}

EncodedResponse encode_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                      const std::vector<OutputTensor>& outputs) {
  // Written as text: a JSON output's data may hold NaN or Infinity, which nlohmann would write as null.
  std::string text = "{\"model_name\":" + json(model).dump() + ",\"model_version\":" + json(version).dump();
  if (!id.empty()) text += ",\"id\":" + json(id).dump();
  text += ",\"outputs\":[";
  std::string binary;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const OutputTensor& o = outputs[k];
    std::vector<uint8_t> bytes = detail::tensor_bytes(o.value, o.value.dtype(), "an output");
    text += std::string(k ? "," : "") + "{\"name\":" + json(o.name).dump() + ",\"datatype\":" +
            json(datatype_name(o.value.dtype()).value_or("BYTES")).dump() + ",\"shape\":" + json(o.value.shape()).dump();
    if (o.binary) {
      text += ",\"parameters\":{\"binary_data_size\":" + std::to_string(bytes.size()) + "}}";
      binary.append(bytes.begin(), bytes.end());
    } else {
      text += ",\"data\":" + elements(bytes, o.value.dtype()) + "}";
    }
  }
  text += "]}";
  EncodedResponse r;
  r.body = std::move(text);
  if (std::any_of(outputs.begin(), outputs.end(), [](const OutputTensor& o) { return o.binary; })) {
    r.json_length = r.body.size();
    r.body += binary;
  }
  return r;
}

}  // namespace lathe::serve
