#include "device/cpu/c_compiler.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "device/disk_cache.hpp"
#include "device/thread_pool.hpp"
#include "device/trace.hpp"
#include "lathe/error.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace lathe {
namespace {

constexpr char kMagic[8] = {'L', 'A', 'T', 'H', 'E', 'S', 'O', '1'};

std::string run_capture(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    status = -1;
    return "cannot start: " + cmd;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  status = pclose(p);
  return out;
}

bool on_path(const std::string& exe) {
  int status;
  run_capture("command -v " + exe + " >/dev/null 2>&1", status);
  return status == 0;
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), {});
  return true;
}

// Cache entries are magic, an XXH3-64 of the payload, then the payload; anything else is ignored.
bool load_cached(const std::string& path, std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> raw;
  if (!read_file(path, raw) || raw.size() < 16 || std::memcmp(raw.data(), kMagic, 8) != 0) return false;
  uint64_t sum;
  std::memcpy(&sum, raw.data() + 8, 8);
  if (XXH3_64bits(raw.data() + 16, raw.size() - 16) != sum) return false;
  bytes.assign(raw.begin() + 16, raw.end());
  return true;
}

void store_cached(const std::string& path, const std::vector<uint8_t>& bytes) {
  uint64_t sum = XXH3_64bits(bytes.data(), bytes.size());
  std::string entry(kMagic, 8);
  entry.append(reinterpret_cast<const char*>(&sum), 8);
  entry.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  write_file_atomically(path, entry);
}

using KernelFn = void (*)(void**, const long long*);

class CpuProgram : public Program {
 public:
  CpuProgram(void* handle, KernelFn fn, size_t num_vals, bool threaded, bool one_launch_at_a_time)
      : handle_(handle), fn_(fn), num_vals_(num_vals), threaded_(threaded), serial_(one_launch_at_a_time) {}
  ~CpuProgram() override { dlclose(handle_); }

  void execute(void* const* buffers, const int64_t* vals, const LaunchSize& global,
               const std::optional<LaunchSize>&) const override {
    void** bufs = const_cast<void**>(buffers);
    const auto* v = reinterpret_cast<const long long*>(vals);
    std::unique_lock<std::mutex> alone(launch_mu_, std::defer_lock);
    if (serial_) alone.lock();  // the kernel's scratch serves one launch at a time
    if (!threaded_) return fn_(bufs, v);
    // Each core gets its own copy of the values with its id last (on the stack: no allocation).
    // While a trace is recorded, each core's share is a slice on its thread's lane.
    const char* traced = tracing() ? detail::current_kernel() : nullptr;
    auto run_core = [&](size_t core) {
      long long local[64];
      std::memcpy(local, v, (num_vals_ - 1) * sizeof(long long));
      local[num_vals_ - 1] = static_cast<long long>(core);
      int64_t start = traced ? detail::trace_now() : 0;
      fn_(bufs, local);
      if (traced) detail::trace_core(traced, start, detail::trace_now());
    };
    if (global[0] <= 1) return run_core(0);
    detail::parallel_for(global[0], run_core);
  }

 private:
  void* handle_;
  KernelFn fn_;
  size_t num_vals_;
  bool threaded_;
  bool serial_;
  mutable std::mutex launch_mu_;
};

}  // namespace


const CCompiler& CCompiler::get() {
  static const CCompiler c = [] {
    const char* cc = std::getenv("LATHE_CC");
    const char* target = std::getenv("LATHE_CPU_TARGET");
    return CCompiler(cc && *cc ? cc : (on_path("clang") ? "clang" : "cc"), target && *target ? target : "native");
  }();
  return c;
}

CCompiler::CCompiler(std::string path, std::string target) : path_(std::move(path)), target_(std::move(target)) {
  for (char c : target_)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw Error("LATHE_CPU_TARGET '" + target_ + "' is not a CPU name (letters, digits, '-', '_', '.')");
#if defined(__x86_64__) || defined(__i386__)
  std::string target_flag = "-march=" + target_;
#else
  std::string target_flag = "-mcpu=" + target_;  // aarch64 and others name CPUs with -mcpu
#endif
  flags_ = "-x c -std=gnu11 -O2 " + target_flag + " -fPIC -shared -fwrapv -fno-math-errno -ffp-contract=fast "
           "-fno-signed-zeros -fno-trapping-math -fassociative-math -Wno-everything";
  int status;
  std::string version = run_capture(path_ + " --version 2>&1", status);
  if (status != 0) throw CompileError("the C compiler '" + path_ + "' does not run: " + version);
  // What the target means on this machine: the compiler's predefined macros name every feature
  // it will use (__AVX512FP16__, __F16C__, ...), so code built for one CPU is never reused on another.
  std::string features = run_capture(path_ + " " + target_flag + " -dM -E -x c /dev/null 2>&1", status);
  if (status != 0) throw CompileError("the C compiler '" + path_ + "' rejects the target " + target_flag + ":\n" + features);
  auto has = [&](const char* macro) { return features.find(std::string("#define ") + macro + " ") != std::string::npos; };
  vectors_ = has("__AVX512F__") ? OptTarget{64, 32, 1} : has("__AVX__") ? OptTarget{32, 16, 1}
             : has("__ARM_NEON") || has("__aarch64__")                  ? OptTarget{16, 32, 1}
                                                                        : OptTarget{16, 16, 1};
  identity_ = path_ + " | " + version.substr(0, version.find('\n')) + " | " + flags_ + " | target " +
              cache_key(features);
}

CompiledSpec CCompiler::compile(const ProgramSpec& spec) const {
  std::string key = cache_key(identity_ + "\n" + spec.src);
  std::string dir = cache_dir();
  std::string cached = dir.empty() ? "" : dir + "/kernels/" + key + ".so";
  std::vector<uint8_t> bytes;
  if (!cached.empty() && load_cached(cached, bytes)) return CompiledSpec::from_bytes(spec.name, std::move(bytes), spec.ast);

  char tmpl[] = "/tmp/lathe-cc-XXXXXX";
  if (!::mkdtemp(tmpl)) throw CompileError(std::string("cannot make a temporary directory: ") + std::strerror(errno));
  std::string work = tmpl, src_path = work + "/k.c", so_path = work + "/k.so";
  {
    std::ofstream f(src_path);
    f << spec.src;
  }
  int status;
  std::string out = run_capture(path_ + " " + flags_ + " -o " + so_path + " " + src_path + " -lm 2>&1", status);
  bool ok = status == 0 && read_file(so_path, bytes);
  std::remove(src_path.c_str());
  std::remove(so_path.c_str());
  ::rmdir(work.c_str());
  if (!ok) throw CompileError("compiling kernel " + spec.name + " with " + path_ + " failed:\n" + out + "\nsource:\n" + spec.src);
  if (!cached.empty()) store_cached(cached, bytes);
  return CompiledSpec::from_bytes(spec.name, std::move(bytes), spec.ast);
}

std::unique_ptr<Program> load_cpu_program(const CompiledSpec& compiled, size_t num_vals, bool threaded, bool one_launch_at_a_time) {
  // dlopen recognises an already loaded object by its path, so every load gets a fresh file
  // name; the file is unlinked at once (the mapping keeps the code).
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string path = std::string(dir) + "/lathe-kernel-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) throw CompileError("cannot create a file to load kernel " + compiled.name + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < compiled.bytes.size()) {
    ssize_t n = ::write(fd, compiled.bytes.data() + done, compiled.bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  void* handle = done == compiled.bytes.size() ? ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  std::string why = handle ? "" : (done == compiled.bytes.size() ? ::dlerror() : "short write");
  ::unlink(path.c_str());
  if (!handle) throw CompileError("cannot load kernel " + compiled.name + ": " + why);
  auto fn = reinterpret_cast<KernelFn>(::dlsym(handle, compiled.name.c_str()));
  if (!fn) {
    ::dlclose(handle);
    throw CompileError("kernel " + compiled.name + " has no entry point of that name");
  }
  if (threaded && (num_vals == 0 || num_vals > 64)) {
    ::dlclose(handle);
    throw InternalError("threaded kernel " + compiled.name + " with " + std::to_string(num_vals) + " values");
  }
  return std::make_unique<CpuProgram>(handle, fn, num_vals, threaded, one_launch_at_a_time);
}

}  // namespace lathe
