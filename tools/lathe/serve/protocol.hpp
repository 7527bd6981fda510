// The Open Inference Protocol's (KServe v2) tensors on the wire: an inference request's JSON, with
// the binary tensor data extension (Triton's: the JSON's length in the Inference-Header-Content-Length
// header, then each binary input's bytes in order, each sized by its `binary_data_size`
// parameter), into named tensors, and outputs back into a response. No HTTP here (server.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lathe/dtype.hpp"
#include "lathe/tensor.hpp"

namespace lathe::serve {

/// A request the protocol refuses: the HTTP status it answers with (400 malformed or mistyped,
/// 404 unknown model, 413 too large, 503 overloaded) and a message naming the field.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// "FP32" for float32, ...; nullopt for a dtype the protocol has no name for.
std::optional<std::string> datatype_name(DType dtype);
/// float32 for "FP32", ...; throws RequestError (400) naming `field` for anything else ("BYTES").
DType datatype_of(const std::string& name, const std::string& field);

/// One input of a request: its name, shape, dtype and packed little-endian row-major bytes.
struct WireTensor {
  std::string name;
  Shape shape;
  DType dtype = dtypes::float32;
  std::vector<uint8_t> bytes;
};

struct InferRequest {
  std::string id;  // echoed back when given
  std::vector<WireTensor> inputs;
  /// The outputs asked for (empty: all), and which of them come back as binary data.
  std::vector<std::string> outputs;
  std::map<std::string, bool> binary;
  bool binary_by_default = false;  // the request's `binary_data_output` parameter
};

/// Parses `body`; `json_length` is the Inference-Header-Content-Length header's value when the
/// body carries binary data (nullopt: all of it is JSON). Throws RequestError (400) naming the
/// field for invalid JSON, a missing or mistyped field, data that does not fill its shape, or
/// binary data that is truncated or left over.
InferRequest parse_infer_request(const std::string& body, std::optional<size_t> json_length, int64_t most_elements);

/// One output of a response.
struct OutputTensor {
  std::string name;
  Tensor value;
  bool binary = false;
};

/// The response body, and the JSON's length when binary data follows it (0: JSON only).
struct EncodedResponse {
  std::string body;
  size_t json_length = 0;
};

EncodedResponse encode_infer_response(const std::string& model, const std::string& version, const std::string& id,
                                      const std::vector<OutputTensor>& outputs);

}  // namespace lathe::serve
