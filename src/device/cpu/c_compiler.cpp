#include "device/cpu/c_compiler.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "device/cpu/cpu_program.hpp"
#include "device/cpu/cpu_target.hpp"
#include "device/disk_cache.hpp"
#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

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

}  // namespace

const CCompiler& CCompiler::get() {
  static const CCompiler c = [] {
    std::optional<std::string> cc = settings::text("LATHE_CC");
    return CCompiler(cc ? *cc : (on_path("clang") ? "clang" : "cc"), cpu_target_from_env());
  }();
  return c;
}

CCompiler::CCompiler(std::string path, std::string cpu) : path_(std::move(path)), cpu_(std::move(cpu)) {
  check_cpu_name(cpu_);
#if defined(__x86_64__) || defined(__i386__)
  std::string cpu_flag = "-march=" + cpu_;
#else
  std::string cpu_flag = "-mcpu=" + cpu_;  // aarch64 and others name CPUs with -mcpu
#endif
  flags_ = "-x c -std=gnu11 -O2 " + cpu_flag + " -fPIC -shared -fwrapv -fno-math-errno -ffp-contract=fast "
           "-fno-signed-zeros -fno-trapping-math -fassociative-math -Wno-everything";
  int status;
  std::string version = run_capture(path_ + " --version 2>&1", status);
  if (status != 0) throw CompileError("the C compiler '" + path_ + "' does not run: " + version);
  // What the target means on this machine: the compiler's predefined macros name every feature
  // it will use (__AVX512FP16__, __F16C__, ...), so code built for one CPU is never reused on another.
  std::string features = run_capture(path_ + " " + cpu_flag + " -dM -E -x c /dev/null 2>&1", status);
  if (status != 0) throw CompileError("the C compiler '" + path_ + "' rejects the target " + cpu_flag + ":\n" + features);
  auto has = [&](const char* macro) { return features.find(std::string("#define ") + macro + " ") != std::string::npos; };
  target_ = cpu_target_of(has("__AVX512F__"), has("__AVX__"), has("__ARM_NEON") || has("__aarch64__"));
  if (cpu_ != "native") {
    // What the compiler's macros say the target has and this machine has not.
    std::string native_flag = cpu_flag.substr(0, cpu_flag.find('=') + 1) + "native";
    std::string host = run_capture(path_ + " " + native_flag + " -dM -E -x c /dev/null 2>&1", status);
    if (status == 0) cannot_run_ = cannot_run_message(cpu_, macros_missing(features, host));
  }
  identity_ = path_ + " | " + version.substr(0, version.find('\n')) + " | " + flags_ + " | target " +
              cache_key(features);
}

void CCompiler::check_runs_here() const {
  if (!cannot_run_.empty()) throw Error(cannot_run_);
}

CompiledSpec CCompiler::compile(const ProgramSpec& spec) const {
  return CompiledSpec::from_bytes(spec.name, cached_kernel(identity_, spec.src, ".so", [&] { return build(spec); }), spec.ast);
}

std::vector<uint8_t> CCompiler::build(const ProgramSpec& spec) const {
  char tmpl[] = "/tmp/lathe-cc-XXXXXX";
  if (!::mkdtemp(tmpl)) throw CompileError(std::string("cannot make a temporary directory: ") + std::strerror(errno));
  std::string work = tmpl, src_path = work + "/k.c", so_path = work + "/k.so";
  {
    std::ofstream f(src_path);
    f << spec.src;
  }
  int status;
  std::string out = run_capture(path_ + " " + flags_ + " -o " + so_path + " " + src_path + " -lm 2>&1", status);
  std::vector<uint8_t> bytes;
  bool ok = status == 0 && read_file(so_path, bytes);
  std::remove(src_path.c_str());
  std::remove(so_path.c_str());
  ::rmdir(work.c_str());
  if (!ok) throw CompileError("compiling kernel " + spec.name + " with " + path_ + " failed:\n" + out + "\nsource:\n" + spec.src);
  return bytes;
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
  auto fn = reinterpret_cast<CpuKernelFn>(::dlsym(handle, compiled.name.c_str()));
  if (!fn) {
    ::dlclose(handle);
    throw CompileError("kernel " + compiled.name + " has no entry point of that name");
  }
  return make_cpu_program(fn, [handle] { ::dlclose(handle); }, num_vals, threaded, one_launch_at_a_time);
}

}  // namespace lathe
