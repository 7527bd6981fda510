// Initializer data read where it lies. A model's weights are most of its file; parsing the whole
// file copies each one into a string of the parsed message (fresh memory, which costs more than
// the copy itself on these VMs) before the importer copies it again into the tensor's buffer.
// Instead the protobuf is parsed without the main graph's large initializer payloads (each
// TensorProto's raw_data), and each payload is then read once, straight into its buffer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::onnx::detail {

/// Where a payload lies in the model's bytes.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// A ModelProto's bytes with the payloads left out.
struct SplitModel {
  std::string proto;  // parses as the model, less the left-out raw_data fields
  // One per initializer of the main graph, in order: where its left-out raw_data lies, or
  // nothing where it was kept (smaller than the threshold, or none).
  std::vector<std::optional<ByteRange>> initializer_data;
};

/// `model` (a serialized ModelProto) with the raw_data of each main-graph initializer of at least
/// `min_bytes` left out. Nothing when `model` is not protobuf this can walk (the caller parses it
/// whole, and protobuf says what is wrong).
std::optional<SplitModel> split_initializer_data(std::string_view model, uint64_t min_bytes);

}  // namespace lathe::onnx::detail
