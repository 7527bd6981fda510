// Models that are wrong, or that ask for what lathe cannot do: each is an OnnxError naming the
// node, never a crash (these ran into out-of-bounds reads, division by zero or std::terminate).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lathe/lathe.hpp"
#include "onnx/node_model.hpp"
#include "onnx/op_context.hpp"

namespace lathe::onnx {
namespace {

// Builds `m` on `inputs`; expects an OnnxError whose message holds each of `words`.
void expect_error(const Model& m, const std::map<std::string, Tensor>& inputs, const std::vector<std::string>& words) {
  try {
    m.build(inputs);
    FAIL() << "no error";
  } catch (const OnnxError& e) {
    for (const std::string& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(OnnxBadModels, PoolingWindowsOfTheWrongRankOrZeroStride) {
  Tensor x = Tensor::rand({1, 1, 6, 6}, 1);
  NodeModel short_strides("MaxPool", {{"x", {1, 1, 6, 6}}}, 1);
  short_strides.attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {1});
  expect_error(short_strides.model(), {{"x", x}}, {"the_MaxPool", "strides"});
  NodeModel zero_stride("AveragePool", {{"x", {1, 1, 6, 6}}}, 1);
  zero_stride.attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {0, 1}).attr_s("auto_pad", "SAME_UPPER");
  expect_error(zero_stride.model(), {{"x", x}}, {"the_AveragePool", "positive"});
}

TEST(OnnxBadModels, ConvolutionWeightOfTheWrongRank) {
  NodeModel conv("Conv", {{"x", {1, 2, 5, 5}}, {"w", {3}}}, 1);
  expect_error(conv.model(), {{"x", Tensor::rand({1, 2, 5, 5}, 1)}, {"w", Tensor::rand({3}, 2)}}, {"the_Conv", "rank"});
  NodeModel transposed("ConvTranspose", {{"x", {1, 2, 5, 5}}, {"w", {2, 3, 3, 3}}}, 1);
  transposed.attr_ints("strides", {2, 2, 2});
  expect_error(transposed.model(), {{"x", Tensor::rand({1, 2, 5, 5}, 1)}, {"w", Tensor::rand({2, 3, 3, 3}, 2)}}, {"the_ConvTranspose"});
}

TEST(OnnxBadModels, TfIdfIndexOutsideTheOutput) {
  NodeModel tfidf("TfIdfVectorizer", {{"i64x", {6}}}, 1);
  tfidf.attr_ints("ngram_counts", {0}).attr_ints("ngram_indexes", {-3}).attr_ints("pool_int64s", {2});
  tfidf.attr_s("mode", "TF");
  expect_error(tfidf.model(), {{"i64x", Tensor::from_vector<int64_t>({1, 2, 3, 2, 1, 2})}}, {"the_TfIdfVectorizer", "ngram_indexes"});
}

TEST(OnnxBadModels, EinsumWithCharactersThatAreNotLabels) {
  NodeModel einsum("Einsum", {{"a", {2, 2}}}, 1);
  einsum.attr_s("equation", "i0->i");
  expect_error(einsum.model(), {{"a", Tensor::rand({2, 2}, 1)}}, {"the_Einsum", "equation"});
  NodeModel unknown("Einsum", {{"a", {2, 2}}}, 1);
  unknown.attr_s("equation", "ij->k");
  expect_error(unknown.model(), {{"a", Tensor::rand({2, 2}, 1)}}, {"the_Einsum", "output label k"});
}

TEST(OnnxBadModels, AnEmptyInputWhereAValueIsNeeded) {
  NodeModel topk("TopK", {{"x", {5}}, {"i64k", {0}}}, 2);
  expect_error(topk.model(), {{"x", Tensor::rand({5}, 1)}, {"i64k", Tensor::from_vector<int64_t>({})}}, {"the_TopK", "empty"});
}

// A prepared model's inputs are unknown while its graph is built: a node that needs an input's
// value then (here Reshape's target shape) makes the model build again for each input, never a
// plan baked from stale memory; a repeated shape runs the plan kept for it and compiles nothing.
TEST(OnnxBadModels, PreparedModelThatDecidesItsGraphFromInputValuesBuildsPerInput) {
  NodeModel reshape("Reshape", {{"x", {2, 6}}, {"i64shape", {2}}}, 1);
  Model m = reshape.model();
  PreparedModel pm = m.prepare({});
  EXPECT_NE(pm.rebuilds_because().find("the_Reshape"), std::string::npos) << pm.rebuilds_because();
  EXPECT_NE(pm.rebuilds_because().find("not known until run time"), std::string::npos) << pm.rebuilds_because();
  std::vector<float> values(12);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  Tensor x = Tensor::from_vector(values, {2, 6});
  size_t compiles = 0;
  for (int round = 0; round < 2; ++round)
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{4, 3}, std::vector<int64_t>{12, 1}}) {
      std::vector<Tensor> out = pm.run({{"x", x}, {"i64shape", Tensor::from_vector(shape)}});
      EXPECT_EQ(out[0].shape(), (Shape{shape[0], shape[1]}));
      EXPECT_EQ(out[0].to_vector<float>(), values);
      if (round == 1) {
        EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a shape seen before compiled";
      }
      compiles = kernel_cache_stats().compiles;
    }
  // Built for one input, the same model runs too.
  std::vector<Tensor> out = m.build({{"x", Tensor::rand({2, 6}, 1)}, {"i64shape", Tensor::from_vector<int64_t>({3, 4})}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
}

// An initializer whose bytes lie in another file (ONNX external data, as large models store their
// weights): read from its offset, and a range outside the file, a missing file, an offset that is
// not a number or a shape far larger than the file is an OnnxError (checked before any allocation).
TEST(OnnxBadModels, ExternalDataIsReadFromItsRangeAndChecked) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("lathe-external-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<float> w{0.5f, -1.0f, 2.0f, 4.0f, 8.0f, -16.0f};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    f << "12345678";  // the tensor starts at byte 8
    f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
    f << "tail";
  }
  auto model = [&](const std::string& location, const std::string& offset, Shape shape = {2, 3}) {
    NodeModel add("Add", {{"x", {2, 3}}}, 1);
    ::onnx::TensorProto* t = add.initializer("w", shape);
    t->set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value(location);
    auto* off = t->add_external_data();
    off->set_key("offset");
    off->set_value(offset);
    return add.proto.SerializeAsString();
  };
  // Raw bytes and external data at once are an error however large the tensor (a Constant's value,
  // a subgraph's initializer, a .pb file all read the proto whole).
  ::onnx::TensorProto both;
  both.set_name("both");
  both.set_data_type(::onnx::TensorProto::FLOAT);
  both.add_dims(1);
  both.set_raw_data(std::string(4, '\0'));
  both.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* where = both.add_external_data();
  where->set_key("location");
  where->set_value("weights.bin");
  try {
    onnx::detail::constant_from_proto(both, dir.string());
    ADD_FAILURE() << "no error for raw and external data at once";
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("both raw data and external data"), std::string::npos) << e.what();
  }
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3});
  std::vector<float> got = Model::from_bytes(model("weights.bin", "8"), dir.string()).build({{"x", x}}).at(0).to_vector<float>();
  EXPECT_EQ(got, (std::vector<float>{1.5f, 1.0f, 5.0f, 8.0f, 13.0f, -10.0f}));
  for (const auto& [location, offset, word] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"weights.bin", "16", "outside"}, {"weights.bin", "100", "outside"}, {"missing.bin", "0", "cannot open"}, {"weights.bin", "-4", "negative"},
           {"weights.bin", "8x", "not a number"}}) {
    try {
      Model::from_bytes(model(location, offset), dir.string()).build({{"x", x}});
      ADD_FAILURE() << "no error for " << location << " at " << offset;
    } catch (const OnnxError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
  // 2^20 x 2^20 floats (4 TB) claimed by a 36-byte file: the range error, not an allocation of 4 TB;
  // 2^40 x 2^40 (past 2^64 bytes, wrapped): the size error, before any range is computed.
  for (const auto& [shape, word] : std::vector<std::pair<Shape, std::string>>{{Shape{int64_t{1} << 20, int64_t{1} << 20}, "outside"},
                                                                              {Shape{int64_t{1} << 40, int64_t{1} << 40}, "2^48"}}) {
    try {
      Model::from_bytes(model("weights.bin", "8", shape), dir.string()).build({{"x", x}});
      ADD_FAILURE() << "no error for shape " << shape_to_string(shape);
    } catch (const OnnxError& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 'w'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lathe::onnx
