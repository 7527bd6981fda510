// Initializer data read where it lies: the model's protobuf without the large raw_data payloads
// parses as the model less those fields, each left-out range holds exactly the bytes protobuf
// would have read, and models loaded this way compute what they did.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "lathe/lathe.hpp"
#include "onnx/initializer_data.hpp"
#include "onnx/node_model.hpp"

namespace lathe::onnx {
namespace {

using detail::split_initializer_data;

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A length-delimited protobuf field.
std::string field(int number, const std::string& payload) {
  std::string out;
  auto varint = [&out](uint64_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    out.push_back(static_cast<char>(v));
  };
  varint(static_cast<uint64_t>(number) << 3 | 2);
  varint(payload.size());
  return out + payload;
}

TEST(InitializerData, LargePayloadsAreLeftOutAndTheirRangesHoldTheirBytes) {
  NodeModel add("Add", {{"x", {40, 40}}}, 1);
  std::string big = random_bytes(40 * 40 * 4, 1), small = random_bytes(16, 2);
  add.initializer("big", {40, 40})->set_raw_data(big);
  add.initializer("small", {2, 2})->set_raw_data(small);
  ::onnx::TensorProto* typed = add.initializer("typed", {2});
  typed->add_float_data(1.5f);
  typed->add_float_data(2.5f);
  // A Constant node's tensor is not an initializer: it stays in the proto whatever its size.
  ::onnx::NodeProto* c = add.proto.mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->add_output("k");
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_raw_data(random_bytes(8000, 3));
  add.proto.set_producer_name("after the graph");
  std::string bytes = add.proto.SerializeAsString();

  auto split = split_initializer_data(bytes, 4096);
  ASSERT_TRUE(split);
  ASSERT_EQ(split->initializer_data.size(), 3u);
  ASSERT_TRUE(split->initializer_data[0]);
  EXPECT_EQ(bytes.substr(split->initializer_data[0]->offset, split->initializer_data[0]->length), big);
  EXPECT_FALSE(split->initializer_data[1]);
  EXPECT_FALSE(split->initializer_data[2]);
  EXPECT_LT(split->proto.size(), bytes.size() - big.size() + 64);

  ::onnx::ModelProto parsed, want = add.proto;
  ASSERT_TRUE(parsed.ParseFromString(split->proto));
  want.mutable_graph()->mutable_initializer(0)->clear_raw_data();
  EXPECT_EQ(parsed.SerializeAsString(), want.SerializeAsString());
}

// Protobuf keeps the last of a repeated field: so does the split, whether the last is large
// (left out) or small (kept, and then nothing is left out for that tensor).
TEST(InitializerData, ARepeatedRawDataIsTheLastOne) {
  ::onnx::TensorProto head;
  head.set_name("w");
  head.set_data_type(::onnx::TensorProto::FLOAT);
  head.add_dims(2000);
  std::string first = random_bytes(8000, 4), last = random_bytes(8000, 5), tiny = random_bytes(8, 6);
  for (const std::string& second : {last, tiny}) {
    std::string tensor = head.SerializeAsString() + field(9, first) + field(9, second);
    std::string graph = field(2, "g") + field(5, tensor);  // GraphProto: its name, then the initializer
    std::string model = field(7, graph);
    ::onnx::ModelProto whole;
    ASSERT_TRUE(whole.ParseFromString(model));
    ASSERT_EQ(whole.graph().initializer(0).raw_data(), second);

    auto split = split_initializer_data(model, 4096);
    ASSERT_TRUE(split);
    ::onnx::ModelProto parsed;
    ASSERT_TRUE(parsed.ParseFromString(split->proto));
    ASSERT_EQ(split->initializer_data.size(), 1u);
    if (second.size() >= 4096) {
      ASSERT_TRUE(split->initializer_data[0]);
      EXPECT_EQ(model.substr(split->initializer_data[0]->offset, split->initializer_data[0]->length), second);
      EXPECT_FALSE(parsed.graph().initializer(0).has_raw_data());
    } else {
      EXPECT_FALSE(split->initializer_data[0]);
      EXPECT_EQ(parsed.graph().initializer(0).raw_data(), second);
    }
  }
}

// Cut anywhere, the bytes either cannot be walked (the caller parses them whole, and protobuf
// reports the damage) or split into a proto that parses exactly when the cut bytes do.
TEST(InitializerData, CutBytesSplitOnlyWhenTheyParse) {
  NodeModel add("Add", {{"x", {40, 40}}}, 1);
  add.initializer("w", {40, 40})->set_raw_data(random_bytes(6400, 7));
  std::string bytes = add.proto.SerializeAsString();
  int parsed_cuts = 0;
  for (size_t n = 0; n <= bytes.size(); ++n) {  // every cut: most fall inside the graph, a few between fields
    std::string cut = bytes.substr(0, n);
    auto split = split_initializer_data(cut, 4096);
    ::onnx::ModelProto whole, parsed;
    bool whole_ok = whole.ParseFromString(cut);
    parsed_cuts += whole_ok;
    EXPECT_TRUE(split || !whole_ok) << "cut at " << n << " parses whole but is not split";
    if (split) {
      EXPECT_EQ(parsed.ParseFromString(split->proto), whole_ok) << "cut at " << n;
    }
  }
  EXPECT_GE(parsed_cuts, 3);  // empty, after ir_version, after the graph (and the whole)
  EXPECT_FALSE(split_initializer_data(std::string("\x3a\xff\xff\xff\x7f", 5), 4096));  // graph longer than the bytes
  EXPECT_FALSE(split_initializer_data(std::string("\x0b", 1), 4096));                  // a group: not walked
}

// A model whose weights were read straight into their buffers computes what it did: from a file
// and from bytes; a payload whose size does not fit its shape is an error naming the tensor.
TEST(InitializerData, ModelsComputeWithTheirLeftOutWeights) {
  NodeModel add("Add", {{"x", {40, 40}}}, 1);
  std::vector<float> w(1600), x(1600);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<float>(i) * 0.25f;
    x[i] = 1000.0f - static_cast<float>(i);
  }
  add.initializer("w", {40, 40})->set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size() * 4));
  std::string bytes = add.proto.SerializeAsString();
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("lathe_initializer_data_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    f << bytes;
  }
  std::vector<float> want(1600);
  for (size_t i = 0; i < want.size(); ++i) want[i] = x[i] + w[i];
  Tensor input = Tensor::from_vector(x).reshape({40, 40});
  EXPECT_EQ(Model::load((dir / "model.onnx").string()).build({{"x", input}}).at(0).to_vector<float>(), want);
  EXPECT_EQ(Model::from_bytes(bytes).build({{"x", input}}).at(0).to_vector<float>(), want);

  add.proto.mutable_graph()->mutable_initializer(0)->mutable_dims()->Set(0, 41);
  try {
    Model::from_bytes(add.proto.SerializeAsString());
    ADD_FAILURE() << "no error for 6400 bytes of a 41 x 40 tensor";
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w': holds 6400 bytes"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lathe::onnx
