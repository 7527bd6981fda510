// Backends through the registry: a toy backend registered by this test alone (a renderer that
// writes the linearized program as readable text, a compiler that keeps the text, and a loader
// whose Program interprets the program) runs plans through the same pipeline as the C backend
// and must give the same answers. Nothing in lathe names it.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "codegen/linearize.hpp"
#include "device/backend.hpp"
#include "ir/alu.hpp"
#include "lathe/lathe.hpp"

namespace lathe {
namespace {

class TextRenderer final : public Renderer {
 public:
  std::string language() const override { return "text"; }
  std::string render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const override {
    std::string s = "kernel " + name + " (" + std::to_string(sig.buffers.size()) + " buffers)\n";
    int depth = 1;
    for (const UOpPtr& u : program) {
      if (u->op() == Ops::END) depth -= 1;
      s += std::string(2 * static_cast<size_t>(depth), ' ') + to_string(*u) + "\n";
      if (u->op() == Ops::RANGE) depth += 1;
    }
    return s;
  }
};

class TextCompiler final : public Compiler {
 public:
  const std::string& identity() const override { return id_; }
  CompiledSpec compile(const ProgramSpec& spec) const override { return CompiledSpec::from_source(spec.name, spec.src, spec.ast, spec.buf_count); }

 private:
  std::string id_ = "toy interpreter";
};

// Runs a linearized program on the host: float32, int32/int64, bool and index values, scalars or
// vectors (a value is its lanes).
class Interpreter final : public Program {
 public:
  Interpreter(std::vector<UOpPtr> program, std::vector<std::string> vars) : program_(std::move(program)), vars_(std::move(vars)) {}

  void execute(void* const* buffers, const int64_t* vals, const LaunchSize& global, const std::optional<LaunchSize>&) const override {
    for (size_t core = 0; core < std::max<size_t>(1, global[0]); ++core) run(buffers, vals, static_cast<int64_t>(core));
  }

 private:
  using Lanes = std::vector<ConstValue>;
  struct State {
    std::unordered_map<const UOp*, Lanes> values;
    std::unordered_map<const UOp*, Lanes> regs;
    void* const* buffers;
    const int64_t* vals;
    int64_t core;
  };

  Lanes value(const UOpPtr& u, State& s) const {
    if (auto it = s.values.find(u.get()); it != s.values.end()) return it->second;
    switch (u->op()) {
      case Ops::CONST: return {u->const_value()};
      case Ops::BIND: return value(u->src(0), s);
      case Ops::SPECIAL: return {s.core};
      case Ops::DEFINE_VAR:
        for (size_t i = 0; i < vars_.size(); ++i)
          if (vars_[i] == u->arg_as<VarArg>().name) return {s.vals[i]};
        break;
      default: break;
    }
    throw Error("the toy interpreter has no value for " + to_string(*u));
  }
  ConstValue scalar(const UOpPtr& u, State& s) const { return value(u, s).at(0); }

  static ConstValue read(const void* p, DType d) {
    if (d == dtypes::float32) return static_cast<double>(static_cast<const float*>(p)[0]);
    if (d == dtypes::int32) return static_cast<int64_t>(static_cast<const int32_t*>(p)[0]);
    if (d == dtypes::int64) return static_cast<const int64_t*>(p)[0];
    if (d == dtypes::bool_) return static_cast<const bool*>(p)[0];
    throw Error("the toy interpreter cannot read " + d.name());
  }
  static void write(void* p, DType d, const ConstValue& v) {
    if (d == dtypes::float32) static_cast<float*>(p)[0] = static_cast<float>(const_as_double(v));
    else if (d == dtypes::int32) static_cast<int32_t*>(p)[0] = static_cast<int32_t>(const_as_int(v));
    else if (d == dtypes::int64) static_cast<int64_t*>(p)[0] = const_as_int(v);
    else if (d == dtypes::bool_) static_cast<bool*>(p)[0] = const_as_int(v) != 0;
    else throw Error("the toy interpreter cannot write " + d.name());
  }

  // 32-bit reinterpretation between float32, int32 and uint32.
  static ConstValue bitcast32(const ConstValue& v, DType from, DType to) {
    uint32_t bits = from == dtypes::float32 ? std::bit_cast<uint32_t>(static_cast<float>(const_as_double(v)))
                                            : static_cast<uint32_t>(const_as_int(cast_const(v, dtypes::int64)));
    if (to == dtypes::float32) return static_cast<double>(std::bit_cast<float>(bits));
    if (to == dtypes::uint32) return static_cast<uint64_t>(bits);
    if (to == dtypes::int32) return static_cast<int64_t>(static_cast<int32_t>(bits));
    throw Error("the toy interpreter cannot bitcast to " + to.name());
  }

  // The address an INDEX of a buffer names, or null where its gate is false.
  void* global_slot(const UOpPtr& idx, State& s, int64_t lane = 0) const {
    if (idx->src().size() == 3 && !std::get<bool>(scalar(idx->src(2), s))) return nullptr;
    DType d = idx->src(0)->dtype().base();
    auto* base = static_cast<char*>(s.buffers[idx->src(0)->arg_as<int64_t>()]);
    return base + (const_as_int(scalar(idx->src(1), s)) + lane) * d.itemsize();
  }

  // Lanes of each source, the scalar ones repeated, for a lane-wise op.
  Lanes lanewise(const UOpPtr& u, State& s, const std::function<ConstValue(const std::vector<ConstValue>&)>& f) const {
    std::vector<Lanes> in;
    for (const UOpPtr& x : u->src()) in.push_back(value(x, s));
    Lanes out;
    for (int64_t l = 0; l < u->dtype().count(); ++l) {
      std::vector<ConstValue> args;
      for (const Lanes& x : in) args.push_back(x.size() == 1 ? x[0] : x.at(static_cast<size_t>(l)));
      out.push_back(f(args));
    }
    return out;
  }

  void run(void* const* buffers, const int64_t* vals, int64_t core) const {
    State s{{}, {}, buffers, vals, core};
    struct Loop {
      size_t body;  // first entry after the RANGE
      const UOp* range;
      int64_t end;
    };
    std::vector<Loop> loops;
    for (size_t pc = 0; pc < program_.size();) {
      const UOpPtr& u = program_[pc];
      DType d = u->dtype().scalar();
      switch (u->op()) {
        case Ops::RANGE: {
          int64_t end = const_as_int(scalar(u->src(0), s));
          if (end <= 0) {  // skip to the END that closes it
            while (!(program_[pc]->op() == Ops::END && std::count(program_[pc]->src().begin(), program_[pc]->src().end(), u))) ++pc;
            ++pc;
            continue;
          }
          s.values[u.get()] = {int64_t{0}};
          loops.push_back({pc + 1, u.get(), end});
          ++pc;
          continue;
        }
        case Ops::END: {
          size_t closes = 0;
          for (const UOpPtr& x : u->src()) closes += x->op() == Ops::RANGE;
          bool jumped = false;
          for (size_t k = 0; k < closes && !jumped; ++k) {
            Loop& l = loops.back();
            int64_t next = const_as_int(s.values[l.range][0]) + 1;
            if (next < l.end) {
              s.values[l.range] = {next};
              pc = l.body;
              jumped = true;
            } else {
              loops.pop_back();
            }
          }
          if (!jumped) ++pc;
          continue;
        }
        case Ops::DEFINE_REG: s.regs[u.get()] = value(u->src(0), s); break;
        case Ops::LOAD: {
          const UOpPtr& idx = u->src(0);
          if (idx->src(0)->op() == Ops::DEFINE_REG) {
            s.values[u.get()] = s.regs.at(idx->src(0).get());
            break;
          }
          Lanes out;
          for (int64_t l = 0; l < u->dtype().count(); ++l) {
            void* p = global_slot(idx, s, l);
            out.push_back(p ? read(p, d) : cast_const(int64_t{0}, d));
          }
          s.values[u.get()] = out;
          break;
        }
        case Ops::STORE: {
          const UOpPtr& idx = u->src(0);
          Lanes v = value(u->src(1), s);
          if (idx->src(0)->op() == Ops::DEFINE_REG) s.regs[idx->src(0).get()] = v;
          else
            for (size_t l = 0; l < v.size(); ++l)
              if (void* p = global_slot(idx, s, static_cast<int64_t>(l))) write(p, idx->src(0)->dtype().base(), v[l]);
          break;
        }
        case Ops::VECTORIZE: {
          Lanes out;
          for (const UOpPtr& x : u->src()) out.push_back(scalar(x, s));
          s.values[u.get()] = out;
          break;
        }
        case Ops::GEP: s.values[u.get()] = {value(u->src(0), s).at(static_cast<size_t>(u->arg_as<int64_t>()))}; break;
        case Ops::CAST: s.values[u.get()] = lanewise(u, s, [&](const auto& a) { return cast_const(a[0], d); }); break;
        case Ops::BITCAST:
          s.values[u.get()] = lanewise(u, s, [&](const auto& a) { return bitcast32(a[0], u->src(0)->dtype().scalar(), d); });
          break;
        default: {
          if (!is_alu(u->op())) throw Error("the toy interpreter cannot run " + to_string(*u));
          s.values[u.get()] = lanewise(u, s, [&](const auto& a) { return exec_alu(u->op(), d, a).value_or(cast_const(int64_t{0}, d)); });
        }
      }
      ++pc;
    }
  }

  std::vector<UOpPtr> program_;
  std::vector<std::string> vars_;
};

void register_toy() {
  register_backend({"CPU", "toy",
                    []() -> const Renderer& {
                      static const TextRenderer r;
                      return r;
                    },
                    []() -> const Compiler& {
                      static const TextCompiler c;
                      return c;
                    },
                    [](const CompiledSpec&, const ProgramSpec& spec) -> std::unique_ptr<Program> {
                      return std::make_unique<Interpreter>(linearize(spec.ast), spec.var_names);
                    },
                    [](int) -> DeviceMemory& { return host_memory(); },
                    {}});
}

std::vector<float> run_with(const Tensor& t, const std::string& compiler, int threads = 1) {
  ExecutionPlan plan = Tensor::prepare({t}, PrepareOptions{.threads = threads, .compiler = compiler, .verify = true});
  plan.execute();
  return plan.output_buffer()->to_vector<float>();
}

TEST(Backend, AToyBackendRunsThroughTheSameInterfaces) {
  register_toy();
  Tensor a = Tensor::rand({37, 11}, 1), b = Tensor::rand({11, 64}, 2), c = Tensor::rand({37}, 3);
  std::vector<Tensor> graphs = {(a * 2.0f + 1.0f).relu(),
                                a.sum({1}) + c,
                                a.matmul(b),  // upcast: accumulators over registers
                                a.softmax(1),
                                Tensor::rand({256, 600}, 4).sum({1})};
  for (const Tensor& g : graphs) {
    std::vector<float> want = run_with(g, "clang"), got = run_with(g, "toy");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
  }
  // Threads: the interpreter runs every launch index of a split kernel.
  Tensor big = Tensor::rand({512, 600}, 5) * 3.0f;
  std::vector<float> want = run_with(big, "clang", 2), got = run_with(big, "toy", 2);
  EXPECT_EQ(got, want);
  ExecutionPlan split = Tensor::prepare({big}, PrepareOptions{.threads = 2, .compiler = "toy"});
  ASSERT_FALSE(split.kernels().at(0).get().var_names.empty());
  EXPECT_EQ(split.kernels().at(0).get().var_names.back(), "core_id");  // it really was split
  // Its source is its renderer's text.
  ExecutionPlan plan = Tensor::prepare({a.sum({1})}, PrepareOptions{.compiler = "toy"});
  EXPECT_EQ(plan.kernels().at(0).get().code.rfind("kernel ", 0), 0u);
  EXPECT_NE(plan.kernels().at(0).get().code.find("DEFINE_REG"), std::string::npos);
}

TEST(Backend, UnknownCompilerOrDeviceIsAnErrorNamingWhatExists) {
  try {
    Tensor::prepare({Tensor::rand({4}, 1) * 2.0f}, PrepareOptions{.compiler = "no-such-compiler"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-compiler"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("clang"), std::string::npos) << e.what();
  }
  std::vector<std::string> names = backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "CPU/clang"), names.end());
}

// LATHE_CPU_COMPILER picks the CPU backend when a plan names none; a name it does not know is an
// error that says where the name came from.
TEST(Backend, CpuCompilerFromTheEnvironment) {
  register_toy();
  std::string old = std::getenv("LATHE_CPU_COMPILER") ? std::getenv("LATHE_CPU_COMPILER") : "";
  setenv("LATHE_CPU_COMPILER", "clang", 1);
  EXPECT_EQ(find_backend(DeviceSpec{}).compiler, "clang");
  EXPECT_EQ(find_backend(DeviceSpec{}, "toy").compiler, "toy") << "a plan's own choice wins";
  setenv("LATHE_CPU_COMPILER", "no-such-compiler", 1);
  try {
    find_backend(DeviceSpec{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LATHE_CPU_COMPILER"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-such-compiler"), std::string::npos) << e.what();
  }
  unsetenv("LATHE_CPU_COMPILER");
#ifdef LATHE_HAS_LLVM
  EXPECT_EQ(find_backend(DeviceSpec{}).compiler, "llvm") << "the default where lathe was built with LLVM";
#else
  EXPECT_EQ(find_backend(DeviceSpec{}).compiler, "clang");
#endif
  if (!old.empty()) setenv("LATHE_CPU_COMPILER", old.c_str(), 1);
}

}  // namespace
}  // namespace lathe
