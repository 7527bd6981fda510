#include "codegen/render_c.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "codegen/half_arithmetic.hpp"
#include "codegen/prefetch.hpp"
#include "ir/alu.hpp"
#include "ir/axis.hpp"
#include "ir/half.hpp"
#include "lathe/error.hpp"
#include "lathe/program.hpp"

namespace lathe {
namespace {

// float16 and bfloat16 as stored, and the one 16-bit conversion left to spell (codegen/half_casts
// lowers the others): float16 <-> float32, exact both ways.
constexpr const char* kHalfConversions = R"PRELUDE(/* float16 and bfloat16 are stored as 16-bit integers and computed in float. */
typedef unsigned short lathe_f16;
typedef unsigned short lathe_bf16;
#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
/* The compiler has _Float16 on this target: its conversions are exact and use the hardware. */
LATHE_FN float lathe_f16_to_f32(lathe_f16 h) { _Float16 v; __builtin_memcpy(&v, &h, 2); return (float)v; }
LATHE_FN lathe_f16 lathe_f32_to_f16(float f) { _Float16 v = (_Float16)f; lathe_f16 h; __builtin_memcpy(&h, &v, 2); return h; }
#else
LATHE_FN float lathe_f16_to_f32(lathe_f16 h) {
  union { unsigned int u; float f; } v;
  unsigned int em = h & 0x7fffu;
  v.u = em << 13;
  v.f *= 0x1p112f; /* rebias the exponent; subnormal halves become normal floats, exactly */
  if (em >= 0x7c00u) v.u = (em << 13) | 0x7f800000u;
  v.u |= (unsigned int)(h & 0x8000u) << 16;
  return v.f;
}
LATHE_FN lathe_f16 lathe_f32_to_f16(float f) {
  union { unsigned int u; float f; } v, magic;
  v.f = f;
  unsigned int sign = (v.u >> 16) & 0x8000u, h;
  v.u &= 0x7fffffffu;
  if (v.u >= 0x47800000u) {        /* >= 2^16: infinity, or nan kept quiet */
    h = v.u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (v.u < 0x38800000u) {  /* below 2^-14: a subnormal half; the add rounds to nearest even */
    magic.u = 126u << 23;
    v.f += magic.f;
    h = v.u - magic.u;
  } else {                         /* normal: rebias, then round the 13 dropped bits to nearest even */
    v.u += 0xc8000fffu + ((v.u >> 13) & 1u);
    h = v.u >> 13;
  }
  return (lathe_f16)(h | sign);
}
#endif
)PRELUDE";

// A warp's m16n8k16 multiply-add in CUDA (sm_80 and newer): floats packed two a register as
// float16 or bfloat16 (exact: the values came from them), then mma.sync with float32 accumulators.
constexpr const char* kCudaMma = R"PRELUDE(#define LATHE_MMA(t) \
LATHE_FN unsigned lathe_pack_##t##x2(float lo, float hi) { unsigned r; asm("cvt.rn." #t "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; } \
LATHE_FN void lathe_mma_##t(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1, float c2, float c3) { \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." #t "." #t ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};" \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3)); \
}
LATHE_MMA(f16)
LATHE_MMA(bf16)
)PRELUDE";

// What each dialect's functions are declared as, and CUDA's bit cast of a scalar.
constexpr const char* kCPrelude = "#include <math.h>\n";
constexpr const char* kCFunctions = "#define LATHE_FN static inline\n";
constexpr const char* kCudaPrelude = R"PRELUDE(#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
)PRELUDE";

bool is_half(DType d) { return d.scalar() == dtypes::float16; }
bool is_bf16(DType d) { return d.scalar() == dtypes::bfloat16; }

// The C type a value of `d` has: 16-bit floats are their bits.
std::string c_type(DType d) {
  if (d.count() > 1) {  // a vector type (vector.hpp-style typedef in the kernel): vf32x16, vi32x16 for a bool mask
    DType e = d.is_bool() ? dtypes::int32 : d.scalar();
    char kind = e.is_float() ? 'f' : e.is_unsigned() ? 'u' : 'i';
    return std::string("v") + kind + std::to_string(e.itemsize() * 8) + "x" + std::to_string(d.count());
  }
  if (is_half(d)) return "lathe_f16";
  if (is_bf16(d)) return "lathe_bf16";
  return d.c_name();
}

// The typedef behind a vector type's name: GCC-style vectors, which clang and gcc both compile
// (16-bit float lanes hold their bits, as scalars do: they are only moved, never computed on).
std::string vector_typedef(DType d) {
  DType e = d.is_bool() ? dtypes::int32 : d.scalar();
  return "typedef " + std::string(is_16bit_float(e) ? "unsigned short" : e.c_name()) + " " + c_type(d) + " __attribute__((vector_size(" +
         std::to_string(e.itemsize() * d.count()) + ")));\n";
}

// The signed integer vector with lanes as wide as d's: what a comparison of d yields.
DType lane_mask(DType d) {
  int64_t bytes = (d.is_bool() ? dtypes::int32 : d.scalar()).itemsize();
  DType i = bytes == 8 ? dtypes::int64 : bytes == 2 ? dtypes::int16 : bytes == 1 ? dtypes::int8 : dtypes::int32;
  return i.vec(d.count());
}

std::string float_literal(double v, bool is_double, CDialect dialect) {
  const char* suffix = is_double ? "" : "f";
  if (dialect == CDialect::Cuda && (std::isnan(v) || std::isinf(v))) {  // from their bits
    std::string bits = std::isnan(v) ? (is_double ? "0x7ff8000000000000ll" : "0x7fc00000") : (is_double ? "0x7ff0000000000000ll" : "0x7f800000");
    return std::string(std::isinf(v) && v < 0 ? "-" : "") + (is_double ? "__longlong_as_double(" : "__int_as_float(") + bits + ")";
  }
  if (std::isnan(v)) return is_double ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (is_double ? "__builtin_inf()" : "__builtin_inff()");
  char buf[64];
  auto res = is_double ? std::to_chars(buf, buf + sizeof buf, v) : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

std::string const_literal(const UOp& u, CDialect dialect) {
  DType d = u.dtype();
  ConstValue v = u.const_value();
  if (is_16bit_float(d)) {
    float x = static_cast<float>(const_as_double(v));
    unsigned bits = is_half(d) ? detail::float_to_half(x) : detail::float_to_bf16(x);
    return "((" + c_type(d) + ")" + std::to_string(bits) + "u)";
  }
  if (d.is_float()) return float_literal(const_as_double(v), d.scalar() == dtypes::float64, dialect);
  if (d.is_bool()) return std::get<bool>(v) ? "1" : "0";
  if (d.is_unsigned()) return "((" + c_type(d) + ")" + std::to_string(std::get<uint64_t>(v)) + "ull)";
  int64_t i = std::get<int64_t>(v);
  if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807ll-1)";
  return d.itemsize() == 8 ? std::to_string(i) + "ll" : "((" + c_type(d) + ")" + std::to_string(i) + ")";
}

// The spelling of each ALU op: {0}, {1}, {2} are its operands, {f} the float32 suffix of libm.
const std::map<Ops, std::string>& alu_spellings() {
  static const std::map<Ops, std::string> table = {
      {Ops::ADD, "({0} + {1})"},       {Ops::SUB, "({0} - {1})"},         {Ops::MUL, "({0} * {1})"},
      {Ops::FDIV, "({0} / {1})"},      {Ops::IDIV, "({0} / {1})"},        {Ops::MOD, "({0} % {1})"},
      {Ops::MAX, "({0} > {1} ? {0} : {1})"},                               {Ops::CMPLT, "({0} < {1})"},
      {Ops::CMPNE, "({0} != {1})"},    {Ops::CMPEQ, "({0} == {1})"},      {Ops::AND, "({0} & {1})"},
      {Ops::OR, "({0} | {1})"},        {Ops::XOR, "({0} ^ {1})"},         {Ops::SHL, "({0} << {1})"},
      {Ops::SHR, "({0} >> {1})"},      {Ops::WHERE, "({0} ? {1} : {2})"}, {Ops::MULACC, "({0} * {1} + {2})"},
      {Ops::NEG, "(-{0})"},            {Ops::RECIPROCAL, "(1.0{f} / {0})"}, {Ops::SQRT, "sqrt{f}({0})"},
      {Ops::TRUNC, "trunc{f}({0})"},   {Ops::POW, "pow{f}({0}, {1})"},    {Ops::EXP2, "exp2{f}({0})"},
      {Ops::LOG2, "log2{f}({0})"},     {Ops::SIN, "sin{f}({0})"},
  };
  return table;
}

std::string fill(const std::string& fmt, const std::vector<std::string>& args, const std::string& f) {
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '{') {
      out += fmt[i];
      continue;
    }
    size_t close = fmt.find('}', i);
    std::string key = fmt.substr(i + 1, close - i - 1);
    out += key == "f" ? f : args.at(static_cast<size_t>(std::stoi(key)));
    i = close;
  }
  return out;
}

class CSpeller {
 public:
  CSpeller(const std::string& name, const KernelSignature& sig, CDialect dialect) : name_(name), sig_(sig), dialect_(dialect) {}

  std::string run(const std::vector<UOpPtr>& program) {
    if (!cuda()) prefetch_ = Prefetcher(program);  // a GPU's loads are not streams of a core's
    bool wmma = false;
    for (const UOpPtr& u : program)  // the VECTORIZEs only WMMAs read
      if (u->op() == Ops::WMMA) wmma = true, fragments_.insert({u->src(0).get(), u->src(1).get(), u->src(2).get()});
    for (const UOpPtr& u : program)
      if (u->op() != Ops::WMMA)
        for (const UOpPtr& s : u->src()) fragments_.erase(s.get());
    for (const UOpPtr& u : program) {
      // CUDA spells a warp's multiply-add from its fragments' scalars into an array of 4: no vectors.
      if (cuda() && fragments_.count(u.get())) continue;
      bool of_wmma = u->op() == Ops::WMMA || (u->op() == Ops::GEP && u->src(0)->op() == Ops::WMMA);
      if (!cuda() || !of_wmma) {
        for (const UOpPtr& s : u->src()) note_types(s->dtype().base());
        note_types(u->dtype().base());
      }
      spell(u);
    }
    std::ostringstream src;
    src << (cuda() ? kCudaPrelude : kCPrelude);
    if (cuda() && wmma) src << kCudaMma;
    if (uses_16bit_) src << (cuda() ? "" : kCFunctions) << kHalfConversions;
    for (const auto& [name, def] : vector_types_) src << def;
    if (cuda()) return src.str() + cuda_head() + body_.str() + "}\n";
    src << "void " << name_ << "(void** bufs, const long long* vals) {\n";
    for (const KernelSignature::Buffer& b : sig_.buffers) {
      std::string t = c_type(b.dtype), q = b.written ? "" : "const ";
      src << "  " << q << t << "* restrict data" << b.slot << " = (" << q << t << "*)bufs[" << b.slot << "];\n";
    }
    for (size_t i = 0; i < sig_.vars.size(); ++i) src << "  const long long " << sig_.vars[i] << " = vals[" << i << "];\n";
    if (sig_.vars.empty()) src << "  (void)vals;\n";
    return src.str() + body_.str() + "}\n";
  }

 private:
  std::string indent() const { return std::string(2 * (1 + open_.size()), ' '); }
  bool cuda() const { return dialect_ == CDialect::Cuda; }

  // A CUDA kernel's head: buffers and variables as parameters (launch indices are the GPU's),
  // and the threads of its block as its launch bound.
  std::string cuda_head() const {
    if (sig_.threads_per_block < 1) throw InternalError("the CUDA renderer met kernel " + name_ + ", which is not launched on a grid");
    std::string params;
    for (const KernelSignature::Buffer& b : sig_.buffers)
      params += std::string(params.empty() ? "" : ", ") + (b.written ? "" : "const ") + c_type(b.dtype) + "* __restrict__ data" + std::to_string(b.slot);
    for (const std::string& v : sig_.vars)
      if (!is_launch_index(v)) params += std::string(params.empty() ? "" : ", ") + "const long long " + v;
    return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(sig_.threads_per_block) + ", 1) " + name_ + "(" + params + ") {\n";
  }

  void note_types(DType d) {
    uses_16bit_ |= is_16bit_float(d);
    if (d.count() > 1 && cuda()) throw InternalError("the CUDA renderer spells scalars only (its Target's widest vector is 1), not " + d.name());
    if (d.count() > 1) {
      vector_types_.emplace(c_type(d), vector_typedef(d));
      if (d.is_bool() || d.scalar().itemsize() != 4) vector_types_.emplace(c_type(lane_mask(d)), vector_typedef(lane_mask(d)));
      vector_types_.emplace(c_type(dtypes::bool_.vec(d.count())), vector_typedef(dtypes::bool_.vec(d.count())));
    }
  }

  static bool is_vector(const UOpPtr& u) { return u->dtype().count() > 1; }

  // A warp's m16n8k16 multiply-add: CUDA's mma.sync over the fragments packed two 16-bit values
  // a register (the first in the low half), into an array of 4; on the CPU (the emulator) the
  // sync hook, given the fragments' addresses, into a vector of 4.
  void spell_wmma(const UOpPtr& u) {
    std::string w = "wmma" + std::to_string(next_id_++);
    names_[u.get()] = w;
    const char* kind = u->arg_as<int64_t>() == 1 ? "f16" : "bf16";
    if (!cuda()) {
      line(c_type(u->dtype()) + " " + w + " = " + expr(u->src(2)) + ";");
      line(sync_call(u->src(3), std::to_string(u->arg_as<int64_t>()), "(const float*)&" + expr(u->src(0)), "(const float*)&" + expr(u->src(1)),
                     "(float*)&" + w) + ";");
      return;
    }
    auto fragment = [&](int f) -> const std::vector<UOpPtr>& {
      if (u->src(f)->op() != Ops::VECTORIZE) throw InternalError("the CUDA renderer takes a WMMA's fragments as VECTORIZEs, not " + to_string(*u->src(f)));
      return u->src(f)->src();
    };
    // Two values a register: a 16-bit value's own bits where the fragment is one converted to
    // float (float16 by a CAST; bfloat16 by its bits shifted up, codegen/half_casts), else the
    // float converted back (exact).
    DType input = u->arg_as<int64_t>() == 1 ? dtypes::float16 : dtypes::bfloat16;
    auto bits = [&](const UOpPtr& v) -> UOpPtr {
      if (v->op() == Ops::CAST && v->src(0)->dtype() == input) return v->src(0);
      if (v->op() != Ops::BITCAST || v->src(0)->op() != Ops::SHL || !v->src(0)->src(1)->is_const() || v->src(0)->src(1)->vmax() != 16) return nullptr;
      const UOpPtr& wide = v->src(0)->src(0);
      if (wide->op() != Ops::CAST || wide->src(0)->op() != Ops::BITCAST || wide->src(0)->src(0)->dtype() != input) return nullptr;
      return wide->src(0)->src(0);
    };
    auto pair = [&](const UOpPtr& lo, const UOpPtr& hi) {
      UOpPtr a = bits(lo), b = bits(hi);
      if (a && b) return "((unsigned)" + expr(a) + " | ((unsigned)" + expr(b) + " << 16))";
      return "lathe_pack_" + std::string(kind) + "x2(" + expr(lo) + ", " + expr(hi) + ")";
    };
    std::string args = w;
    for (int f = 0; f < 2; ++f)
      for (size_t i = 0; i < fragment(f).size(); i += 2) args += ", " + pair(fragment(f)[i], fragment(f)[i + 1]);
    for (const UOpPtr& c : fragment(2)) args += ", " + expr(c);
    line("float " + w + "[4];");
    line("lathe_mma_" + std::string(kind) + "(" + args + ");");
  }

  // A call of the hook where a GPU kernel's threads meet, on the CPU (device/cuda/block_threads's SyncHook).
  std::string sync_call(const UOpPtr& sync, const std::string& kind, const std::string& a, const std::string& b, const std::string& cd) {
    return "((long long (*)(long long, const float*, const float*, float*))" + expr(sync) + ")(" + kind + ", " + a + ", " + b + ", " + cd + ")";
  }

  void line(const std::string& s) { body_ << indent() << s << "\n"; }

  std::string define(const UOpPtr& u, const std::string& prefix, const std::string& value) {
    std::string name = prefix + std::to_string(next_id_++);
    names_[u.get()] = name;
    line(c_type(u->dtype()) + " " + name + " = " + value + ";");
    return name;
  }

  // A value already computed, or spelled where it is used.
  std::string expr(const UOpPtr& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    switch (u->op()) {
      case Ops::CONST: return const_literal(*u, dialect_);
      case Ops::RANGE: return "ridx" + std::to_string(axis_of(*u));
      case Ops::DEFINE_VAR: return u->arg_as<VarArg>().name;
      case Ops::SPECIAL: return cuda() ? cuda_launch_index(u->arg_as<std::string>()) : u->arg_as<std::string>();
      case Ops::BIND: return expr(u->src(0));
      default: break;
    }
    throw InternalError("the C renderer met " + to_string(*u) + " before it was computed");
  }

  static std::string cuda_launch_index(const std::string& name) {
    static const std::map<std::string, std::string> builtin = {
        {"gidx0", "blockIdx.x"}, {"gidx1", "blockIdx.y"}, {"gidx2", "blockIdx.z"},
        {"lidx0", "threadIdx.x"}, {"lidx1", "threadIdx.y"}, {"lidx2", "threadIdx.z"}};
    auto it = builtin.find(name);
    if (it == builtin.end()) throw InternalError("the CUDA renderer has no launch index '" + name + "'");
    return "((long long)" + it->second + ")";
  }

  // The element an INDEX names, `plus` (C source) elements further on: a buffer's, or an
  // accumulator (a register of one value).
  std::string element(const UOpPtr& idx, const std::string& plus = "") {
    const UOpPtr& base = idx->src(0);
    if (base->op() == Ops::DEFINE_GLOBAL) return "data" + std::to_string(base->arg_as<int64_t>()) + "[" + expr(idx->src(1)) + plus + "]";
    if (base->op() == Ops::DEFINE_LOCAL) return "local" + std::to_string(base->arg_as<int64_t>()) + "[" + expr(idx->src(1)) + plus + "]";
    if (base->dtype().ptr_size() > 1) return regs_.at(base.get()) + "[" + expr(idx->src(1)) + plus + "]";
    return regs_.at(base.get());
  }

  void spell(const UOpPtr& u) {
    switch (u->op()) {
      case Ops::RANGE: {
        std::string r = expr(u);
        if (cuda()) line("#pragma unroll 4");  // render_cuda.hpp: the optimizer unrolls what it means to
        line("for (long long " + r + " = 0; " + r + " < " + expr(u->src(0)) + "; " + r + "++) {");
        open_.push_back(u);
        return;
      }
      case Ops::END:
        for (const UOpPtr& s : u->src())
          if (s->op() == Ops::RANGE) {
            open_.erase(std::remove(open_.begin(), open_.end(), s), open_.end());
            line("}");
          }
        return;
      case Ops::DEFINE_REG: return spell_reg(u);
      case Ops::DEFINE_LOCAL:  // CPU: lives with the loaded kernel, shared by the cores of a launch; GPU: a block's shared memory
        line((cuda() ? "__shared__ " : "static ") + c_type(u->dtype().base()) + " local" + std::to_string(u->arg_as<int64_t>()) + "[" +
             std::to_string(u->dtype().ptr_size()) + "];");
        // A GPU kernel on the CPU: the other threads of its block read and write the scratch
        // while this one waits in the sync hook, so the compiler must not keep it in registers
        // across the hook (its address escapes).
        if (!cuda() && sig_.threads_meet()) line("__asm__ volatile(\"\" : : \"r\"(local" + std::to_string(u->arg_as<int64_t>()) + ") : \"memory\");");
        return;
      case Ops::BARRIER: {
        if (cuda()) {  // the block's threads wait for each other; its value is the thread's index in the block
          line("__syncthreads();");
          define(u, "bar", "((long long)threadIdx.x + (long long)blockDim.x * ((long long)threadIdx.y + (long long)blockDim.y * (long long)threadIdx.z))");
          return;
        }
        if (u->src().size() == 2) {  // a GPU block's barrier on the CPU: the emulator's hook (the thread's index)
          define(u, "bar", sync_call(u->src(1), "0", "0", "0", "0"));
          return;
        }
        // CPU: the cores' arrivals, counted across launches: the last of each gets true
        std::string count = "arrivals" + std::to_string(next_id_);
        line("static unsigned long long " + count + ";");
        define(u, "last", "(__atomic_add_fetch(&" + count + ", 1ull, __ATOMIC_ACQ_REL) % " + std::to_string(u->arg_as<int64_t>()) +
                              "ull == 0)");
        return;
      }
      case Ops::LOAD: return spell_load(u);
      case Ops::STORE: {
        const UOpPtr& idx = u->src(0);
        std::string gate = idx->src().size() == 3 ? "if (" + expr(idx->src(2)) + ") " : "";
        if (is_vector(u->src(1)) && idx->src(0)->op() == Ops::DEFINE_GLOBAL)  // a whole vector, unaligned
          line(gate + "__builtin_memcpy(&" + element(idx) + ", &" + expr(u->src(1)) + ", sizeof(" + expr(u->src(1)) + "));");
        else
          line(gate + element(idx) + " = " + expr(u->src(1)) + ";");
        return;
      }
      case Ops::CAST: define(u, "cast", cast_expr(u)); return;
      case Ops::BITCAST: {
        DType from = u->src(0)->dtype(), to = u->dtype();
        if (is_vector(u)) define(u, "cast", "((" + c_type(to) + ")(" + expr(u->src(0)) + "))");
        else if (cuda()) define(u, "cast", "lathe_bitcast<" + c_type(to) + ">(" + expr(u->src(0)) + ")");
        else define(u, "cast", "({ union { " + c_type(from) + " a; " + c_type(to) + " b; } u_; u_.a = " + expr(u->src(0)) + "; u_.b; })");
        return;
      }
      case Ops::VECTORIZE: define(u, "vec", vectorize_expr(u)); return;
      case Ops::WMMA: return spell_wmma(u);
      case Ops::GEP: {
        std::string lane = expr(u->src(0)) + "[" + std::to_string(u->arg_as<int64_t>()) + "]";
        define(u, "gep", u->src(0)->dtype().is_bool() ? "(" + lane + " != 0)" : lane);
        return;
      }
      default: break;
    }
    if (!is_alu(u->op())) throw InternalError("the C renderer cannot spell " + to_string(*u));
    define(u, "alu", alu_expr(u));
  }

  // An accumulator, or an array of them (codegen/attention's state per tile), each element set to
  // the initial value.
  void spell_reg(const UOpPtr& u) {
    std::string reg = "acc" + std::to_string(u->arg_as<int64_t>()), type = c_type(u->dtype().base());
    int64_t n = u->dtype().ptr_size();
    regs_[u.get()] = reg;
    if (n == 1) return line(type + " " + reg + " = " + expr(u->src(0)) + ";");
    line(type + " " + reg + "[" + std::to_string(n) + "];");
    line("for (int i = 0; i < " + std::to_string(n) + "; ++i) " + reg + "[i] = " + expr(u->src(0)) + ";");
  }

  void spell_load(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    if (is_vector(u) && idx->src(0)->op() == Ops::DEFINE_GLOBAL) {  // a whole vector, unaligned
      std::string name = "val" + std::to_string(next_id_++), t = c_type(u->dtype());
      names_[u.get()] = name;
      std::string copy = "__builtin_memcpy(&" + name + ", &" + element(idx) + ", sizeof(" + name + "));";
      if (idx->src().size() == 3 && is_vector(idx->src(2))) {  // a gate per lane: the lanes whose gate holds
        std::string lanes = std::to_string(u->dtype().count()), gate = expr(idx->src(2));
        return line(t + " " + name + " = (" + t + "){}; for (int l = 0; l < " + lanes + "; ++l) if (" + gate + "[l]) " + name + "[l] = " + element(idx, " + l") + ";");
      }
      if (idx->src().size() == 3) return line(t + " " + name + " = (" + t + "){}; if (" + expr(idx->src(2)) + ") " + copy);
      line(t + " " + name + "; " + copy);
      // A streamed operand asks for what it reads kPrefetchBytes later (codegen/prefetch.hpp); the
      // address is stepped as an integer, as it may be past the buffer's end.
      if (std::optional<int64_t> ahead = prefetch_.distance(*u, open_.empty() ? nullptr : open_.back()))
        line("__builtin_prefetch((const void*)((unsigned long long)&" + element(idx) + " + " +
             std::to_string(*ahead * idx->src(0)->dtype().base().itemsize()) + "ull), 0, 3);");
      return;
    }
    std::string access = element(idx);
    if (idx->src().size() == 3) access = "(" + expr(idx->src(2)) + " ? " + access + " : (" + c_type(u->dtype()) + ")0)";
    define(u, "val", access);
  }

  // VECTORIZE of one value in every lane is a splat; bools are masks (-1 true).
  std::string vectorize_expr(const UOpPtr& u) {
    std::string t = c_type(u->dtype());
    auto lane = [&](const UOpPtr& s) { return u->dtype().is_bool() ? "-(int)(" + expr(s) + ")" : expr(s); };
    if (UOpPtr one = splat_of(u)) return "((" + t + "){} + " + lane(one) + ")";
    std::string out = "((" + t + "){";
    for (size_t i = 0; i < u->src().size(); ++i) out += (i ? ", " : "") + lane(u->src(i));
    return out + "})";
  }

  // A select on vectors: through bits, with the mask widened or narrowed to the lanes' width.
  std::string select(const std::string& mask, const std::string& a, const std::string& b, DType d) {
    std::string mt = c_type(lane_mask(d)), m = mask;
    if (lane_mask(d) != dtypes::int32.vec(d.count())) m = "__builtin_convertvector(" + mask + ", " + mt + ")";
    return "((" + c_type(d) + ")((" + m + " & (" + mt + ")(" + a + ")) | (~" + m + " & (" + mt + ")(" + b + "))))";
  }

  // A comparison of vectors as a bool mask (int32 lanes).
  std::string compare(const std::string& cmp, DType operand) {
    if (lane_mask(operand) == dtypes::int32.vec(operand.count())) return cmp;
    return "__builtin_convertvector(" + cmp + ", " + c_type(dtypes::bool_.vec(operand.count())) + ")";
  }

  std::string alu_expr(const UOpPtr& u) {
    std::vector<std::string> args;
    for (const UOpPtr& s : u->src()) args.push_back(expr(s));
    DType d = u->dtype();
    if (is_vector(u) && u->src(0)->dtype().is_bool()) {  // masks (-1 true): orders and arithmetic as logic
      switch (u->op()) {
        case Ops::CMPLT: return "(~" + args[0] + " & " + args[1] + ")";
        case Ops::MAX:
        case Ops::ADD: return "(" + args[0] + " | " + args[1] + ")";
        case Ops::MUL: return "(" + args[0] + " & " + args[1] + ")";
        default: break;
      }
    }
    if (is_vector(u)) {
      switch (u->op()) {
        case Ops::WHERE: return select(args[0], args[1], args[2], d);
        case Ops::MAX: return select(compare("(" + args[0] + " > " + args[1] + ")", d), args[0], args[1], d);
        case Ops::CMPLT:
        case Ops::CMPNE:
        case Ops::CMPEQ: return compare(fill(alu_spellings().at(u->op()), args, ""), u->src(0)->dtype());
        default: break;
      }
    }
    if (u->op() == Ops::TRUNC && !d.is_float()) return args[0];  // integers are already whole
    auto it = alu_spellings().find(u->op());
    if (it == alu_spellings().end()) throw InternalError("the C renderer has no spelling for " + to_string(*u));
    return fill(it->second, args, d.scalar() == dtypes::float32 ? "f" : "");
  }

  std::string cast_expr(const UOpPtr& u) {
    DType to = u->dtype(), from = u->src(0)->dtype();
    std::string x = expr(u->src(0));
    if (is_16bit_float(from) || is_16bit_float(to)) {  // codegen/half_casts lowered all but float16 <-> float32
      if (from == to) return x;
      if (is_vector(u)) throw InternalError("the C renderer converts 16-bit floats lane by lane (codegen/expand), not " + to_string(*u));
      if (is_half(from) && to == dtypes::float32) return "lathe_f16_to_f32(" + x + ")";
      if (from == dtypes::float32 && is_half(to)) return "lathe_f32_to_f16(" + x + ")";
      throw InternalError("the C renderer spells only float16 <-> float32 of the 16-bit casts, not " + from.name() + " -> " + to.name() +
                          " (codegen/half_casts lowers the others)");
    }
    if (is_vector(u)) {
      if (from.is_bool()) return "__builtin_convertvector(-(" + x + "), " + c_type(to) + ")";
      if (to.is_bool()) return compare("(" + x + " != (" + c_type(from) + "){})", from);
      return "__builtin_convertvector(" + x + ", " + c_type(to) + ")";
    }
    if (to.is_bool()) return "((" + x + ") != 0)";
    return "((" + c_type(to) + ")(" + x + "))";
  }

  std::unordered_set<const UOp*> fragments_;  // the VECTORIZEs a WMMA reads
  std::string name_;
  const KernelSignature& sig_;
  CDialect dialect_;
  std::ostringstream body_;
  std::vector<UOpPtr> open_;                     // the loops open where spelling is, innermost last (the body's indent)
  Prefetcher prefetch_;                          // what the program's loads ask for ahead; nothing for CUDA
  int next_id_ = 0;
  bool uses_16bit_ = false;
  std::unordered_map<const UOp*, std::string> names_;
  std::unordered_map<const UOp*, std::string> regs_;  // DEFINE_REG -> its accumulator
  std::map<std::string, std::string> vector_types_;   // name -> typedef
};

}  // namespace

std::string render_c_family(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig, CDialect dialect) {
  return CSpeller(name, sig, dialect).run(program);
}

std::string CRenderer::render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const {
  return render_c_family(name, program, sig, CDialect::C);
}

}  // namespace lathe
