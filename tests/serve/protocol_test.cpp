// The protocol's JSON tensors for every datatype: elements parsed into the dtype's bytes and
// written back as the same numbers, each dtype's range edges kept or refused (16-bit floats as
// one rounding of the value, refused where it overflows), bad elements named.
#include <gtest/gtest.h>

#include <string>

#include "tools/lathe/serve/protocol.hpp"

namespace lathe::serve {
namespace {

// A request of one input `x` of `datatype` holding `data` (JSON text), parsed.
WireTensor parsed(const std::string& datatype, const std::string& data, int64_t n) {
  std::string body = R"({"inputs": [{"name": "x", "datatype": ")" + datatype + R"(", "shape": [)" + std::to_string(n) +
                     R"(], "data": )" + data + "}]}";
  return parse_infer_request(body, std::nullopt, 1 << 20).inputs.at(0);
}

// The JSON text `encode_infer_response` writes for `w` as an output.
std::string written(const WireTensor& w) {
  Tensor t = Tensor::from_buffer([&] {
    Buffer b(w.dtype, static_cast<size_t>(w.shape[0]));
    b.copyin(w.bytes.data(), w.bytes.size());
    return b;
  }(), w.shape);
  std::string body = encode_infer_response("m", "1", "", {{"y", t, false}}).body;
  size_t at = body.find("\"data\":");
  return body.substr(at + 7, body.find(']', at) - at - 6);
}

int status_of(const std::string& datatype, const std::string& data, int64_t n) {
  try {
    parsed(datatype, data, n);
  } catch (const RequestError& e) {
    return e.status();
  }
  return 200;
}

TEST(ServeProtocol, EveryDatatypeRoundTripsItsRangeEdges) {
  struct Case {
    const char* datatype;
    const char* data;  // as sent, and as written back
    int64_t n;
  };
  for (const Case& c : {Case{"BOOL", "[true,false,true]", 3}, Case{"UINT8", "[0,255,7]", 3}, Case{"INT8", "[-128,127,0]", 3},
                        Case{"UINT16", "[0,65535]", 2}, Case{"INT16", "[-32768,32767]", 2}, Case{"UINT32", "[0,4294967295]", 2},
                        Case{"INT32", "[-2147483648,2147483647]", 2}, Case{"INT64", "[-9223372036854775808,9223372036854775807]", 2},
                        Case{"UINT64", "[0,18446744073709551615]", 2}, Case{"FP16", "[-65504.0,0.5,65504.0]", 3},
                        Case{"BF16", "[-1.0,0.5,3.3895313892515355e+38]", 3}, Case{"FP32", "[-1.5,3.4028234663852886e+38]", 2},
                        Case{"FP64", "[-1.5,1.7976931348623157e+308]", 2}}) {
    SCOPED_TRACE(c.datatype);
    EXPECT_EQ(written(parsed(c.datatype, c.data, c.n)), c.data);
  }
}

TEST(ServeProtocol, ValuesBeyondADatatypeAreRefusedAndRoundedOnesKept) {
  EXPECT_EQ(written(parsed("FP16", "[65519.0,1.0009765625]", 2)), "[65504.0,1.0009765625]");  // rounds to the largest half
  EXPECT_EQ(written(parsed("BF16", "[1.00390625]", 1)), "[1.0]");                           // a tie, to even
  for (auto [datatype, data] : {std::pair{"FP16", "[65520.0]"}, {"BF16", "[3.4e38]"}, {"FP32", "[3.5e38]"}, {"FP64", "[1e400]"},
                                {"UINT8", "[256]"}, {"UINT8", "[-1]"}, {"INT8", "[128]"}, {"INT8", "[-129]"}, {"INT64", "[9223372036854775808]"},
                                {"UINT64", "[-1]"}, {"INT32", "[1.5]"}, {"BOOL", "[2]"}, {"FP32", "[true]"}, {"INT16", "[\"7\"]"}})
    EXPECT_EQ(status_of(datatype, data, 1), 400) << datatype << " " << data;
}

}  // namespace
}  // namespace lathe::serve
