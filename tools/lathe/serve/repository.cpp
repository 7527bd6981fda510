#include "tools/lathe/serve/repository.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "lathe/error.hpp"

namespace lathe::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A whole number in [lo, hi] at `key` of `doc`, else `fallback` when absent.
int64_t number(const json& doc, const std::string& key, int64_t lo, int64_t hi, int64_t fallback, const std::string& where) {
  if (!doc.contains(key)) return fallback;
  const json& v = doc[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    throw Error(where + ": " + key + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return v.get<int64_t>();
}

ModelConfig read_config(const fs::path& path) {
  ModelConfig c;
  if (!fs::exists(path)) return c;
  std::ifstream in(path);
  json doc = json::parse(in, nullptr, false);
  std::string where = path.string();
  if (doc.is_discarded() || !doc.is_object()) throw Error(where + ": not a JSON object");
  for (const auto& [key, value] : doc.items())
    if (key != "max_batch_size" && key != "instance_count" && key != "dynamic_batching" && key != "max_sizes")
      throw Error(where + ": unknown field '" + key + "' (max_batch_size, instance_count, dynamic_batching, max_sizes)");
  c.max_batch_size = number(doc, "max_batch_size", 0, 1 << 20, 0, where);
  c.instance_count = static_cast<int>(number(doc, "instance_count", 1, 64, 1, where));
  if (doc.contains("dynamic_batching")) {
    const json& d = doc["dynamic_batching"];
    if (!d.is_object()) throw Error(where + ": dynamic_batching must be an object");
    c.dynamic_batching = true;
    c.max_queue_delay_us = number(d, "max_queue_delay_microseconds", 0, 10'000'000, 0, where + ": dynamic_batching");
    if (c.max_batch_size < 2) throw Error(where + ": dynamic_batching needs a max_batch_size of 2 or more");
  }
  if (doc.contains("max_sizes")) {
    if (!doc["max_sizes"].is_object()) throw Error(where + ": max_sizes must map dimension names to sizes");
    for (const auto& [name, v] : doc["max_sizes"].items()) c.max_sizes[name] = number(doc["max_sizes"], name, 1, int64_t{1} << 30, 1, where + ": max_sizes");
  }
  return c;
}

}  // namespace

std::vector<RepositoryModel> read_repository(const std::string& dir) {
  if (!fs::is_directory(dir)) throw Error("model repository '" + dir + "' is not a folder");
  std::vector<RepositoryModel> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    RepositoryModel m;
    m.name = e.path().filename().string();
    for (const fs::directory_entry& v : fs::directory_iterator(e.path())) {
      std::string name = v.path().filename().string();
      if (!v.is_directory() || name.empty() || name.size() > 18 || !std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        continue;
      if (fs::exists(v.path() / "model.onnx")) m.versions[std::stoll(name)] = (v.path() / "model.onnx").string();
    }
    if (m.versions.empty()) throw Error("model repository '" + dir + "': " + m.name + " has no numbered version folder holding model.onnx (NAME/1/model.onnx)");
    m.config = read_config(e.path() / "config.json");
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const RepositoryModel& a, const RepositoryModel& b) { return a.name < b.name; });
  if (out.empty()) throw Error("model repository '" + dir + "' holds no model (NAME/VERSION/model.onnx)");
  return out;
}

}  // namespace lathe::serve
