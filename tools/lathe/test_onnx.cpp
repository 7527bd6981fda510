// `lathe test-onnx`: runs cases in the ONNX backend-test layout and compares with their outputs.
#include "tools/lathe/commands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"

namespace lathe::cli {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> sorted(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    auto num = [](const fs::path& p) {
      std::string s = p.stem().string();
      size_t u = s.rfind('_');
      return u == std::string::npos ? 0L : std::strtol(s.c_str() + u + 1, nullptr, 10);
    };
    return num(a) < num(b);
  });
  return out;
}

std::vector<double> values(const Tensor& t) { return t.cast(dtypes::float64).to_vector<double>(); }

std::string kind_name(const onnx::Value& v) { return v.is_none() ? "an empty optional" : v.is_sequence() ? "a sequence" : "a tensor"; }

// Empty when `got` matches `want` within rtol/atol, else what differs.
std::string compare(const Tensor& got, Tensor want, double rtol, double atol) {
  if (want.dtype() == dtypes::uint16 && (got.dtype() == dtypes::bfloat16 || got.dtype() == dtypes::float16))
    want = want.bitcast(got.dtype());  // 16-bit float data stored as uint16 bits
  if (got.dtype() != want.dtype()) return "dtype " + got.dtype().name() + ", expected " + want.dtype().name();
  if (got.shape() != want.shape()) return "shape " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape());
  std::vector<double> g = values(got), w = values(want);
  double worst = 0, worst_rel = 0;
  size_t at = 0;
  bool bad = false;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (w[i] == g[i]) continue;
    double err = std::fabs(g[i] - w[i]);
    if (std::isnan(err) || err > atol + rtol * std::fabs(w[i])) {
      if (!bad || err > worst || std::isnan(err)) worst = err, worst_rel = err / std::max(std::fabs(w[i]), 1e-300), at = i;
      bad = true;
    }
  }
  if (!bad) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf, "max abs error %.3g (rel %.3g) at flat index %zu: got %.7g, expected %.7g", worst, worst_rel, at,
                g[at], w[at]);
  return buf;
}

// PASS, FAIL or ERROR for one case directory.
enum class Outcome { Pass, Fail, Error };

Outcome run_case(const fs::path& dir, double rtol, double atol) {
  std::string name = dir.filename().string();
  try {
    onnx::Model model = onnx::Model::load((dir / "model.onnx").string());
    std::vector<fs::path> sets = sorted(dir, "test_data_set_");
    if (sets.empty()) throw Error("no test_data_set_* folder");
    for (const fs::path& set : sets) {
      std::map<std::string, onnx::Value> inputs;
      // input_K.pb is the model's K-th graph input, whatever name its TensorProto carries (as the
      // ONNX backend runner pairs them).
      std::vector<fs::path> in_files = sorted(set, "input_");
      if (in_files.size() > model.inputs().size())
        throw Error(set.filename().string() + " has " + std::to_string(in_files.size()) + " input files for a model of " +
                    std::to_string(model.inputs().size()) + " inputs");
      for (size_t i = 0; i < in_files.size(); ++i)
        inputs.insert_or_assign(model.inputs()[i].name, onnx::load_value_pb(in_files[i].string(), model.inputs()[i].kind));
      std::vector<onnx::Value> outs = model.build_values(inputs);
      std::vector<fs::path> out_files = sorted(set, "output_");
      if (out_files.size() != outs.size())
        throw Error(std::to_string(out_files.size()) + " expected outputs for " + std::to_string(outs.size()) + " model outputs");
      // Every tensor of every output, computed by one plan.
      std::vector<Tensor> flat;
      for (const onnx::Value& v : outs) {
        if (v.is_tensor()) flat.push_back(v.tensor());
        if (v.is_sequence()) flat.insert(flat.end(), v.items().begin(), v.items().end());
      }
      ExecutionPlan plan = Tensor::prepare(flat);
      plan.execute();
      // On a GPU (or the emulator) the second run of a plan of kernels alone replays its recorded
      // launches (a CUDA Graph): its outputs are the ones compared.
      if (plan.device().type != "CPU") plan.execute();
      size_t next = 0;
      auto computed = [&] {
        Tensor got = flat[next].read_from(plan, next);
        ++next;
        return got;
      };
      for (size_t i = 0; i < outs.size(); ++i) {
        onnx::Value want = onnx::load_value_pb(out_files[i].string(), model.outputs()[i].kind);
        std::string why;
        if (outs[i].is_none() != want.is_none() || outs[i].is_sequence() != want.is_sequence()) {
          why = "kind differs (got " + kind_name(outs[i]) + ", expected " + kind_name(want) + ")";
        } else if (outs[i].is_tensor()) {
          why = compare(computed(), want.tensor(), rtol, atol);
        } else if (outs[i].is_sequence()) {
          if (outs[i].items().size() != want.items().size())
            why = "sequence of " + std::to_string(outs[i].items().size()) + " tensors, expected " + std::to_string(want.items().size());
          for (size_t k = 0; why.empty() && k < want.items().size(); ++k) {
            why = compare(computed(), want.items()[k], rtol, atol);
            if (!why.empty()) why = "item " + std::to_string(k) + ": " + why;
          }
        }
        if (!why.empty()) {
          std::printf("FAIL %s: output %zu (%s): %s\n", name.c_str(), i, model.outputs()[i].name.c_str(), why.c_str());
          return Outcome::Fail;
        }
      }
    }
    std::printf("PASS %s\n", name.c_str());
    return Outcome::Pass;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    if (msg.size() > 400) msg = msg.substr(0, 400) + "...";
    std::printf("ERROR %s: %s\n", name.c_str(), msg.c_str());
    return Outcome::Error;
  }
}

}  // namespace

int test_onnx(const std::vector<std::string>& dirs, double rtol, double atol) {
  size_t passed = 0, failed = 0;
  for (const std::string& d : dirs) {
    fs::path p(d);
    std::vector<fs::path> cases;
    if (fs::exists(p / "model.onnx")) {
      cases.push_back(p);
    } else if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
      std::sort(cases.begin(), cases.end());
    }
    if (cases.empty()) {
      std::printf("ERROR %s: no model.onnx in it or in its subfolders\n", d.c_str());
      ++failed;
    }
    for (const fs::path& c : cases) {
      (run_case(c, rtol, atol) == Outcome::Pass ? passed : failed) += 1;
      std::fflush(stdout);
    }
  }
  std::printf("%zu passed, %zu failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace lathe::cli
