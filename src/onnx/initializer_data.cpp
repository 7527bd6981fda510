#include "onnx/initializer_data.hpp"

#include "ir/serialize.hpp"
#include "lathe/error.hpp"

namespace lathe::onnx::detail {
namespace {

// Field numbers of onnx.proto on the way to an initializer's bytes.
constexpr uint64_t kModelGraph = 7;         // ModelProto.graph
constexpr uint64_t kGraphInitializer = 5;   // GraphProto.initializer
constexpr uint64_t kTensorRawData = 9;      // TensorProto.raw_data
constexpr uint64_t kLengthDelimited = 2;    // the wire type of messages and bytes

// One field of a message in protobuf's wire format.
struct Field {
  uint64_t number = 0;
  uint64_t wire_type = 0;
  size_t begin = 0;          // its tag
  size_t payload = 0;        // its length-delimited bytes (after the length)
  size_t end = 0;            // one past it
};

// Reads fields in turn; stops (ok() false) at anything malformed or a group (wire types 3, 4).
class Fields {
 public:
  explicit Fields(std::string_view bytes) : b_(bytes) {}

  bool next(Field& f) {
    if (pos_ >= b_.size() || !ok_) return false;
    f.begin = pos_;
    uint64_t tag = 0;
    if (!varint(tag)) return fail();
    f.number = tag >> 3;
    f.wire_type = tag & 7;
    switch (f.wire_type) {
      case 0: {
        uint64_t ignored = 0;
        if (!varint(ignored)) return fail();
        break;
      }
      case 1:
        if (b_.size() - pos_ < 8) return fail();
        pos_ += 8;
        break;
      case kLengthDelimited: {
        uint64_t n = 0;
        if (!varint(n) || n > b_.size() - pos_) return fail();
        f.payload = pos_;
        pos_ += static_cast<size_t>(n);
        break;
      }
      case 5:
        if (b_.size() - pos_ < 4) return fail();
        pos_ += 4;
        break;
      default: return fail();
    }
    f.end = pos_;
    return true;
  }

  bool ok() const { return ok_; }

 private:
  bool varint(uint64_t& v) {
    ByteReader r{b_, pos_};
    try {
      v = r.var();
    } catch (const Error&) {
      return false;
    }
    pos_ = r.at;
    return true;
  }
  bool fail() {
    ok_ = false;
    return false;
  }

  std::string_view b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// A length-delimited field whose payload is replaced by `payload`.
void put_message(std::string& out, uint64_t number, const std::string& payload) {
  ByteWriter w;
  w.var(number << 3 | kLengthDelimited);
  w.var(payload.size());
  out += w.out;
  out += payload;
}

class Splitter {
 public:
  Splitter(std::string_view model, uint64_t min_bytes) : all_(model), min_bytes_(min_bytes) {}

  std::optional<SplitModel> run() {
    SplitModel split;
    // `model` whole is a ModelProto: its graph fields are rewritten, the rest copied.
    auto graph = [&](const Field& f, std::string& out) {
      if (f.number != kModelGraph || f.wire_type != kLengthDelimited) return false;
      std::string rewritten;
      auto initializer = [&](const Field& g, std::string& gout) { return take_initializer(g, gout, split); };
      if (!rewrite(f.payload, f.end, initializer, rewritten)) {
        ok_ = false;
        return false;
      }
      put_message(out, f.number, rewritten);
      return true;
    };
    if (!rewrite(0, all_.size(), graph, split.proto)) return std::nullopt;
    return split;
  }

 private:
  // Copies the fields of the message in [begin, end) to `out`, except those `take` writes itself
  // (it returns true). False when the bytes are malformed (and then `take` may have failed too).
  template <class Take>
  bool rewrite(size_t begin, size_t end, Take take, std::string& out) {
    Fields fields(all_.substr(begin, end - begin));
    Field f;
    while (fields.next(f)) {
      f.begin += begin;
      f.payload += begin;
      f.end += begin;
      if (!take(f, out)) {
        if (!ok_) return false;
        out.append(all_.substr(f.begin, f.end - f.begin));
      }
    }
    return fields.ok() && ok_;
  }

  // A graph's field: an initializer is written without its large raw_data, which is recorded.
  bool take_initializer(const Field& f, std::string& out, SplitModel& split) {
    if (f.number != kGraphInitializer || f.wire_type != kLengthDelimited) return false;
    std::optional<ByteRange> data;
    std::string tensor;
    Fields fields(all_.substr(f.payload, f.end - f.payload));
    Field t;
    while (fields.next(t)) {
      size_t at = f.payload;
      if (t.number == kTensorRawData && t.wire_type == kLengthDelimited && t.end - t.payload >= min_bytes_) {
        data = ByteRange{at + t.payload, t.end - t.payload};  // the last one stands, as in protobuf
        continue;
      }
      if (t.number == kTensorRawData) data.reset();  // a later kept one replaces a left-out one
      tensor.append(all_.substr(at + t.begin, t.end - t.begin));
    }
    if (!fields.ok()) {
      ok_ = false;
      return false;
    }
    put_message(out, f.number, tensor);
    split.initializer_data.push_back(data);
    return true;
  }

  std::string_view all_;
  uint64_t min_bytes_;
  bool ok_ = true;
};

}  // namespace

std::optional<SplitModel> split_initializer_data(std::string_view model, uint64_t min_bytes) {
  return Splitter(model, min_bytes).run();
}

}  // namespace lathe::onnx::detail
