#include "device/backend.hpp"

#include <cstdlib>
#include <list>
#include <mutex>

#include "device/cpu/cpu_backend.hpp"
#include "device/cuda/cuda_backend.hpp"
#include "lathe/info.hpp"
#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

struct Registry {
  std::mutex mu;
  std::list<Backend> backends;  // a list: references stay valid as backends are added
};

void add(Registry& r, Backend backend) {
  std::lock_guard<std::mutex> lock(r.mu);
  for (Backend& b : r.backends)
    if (b.device == backend.device && b.compiler == backend.compiler) {
      b = std::move(backend);
      return;
    }
  r.backends.push_back(std::move(backend));
}

// lathe's own backends are added before anything else is looked up or registered.
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // leaked: backends outlive the static destruction of their users
    for (Backend& b : cpu_backends()) add(*reg, std::move(b));
    for (Backend& b : cuda_backends()) add(*reg, std::move(b));
    return reg;
  }();
  return *r;
}

}  // namespace

void register_backend(Backend backend) { add(registry(), std::move(backend)); }

const Backend& find_backend(const DeviceSpec& device, const std::string& asked) {
  std::string compiler = asked;
  if (compiler.empty())  // LATHE_CPU_COMPILER=clang, ...: the process's choice
    if (std::string var = "LATHE_" + device.type + "_COMPILER"; settings::declared(var)) compiler = settings::text(var).value_or("");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string known;
  for (const Backend& b : r.backends) {
    if (b.device != device.type) continue;
    if (compiler.empty() || b.compiler == compiler) return b;
    known += (known.empty() ? "" : ", ") + b.compiler;
  }
  if (known.empty()) throw Error("device " + device.to_string() + " cannot run kernels in this build (no backend for it)");
  std::string why = asked.empty() ? "asked for by LATHE_" + device.type + "_COMPILER; " : "";
  throw Error("device " + device.to_string() + " has no compiler '" + compiler + "' (" + why + "available: " + known + ")");
}

namespace {

// The member `field` of the first backend of device `type` that sets it (a copy, used outside the
// registry's lock: a GPU's may start its driver), or an empty function.
template <class Fn>
Fn first_set(const std::string& type, Fn Backend::*field) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const Backend& b : r.backends)
    if (b.device == type && b.*field) return b.*field;
  return {};
}

}  // namespace

std::string device_status() {
  DeviceSpec d = DeviceSpec::default_device();
  auto describe = first_set(d.type, &Backend::describe);
  return describe ? d.to_string() + ": " + describe(d.index) : d.to_string();
}

DeviceMemory& device_memory(const DeviceSpec& device) {
  auto memory = first_set(device.type, &Backend::memory);
  if (!memory) throw Error("device " + device.to_string() + " cannot hold buffers in this build (no backend for it has memory)");
  return memory(device.index);
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const Backend& b : r.backends) names.push_back(b.device + "/" + b.compiler);
  return names;
}

}  // namespace lathe
