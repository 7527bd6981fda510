#include "codegen/render_c.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "codegen/estimates.hpp"
#include "codegen/linearize.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

constexpr const char* kPrelude = R"PRELUDE(#include <math.h>
/* float16 and bfloat16 are stored as 16-bit integers and computed in float, so every target
   gives the same answers. Conversions round to nearest even. A double (or a 64-bit integer) is
   first rounded to float "to odd" (an inexact result keeps its lowest bit set), which makes the
   second rounding to 16 bits exact. */
typedef unsigned short lathe_f16;
typedef unsigned short lathe_bf16;
static inline float lathe_round_odd_f32(double d) {
  union { float f; unsigned int u; } v;
  v.f = (float)d;
  if ((double)v.f != d && d == d) {
    if (__builtin_fabs((double)v.f) > __builtin_fabs(d)) v.u -= 1u;
    v.u |= 1u;
  }
  return v.f;
}
#ifdef __FLT16_MAX__
/* The compiler has _Float16 on this target: its conversions are exact and use the hardware. */
static inline float lathe_f16_to_f32(lathe_f16 h) { _Float16 v; __builtin_memcpy(&v, &h, 2); return (float)v; }
static inline lathe_f16 lathe_f32_to_f16(float f) { _Float16 v = (_Float16)f; lathe_f16 h; __builtin_memcpy(&h, &v, 2); return h; }
#else
static inline float lathe_f16_to_f32(lathe_f16 h) {
  union { unsigned int u; float f; } v;
  unsigned int em = h & 0x7fffu;
  v.u = em << 13;
  v.f *= 0x1p112f; /* rebias the exponent; subnormal halves become normal floats, exactly */
  if (em >= 0x7c00u) v.u = (em << 13) | 0x7f800000u;
  v.u |= (unsigned int)(h & 0x8000u) << 16;
  return v.f;
}
static inline lathe_f16 lathe_f32_to_f16(float f) {
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
static inline lathe_f16 lathe_f64_to_f16(double d) { return lathe_f32_to_f16(lathe_round_odd_f32(d)); }
static inline float lathe_bf16_to_f32(lathe_bf16 b) { union { unsigned int u; float f; } v; v.u = (unsigned int)b << 16; return v.f; }
static inline lathe_bf16 lathe_f32_to_bf16(float f) {
  union { unsigned int u; float f; } v; v.f = f;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) return (lathe_bf16)((v.u >> 16) | 0x40u);
  v.u += 0x7fffu + ((v.u >> 16) & 1u);
  return (lathe_bf16)(v.u >> 16);
}
static inline lathe_bf16 lathe_f64_to_bf16(double d) { return lathe_f32_to_bf16(lathe_round_odd_f32(d)); }
/* float exp2, log2 and sin written out (Cephes polynomials, branch-free) so that loops over
   them vectorize; libm's scalar calls do not. exp2: < 1 ulp; log2, sin: ~1e-7 absolute. */
#ifdef __clang__
#define LATHE_EXACT_FP_BEGIN _Pragma("clang fp reassociate(off)")
#define LATHE_EXACT_FP_ATTR
#else
#define LATHE_EXACT_FP_BEGIN
#define LATHE_EXACT_FP_ATTR __attribute__((optimize("no-associative-math")))
#endif
/* exp2 scales by 2^n in two steps so that both halves stay representable; regrouping those
   multiplies (allowed by -fassociative-math) would overflow at 2^128, so it is switched off here. */
static inline LATHE_EXACT_FP_ATTR float lathe_exp2f(float x) {
  LATHE_EXACT_FP_BEGIN
  float xc = x < -150.0f ? -150.0f : (x > 128.0f ? 128.0f : x);
  float n = __builtin_rintf(xc);
  float f = xc - n;
  float p = 1.535336188319500e-4f;
  p = p * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  p = p * f + 1.0f;
  int ni = (int)n, n1 = ni / 2, n2 = ni - n1;
  union { int i; float f; } s1, s2;
  s1.i = (n1 + 127) << 23;
  s2.i = (n2 + 127) << 23;
  union { float f; unsigned u; } b;
  b.f = x;
  return (b.u & 0x7fffffffu) > 0x7f800000u ? x : p * s1.f * s2.f;
}
static inline float lathe_log2f(float x) {
  int sub = x < 1.17549435e-38f;
  union { float f; unsigned u; } v;
  v.f = sub ? x * 8388608.0f : x;
  int e = (int)((v.u >> 23) & 0xffu) - 127 - (sub ? 23 : 0);
  v.u = (v.u & 0x007fffffu) | 0x3f800000u;
  float m = v.f;
  int big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;
  float p = t * (1.0f + t2 * (0.333333333f + t2 * (0.2f + t2 * (0.142857143f + t2 * 0.111111111f))));
  float r = (float)e + 2.88539008f * p;
  r = x == 0.0f ? -__builtin_inff() : r;
  r = x < 0.0f ? __builtin_nanf("") : r;
  r = x == __builtin_inff() ? x : r;
  return x != x ? x : r;
}
static inline float lathe_sinf(float x) {
  float k = __builtin_rintf(x * 0.636619772f);
  float r = ((x - k * 1.5703125f) - k * 4.837512969970703125e-4f) - k * 7.54978995489188216e-8f;
  float r2 = r * r;
  float s = r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f + r2 * -1.9515295891e-4f));
  float c = 1.0f - 0.5f * r2 + r2 * r2 * (4.166664568298827e-2f + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
  int q = (int)k & 3;
  float v = (q & 1) ? c : s;
  union { float f; unsigned u; } b;
  b.f = x;
  return (b.u & 0x7f800000u) == 0x7f800000u ? __builtin_nanf("") : ((q & 2) ? -v : v);
}
)PRELUDE";

bool is_half(DType d) { return d.scalar() == dtypes::float16; }
bool is_bf16(DType d) { return d.scalar() == dtypes::bfloat16; }

// The C type a value of `d` is computed in: 16-bit floats compute as float.
std::string value_type(DType d) {
  if (is_half(d) || is_bf16(d)) return "float";
  return d.c_name();
}

// The C type a buffer of `d` stores.
std::string storage_type(DType d) {
  if (is_half(d)) return "lathe_f16";
  if (is_bf16(d)) return "lathe_bf16";
  return d.c_name();
}

// A 16-bit float's bits from the float it is computed in, and back.
std::string to_storage(DType d, const std::string& x) {
  if (is_half(d)) return "lathe_f32_to_f16(" + x + ")";
  if (is_bf16(d)) return "lathe_f32_to_bf16(" + x + ")";
  return x;
}
std::string from_storage(DType d, const std::string& x) {
  if (is_half(d)) return "lathe_f16_to_f32(" + x + ")";
  if (is_bf16(d)) return "lathe_bf16_to_f32(" + x + ")";
  return x;
}

std::string float_literal(double v, bool is_double) {
  const char* suffix = is_double ? "" : "f";
  if (std::isnan(v)) return is_double ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (is_double ? "__builtin_inf()" : "__builtin_inff()");
  char buf[64];
  auto res = is_double ? std::to_chars(buf, buf + sizeof buf, v) : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

std::string render_const(const UOp& u) {
  DType d = u.dtype();
  ConstValue v = u.const_value();
  if (d.is_float()) return float_literal(const_as_double(v), d.scalar() == dtypes::float64);
  if (d.is_bool()) return std::get<bool>(v) ? "1" : "0";
  if (d.is_unsigned()) return "((" + value_type(d) + ")" + std::to_string(std::get<uint64_t>(v)) + "ull)";
  int64_t i = std::get<int64_t>(v);
  if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807ll-1)";
  return d.itemsize() == 8 ? std::to_string(i) + "ll" : "((" + value_type(d) + ")" + std::to_string(i) + ")";
}

const char* math_fn(Ops op, DType d) {
  bool dbl = d.scalar() == dtypes::float64;
  switch (op) {
    case Ops::EXP2: return dbl ? "exp2" : "lathe_exp2f";
    case Ops::LOG2: return dbl ? "log2" : "lathe_log2f";
    case Ops::SIN: return dbl ? "sin" : "lathe_sinf";
    case Ops::SQRT: return dbl ? "sqrt" : "sqrtf";
    case Ops::TRUNC: return dbl ? "trunc" : "truncf";
    case Ops::POW: return dbl ? "pow" : "powf";
    default: return nullptr;
  }
}

class CRenderer {
 public:
  CRenderer(const UOpPtr& ast, std::string name, const CRenderOptions& opt) : ast_(ast), name_(std::move(name)), opt_(opt) {}

  ProgramSpec run() {
    collect_signature();
    std::vector<Instr> instrs = linearize(ast_);
    std::ostringstream body;
    int depth = 1;
    for (const Instr& in : instrs) {
      switch (in.kind) {
        case Instr::Kind::Open: {
          std::string r = range_name(*in.u);
          std::string end = expr(in.u->src(0));
          if (in.u == threaded_range_) {
            body << indent(depth) << "const long long chunk = (" << end << " + " << opt_.threads - 1 << ") / " << opt_.threads << ";\n";
            body << indent(depth) << "const long long lo = core_id * chunk, hi0 = lo + chunk, hi = hi0 < " << end << " ? hi0 : " << end << ";\n";
            body << indent(depth) << "for (long long " << r << " = lo; " << r << " < hi; " << r << "++) {\n";
          } else {
            body << indent(depth) << "for (long long " << r << " = 0; " << r << " < " << end << "; " << r << "++) {\n";
          }
          ++depth;
          break;
        }
        case Instr::Kind::Close: body << indent(--depth) << "}\n"; break;
        case Instr::Kind::AccInit: {
          std::string acc = "acc" + std::to_string(next_id_++);
          auto [size, flat] = upcast_index(in.u);
          if (size == 1) {
            names_[in.u.get()] = acc;
            body << indent(depth) << value_type(in.u->dtype()) << " " << acc << " = " << identity(*in.u) << ";\n";
          } else {
            names_[in.u.get()] = acc + "[" + flat + "]";
            acc_arrays_[in.u.get()] = acc;
            body << indent(depth) << value_type(in.u->dtype()) << " " << acc << "[" << size << "];\n";
            body << indent(depth) << "for (int i = 0; i < " << size << "; i++) " << acc << "[i] = " << identity(*in.u) << ";\n";
          }
          break;
        }
        case Instr::Kind::Accumulate: {
          const std::string& acc = names_.at(in.u.get());
          std::string v = expr(in.u->src(0));
          Ops op = in.u->arg_as<Ops>();
          if (op == Ops::ADD) body << indent(depth) << acc << " += " << v << ";\n";
          else if (op == Ops::MUL) body << indent(depth) << acc << " *= " << v << ";\n";
          else body << indent(depth) << acc << " = " << max_expr(acc, v) << ";\n";
          break;
        }
        case Instr::Kind::Node: emit_node(body, depth, in.u); break;
      }
    }
    ProgramSpec spec(name_, src_header() + body.str() + "}\n", DeviceSpec{}, ast_);
    spec.estimates = count_work(instrs);
    spec.set_var_names(var_names_);
    spec.set_buffer_metadata(globals_, outs_, ins_);
    for (const UOpPtr& v : vars_) {
      const auto& a = v->arg_as<VarArg>();
      spec.add_var(Variable(a.name, a.min, a.max));
    }
    if (opt_.threads > 1) spec.global_size = LaunchSize{static_cast<size_t>(opt_.threads), 1, 1};
    return spec;
  }

 private:
  static std::string indent(int depth) { return std::string(2 * depth, ' '); }

  std::string range_name(const UOp& r) { return "ridx" + std::to_string(r.arg_as<std::vector<int64_t>>().at(0)); }

  // A reduction that depends on upcast ranges keeps one accumulator per upcast position: the
  // array's size, and the flat index of the current position.
  std::pair<int64_t, std::string> upcast_index(const UOpPtr& red) {
    std::vector<UOpPtr> ups;
    for (const UOpPtr& u : toposort(red->src(0)))
      if (is_upcast_range(*u)) ups.push_back(u);
    std::sort(ups.begin(), ups.end(), [](const UOpPtr& a, const UOpPtr& b) {
      return a->arg_as<std::vector<int64_t>>()[0] < b->arg_as<std::vector<int64_t>>()[0];
    });
    int64_t size = 1;
    std::string flat;
    for (const UOpPtr& r : ups) {
      int64_t n = r->src(0)->vmax();
      flat = flat.empty() ? range_name(*r) : "(" + flat + ") * " + std::to_string(n) + " + " + range_name(*r);
      size *= n;
    }
    return {size, flat};
  }

  void collect_signature() {
    std::map<int64_t, UOpPtr> globals;
    std::set<int64_t> written, read;
    std::map<std::string, UOpPtr> vars;
    std::set<const UOp*> reduce_ranges;
    for (const UOpPtr& u : toposort(ast_)) {
      if (u->op() == Ops::REDUCE)
        for (size_t i = 1; i < u->src().size(); ++i) reduce_ranges.insert(u->src(i).get());
    }
    for (const UOpPtr& u : toposort(ast_)) {
      if (u->op() == Ops::RANGE && opt_.threads > 1 && !reduce_ranges.count(u.get()) && !is_upcast_range(*u) &&
          (!threaded_range_ || u->arg_as<std::vector<int64_t>>()[0] < threaded_range_->arg_as<std::vector<int64_t>>()[0]))
        threaded_range_ = u;
      if (u->op() == Ops::DEFINE_GLOBAL) globals[u->arg_as<int64_t>()] = u;
      if (u->op() == Ops::DEFINE_VAR) vars[u->arg_as<VarArg>().name] = u;
      if (u->op() == Ops::STORE) written.insert(u->src(0)->src(0)->arg_as<int64_t>());
      if (u->op() == Ops::LOAD) read.insert(u->src(0)->src(0)->arg_as<int64_t>());
    }
    for (auto& [slot, g] : globals) {
      globals_.push_back(static_cast<size_t>(slot));
      if (written.count(slot)) outs_.push_back(static_cast<size_t>(slot));
      else if (read.count(slot)) ins_.push_back(static_cast<size_t>(slot));
      std::string t = storage_type(g->dtype().base());
      names_[g.get()] = "data" + std::to_string(slot);
      buf_decls_ += "  " + std::string(written.count(slot) ? "" : "const ") + t + "* restrict data" + std::to_string(slot) +
                    " = (" + (written.count(slot) ? "" : "const ") + t + "*)bufs[" + std::to_string(slot) + "];\n";
    }
    for (auto& [name, v] : vars) {
      var_decls_ += "  const long long " + name + " = vals[" + std::to_string(var_names_.size()) + "];\n";
      var_names_.push_back(name);
      vars_.push_back(v);
      names_[v.get()] = name;
    }
    if (opt_.threads > 1) {
      var_decls_ += "  const long long core_id = vals[" + std::to_string(var_names_.size()) + "];\n";
      var_names_.push_back("core_id");
    }
  }

  std::string src_header() const {
    return std::string(kPrelude) + "void " + name_ + "(void** bufs, const long long* vals) {\n" + buf_decls_ + var_decls_ +
           (var_names_.empty() ? "  (void)vals;\n" : "");
  }

  std::string identity(const UOp& red) const {
    DType d = red.dtype();
    switch (red.arg_as<Ops>()) {
      case Ops::ADD: return d.is_float() ? "0.0f" : "0";
      case Ops::MUL: return d.is_float() ? "1.0f" : "1";
      default: break;
    }
    if (d.is_float()) return "-__builtin_inff()";
    if (d.is_bool()) return "0";
    UOpPtr lo = UOp::const_(d, d.min());
    return render_const(*lo);
  }

  static std::string max_expr(const std::string& a, const std::string& b) {
    return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
  }

  // The C expression for a node already computed or spelled inline.
  std::string expr(const UOpPtr& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    switch (u->op()) {
      case Ops::CONST: return render_const(*u);
      case Ops::RANGE: return range_name(*u);
      case Ops::BIND: return expr(u->src(0));
      default: break;
    }
    throw InternalError("the C renderer met " + to_string(*u) + " before it was computed");
  }

  std::string load_expr(const UOpPtr& load) {
    const UOpPtr& idx = load->src(0);
    std::string access = expr(idx->src(0)) + "[" + expr(idx->src(1)) + "]";
    access = from_storage(load->dtype(), access);
    if (idx->src().size() == 3) {
      std::string zero = value_type(load->dtype()) == "float" || load->dtype().is_float() ? "0.0f" : "0";
      return "(" + expr(idx->src(2)) + " ? " + access + " : (" + value_type(load->dtype()) + ")" + zero + ")";
    }
    return access;
  }

  std::string alu_expr(const UOpPtr& u) {
    auto s = [&](size_t i) { return expr(u->src(i)); };
    DType d = u->dtype();
    Ops op = u->op();
    if (const char* fn = math_fn(op, d); fn && d.is_float()) {
      return std::string(fn) + "(" + s(0) + (op == Ops::POW ? ", " + s(1) : "") + ")";
    }
    switch (op) {
      case Ops::TRUNC: return s(0);  // integers are already whole
      case Ops::NEG: return "(-" + s(0) + ")";
      case Ops::RECIPROCAL: return "(" + std::string(d.scalar() == dtypes::float64 ? "1.0" : "1.0f") + " / " + s(0) + ")";
      case Ops::ADD: return "(" + s(0) + " + " + s(1) + ")";
      case Ops::SUB: return "(" + s(0) + " - " + s(1) + ")";
      case Ops::MUL: return "(" + s(0) + " * " + s(1) + ")";
      case Ops::FDIV:
      case Ops::IDIV: return "(" + s(0) + " / " + s(1) + ")";
      case Ops::MOD: return "(" + s(0) + " % " + s(1) + ")";
      case Ops::MAX: return max_expr(s(0), s(1));
      case Ops::CMPLT: return "(" + s(0) + " < " + s(1) + ")";
      case Ops::CMPNE: return "(" + s(0) + " != " + s(1) + ")";
      case Ops::CMPEQ: return "(" + s(0) + " == " + s(1) + ")";
      case Ops::AND: return "(" + s(0) + " & " + s(1) + ")";
      case Ops::OR: return "(" + s(0) + " | " + s(1) + ")";
      case Ops::XOR: return "(" + s(0) + " ^ " + s(1) + ")";
      case Ops::SHL: return "(" + s(0) + " << " + s(1) + ")";
      case Ops::SHR: return "(" + s(0) + " >> " + s(1) + ")";
      case Ops::WHERE: return "(" + s(0) + " ? " + s(1) + " : " + s(2) + ")";
      case Ops::MULACC: return "(" + s(0) + " * " + s(1) + " + " + s(2) + ")";
      default: break;
    }
    throw InternalError("the C renderer has no spelling for " + to_string(*u));
  }

  std::string cast_expr(const UOpPtr& u) {
    DType to = u->dtype();
    std::string x = expr(u->src(0));
    if (is_half(to) || is_bf16(to)) {
      // From float (or a 16-bit float, computed as float) one rounding; from anything wider, via double.
      DType from = u->src(0)->dtype();
      bool narrow = value_type(from) == "float";
      std::string bits = narrow ? to_storage(to, x) : std::string(is_half(to) ? "lathe_f64_to_f16" : "lathe_f64_to_bf16") + "((double)(" + x + "))";
      return from_storage(to, bits);
    }
    if (to.is_bool()) return "((" + x + ") != 0)";
    return "((" + value_type(to) + ")(" + x + "))";
  }

  std::string bitcast_expr(const UOpPtr& u) {
    DType from = u->src(0)->dtype(), to = u->dtype();
    std::string x = expr(u->src(0));
    std::string from_t = storage_type(from), to_t = storage_type(to);
    std::string out = "({ union { " + from_t + " a; " + to_t + " b; } u_; u_.a = " + to_storage(from, x) + "; u_.b; })";
    return from_storage(to, out);
  }

  void emit_node(std::ostringstream& body, int depth, const UOpPtr& u) {
    if (u->op() == Ops::STORE) {
      const UOpPtr& idx = u->src(0);
      std::string v = expr(u->src(1));
      v = to_storage(idx->src(0)->dtype().base(), v);
      std::string target = expr(idx->src(0)) + "[" + expr(idx->src(1)) + "]";
      if (idx->src().size() == 3) body << indent(depth) << "if (" << expr(idx->src(2)) << ") ";
      else body << indent(depth);
      body << target << " = " << v << ";\n";
      return;
    }
    std::string e;
    switch (u->op()) {
      case Ops::LOAD: e = load_expr(u); break;
      case Ops::CAST: e = cast_expr(u); break;
      case Ops::BITCAST: e = bitcast_expr(u); break;
      case Ops::REDUCE: {  // its accumulator already names it
        auto arr = acc_arrays_.find(u.get());
        if (arr == acc_arrays_.end()) return;
        // What follows reads a copy of an upcast accumulator array: the array's only uses stay
        // plain loops, so clang keeps it in vector registers (a load beside it in the epilogue
        // would leave it in memory, 3x slower).
        auto [size, flat] = upcast_index(u);
        std::string res = "res" + std::to_string(next_id_++);
        body << indent(depth) << value_type(u->dtype()) << " " << res << "[" << size << "];\n";
        body << indent(depth) << "for (int i = 0; i < " << size << "; i++) " << res << "[i] = " << arr->second << "[i];\n";
        names_[u.get()] = res + "[" + flat + "]";
        return;
      }
      default:
        if (!is_alu(u->op())) throw InternalError("the C renderer cannot emit " + to_string(*u));
        e = alu_expr(u);
    }
    std::string name = (u->op() == Ops::LOAD ? "val" : "alu") + std::to_string(next_id_++);
    names_[u.get()] = name;
    body << indent(depth) << value_type(u->dtype()) << " " << name << " = " << e << ";\n";
  }

  UOpPtr ast_;
  std::string name_;
  CRenderOptions opt_;
  UOpPtr threaded_range_;  // the outermost output loop, split across threads
  std::unordered_map<const UOp*, std::string> names_;
  std::unordered_map<const UOp*, std::string> acc_arrays_;  // upcast REDUCE -> its accumulator array
  std::vector<size_t> globals_, outs_, ins_;
  std::vector<std::string> var_names_;
  std::vector<UOpPtr> vars_;
  std::string buf_decls_, var_decls_;
  int next_id_ = 0;
};

}  // namespace

ProgramSpec render_c(const UOpPtr& ast, const std::string& name, const CRenderOptions& options) {
  return CRenderer(ast, name, options).run();
}

int choose_threads(const UOpPtr& ast, int max_threads) {
  if (max_threads <= 1) return 1;
  std::set<const UOp*> reduce_ranges;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() == Ops::REDUCE)
      for (size_t i = 1; i < u->src().size(); ++i) reduce_ranges.insert(u->src(i).get());
  }
  int64_t outer = 0, outer_axis = std::numeric_limits<int64_t>::max();
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::RANGE || reduce_ranges.count(u.get()) || is_upcast_range(*u)) continue;
    int64_t axis = u->arg_as<std::vector<int64_t>>().at(0);
    if (axis < outer_axis) outer_axis = axis, outer = std::max<int64_t>(1, u->src(0)->vmax());
  }
  if (outer < 2) return 1;
  // Waking the pool costs microseconds: worth it from about 2^18 operations (a load counts as one).
  Estimates e = count_work(linearize(ast));
  int64_t work = e.ops->vmax() + e.index_ops->vmax() + e.lds->vmax() / 4;
  if (work < (int64_t{1} << 18)) return 1;
  return static_cast<int>(std::min<int64_t>(max_threads, outer));
}

}  // namespace lathe
