// The optimizer fuzzer: every distinct kernel of a set of ONNX cases (the backend test suite's
// folders, tests/onnx/models) is compiled with sampled action lists and each result compared with
// the unoptimized kernel, element by element, on the same random inputs.
//
//   opt_fuzz [--rounds N] [--seed S] DIR...       every case folder in (or at) each DIR
//   opt_fuzz --case DIR --kernel HASH --opts "UPCAST(2, 8) UPCAST(2, 2)"   replays one pair
//
// The action lists of a kernel: the heuristics' at every target shape (4, 8 and 16 float lanes, 1
// and 2 threads), the same with one random action added, and N lists of random actions (N:
// --rounds, else LATHE_FUZZ_ROUNDS, else 4) drawn from every action kind (UPCAST, UNROLL, TILE,
// PADTO, SWAP, THREAD, GROUP) with sizes that divide and sizes that do not (PADTO then makes them
// fit). Each list that applies is built through the whole pipeline with verification on, run on
// copies of the kernel's buffers with guard bytes around them, and compared with the unoptimized
// kernel's outputs; float inputs are random, integer and boolean inputs keep the values the case's
// data gives them (they may be indices). A kernel with variables (a model prepared for a range of
// sizes) runs at the smallest, the largest and an odd size between. Any difference, a write
// outside a buffer or into an input, or a failure to build is printed with the case, the kernel
// and the action list, and makes the exit status 1.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "codegen/pipeline.hpp"
#include "device/backend.hpp"
#include "ir/half.hpp"
#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "opt/action.hpp"
#include "opt/heuristic.hpp"

namespace lathe {
namespace {

namespace fs = std::filesystem;
using detail::bf16_to_float;
using detail::float_to_bf16;
using detail::float_to_half;
using detail::half_to_float;

constexpr size_t kGuard = 4096;        // bytes of guard on each side of a buffer
constexpr unsigned char kPoison = 0xff;  // guards and outputs before a run: NaN as floats, -1 as integers
constexpr int64_t kMostRegisters = 256;  // an action list holds at most this many positions in registers
constexpr int kMostActions = 6;

// ---- the kernels of a case ------------------------------------------------------------------

// A kernel to fuzz: its AST and a copy of what its buffers held when the case ran.
struct Kernel {
  std::string where;  // the case
  std::string folder;  // its path
  UOpPtr ast;
  DeviceSpec device;
  struct Arg {
    DType dtype;
    std::vector<unsigned char> data;
    bool written = false;
  };
  std::vector<Arg> args;
  std::vector<std::map<std::string, int64_t>> var_settings;  // the variable values to run at (one empty map: none)
};

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<long, fs::path>> found;
  if (!fs::is_directory(dir)) return {};
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string stem = e.path().stem().string();
    if (stem.rfind(prefix, 0) == 0) found.emplace_back(std::strtol(stem.c_str() + prefix.size(), nullptr, 10), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(p);
  return out;
}

// The case's first test data set as the model's inputs, by position (as `lathe test-onnx` pairs them).
std::map<std::string, onnx::Value> case_inputs(const onnx::Model& model, const fs::path& dir) {
  std::map<std::string, onnx::Value> inputs;
  std::vector<fs::path> sets = numbered(dir, "test_data_set_");
  if (sets.empty()) throw Error("no test_data_set_* folder");
  std::vector<fs::path> files = numbered(sets.front(), "input_");
  if (files.size() > model.inputs().size()) throw Error("more input files than model inputs");
  for (size_t i = 0; i < files.size(); ++i)
    inputs.insert_or_assign(model.inputs()[i].name, onnx::load_value_pb(files[i].string(), model.inputs()[i].kind));
  return inputs;
}

// Adds the kernels of `plan` (run once) that `seen` does not hold yet.
void add_kernels(const ExecutionPlan& plan, const std::string& where, const fs::path& folder, std::set<uint64_t>& seen,
                 std::vector<Kernel>& out) {
  for (const PreparedKernel* pk : plan.prepared_kernels()) {
    if (!seen.insert(pk->ast->hash()).second) continue;
    Kernel k{where, folder.string(), pk->ast, pk->device, {}, {}};
    bool usable = true;
    for (size_t i = 0; i < pk->buffer_indices.size() && usable; ++i) {
      const Buffer& b = plan.buffers()[pk->buffer_indices[i]];
      usable = b.valid() && b.is_allocated();
      if (!usable) break;
      Kernel::Arg a{b.dtype(), std::vector<unsigned char>(b.nbytes()), false};
      if (!a.data.empty()) b.copyout(a.data.data(), a.data.size());
      k.args.push_back(std::move(a));
    }
    if (!usable) continue;
    for (size_t o : pk->output_indices) k.args.at(o).written = true;
    std::map<std::string, int64_t> fixed(pk->fixedvars.begin(), pk->fixedvars.end());
    std::vector<RuntimeVar> free;
    for (const RuntimeVar& v : pk->runtime_vars)
      if (!fixed.count(v.name) && v.name != "core_id") free.push_back(v);
    k.var_settings.push_back(fixed);
    if (!free.empty()) {
      k.var_settings.clear();
      for (int which = 0; which < 3; ++which) {  // smallest, largest, an odd size between
        std::map<std::string, int64_t> s = fixed;
        for (const RuntimeVar& v : free) {
          int64_t mid = (v.min + v.max) / 2;
          if (mid % 2 == 0 && mid + 1 < v.max) ++mid;
          s[v.name] = which == 0 ? v.min : which == 1 ? v.max : std::max(v.min, mid);
        }
        if (std::find(k.var_settings.begin(), k.var_settings.end(), s) == k.var_settings.end()) k.var_settings.push_back(s);
      }
    }
    out.push_back(std::move(k));
  }
}

// Every distinct kernel of the case in `dir`: the model built at its test inputs and, when it has
// named dimensions, prepared for a range of sizes too (kernels with variables).
void collect(const fs::path& dir, std::set<uint64_t>& seen, std::vector<Kernel>& out, size_t& skipped) {
  std::string where = dir.filename().string();
  try {
    onnx::Model model = onnx::Model::load((dir / "model.onnx").string());
    std::map<std::string, onnx::Value> inputs = case_inputs(model, dir);
    std::vector<Tensor> flat;
    for (const onnx::Value& v : model.build_values(inputs)) {
      if (v.is_tensor()) flat.push_back(v.tensor());
      if (v.is_sequence()) flat.insert(flat.end(), v.items().begin(), v.items().end());
    }
    ExecutionPlan plan = Tensor::prepare(flat, PrepareOptions{.optimize = false, .share_memory = false, .poison = false});
    plan.execute();
    add_kernels(plan, where, dir, seen, out);
    std::map<std::string, int64_t> max_sizes;
    std::map<std::string, Tensor> tensors;
    for (const onnx::ValueInfo& in : model.inputs())
      for (const std::string& d : in.dim_params)
        if (!d.empty()) max_sizes[d] = 5;
    for (auto& [name, v] : inputs)
      if (v.is_tensor()) tensors.emplace(name, v.tensor());
    if (max_sizes.empty() || tensors.size() != inputs.size()) return;
    try {
      onnx::PreparedModel pm = model.prepare(max_sizes);
      pm.run(tensors);
      add_kernels(pm.plan(), where + " (prepared for sizes)", dir, seen, out);
    } catch (const std::exception&) {
      // sizes the test inputs do not fit: the kernels at the inputs' own sizes are fuzzed
    }
  } catch (const std::exception&) {
    ++skipped;  // a case lathe does not run (the conformance lists say which and why)
  }
}

// ---- running a kernel -----------------------------------------------------------------------

// One buffer argument with guard bytes on both sides, its data 64-byte aligned.
class Guarded {
 public:
  explicit Guarded(size_t n) : n_(n), mem_(static_cast<unsigned char*>(std::aligned_alloc(64, total(n)))) {
    if (!mem_) throw std::bad_alloc();
    std::memset(mem_.get(), kPoison, total(n));
  }
  unsigned char* data() const { return mem_.get() + kGuard; }
  size_t size() const { return n_; }
  void fill(const std::vector<unsigned char>& from) { std::memcpy(data(), from.data(), n_); }
  void poison() { std::memset(data(), kPoison, n_); }
  // Whether both guards still hold their poison.
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (mem_.get()[i] != kPoison || data()[n_ + i] != kPoison) return false;
    return true;
  }

 private:
  static size_t total(size_t n) { return kGuard + (n + 63) / 64 * 64 + kGuard; }
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  size_t n_;
  std::unique_ptr<unsigned char, Free> mem_;
};

struct Built {
  ProgramSpec spec;
  std::unique_ptr<Program> program;
};

// `ast` through the whole pipeline (verified between steps) with `opts` (none: unoptimized),
// compiled and loaded by the device's default backend.
Built build(const UOpPtr& ast, const DeviceSpec& device, const std::optional<std::vector<Opt>>& opts) {
  const Backend& backend = find_backend(device);
  KernelOptions ko;
  ko.optimize = opts.has_value();
  ko.target.threads = 2;
  ko.verify = true;
  if (opts) ko.opts = opts;
  Built b;
  b.spec = build_program(ast, backend.renderer(), ko);
  b.spec.device = device;
  CompiledSpec c = backend.compile().compile(b.spec);
  c.var_names = b.spec.var_names;
  c.global_size = b.spec.global_size;
  c.buf_count = b.spec.buf_count;
  b.program = backend.load(c, b.spec);
  return b;
}

void run(const Built& b, std::vector<Guarded>& bufs, const std::map<std::string, int64_t>& vars) {
  std::vector<void*> ptrs;
  for (Guarded& g : bufs) ptrs.push_back(g.data());
  std::vector<int64_t> vals;
  for (const std::string& name : b.spec.var_names) vals.push_back(name == "core_id" ? 0 : vars.at(name));
  b.program->execute(ptrs.data(), vals.data(), b.spec.global_size.value_or(LaunchSize{1, 1, 1}), b.spec.local_size);
}

double element(const DType& t, const unsigned char* p, size_t i) {
  auto at = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p + i * sizeof v, sizeof v);
    return static_cast<double>(v);
  };
  if (t == dtypes::float32) return at(float{});
  if (t == dtypes::float64) return at(double{});
  if (t == dtypes::float16) return half_to_float(static_cast<uint16_t>(at(uint16_t{})));
  if (t == dtypes::bfloat16) return bf16_to_float(static_cast<uint16_t>(at(uint16_t{})));
  if (t == dtypes::int8) return at(int8_t{});
  if (t == dtypes::uint8 || t == dtypes::bool_) return at(uint8_t{});
  if (t == dtypes::int16) return at(int16_t{});
  if (t == dtypes::uint16) return at(uint16_t{});
  if (t == dtypes::int32) return at(int32_t{});
  if (t == dtypes::uint32) return at(uint32_t{});
  if (t == dtypes::int64) return at(int64_t{});
  if (t == dtypes::uint64) return at(uint64_t{});
  return std::numeric_limits<double>::quiet_NaN();
}

// Empty when `got` matches `want` (an output of `t`), else the first element that differs. Float
// outputs may differ by the rounding of a reduction summed in another order: a relative 1e-3
// (2e-2 for 16-bit floats) plus 1e-4 of the buffer's largest magnitude; everything else exactly.
std::string compare(const DType& t, const unsigned char* got, const std::vector<unsigned char>& want) {
  if (!t.is_float()) {
    if (std::memcmp(got, want.data(), want.size()) == 0) return "";
    size_t item = static_cast<size_t>(t.itemsize());
    for (size_t i = 0; i * item < want.size(); ++i)
      if (std::memcmp(got + i * item, want.data() + i * item, item) != 0)
        return "element " + std::to_string(i) + ": got " + std::to_string(element(t, got, i)) + ", expected " +
               std::to_string(element(t, want.data(), i));
    return "";
  }
  size_t n = want.size() / static_cast<size_t>(t.itemsize());
  double scale = 1, rtol = t.itemsize() == 2 ? 2e-2 : 1e-3;
  for (size_t i = 0; i < n; ++i)
    if (double w = std::fabs(element(t, want.data(), i)); std::isfinite(w)) scale = std::max(scale, w);
  for (size_t i = 0; i < n; ++i) {
    double g = element(t, got, i), w = element(t, want.data(), i);
    if (g == w || (std::isnan(g) && std::isnan(w))) continue;
    if (std::fabs(g - w) <= rtol * std::fabs(w) + 1e-4 * scale) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "element %zu: got %.9g, expected %.9g", i, g, w);
    return buf;
  }
  return "";
}

// ---- action lists ---------------------------------------------------------------------------

int64_t in_registers(const UOpPtr& ast) {
  int64_t n = 1;
  for (const Loop& l : kernel_loops(ast))
    if (l.kind == AxisKind::Upcast || l.kind == AxisKind::Unroll) n *= l.size;
  return n;
}

// Every action of any kind that might apply to `ast` (some do not fit: apply_opt says which).
std::vector<Opt> candidate_actions(const UOpPtr& ast) {
  std::vector<Opt> out;
  std::vector<Loop> loops = kernel_loops(ast);
  std::vector<int64_t> outputs;
  for (const Loop& l : loops)
    if (!l.reduce && l.kind == AxisKind::Loop) outputs.push_back(l.axis);
  for (const Loop& l : loops) {
    if (l.kind != AxisKind::Loop) continue;
    std::vector<int64_t> amounts{2, 3, 4, 5, 7, 8, 16};
    if (l.size > 1 && l.size <= 32) amounts.push_back(l.size);
    for (int64_t n : amounts) {
      out.push_back({l.reduce ? OptOp::UNROLL : OptOp::UPCAST, l.axis, n});
      if (!l.reduce) out.push_back({OptOp::TILE, l.axis, n});
    }
    for (int64_t m : {2, 3, 4, 8, 16}) out.push_back({OptOp::PADTO, l.axis, m});
    for (int64_t n : {2, 3}) out.push_back({l.reduce ? OptOp::GROUP : OptOp::THREAD, l.axis, n});
    if (!l.reduce)
      for (int64_t other : outputs)
        if (other != l.axis) out.push_back({OptOp::SWAP, l.axis, other});
  }
  return out;
}

// `ast` with one more random action that fits (it stays in the register budget); false when none did.
bool add_random_action(UOpPtr& ast, std::vector<Opt>& opts, std::mt19937_64& rng) {
  std::vector<Opt> moves = candidate_actions(ast);
  std::shuffle(moves.begin(), moves.end(), rng);
  for (const Opt& m : moves) {
    try {
      UOpPtr next = apply_opt(ast, m);
      if (in_registers(next) > kMostRegisters) continue;
      ast = next;
      opts.push_back(m);
      return true;
    } catch (const OptError&) {
    }
  }
  return false;
}

// The action lists to try on a kernel whose optimizer input is `ast`.
std::vector<std::vector<Opt>> action_lists(const UOpPtr& ast, int rounds, std::mt19937_64& rng) {
  std::vector<std::vector<Opt>> lists;
  auto add = [&](const std::vector<Opt>& l) {
    if (!l.empty() && std::find(lists.begin(), lists.end(), l) == lists.end()) lists.push_back(l);
  };
  // The heuristics at every target shape, alone and with one random action after them.
  for (Target t : {Target{16, 16, 1}, Target{32, 16, 2, 32 << 10, 512 << 10}, Target{64, 32, 2}, Target{16, 16, 2},
                      Target{32, 16, 1, 32 << 10, 512 << 10}, Target{64, 32, 1}}) {
    std::vector<Opt> h;
    try {
      h = hand_coded_opts(ast, t);
    } catch (const OptError&) {
      continue;  // reported by the heuristics' own tests; the lists below still run
    }
    add(h);
    UOpPtr cur = apply_opts(ast, h);
    std::vector<Opt> more = h;
    if (add_random_action(cur, more, rng)) add(more);
  }
  for (int r = 0; r < rounds; ++r) {
    UOpPtr cur = ast;
    std::vector<Opt> opts;
    int length = std::uniform_int_distribution<int>(1, kMostActions)(rng);
    for (int i = 0; i < length; ++i)
      if (!add_random_action(cur, opts, rng)) break;
    add(opts);
  }
  return lists;
}

// ---- the fuzzer -----------------------------------------------------------------------------

struct Tally {
  std::atomic<size_t> pairs{0}, failures{0};
  std::mutex out;
};

void report(Tally& tally, const Kernel& k, const std::string& opts, const std::string& what) {
  std::lock_guard<std::mutex> lock(tally.out);
  ++tally.failures;
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(k.ast->hash()));
  std::printf("MISMATCH %s: kernel %s [%s]: %s\n  replay: opt_fuzz --case %s --kernel %s --opts \"%s\"\n", k.where.c_str(), hash,
              opts.c_str(), what.c_str(), k.folder.c_str(), hash, opts.c_str());
  std::fflush(stdout);
}

// Runs every list of `lists` (all of the kernel's own when empty) against the unoptimized kernel.
void fuzz_kernel(const Kernel& k, int rounds, uint64_t seed, Tally& tally, const std::vector<std::vector<Opt>>& given = {}) {
  std::mt19937_64 rng(seed ^ k.ast->hash());
  Built ref;
  try {
    ref = build(k.ast, k.device, std::nullopt);
  } catch (const std::exception& e) {
    return report(tally, k, "", std::string("the unoptimized kernel does not build: ") + e.what());
  }
  // Inputs: random floats, integers as the case left them.
  std::vector<Kernel::Arg> args = k.args;
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (Kernel::Arg& a : args) {
    if (a.written || !a.dtype.is_float()) continue;
    size_t n = a.data.size() / static_cast<size_t>(a.dtype.itemsize());
    for (size_t i = 0; i < n; ++i) {
      float v = uniform(rng);
      if (a.dtype == dtypes::float32) std::memcpy(a.data.data() + 4 * i, &v, 4);
      if (a.dtype == dtypes::float64) {
        double d = v;
        std::memcpy(a.data.data() + 8 * i, &d, 8);
      }
      if (a.dtype == dtypes::float16 || a.dtype == dtypes::bfloat16) {
        uint16_t h = a.dtype == dtypes::float16 ? float_to_half(v) : float_to_bf16(v);
        std::memcpy(a.data.data() + 2 * i, &h, 2);
      }
    }
  }
  std::vector<Guarded> bufs;
  for (const Kernel::Arg& a : args) bufs.emplace_back(a.data.size());
  auto reset = [&] {
    for (size_t i = 0; i < bufs.size(); ++i) args[i].written ? bufs[i].poison() : bufs[i].fill(args[i].data);
  };
  // The reference outputs at each variable setting.
  std::vector<std::vector<std::vector<unsigned char>>> want;
  for (const auto& vars : k.var_settings) {
    reset();
    run(ref, bufs, vars);
    std::vector<std::vector<unsigned char>> outs;
    for (size_t i = 0; i < bufs.size(); ++i)
      outs.emplace_back(bufs[i].data(), bufs[i].data() + (args[i].written ? bufs[i].size() : 0));
    want.push_back(std::move(outs));
  }
  std::vector<std::vector<Opt>> lists = given;
  if (lists.empty()) lists = action_lists(optimizer_input(k.ast), rounds, rng);
  for (const std::vector<Opt>& opts : lists) {
    std::string text = to_string(opts);
    ++tally.pairs;
    Built cand;
    try {
      cand = build(k.ast, k.device, opts);
    } catch (const std::exception& e) {
      report(tally, k, text, std::string("does not build: ") + e.what());
      continue;
    }
    for (size_t s = 0; s < k.var_settings.size(); ++s) {
      reset();
      run(cand, bufs, k.var_settings[s]);
      std::string why, vars;
      for (auto& [name, v] : k.var_settings[s]) vars += " " + name + "=" + std::to_string(v);
      for (size_t i = 0; i < bufs.size() && why.empty(); ++i) {
        std::string arg = "buffer " + std::to_string(i) + " (" + args[i].dtype.name() + ")";
        if (!bufs[i].guards_intact()) why = "wrote outside " + arg;
        else if (!args[i].written && std::memcmp(bufs[i].data(), args[i].data.data(), bufs[i].size()) != 0) why = "wrote into input " + arg;
        else if (args[i].written) {
          std::string diff = compare(args[i].dtype, bufs[i].data(), want[s][i]);
          if (!diff.empty()) why = arg + " " + diff;
        }
      }
      if (!why.empty()) {
        report(tally, k, text, why + (vars.empty() ? "" : " (at" + vars + ")"));
        break;
      }
    }
  }
}

std::vector<fs::path> case_dirs(const std::vector<std::string>& roots) {
  std::vector<fs::path> cases;
  for (const std::string& r : roots) {
    fs::path p(r);
    if (fs::exists(p / "model.onnx")) {
      cases.push_back(p);
      continue;
    }
    std::vector<fs::path> found;
    if (fs::is_directory(p))
      for (const auto& e : fs::directory_iterator(p))
        if (fs::exists(e.path() / "model.onnx")) found.push_back(e.path());
    if (found.empty()) throw Error("no model.onnx in '" + r + "' or in its subfolders");
    std::sort(found.begin(), found.end());
    cases.insert(cases.end(), found.begin(), found.end());
  }
  return cases;
}

int main_(int argc, char** argv) {
  // Every build is fresh: nothing of the fuzzer's is stored in (or read from) the disk caches,
  // and a kernel's intermediates keep their own buffers (the collected inputs stay valid).
  ::setenv("LATHE_CACHE", "0", 1);
  ::setenv("LATHE_ARENA", "0", 1);
  int rounds = 4;
  if (const char* r = std::getenv("LATHE_FUZZ_ROUNDS"); r && *r) rounds = std::atoi(r);
  uint64_t seed = 1;
  std::string replay_case, replay_kernel, replay_opts;
  std::vector<std::string> roots;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") rounds = std::atoi(value().c_str());
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--case") replay_case = value();
    else if (a == "--kernel") replay_kernel = value();
    else if (a == "--opts") replay_opts = value();
    else roots.push_back(a);
  }
  if (!replay_case.empty()) roots = {replay_case};
  if (roots.empty()) throw Error("usage: opt_fuzz [--rounds N] [--seed S] DIR... | --case DIR --kernel HASH --opts LIST");
  std::set<uint64_t> seen;
  std::vector<Kernel> kernels;
  size_t skipped = 0;
  std::vector<fs::path> cases = case_dirs(roots);
  for (const fs::path& c : cases) collect(c, seen, kernels, skipped);
  Tally tally;
  if (!replay_case.empty()) {
    uint64_t want = std::strtoull(replay_kernel.c_str(), nullptr, 16);
    for (const Kernel& k : kernels)
      if (k.ast->hash() == want) fuzz_kernel(k, 0, seed, tally, {parse_opts(replay_opts)});
    std::printf("replayed %zu pairs, %zu mismatches\n", tally.pairs.load(), tally.failures.load());
    return tally.pairs == 0 || tally.failures ? 1 : 0;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  unsigned n = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (unsigned w = 0; w < n; ++w)
    workers.emplace_back([&] {
      for (size_t i = next++; i < kernels.size(); i = next++) fuzz_kernel(kernels[i], rounds, seed, tally);
    });
  for (std::thread& t : workers) t.join();
  std::printf("%zu cases (%zu not run by lathe), %zu distinct kernels, %zu kernel/action-list pairs, %zu mismatches\n", cases.size(),
              skipped, kernels.size(), tally.pairs.load(), tally.failures.load());
  return tally.failures ? 1 : 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) {
  try {
    return lathe::main_(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opt_fuzz: %s\n", e.what());
    return 2;
  }
}
