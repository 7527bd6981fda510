#include "device/cuda/nvrtc.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <regex>

#include "device/cuda/gpu_target.hpp"
#include "device/disk_cache.hpp"
#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {

// The NVRTC entry points lathe calls, as its C API declares them (nvrtc.h; its result is an int).
struct Nvrtc::Api {
  void* lib = nullptr;
  int (*version)(int*, int*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*create)(void**, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*destroy)(void**) = nullptr;
  int (*compile)(void*, int, const char* const*) = nullptr;
  int (*log_size)(void*, size_t*) = nullptr;
  int (*log)(void*, char*) = nullptr;
  int (*ptx_size)(void*, size_t*) = nullptr;
  int (*ptx)(void*, char*) = nullptr;
  int (*cubin_size)(void*, size_t*) = nullptr;
  int (*cubin)(void*, char*) = nullptr;
};

namespace {

// NVRTC's options besides the architecture; part of the compiler's identity (cached CUBINs).
constexpr const char* kOptions[] = {"--std=c++17", "-default-device"};

template <class F>
void bind(void* lib, const char* symbol, F*& fn, std::string& missing) {
  fn = reinterpret_cast<F*>(dlsym(lib, symbol));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + symbol;
}

std::shared_ptr<const Nvrtc::Api> load_api(std::string& why) {
  std::vector<std::string> names;
  if (auto path = settings::text("LATHE_NVRTC")) names.push_back(*path);
  else names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  std::string tried;
  for (const std::string& name : names) {
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      tried += "\n  " + name + ": " + (e ? e : "not found");
      continue;
    }
    auto api = std::make_shared<Nvrtc::Api>();
    api->lib = lib;
    std::string missing;
    bind(lib, "nvrtcVersion", api->version, missing);
    bind(lib, "nvrtcGetErrorString", api->error_string, missing);
    bind(lib, "nvrtcCreateProgram", api->create, missing);
    bind(lib, "nvrtcDestroyProgram", api->destroy, missing);
    bind(lib, "nvrtcCompileProgram", api->compile, missing);
    bind(lib, "nvrtcGetProgramLogSize", api->log_size, missing);
    bind(lib, "nvrtcGetProgramLog", api->log, missing);
    bind(lib, "nvrtcGetPTXSize", api->ptx_size, missing);
    bind(lib, "nvrtcGetPTX", api->ptx, missing);
    bind(lib, "nvrtcGetCUBINSize", api->cubin_size, missing);
    bind(lib, "nvrtcGetCUBIN", api->cubin, missing);
    if (missing.empty()) return api;
    tried += "\n  " + name + ": lacks " + missing;
    dlclose(lib);
  }
  why = "NVRTC, CUDA's runtime compiler, did not load (set LATHE_NVRTC to libnvrtc.so's path):" + tried;
  return nullptr;
}

// One NVRTC program, destroyed with its scope.
struct NvrtcProgram {
  const Nvrtc::Api& api;
  void* handle = nullptr;
  ~NvrtcProgram() {
    if (handle) api.destroy(&handle);
  }
  std::string log() const {
    size_t n = 0;
    if (api.log_size(handle, &n) != 0 || n <= 1) return {};
    std::string text(n, '\0');
    api.log(handle, text.data());
    text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());  // NVRTC's and ptxas's parts each end in one
    return text;
  }
};

int64_t number_in(const std::string& log, const std::regex& re) {
  int64_t total = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) total += std::stoll((*it)[1]);
  return total;
}

}  // namespace

Nvrtc::Nvrtc(std::shared_ptr<const Api> api) : api_(std::move(api)) {
  int major = 0, minor = 0;
  api_->version(&major, &minor);
  version_ = std::to_string(major) + "." + std::to_string(minor);
}

const Nvrtc* Nvrtc::get(std::string* why) {
  static std::string failure;
  static const Nvrtc* nvrtc = [] {
    std::shared_ptr<const Api> api = load_api(failure);
    return api ? new Nvrtc(std::move(api)) : nullptr;  // leaked: kernels compile until the process ends
  }();
  if (!nvrtc && why) *why = failure;
  return nvrtc;
}

NvrtcOutput Nvrtc::compile(const std::string& src, const std::string& name, int sm, bool ptx) const {
  NvrtcOutput out;
  for (bool real : {true, false}) {  // CUBIN and ptxas's report for sm_XX; PTX for compute_XX
    if (!real && !ptx) break;
    NvrtcProgram p{*api_};
    std::string file = name + ".cu";
    if (int rc = api_->create(&p.handle, src.c_str(), file.c_str(), 0, nullptr, nullptr); rc != 0)
      throw CompileError("NVRTC could not take kernel " + name + ": " + api_->error_string(rc));
    std::string arch = std::string("--gpu-architecture=") + (real ? "sm_" : "compute_") + std::to_string(sm);
    std::vector<const char*> options{arch.c_str()};
    for (const char* o : kOptions) options.push_back(o);
    if (real) options.push_back("--ptxas-options=-v");
    int rc = api_->compile(p.handle, static_cast<int>(options.size()), options.data());
    std::string log = p.log();
    if (rc != 0) throw CompileError("NVRTC " + version_ + " rejected kernel " + name + " for sm_" + std::to_string(sm) + " (" + api_->error_string(rc) + "):\n" + log + "\nsource:\n" + src);
    size_t n = 0;
    if (real) {
      out.log = log;
      api_->cubin_size(p.handle, &n);
      out.cubin.resize(n);
      api_->cubin(p.handle, reinterpret_cast<char*>(out.cubin.data()));
      static const std::regex registers(R"(Used (\d+) registers)"), spills(R"((\d+) bytes spill (?:stores|loads))"), stack(R"((\d+) bytes stack frame)");
      std::smatch m;
      if (std::regex_search(log, m, registers)) out.registers = std::stoi(m[1]);
      out.spill_bytes = number_in(log, spills);
      out.stack_bytes = number_in(log, stack);
    } else {
      api_->ptx_size(p.handle, &n);
      out.ptx.assign(n, '\0');
      api_->ptx(p.handle, out.ptx.data());
      if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
    }
  }
  return out;
}

NvrtcCompiler::NvrtcCompiler(int sm) : sm_(sm) {
  std::string why;
  nvrtc_ = Nvrtc::get(&why);
  if (!nvrtc_) throw CompileError(why);
  identity_ = "nvrtc " + nvrtc_->version() + " sm_" + std::to_string(sm);
  for (const char* o : kOptions) identity_ += std::string(" ") + o;
}

CompiledSpec NvrtcCompiler::compile(const ProgramSpec& spec) const {
  std::vector<uint8_t> cubin = cached_kernel(identity_, spec.src, ".cubin", [&] { return nvrtc_->compile(spec.src, spec.name, sm_, false).cubin; });
  CompiledSpec c = CompiledSpec::from_bytes(spec.name, std::move(cubin), spec.ast);
  c.src = spec.src;  // beside the bytes, for reading (the runtime sets the launch sizes, as for every compiler)
  return c;
}

std::string NvrtcCompiler::assembly(const ProgramSpec& spec) const { return nvrtc_->compile(spec.src, spec.name, sm_).ptx; }  // not cached: DEBUG=6

Target NvrtcCompiler::target() const { return gpu_target(sm_); }

}  // namespace lathe
