// onnx_work_budget DIR...: for every model folder (model.onnx + test_data_set_0 inputs) under the
// given directories, the ALU operations its plan executes beside those of its graph evaluated
// node by node, one line per model; exits 1 when a model exceeds the fusion work budget
// (schedule/work_budget.hpp), naming the kernel with the largest excess.
#include <cstdio>
#include <filesystem>
#include <map>

#include "lathe/onnx.hpp"
#include "schedule/work_budget.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> cases;
  for (int a = 1; a < argc; ++a) {
    if (fs::exists(fs::path(argv[a]) / "model.onnx")) cases.emplace_back(argv[a]);
    else if (fs::is_directory(argv[a]))
      for (const auto& e : fs::directory_iterator(argv[a]))
        if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    std::fprintf(stderr, "onnx_work_budget: no model folders under the given directories\n");
    return 2;
  }
  int over = 0;
  std::printf("%-24s %8s %14s %14s %7s\n", "model", "kernels", "graph ops", "plan ops", "ratio");
  for (const fs::path& dir : cases) {
    try {
      lathe::onnx::Model model = lathe::onnx::Model::load((dir / "model.onnx").string());
      std::map<std::string, lathe::Tensor> in;
      for (size_t i = 0; i < model.inputs().size(); ++i)
        in.emplace(model.inputs()[i].name,
                   lathe::onnx::load_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string()));
      lathe::test::BudgetReport r = lathe::test::work_budget(model.build(in));
      double ratio = r.graph ? static_cast<double>(r.plan) / static_cast<double>(r.graph) : 1.0;
      bool bad = ratio > lathe::test::kWorkBudget || !r.missing.empty();
      over += bad;
      std::printf("%-24s %8zu %14lld %14lld %7.3f%s\n", dir.filename().c_str(), r.kernels, static_cast<long long>(r.graph),
                  static_cast<long long>(r.plan), ratio, (std::string(bad ? "  OVER BUDGET; " : "  ") + "largest excess: " + r.worst + (r.missing.empty() ? "" : "; no kernel for nodes" + r.missing)).c_str());
    } catch (const lathe::Error& e) {
      std::printf("%-24s error: %s\n", dir.filename().c_str(), e.what());
      ++over;
    }
  }
  return over ? 1 : 0;
}
