#include "device/cuda/emulator.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "codegen/render_cuda.hpp"
#include "device/cuda/block_threads.hpp"
#include "device/cuda/gpu_target.hpp"
#include "device/cuda/nvrtc.hpp"
#include "device/disk_cache.hpp"
#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

// The architectures every kernel is compiled for under LATHE_EMU_NVRTC=1.
constexpr int kCheckedArchs[] = {80, 90};

int emulated_arch() {
  auto arch = settings::text("LATHE_CUDA_ARCH");
  return arch ? parse_gpu_arch(*arch) : 80;
}

// The CPU backend that spells, compiles and loads the emulated kernels: the process's choice
// (LATHE_CPU_COMPILER) when the emulator is first used, kept, so the three always agree.
const Backend& cpu_backend() {
  static const Backend& cpu = find_backend(DeviceSpec{"CPU", 0});
  return cpu;
}

class EmulatorCompiler final : public Compiler {
 public:
  EmulatorCompiler() : cpu_(cpu_backend().compile()), target_(gpu_target(emulated_arch())), check_(settings::flag("LATHE_EMU_NVRTC")) {
    identity_ = "emulated sm_" + std::to_string(emulated_arch()) + " on " + cpu_.identity();
    if (check_)
      for (int sm : kCheckedArchs) nvrtc_.push_back(std::make_unique<NvrtcCompiler>(sm));  // throws where NVRTC is missing
  }
  const std::string& identity() const override { return identity_; }
  Target target() const override { return target_; }
  void check_runs_here() const override { cpu_.check_runs_here(); }
  std::string assembly(const ProgramSpec& spec) const override { return cpu_.assembly(spec); }

  CompiledSpec compile(const ProgramSpec& spec) const override {
    bool show = settings::debug_level() >= 4;  // the CUDA C a GPU would be given, beside the CPU's spelling
    if (check_ || show) {
      LaunchSize block = spec.local_size.value_or(LaunchSize{1, 1, 1});
      std::string cuda = render_lowered(spec.name, spec.ast, CudaRenderer{}, static_cast<int64_t>(block[0] * block[1] * block[2]));
      if (show) std::fprintf(stderr, "lathe: CUDA C of %s\n%s\n", spec.name.c_str(), cuda.c_str());
      for (const auto& c : nvrtc_)  // (empty unless checking) on disk once checked: a kernel that spills is never stored
        cached_kernel("spill-free " + c->identity(), cuda, ".cubin", [&] {
          NvrtcOutput out = Nvrtc::get()->compile(cuda, spec.name, c->sm(), false);
          if (out.spill_bytes > 0)
            throw CompileError("kernel " + spec.name + " spills " + std::to_string(out.spill_bytes) + " bytes on sm_" + std::to_string(c->sm()) + ":\n" + out.log + "\nsource:\n" + cuda);
          return out.cubin;
        });
    }
    return cpu_.compile(spec);  // the runtime sets the launch sizes from the spec
  }

 private:
  const Compiler& cpu_;
  Target target_;
  bool check_;
  std::vector<std::unique_ptr<NvrtcCompiler>> nvrtc_;
  std::string identity_;
};

class EmulatedProgram;

// A launch recorded instead of run, as a CUDA Graph's capture keeps it: the kernel, and the
// addresses and values it was given then.
struct EmulatedLaunch {
  const EmulatedProgram* program;
  std::vector<void*> buffers;
  std::vector<int64_t> vals;
};
// Where the recording thread's launches go (EmulatorMemory::record); null: they run.
thread_local std::vector<EmulatedLaunch>* capturing = nullptr;

// A kernel run once per thread of its grid, each call given its launch indices.
class EmulatedProgram final : public Program {
 public:
  EmulatedProgram(std::unique_ptr<Program> kernel, const ProgramSpec& spec)
      : kernel_(std::move(kernel)), grid_(spec.global_size.value_or(LaunchSize{1, 1, 1})), block_(spec.local_size.value_or(LaunchSize{1, 1, 1})),
        one_launch_(spec.shared_scratch ? std::make_unique<std::mutex>() : nullptr) {
    for (size_t i = 0; i < spec.var_names.size(); ++i) {
      const std::string& v = spec.var_names[i];
      if (!is_launch_index(v)) continue;
      if (v == "core_id") throw InternalError("a kernel for the GPU emulator reads a CPU core id");
      if (v == "sync") {  // its threads meet: each block's run as fibers (block_threads)
        sync_ = i;
        continue;
      }
      size_t at = 0;  // its place in kLaunchIndices: gidx0..2, then lidx0..2
      while (v != kLaunchIndices[at]) ++at;
      slots_.push_back({i, at < 3, static_cast<int>(at % 3)});
    }
    vals_ = spec.var_names.size();
    buffers_ = spec.buf_count;
    if (vals_ > kMostValues) throw InternalError("kernel " + spec.name + " takes " + std::to_string(vals_) + " values; the GPU emulator passes at most 64");
  }

  void execute(void* const* buffers, const int64_t* vals, const LaunchSize&, const std::optional<LaunchSize>&) const override {
    if (capturing) {
      capturing->push_back({this, std::vector<void*>(buffers, buffers + buffers_), vals_ ? std::vector<int64_t>(vals, vals + vals_) : std::vector<int64_t>{}});
      return;
    }
    run(buffers, vals);
  }

  // Every thread of the grid, blocks in reverse order; a block's threads in reverse order, or,
  // where they meet, as fibers from thread 0 (block_threads).
  void run(void* const* buffers, const int64_t* vals) const {
    // A block's shared memory is the CPU kernel's static scratch: one launch at a time uses it
    // (this lock; the CPU program under it, called once per emulated thread, takes none).
    std::unique_lock<std::mutex> lock;
    if (one_launch_) lock = std::unique_lock<std::mutex>(*one_launch_);
    if (sync_) return run_meeting(buffers, vals);
    int64_t mine[kMostValues];  // the values with this thread's launch indices (on the stack: no allocation)
    if (vals_ > 0) std::memcpy(mine, vals, vals_ * sizeof(int64_t));  // vals may be null when there are none
    LaunchSize g{}, l{};
    for (g[2] = grid_[2]; g[2]-- > 0;)
      for (g[1] = grid_[1]; g[1]-- > 0;)
        for (g[0] = grid_[0]; g[0]-- > 0;)
          for (l[2] = block_[2]; l[2]-- > 0;)
            for (l[1] = block_[1]; l[1]-- > 0;)
              for (l[0] = block_[0]; l[0]-- > 0;) {
                for (const Slot& s : slots_) mine[s.index] = static_cast<int64_t>((s.block ? g : l)[s.dim]);
                kernel_->execute(buffers, mine, LaunchSize{1, 1, 1}, std::nullopt);
              }
  }

  // A kernel whose threads meet: each block's threads run together (run_block_threads), each
  // with its own values, the hook among them.
  void run_meeting(void* const* buffers, const int64_t* vals) const {
    int64_t threads = static_cast<int64_t>(block_[0] * block_[1] * block_[2]);
    std::vector<int64_t> each(static_cast<size_t>(threads) * vals_);
    for (int64_t t = 0; t < threads; ++t) {  // thread t: x fastest, as CUDA numbers a block's threads
      int64_t* mine = &each[t * vals_];
      if (vals) std::memcpy(mine, vals, vals_ * sizeof(int64_t));
      mine[*sync_] = reinterpret_cast<int64_t>(block_sync_hook());
      LaunchSize l{t % block_[0], t / block_[0] % block_[1], t / (block_[0] * block_[1])};
      for (const Slot& s : slots_)
        if (!s.block) mine[s.index] = static_cast<int64_t>(l[s.dim]);
    }
    LaunchSize g{};
    for (g[2] = grid_[2]; g[2]-- > 0;)
      for (g[1] = grid_[1]; g[1]-- > 0;)
        for (g[0] = grid_[0]; g[0]-- > 0;) {
          for (int64_t t = 0; t < threads; ++t)  // the block's index, the same for each of its threads
            for (const Slot& s : slots_)
              if (s.block) each[t * vals_ + s.index] = static_cast<int64_t>(g[s.dim]);
          run_block_threads(threads, [&](int64_t t) { kernel_->execute(buffers, &each[t * vals_], LaunchSize{1, 1, 1}, std::nullopt); });
        }
  }

 private:
  static constexpr size_t kMostValues = 64;
  struct Slot {
    size_t index;  // in vals
    bool block;    // gidx (else lidx)
    int dim;
  };
  std::unique_ptr<Program> kernel_;
  LaunchSize grid_, block_;
  std::vector<Slot> slots_;
  size_t vals_ = 0, buffers_ = 0;
  std::optional<size_t> sync_;  // the place of the value "sync" in vals (its threads meet)
  std::unique_ptr<std::mutex> one_launch_;  // set for a kernel with shared scratch
};

class EmulatedRecording final : public Recording {
 public:
  void replay() const override {
    for (const EmulatedLaunch& l : launches) l.program->run(l.buffers.data(), l.vals.empty() ? nullptr : l.vals.data());
  }
  std::vector<EmulatedLaunch> launches;
};

// The emulator's memory: the host's, which the host may not touch directly (HostMemory(false)),
// with launches recorded and replayed as a CUDA Graph's are, so a GPU plan's replays run on every
// machine.
class EmulatorMemory final : public HostMemory {
 public:
  EmulatorMemory() : HostMemory(false) {}
  std::unique_ptr<Recording> record(const std::function<void()>& launches) override {
    auto r = std::make_unique<EmulatedRecording>();
    struct Stop {
      ~Stop() { capturing = nullptr; }
    } stop;
    capturing = &r->launches;
    try {
      launches();
    } catch (const Error&) {
      return nullptr;  // nothing ran: the plan launches each kernel, and says what failed then
    }
    return r;
  }
};

}  // namespace

Backend gpu_emulator_backend() {
  return Backend{"EMU", "cpu", []() -> const Renderer& { return cpu_backend().renderer(); },
                 []() -> const Compiler& {
                   static const EmulatorCompiler c;
                   return c;
                 },
                 [](const CompiledSpec& compiled, const ProgramSpec& spec) -> std::unique_ptr<Program> {
                   ProgramSpec serial = spec;
                   serial.global_size.reset();  // the CPU program runs one thread's share a call
                   serial.shared_scratch = false;  // serialised by the launch's lock, not by each call
                   return std::make_unique<EmulatedProgram>(cpu_backend().load(compiled, serial), spec);
                 },
                 [](int) -> DeviceMemory& {
                   static auto* m = new EmulatorMemory;  // outlives buffers released during static destruction
                   return *m;
                 },
                 {}};
}

}  // namespace lathe
