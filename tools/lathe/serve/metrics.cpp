#include "tools/lathe/serve/metrics.hpp"

#include <sstream>

namespace lathe::serve {

void ModelMetrics::record_run(int64_t rows) {
  ++executions;
  inferences += static_cast<uint64_t>(rows);
  size_t b = 0;
  while (b < kBatchBuckets.size() && rows > kBatchBuckets[b]) ++b;
  ++batch_runs[b];
}

namespace {

// A label value as the text format spells it: backslash, double quote and newline escaped.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_text(const std::vector<const ModelMetrics*>& models, int64_t queued) {
  std::ostringstream out;
  auto labels = [](const ModelMetrics& m) { return "model=\"" + label(m.model) + "\",version=\"" + label(m.version) + "\""; };
  auto family = [&](const char* name, const char* type, const char* help, auto value) {
    out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
    for (const ModelMetrics* m : models) out << name << "{" << labels(*m) << "} " << value(*m) << "\n";
  };
  family("lathe_inference_request_success", "counter", "Inference requests answered with outputs.", [](const ModelMetrics& m) { return m.success.load(); });
  family("lathe_inference_request_failure", "counter", "Inference requests answered with an error.", [](const ModelMetrics& m) { return m.failure.load(); });
  family("lathe_inference_queue_duration_us", "counter", "Microseconds requests waited for a plan, summed.", [](const ModelMetrics& m) { return m.queue_us.load(); });
  family("lathe_inference_compute_duration_us", "counter", "Microseconds of the runs requests took part in, summed per request.",
         [](const ModelMetrics& m) { return m.compute_us.load(); });
  family("lathe_inference_exec_count", "counter", "Runs of a prepared plan (a batch counts once).", [](const ModelMetrics& m) { return m.executions.load(); });
  family("lathe_inference_count", "counter", "Rows of axis 0 computed (a batch counts each).", [](const ModelMetrics& m) { return m.inferences.load(); });
  out << "# HELP lathe_inference_batch_size Runs by the rows of axis 0 they computed.\n# TYPE lathe_inference_batch_size histogram\n";
  for (const ModelMetrics* m : models) {
    uint64_t below = 0;
    std::string labels_of = labels(*m);
    for (size_t b = 0; b <= ModelMetrics::kBatchBuckets.size(); ++b) {
      below += m->batch_runs[b].load();
      std::string le = b < ModelMetrics::kBatchBuckets.size() ? std::to_string(ModelMetrics::kBatchBuckets[b]) : "+Inf";
      out << "lathe_inference_batch_size_bucket{" << labels_of << ",le=\"" << le << "\"} " << below << "\n";
    }
    out << "lathe_inference_batch_size_sum{" << labels_of << "} " << m->inferences.load() << "\n";
    out << "lathe_inference_batch_size_count{" << labels_of << "} " << m->executions.load() << "\n";
  }
  out << "# HELP lathe_inference_queued Requests waiting for a plan now.\n# TYPE lathe_inference_queued gauge\nlathe_inference_queued " << queued << "\n";
  return out.str();
}

}  // namespace lathe::serve
