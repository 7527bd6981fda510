// Detectors exported from torchvision with their post-processing (scripts/make-test-models.py
// --detectors): each model in LATHE_DETECTORS_DIR is prepared once, then runs every image of its
// test data without compiling, and gives ONNX Runtime's detections. Two scores closer than float
// rounding may come in either order, so detections are matched as a set. Opt-in with the other
// generated models (LATHE_ORT_MODEL_TESTS).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"

namespace lathe::onnx {
namespace {

namespace fs = std::filesystem;

// How many of `got`'s detections (boxes, scores, labels) have no equal among `want`'s: the same
// label, a score within 1e-4, and a box within 0.4% of the image's extent (a random-weight
// detector turns float rounding into fractions of a pixel; ONNX Runtime and PyTorch differ so).
size_t unmatched(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  std::vector<float> gb = got[0].to_vector<float>(), gs = got[1].to_vector<float>(), wb = want[0].to_vector<float>(), ws = want[1].to_vector<float>();
  std::vector<int64_t> gl = got[2].to_vector<int64_t>(), wl = want[2].to_vector<int64_t>();
  float extent = 0;
  for (float v : wb) extent = std::max(extent, std::fabs(v));
  std::vector<bool> taken(ws.size(), false);
  size_t missing = 0;
  for (size_t i = 0; i < gs.size(); ++i) {
    bool found = false;
    for (size_t j = 0; j < ws.size() && !found; ++j) {
      if (taken[j] || gl[i] != wl[j] || std::fabs(gs[i] - ws[j]) > 1e-4f) continue;
      bool same_box = true;
      for (size_t c = 0; c < 4; ++c) same_box = same_box && std::fabs(gb[4 * i + c] - wb[4 * j + c]) <= 4e-3f * (1 + extent);
      if (same_box) taken[j] = found = true;
    }
    missing += !found;
  }
  return missing;
}

TEST(Detectors, PreparedOnceEachImageMatchesOnnxRuntime) {
  const char* dir = std::getenv("LATHE_DETECTORS_DIR");
  ASSERT_NE(dir, nullptr) << "LATHE_DETECTORS_DIR names the folder scripts/make-test-models.py --detectors wrote";
  size_t models = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!fs::exists(e.path() / "model.onnx")) continue;
    SCOPED_TRACE(e.path().string());
    ++models;
    Model m = Model::load((e.path() / "model.onnx").string());
    PreparedModel pm = m.prepare({});
    size_t sets = 0, compiles = kernel_cache_stats().compiles;
    for (int k = 0; fs::exists(e.path() / ("test_data_set_" + std::to_string(k))); ++k, ++sets) {
      fs::path set = e.path() / ("test_data_set_" + std::to_string(k));
      std::map<std::string, Tensor> inputs{{m.inputs()[0].name, load_tensor_pb((set / "input_0.pb").string())}};
      std::vector<Tensor> outs = pm.run(inputs), got, want;
      ASSERT_EQ(outs.size(), 3u);
      for (const char* role : {"boxes", "scores", "labels"})  // by name: torchvision's exports differ in order
        for (size_t i = 0; i < outs.size(); ++i)
          if (m.outputs()[i].name == role) {
            got.push_back(outs[i]);
            want.push_back(load_tensor_pb((set / ("output_" + std::to_string(i) + ".pb")).string()));
          }
      ASSERT_EQ(got.size(), 3u) << "outputs named boxes, scores and labels";
      EXPECT_EQ(got[1].shape(), want[1].shape()) << "data set " << k;
      EXPECT_EQ(unmatched(got, want), 0u) << "data set " << k;
      EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "data set " << k << " compiled";
    }
    EXPECT_GE(sets, 2u);
  }
  EXPECT_GE(models, 1u);
}

}  // namespace
}  // namespace lathe::onnx
