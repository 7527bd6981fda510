// `lathe serve`: the Open Inference Protocol's HTTP/REST endpoints (KServe v2) over a model
// repository, on cpp-httplib. Each request is answered by the model's queue (served_model.hpp);
// errors are {"error": "..."} with the status the protocol gives them.
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "lathe/lathe.hpp"
#include "tools/lathe/commands.hpp"
#include "tools/lathe/serve/metrics.hpp"
#include "tools/lathe/serve/protocol.hpp"
#include "tools/lathe/serve/repository.hpp"
#include "tools/lathe/serve/served_model.hpp"

namespace lathe::cli {
namespace {

using serve::RequestError;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::atomic<int> stop_signal{0};  // lock-free: safe to set from a signal handler
static_assert(std::atomic<int>::is_always_lock_free);
extern "C" void on_stop_signal(int sig) { stop_signal = sig; }

// The loaded models: by name, then version (the latest answers when none is named).
struct Repository {
  std::map<std::string, std::map<int64_t, std::unique_ptr<serve::ServedModel>>> models;

  serve::ServedModel& find(const std::string& name, const std::string& version) {
    auto m = models.find(name);
    if (m == models.end()) throw RequestError(404, "no model named '" + name + "'");
    if (version.empty()) return *m->second.rbegin()->second;
    for (auto& [v, served] : m->second)
      if (std::to_string(v) == version) return *served;
    throw RequestError(404, "model '" + name + "' has no version '" + version + "'");
  }
  std::vector<std::string> versions(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& [v, served] : models.at(name)) out.push_back(std::to_string(v));
    return out;
  }
};

void answer_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(json{{"error", message}}.dump(), "application/json");
}

thread_local Clock::time_point request_started;

}  // namespace

int serve(const ServeOptions& o) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is that request's failure, not the server's
  Repository repo;
  serve::ServeLimits limits;
  limits.max_queue = o.max_queue;
  PrepareOptions prepare;
  for (const serve::RepositoryModel& m : serve::read_repository(o.repository))
    for (const auto& [version, path] : m.versions) {
      auto start = Clock::now();
      repo.models[m.name][version] = std::make_unique<serve::ServedModel>(m.name, version, path, m.config, limits, prepare);
      std::fprintf(stderr, "lathe serve: loaded %s version %lld (%d instance%s) in %.0f ms\n", m.name.c_str(), static_cast<long long>(version),
                   m.config.instance_count, m.config.instance_count == 1 ? "" : "s",
                   std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }

  httplib::Server http;
  int http_threads = o.http_threads;
  http.new_task_queue = [http_threads] { return new httplib::ThreadPool(static_cast<size_t>(http_threads)); };
  http.set_payload_max_length(static_cast<size_t>(o.max_request_bytes));
  // Replies go out at once (without, a small reply waited ~40 ms on the client's delayed ACK), and
  // a client's connection serves many requests (a thread holds it while it is open).
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(2);  // an idle connection gives its thread back after 2 s
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    request_started = Clock::now();
    // A body without a length (chunked) would be read past --max-request-mb: refused unread.
    if (!req.has_header("Content-Length") && req.has_header("Transfer-Encoding")) {
      answer_error(res, 411, "a request body needs a Content-Length (chunked bodies are not taken)");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    json line = {{"method", req.method}, {"path", req.path}, {"status", res.status},
                 {"request_bytes", req.body.size()}, {"response_bytes", res.body.size()}, {"client", req.remote_addr}};
    if (request_started != Clock::time_point{}) {  // unset for a request refused before routing (413)
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - request_started).count();
      line["ms"] = std::round(ms * 1000) / 1000;
    }
    request_started = Clock::time_point{};
    std::fprintf(stderr, "%s\n", line.dump().c_str());
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const RequestError& e) {
      answer_error(res, e.status(), e.what());
    } catch (const std::exception& e) {
      answer_error(res, 500, e.what());
    } catch (...) {
      answer_error(res, 500, "unknown error");
    }
  });
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) answer_error(res, 413, "the request is larger than the server's limit (--max-request-mb)");
    else if (res.status == 404) answer_error(res, 404, "no such endpoint");
    else answer_error(res, res.status, "HTTP status " + std::to_string(res.status));
  });

  auto ok = [](httplib::Response& res, const std::string& body) { res.set_content(body, "application/json"); };
  http.Get("/v2/health/live", [&](const httplib::Request&, httplib::Response& res) { ok(res, "{}"); });
  http.Get("/v2/health/ready", [&](const httplib::Request&, httplib::Response& res) { ok(res, "{}"); });
  http.Get("/v2", [&](const httplib::Request&, httplib::Response& res) {
    ok(res, json{{"name", "lathe"}, {"version", kVersion}, {"extensions", {"binary_tensor_data"}}}.dump());
  });
  const char* model_path = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  http.Get(std::string(model_path) + "/ready", [&](const httplib::Request& req, httplib::Response& res) {
    repo.find(req.matches[1], req.matches[2]);
    ok(res, "{}");
  });
  http.Get(model_path, [&](const httplib::Request& req, httplib::Response& res) {
    ok(res, repo.find(req.matches[1], req.matches[2]).metadata_json(repo.versions(req.matches[1])));
  });
  http.Post(std::string(model_path) + "/infer", [&](const httplib::Request& req, httplib::Response& res) {
    serve::ServedModel& model = repo.find(req.matches[1], req.matches[2]);
    std::optional<size_t> json_length;
    if (req.has_header("Inference-Header-Content-Length")) {
      std::string v = req.get_header_value("Inference-Header-Content-Length");
      if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
        throw RequestError(400, "Inference-Header-Content-Length: '" + v + "' is not a length");
      json_length = static_cast<size_t>(std::stoull(v));
    }
    serve::InferRequest request;
    try {
      request = serve::parse_infer_request(req.body, json_length, limits.most_elements);
    } catch (const RequestError&) {
      model.count_refused();
      throw;
    }
    serve::EncodedResponse r = serve::encode_infer_response(model.name(), model.version(), request.id, model.infer(request));
    if (r.json_length) {
      res.set_header("Inference-Header-Content-Length", std::to_string(r.json_length));
      res.set_content(r.body, "application/octet-stream");
    } else {
      res.set_content(r.body, "application/json");
    }
  });
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    std::vector<const serve::ModelMetrics*> all;
    int64_t queued = 0;
    for (const auto& [name, versions] : repo.models)
      for (const auto& [v, served] : versions) all.push_back(&served->metrics()), queued += served->queued();
    res.set_content(serve::prometheus_text(all, queued), "text/plain; version=0.0.4");
  });

  int port = o.port;
  if (port == 0) port = http.bind_to_any_port(o.host);
  else if (!http.bind_to_port(o.host, port)) port = -1;
  if (port < 0) throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (in use, or not an address of this machine)");
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
  std::atomic<bool> done{false};
  std::thread watcher([&] {  // a signal handler may only set a flag: this thread stops the server
    while (!stop_signal && !done) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // stop() does nothing before the listener runs: a signal that came first waits for it.
    while (!done && !http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    http.stop();
  });
  std::printf("lathe serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stdout);
  http.listen_after_bind();  // returns once stopped; in-flight requests finish as its threads end
  done = true;
  watcher.join();
  for (auto& [name, versions] : repo.models)
    for (auto& [v, served] : versions) served->stop();
  std::fprintf(stderr, "lathe serve: stopped%s\n", stop_signal ? " on a signal" : "");
  return 0;
}

}  // namespace lathe::cli
