#include "tools/lathe/serve/served_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include "lathe/onnx.hpp"

namespace lathe::serve {
namespace {

using Clock = std::chrono::steady_clock;

int64_t micros(Clock::duration d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); }

// A request waiting for an instance: its inputs in the model's order, checked.
struct Job {
  std::vector<const WireTensor*> inputs;
  int64_t rows = 1;  // along axis 0, where the model batches
  Clock::time_point queued_at;
  std::promise<std::vector<Tensor>> done;
};

// Whether two checked requests can run as one batch: the same sizes but axis 0.
bool same_but_rows(const Job& a, const Job& b) {
  for (size_t k = 0; k < a.inputs.size(); ++k)
    if (!std::equal(a.inputs[k]->shape.begin() + 1, a.inputs[k]->shape.end(), b.inputs[k]->shape.begin() + 1, b.inputs[k]->shape.end())) return false;
  return true;
}

}  // namespace

struct ServedModel::Impl {
  std::string name, version;
  ModelConfig config;
  ServeLimits limits;
  std::unique_ptr<onnx::Model> model;
  std::vector<onnx::PreparedModel> instances;
  std::map<std::string, int64_t> max_sizes;
  bool batch_axis = false;  // every input's axis 0 is a named dimension: requests stack along it
  ModelMetrics metrics;

  std::mutex m;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Job>> queue;
  int64_t held = 0;  // requests workers took from the queue and hold through the batching delay
  bool stopping = false;
  std::vector<std::thread> workers;

  [[noreturn]] static void bad(const std::string& message) { throw RequestError(400, message); }

  // The request's inputs in the model's order, checked as the prepared plan checks them
  // (PreparedModel::check: names, dtypes, ranks, sizes and their ranges), so a bad request is
  // refused before it queues and a batch holds only inputs its plan takes.
  std::shared_ptr<Job> checked(const InferRequest& r) const {
    std::vector<onnx::InputShape> shapes;
    for (const WireTensor& t : r.inputs) shapes.push_back({t.name, t.dtype, t.shape});
    try {
      instances.front().check(shapes);
    } catch (const onnx::OnnxError& e) {
      bad("model '" + name + "': " + e.what());
    }
    auto job = std::make_shared<Job>();
    for (const onnx::ValueInfo& v : model->inputs())
      job->inputs.push_back(&*std::find_if(r.inputs.begin(), r.inputs.end(), [&](const WireTensor& t) { return t.name == v.name; }));
    if (batch_axis && !job->inputs.empty()) job->rows = job->inputs.front()->shape[0];
    return job;
  }

  // Runs `jobs` (each checked, all the same sizes but axis 0) as one run of `pm`: their inputs
  // stacked along axis 0, the outputs split back by rows.
  std::vector<std::vector<Tensor>> run(onnx::PreparedModel& pm, const std::vector<std::shared_ptr<Job>>& jobs) {
    const std::vector<onnx::ValueInfo>& declared = model->inputs();
    std::map<std::string, Tensor> inputs;
    int64_t rows = 0;
    for (const auto& j : jobs) rows += j->rows;
    for (size_t k = 0; k < declared.size(); ++k) {
      const WireTensor& first = *jobs.front()->inputs[k];
      if (jobs.size() == 1) {
        inputs.emplace(declared[k].name, detail::tensor_from_bytes(first.bytes.data(), first.bytes.size(), first.dtype, first.shape));
        continue;
      }
      std::vector<uint8_t> stacked;  // row-major: stacking along axis 0 appends each one's bytes
      for (const auto& j : jobs) stacked.insert(stacked.end(), j->inputs[k]->bytes.begin(), j->inputs[k]->bytes.end());
      Shape shape = first.shape;
      shape[0] = rows;
      inputs.emplace(declared[k].name, detail::tensor_from_bytes(stacked.data(), stacked.size(), first.dtype, shape));
    }
    std::vector<Tensor> outs = pm.run(inputs);
    if (jobs.size() == 1) {
      metrics.record_run(rows);
      return {outs};
    }
    std::vector<std::vector<Tensor>> split(jobs.size());
    for (const Tensor& o : outs) {
      if (o.ndim() == 0 || o.shape()[0] != rows)
        throw Error("output of shape " + shape_to_string(o.shape()) + " does not stack along axis 0; batching needs every output to");
      // Each request's rows: a view of the run's output (a copy of the plan's, its own), not a copy.
      const Buffer& all = o.buffer();
      size_t per_row = rows ? all.size() / static_cast<size_t>(rows) : 0, at = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        Shape s = o.shape();
        s[0] = jobs[i]->rows;
        size_t n = per_row * static_cast<size_t>(jobs[i]->rows);
        split[i].push_back(Tensor::from_buffer(Buffer::view(all, at * static_cast<size_t>(o.dtype().itemsize()), n, o.dtype()), s));
        at += n;
      }
    }
    metrics.record_run(rows);
    return split;
  }

  // An instance's loop: take the oldest request, and with dynamic batching those that join it
  // within the delay; run them; answer each.
  void work(size_t instance) {
    for (;;) {
      std::vector<std::shared_ptr<Job>> jobs;
      {
        std::unique_lock<std::mutex> lock(m);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping, and nothing left
        jobs.push_back(queue.front());
        queue.pop_front();
        if (config.dynamic_batching) {
          int64_t rows = jobs.front()->rows;
          auto deadline = jobs.front()->queued_at + std::chrono::microseconds(config.max_queue_delay_us);
          for (;;) {
            for (auto it = queue.begin(); it != queue.end() && rows < config.max_batch_size;) {
              if (rows + (*it)->rows <= config.max_batch_size && same_but_rows(*jobs.front(), **it)) {
                rows += (*it)->rows;
                jobs.push_back(*it);
                it = queue.erase(it);
              } else {
                ++it;
              }
            }
            if (rows >= config.max_batch_size || stopping || Clock::now() >= deadline) break;
            held += static_cast<int64_t>(jobs.size());  // still waiting, as far as a client can tell
            wake.wait_until(lock, deadline);
            held -= static_cast<int64_t>(jobs.size());
          }
        }
      }
      auto start = Clock::now();
      for (const auto& j : jobs) metrics.queue_us += static_cast<uint64_t>(micros(start - j->queued_at));
      // A batch that fails (outputs that do not stack, or one request's input the model refuses)
      // runs again request by request, so each gets its own answer or its own error.
      std::vector<std::vector<Tensor>> outs;
      bool batch_ran = false;
      if (jobs.size() > 1) {
        try {
          outs = run(instances[instance], jobs);
          batch_ran = true;
        } catch (const std::exception&) {
          outs.clear();
        }
      }
      for (size_t i = 0; i < jobs.size(); ++i) {
        try {
          std::vector<Tensor> mine = batch_ran ? std::move(outs[i]) : run(instances[instance], {jobs[i]}).front();
          metrics.compute_us += static_cast<uint64_t>(micros(Clock::now() - start));
          jobs[i]->done.set_value(std::move(mine));
        } catch (...) {
          jobs[i]->done.set_exception(std::current_exception());
        }
      }
    }
  }
};

ServedModel::ServedModel(const std::string& name, int64_t version, const std::string& path, const ModelConfig& config, const ServeLimits& limits,
                         const PrepareOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.name = name, s.version = std::to_string(version), s.config = config, s.limits = limits;
  s.metrics.model = name, s.metrics.version = s.version;
  s.model = std::make_unique<onnx::Model>(onnx::Model::load(path));
  for (const onnx::ValueInfo& v : s.model->inputs()) {
    if (v.kind != onnx::ValueKind::kTensor) throw Error("model '" + name + "': input '" + v.name + "' is not a tensor; the server takes tensors");
    if (!datatype_name(v.dtype)) throw Error("model '" + name + "': input '" + v.name + "' is " + v.dtype.name() + ", which the protocol has no datatype for");
    for (size_t d = 0; d < v.dims.size(); ++d) {
      if (v.dims[d]) continue;
      const std::string& p = v.dim_params[d];
      if (p.empty()) throw Error("model '" + name + "': input '" + v.name + "' axis " + std::to_string(d) + " has no size and no name");
      if (auto it = config.max_sizes.find(p); it != config.max_sizes.end()) s.max_sizes[p] = it->second;
      else if (d == 0 && config.max_batch_size > 0) s.max_sizes[p] = config.max_batch_size;
      else
        throw Error("model '" + name + "': input '" + v.name + "' axis " + std::to_string(d) + " ('" + p +
                    "') needs a largest size: max_batch_size in config.json for axis 0, or max_sizes");
    }
  }
  // Requests stack along axis 0 only where it is one named dimension of every input and no other
  // axis has that name (inputs with axes 0 of different names, q and k of an attention, would mix
  // two requests' rows).
  const std::vector<onnx::ValueInfo>& ins = s.model->inputs();
  const std::string batch = !ins.empty() && !ins[0].dims.empty() ? ins[0].dim_params[0] : "";
  s.batch_axis = !batch.empty();
  for (const onnx::ValueInfo& v : ins) {
    s.batch_axis = s.batch_axis && !v.dims.empty();
    for (size_t d = 0; d < v.dims.size(); ++d) s.batch_axis = s.batch_axis && ((d == 0) == (v.dim_params[d] == batch));
  }
  // One limit on axis 0: the plans are prepared for max_batch_size rows, and a request over it is
  // refused by the plan's own range check.
  if (s.batch_axis && config.max_batch_size > 0 && s.max_sizes.at(batch) != config.max_batch_size)
    throw Error("model '" + name + "': max_batch_size " + std::to_string(config.max_batch_size) + " and max_sizes' " + batch + " (" +
                std::to_string(s.max_sizes.at(batch)) + ") differ; give one");
  if (config.dynamic_batching && !s.batch_axis)
    throw Error("model '" + name + "': dynamic_batching needs every input's axis 0 to be one named (dynamic) dimension, on no other axis");
  // A batch's outputs are split back along axis 0: each output's axis 0 must be the batch (or
  // undeclared, checked as each batch runs).
  if (config.dynamic_batching)
    for (const onnx::ValueInfo& v : s.model->outputs())
      if (!v.dims.empty() && (v.dims[0] || (!v.dim_params[0].empty() && v.dim_params[0] != batch)))
        throw Error("model '" + name + "': dynamic_batching needs every output's axis 0 to be '" + batch + "', and output '" + v.name + "''s is not");
  for (int i = 0; i < config.instance_count; ++i) s.instances.push_back(s.model->prepare(s.max_sizes, options));
  for (size_t i = 0; i < s.instances.size(); ++i) s.workers.emplace_back([this, i] { impl_->work(i); });
}

ServedModel::~ServedModel() { stop(); }

const std::string& ServedModel::name() const { return impl_->name; }
const std::string& ServedModel::version() const { return impl_->version; }
const ModelMetrics& ServedModel::metrics() const { return impl_->metrics; }
void ServedModel::count_refused() { ++impl_->metrics.failure; }

int64_t ServedModel::queued() const {
  std::lock_guard<std::mutex> lock(impl_->m);
  return static_cast<int64_t>(impl_->queue.size()) + impl_->held;
}

std::string ServedModel::metadata_json(const std::vector<std::string>& versions) const {
  using nlohmann::json;
  auto describe = [&](const std::vector<onnx::ValueInfo>& values) {
    json out = json::array();
    for (const onnx::ValueInfo& v : values) {
      json shape = json::array();
      for (const std::optional<int64_t>& d : v.dims) shape.push_back(d ? *d : -1);
      out.push_back({{"name", v.name}, {"datatype", datatype_name(v.dtype).value_or("BYTES")}, {"shape", shape}});
    }
    return out;
  };
  json doc = {{"name", impl_->name}, {"versions", versions}, {"platform", "onnx"},
              {"inputs", describe(impl_->model->inputs())}, {"outputs", describe(impl_->model->outputs())}};
  if (impl_->config.max_batch_size > 0) doc["parameters"] = {{"max_batch_size", impl_->config.max_batch_size}, {"dynamic_batching", impl_->config.dynamic_batching}};
  return doc.dump();
}

std::vector<OutputTensor> ServedModel::infer(const InferRequest& request) {
  Impl& s = *impl_;
  try {
    std::vector<std::string> wanted = request.outputs;
    for (const std::string& o : wanted)
      if (std::none_of(s.model->outputs().begin(), s.model->outputs().end(), [&](const onnx::ValueInfo& v) { return v.name == o; }))
        throw RequestError(400, "output '" + o + "' is not an output of model '" + s.name + "'");
    std::shared_ptr<Job> job = s.checked(request);
    std::future<std::vector<Tensor>> result = job->done.get_future();
    {
      std::lock_guard<std::mutex> lock(s.m);
      if (s.stopping) throw RequestError(503, "the server is shutting down");
      if (static_cast<int64_t>(s.queue.size()) >= s.limits.max_queue)
        throw RequestError(503, "model '" + s.name + "' has " + std::to_string(s.queue.size()) + " requests waiting, its most; try again");
      job->queued_at = Clock::now();
      s.queue.push_back(job);
    }
    s.wake.notify_all();
    std::vector<Tensor> outs;
    try {
      outs = result.get();
    } catch (const onnx::OnnxError& e) {
      throw RequestError(400, e.what());
    } catch (const std::exception& e) {
      throw RequestError(500, std::string("the run failed: ") + e.what());
    }
    std::vector<OutputTensor> answer;
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string& n = s.model->outputs()[i].name;
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), n) == wanted.end()) continue;
      auto b = request.binary.find(n);
      answer.push_back({n, outs[i], b != request.binary.end() ? b->second : request.binary_by_default});
    }
    ++s.metrics.success;
    return answer;
  } catch (...) {
    ++s.metrics.failure;
    throw;
  }
}

void ServedModel::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->m);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (std::thread& t : impl_->workers)
    if (t.joinable()) t.join();
}

}  // namespace lathe::serve
