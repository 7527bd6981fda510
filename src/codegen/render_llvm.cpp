#include "codegen/render_llvm.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "codegen/half_arithmetic.hpp"
#include "codegen/linearize.hpp"
#include "codegen/prefetch.hpp"
#include "ir/alu.hpp"
#include "ir/half.hpp"
#include "ir/step.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

// Float arithmetic flags: the C backend's -fno-signed-zeros -ffp-contract=fast everywhere, and its
// -fassociative-math only where an accumulator is updated (so LLVM may vectorize and interleave a
// reduction loop). Elsewhere the kernel's sums are already the trees lathe chose: with `reassoc` on
// them, LLVM 19's Reassociate flattens an unrolled reduction's tree into one chain through the
// accumulator (a 4x longer dependency per iteration in softmax's sum).
constexpr const char* kFast = "nsz contract";
constexpr const char* kAccumulate = "reassoc nsz contract";

// A load of an accumulator (a DEFINE_REG).
bool loads_accumulator(const UOpPtr& u) {
  return u->op() == Ops::LOAD && u->src(0)->op() == Ops::INDEX && u->src(0)->src(0)->op() == Ops::DEFINE_REG;
}

bool is_half(DType d) { return d.scalar() == dtypes::float16; }

// The IR type of one lane of a value: bools are i1, 16-bit floats their bits.
std::string lane_type(DType d) {
  DType s = d.scalar();
  if (s.is_bool()) return "i1";
  if (s == dtypes::float32) return "float";
  if (s == dtypes::float64) return "double";
  if (is_16bit_float(s)) return "i16";
  return "i" + std::to_string(s.itemsize() * 8);
}

std::string vec_of(const std::string& lane, int count) { return count > 1 ? "<" + std::to_string(count) + " x " + lane + ">" : lane; }

// The IR type of a value of `d` (a scalar or a vector).
std::string ir_type(DType d) { return vec_of(lane_type(d), d.count()); }

// The IR type of `d` in memory: bools are bytes.
std::string mem_type(DType d) { return d.scalar().is_bool() ? vec_of("i8", d.count()) : ir_type(d); }

// The suffix an overloaded intrinsic takes for `d`: f32, v16f32, ...
std::string intrinsic_suffix(DType d) {
  std::string lane = d.scalar() == dtypes::float64 ? "f64" : d.scalar() == dtypes::float32 ? "f32" : lane_type(d);
  return d.count() > 1 ? "v" + std::to_string(d.count()) + lane : lane;
}

std::string hex_double(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIX64, bits);
  return buf;
}

// One lane's constant: floats as the hex of their double value (exact), integers signed.
std::string scalar_literal(DType d, ConstValue v) {
  DType s = d.scalar();
  if (is_16bit_float(s)) {
    float x = static_cast<float>(const_as_double(v));
    uint16_t bits = is_half(s) ? detail::float_to_half(x) : detail::float_to_bf16(x);
    return std::to_string(static_cast<int16_t>(bits));
  }
  if (s == dtypes::float32) return hex_double(static_cast<double>(static_cast<float>(const_as_double(v))));
  if (s == dtypes::float64) return hex_double(const_as_double(v));
  if (s.is_bool()) return std::get<bool>(v) ? "true" : "false";
  int bits = static_cast<int>(s.itemsize() * 8);
  uint64_t u = std::holds_alternative<uint64_t>(v) ? std::get<uint64_t>(v) : static_cast<uint64_t>(std::get<int64_t>(v));
  if (bits < 64) {  // the value as the lane holds it, read back signed
    u &= (uint64_t{1} << bits) - 1;
    if (u >> (bits - 1)) u |= ~uint64_t{0} << bits;
  }
  return std::to_string(static_cast<int64_t>(u));
}

// A constant of type `d`: a vector constant repeats the lane.
std::string literal(DType d, const std::string& lane) {
  if (d.count() == 1) return lane;
  std::string out = "<", t = lane_type(d);
  for (int i = 0; i < d.count(); ++i) out += (i ? ", " : "") + t + " " + lane;
  return out + ">";
}

class IrSpeller {
 public:
  IrSpeller(const std::string& name, const KernelSignature& sig) : name_(name), sig_(sig) {}

  std::string run(const std::vector<UOpPtr>& program) {
    for (const KernelSignature::Buffer& b : sig_.buffers) slot_types_[b.slot] = b.dtype;
    for (const UOpPtr& u : program)
      if (u->op() == Ops::CAST && is_16bit_float(u->dtype())) rounded_.insert(u->src(0).get());
    find_unread_lanes(program);
    for (size_t i = 0; i < program.size(); ++i) position_[program[i].get()] = i;
    prefetch_ = Prefetcher(program);
    for (const UOpPtr& u : program) {
      DType d = u->dtype().base();
      if (d.count() > 1) vector_bits_ = std::max<int64_t>(vector_bits_, d.scalar().itemsize() * 8 * d.count());
      spell(u);
    }
    // Like clang for code written with wide vector types: the backend keeps them whole even on
    // CPUs whose tuning prefers narrower vectors.
    std::string attrs = "nounwind \"min-legal-vector-width\"=\"" + std::to_string(vector_bits_) + "\"";
    std::ostringstream m;
    m << "; kernel " << name_ << "\n";
    for (const std::string& g : globals_) m << g << "\n";
    if (zero_bytes_ > 0) m << "@zeros = private unnamed_addr constant [" << zero_bytes_ << " x i8] zeroinitializer, align 64\n";
    for (const std::string& d : declares_) m << d << "\n";
    // The body: buffers as noalias pointers, values as i64 arguments. It stays a function of its
    // own (a call per launch): inlining it into the entry point was a pass that copies the
    // whole body, and noalias on its arguments says what scoped metadata would say per access.
    std::string params;
    for (const KernelSignature::Buffer& b : sig_.buffers) {
      if (!params.empty()) params += ", ";
      params += "ptr noalias align " + std::to_string(b.dtype.scalar().itemsize()) + (b.written ? "" : " readonly") + " %data" +
                std::to_string(b.slot);
    }
    for (size_t i = 0; i < sig_.vars.size(); ++i) params += std::string(params.empty() ? "" : ", ") + "i64 %val" + std::to_string(i);
    m << "define internal void @body(" << params << ") noinline " << attrs << " {\nentry:\n" << entry_.str() << "  br label %start\nstart:\n"
      << body_.str() << "  ret void\n}\n\n";
    // The entry point every CPU kernel has: void name(void** bufs, const long long* vals).
    m << "define void @" << name_ << "(ptr %bufs, ptr %vals) " << attrs << " {\nentry:\n";
    std::string args;
    for (const KernelSignature::Buffer& b : sig_.buffers) {
      std::string s = std::to_string(b.slot);
      m << "  %bp" << s << " = getelementptr ptr, ptr %bufs, i64 " << s << "\n  %b" << s << " = load ptr, ptr %bp" << s << "\n";
      args += std::string(args.empty() ? "" : ", ") + "ptr %b" + s;
    }
    for (size_t i = 0; i < sig_.vars.size(); ++i) {
      std::string s = std::to_string(i);
      m << "  %vp" << s << " = getelementptr i64, ptr %vals, i64 " << s << "\n  %v" << s << " = load i64, ptr %vp" << s << "\n";
      args += std::string(args.empty() ? "" : ", ") + "i64 %v" + s;
    }
    m << "  call void @body(" << args << ")\n  ret void\n}\n";
    return m.str();
  }

 private:
  std::string fresh(const char* prefix = "t") { return std::string("%") + prefix + std::to_string(next_id_++); }
  std::string label() { return "L" + std::to_string(next_id_++); }
  void line(const std::string& s) { body_ << "  " << s << "\n"; }
  void start_block(const std::string& l) {
    body_ << l << ":\n";
    block_ = l;
    steps_.clear();
  }

  // Emits `value` as a new instruction and names it for u.
  std::string define(const UOpPtr& u, const std::string& value) {
    std::string r = fresh();
    line(r + " = " + value);
    names_[u.get()] = r;
    return r;
  }

  std::string var(const std::string& name, DType d) {
    for (size_t i = 0; i < sig_.vars.size(); ++i)
      if (sig_.vars[i] == name) {
        std::string v = "%val" + std::to_string(i);
        if (ir_type(d) == "i64") return v;
        std::string r = fresh();  // in the entry block: it dominates every use
        entry_ << "  " << r << " = trunc i64 " << v << " to " << ir_type(d) << "\n";
        return r;
      }
    throw InternalError("the LLVM IR renderer met variable '" + name + "', which the kernel's signature does not list");
  }

  // A value already computed, or spelled where it is used.
  std::string expr(const UOpPtr& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    switch (u->op()) {
      case Ops::CONST: return literal(u->dtype(), scalar_literal(u->dtype(), u->const_value()));
      case Ops::DEFINE_VAR: return names_[u.get()] = var(u->arg_as<VarArg>().name, u->dtype());
      case Ops::SPECIAL: return names_[u.get()] = var(u->arg_as<std::string>(), u->dtype());
      case Ops::BIND: return expr(u->src(0));
      default: break;
    }
    throw InternalError("the LLVM IR renderer met " + to_string(*u) + " before it was computed");
  }

  std::string typed(const UOpPtr& u) { return ir_type(u->dtype()) + " " + expr(u); }

  // A call of the hook where a GPU kernel's threads meet, on the CPU (device/cuda/block_threads's
  // SyncHook); its i64 result.
  std::string sync_call(const UOpPtr& sync, int kind, const std::string& a, const std::string& b, const std::string& cd) {
    std::string fn = fresh(), r = fresh();
    line(fn + " = inttoptr i64 " + expr(sync) + " to ptr");
    line(r + " = call i64 " + fn + "(i64 " + std::to_string(kind) + ", ptr " + a + ", ptr " + b + ", ptr " + cd + ")");
    return r;
  }

  // The address of the element an INDEX names, and the type it is stored as.
  // `outside`: the address may point outside its buffer where it is not read (a masked load's
  // first lane), so no step is `inbounds` (which would make the pointer poison).
  std::string address(const UOpPtr& idx, bool outside = false) {
    return address(idx, index_terms(idx->src(1)), "", outside);
  }

  // The address `terms` of idx's offset step to from `from` (idx's buffer when empty).
  std::string address(const UOpPtr& idx, const std::vector<UOpPtr>& terms, const std::string& from, bool outside) {
    const UOpPtr& base = idx->src(0);
    if (base->op() == Ops::DEFINE_REG && base->dtype().ptr_size() == 1) return regs_.at(base.get());
    std::string ptr, elem;
    if (base->op() == Ops::DEFINE_REG) {  // a register array (codegen/attention's state per tile)
      ptr = regs_.at(base.get());
      elem = ir_type(base->dtype().base());
    } else if (base->op() == Ops::DEFINE_GLOBAL) {
      int64_t slot = base->arg_as<int64_t>();
      ptr = "%data" + std::to_string(slot);
      elem = mem_type(slot_types_.at(static_cast<size_t>(slot)));
    } else if (base->op() == Ops::DEFINE_LOCAL) {
      ptr = "@local" + std::to_string(base->arg_as<int64_t>());
      elem = mem_type(base->dtype().base());
    } else {
      throw InternalError("the LLVM IR renderer cannot address " + to_string(*base));
    }
    // A sum of index terms is stepped one term at a time: LLVM's InstCombine rewrites an add of
    // values with disjoint bits (row*4096 + col, col < 4096) as an `or` and later drops the flag
    // that says so, and the loop vectorizer then no longer sees consecutive addresses. Pointer
    // steps are never rewritten that way. One term indexes as C indexes arrays (inbounds); the
    // steps of a sum are not inbounds, as a partial sum may point outside the buffer.
    // A step already taken in this block is taken once: the lanes of a register tile share every
    // term but the last, and LLVM's passes then start from one address chain, not one per lane.
    if (!from.empty()) ptr = from;
    for (const UOpPtr& t : terms) {
      std::string step = "getelementptr " + std::string(terms.size() == 1 && !outside ? "inbounds " : "") + elem + ", ptr " + ptr + ", " + typed(t);
      auto [it, added] = steps_.try_emplace(step);
      if (added) {
        it->second = fresh("p");
        line(it->second + " = " + step);
      }
      ptr = it->second;
    }
    return ptr;
  }

  std::string align_of(const UOpPtr& idx, DType value) {
    const UOpPtr& base = idx->src(0);
    if (base->op() == Ops::DEFINE_LOCAL) return std::to_string(base->dtype().base().scalar().itemsize());
    return std::to_string(value.scalar().itemsize());
  }

  // Loads a value of type d from p (bools are bytes in memory).
  std::string load_from(const std::string& p, DType d, const std::string& align, bool reg) {
    if (reg || !d.scalar().is_bool()) {
      std::string r = fresh();
      line(r + " = load " + ir_type(d) + ", ptr " + p + (reg ? "" : ", align " + align));
      return r;
    }
    std::string raw = fresh(), r = fresh();
    line(raw + " = load " + mem_type(d) + ", ptr " + p + ", align 1");
    line(r + " = icmp ne " + mem_type(d) + " " + raw + ", zeroinitializer");
    return r;
  }

  void spell(const UOpPtr& u) {
    switch (u->op()) {
      case Ops::RANGE: return open_loop(u);
      case Ops::END: {  // closes its loops innermost first, whatever order it lists them in
        std::vector<const UOp*> ranges;
        for (const UOpPtr& s : u->src())
          if (s->op() == Ops::RANGE) ranges.push_back(s.get());
        std::sort(ranges.begin(), ranges.end(), [&](const UOp* a, const UOp* b) { return loops_.at(a).depth > loops_.at(b).depth; });
        for (const UOp* r : ranges) close_loop(r);
        return;
      }
      case Ops::DEFINE_REG: {  // every element starts at the initial value where it is placed
        std::string reg = "%acc" + std::to_string(u->arg_as<int64_t>()), type = ir_type(u->dtype().base());
        int64_t n = u->dtype().ptr_size();
        regs_[u.get()] = reg;
        entry_ << "  " << reg << " = alloca " << (n == 1 ? type : "[" + std::to_string(n) + " x " + type + "]") << "\n";
        for (int64_t i = 0; i < n; ++i) {
          std::string p = reg;
          if (i > 0) line((p = fresh("p")) + " = getelementptr inbounds " + type + ", ptr " + reg + ", i64 " + std::to_string(i));
          line("store " + typed(u->src(0)) + ", ptr " + p);
        }
        return;
      }
      case Ops::DEFINE_LOCAL:  // lives with the loaded kernel, shared by the cores of a launch
        globals_.push_back("@local" + std::to_string(u->arg_as<int64_t>()) + " = internal global [" + std::to_string(u->dtype().ptr_size()) +
                           " x " + mem_type(u->dtype().base()) + "] zeroinitializer, align 64");
        // A GPU kernel on the CPU: the other threads of its block read and write the scratch
        // while this one waits in the sync hook, so its address escapes (no value of it is kept
        // across the hook).
        if (sig_.threads_meet()) line("call void asm sideeffect \"\", \"r,~{memory}\"(ptr @local" + std::to_string(u->arg_as<int64_t>()) + ")");
        return;
      case Ops::BARRIER: {  // the cores' arrivals, counted across launches: the last of each gets true
        if (u->src().size() == 2) {  // a GPU block's barrier on the CPU: the emulator's hook (the thread's index)
          names_[u.get()] = sync_call(u->src(1), 0, "null", "null", "null");
          return;
        }
        std::string count = "@arrivals" + std::to_string(next_id_++);
        globals_.push_back(count + " = internal global i64 0, align 8");
        std::string old = fresh(), now = fresh(), rem = fresh();
        line(old + " = atomicrmw add ptr " + count + ", i64 1 acq_rel");
        line(now + " = add i64 " + old + ", 1");
        line(rem + " = urem i64 " + now + ", " + std::to_string(u->arg_as<int64_t>()));
        define(u, "icmp eq i64 " + rem + ", 0");
        return;
      }
      case Ops::LOAD: return spell_load(u);
      case Ops::STORE: return spell_store(u);
      case Ops::CAST: names_[u.get()] = cast(expr(u->src(0)), u->src(0)->dtype(), u->dtype()); return;
      case Ops::BITCAST:
        define(u, "bitcast " + typed(u->src(0)) + " to " + ir_type(u->dtype()));
        return;
      case Ops::VECTORIZE: names_[u.get()] = vectorize(u); return;
      case Ops::WMMA: {  // a warp's multiply-add on the CPU (the emulator): the sync hook, given the fragments' addresses
        std::string at[3];
        for (int i = 0; i < 3; ++i) {
          at[i] = fresh("frag");
          entry_ << "  " << at[i] << " = alloca " << ir_type(u->src(i)->dtype()) << ", align 32\n";
          line("store " + typed(u->src(i)) + ", ptr " + at[i]);
        }
        sync_call(u->src(3), static_cast<int>(u->arg_as<int64_t>()), at[0], at[1], at[2]);
        define(u, "load " + ir_type(u->dtype()) + ", ptr " + at[2]);
        return;
      }
      case Ops::GEP:
        if (unread_.count(u.get())) return;
        define(u, "extractelement " + typed(u->src(0)) + ", i64 " + std::to_string(u->arg_as<int64_t>())); return;
      default: break;
    }
    if (!is_alu(u->op())) throw InternalError("the LLVM IR renderer cannot spell " + to_string(*u));
    names_[u.get()] = alu(u);
  }

  // for (i = 0; i < end; i++): a header with the counter's phi, the body, a latch at END.
  void open_loop(const UOpPtr& r) {
    std::string end = expr(r->src(0)), pre = block_, head = label(), body = label(), latch = label(), exit = label();
    std::string i = "%ridx" + std::to_string(next_id_++);
    loops_[r.get()] = {i, head, latch, exit, static_cast<int>(open_.size())};
    names_[r.get()] = i;
    open_.push_back(r);
    line("br label %" + head);
    start_block(head);
    line(i + " = phi i64 [ 0, %" + pre + " ], [ " + i + ".next, %" + latch + " ]");
    std::string c = fresh();
    line(c + " = icmp slt i64 " + i + ", " + end);
    line("br i1 " + c + ", label %" + body + ", label %" + exit);
    start_block(body);
  }

  void close_loop(const UOp* r) {
    const Loop& l = loops_.at(r);
    auto open = std::find_if(open_.begin(), open_.end(), [&](const UOpPtr& o) { return o.get() == r; });
    if (open == open_.end()) throw InternalError("the LLVM IR renderer closed a loop that is not open: " + to_string(*r));
    open_.erase(open);
    line("br label %" + l.latch);
    start_block(l.latch);
    line(l.counter + ".next = add i64 " + l.counter + ", 1");
    line("br label %" + l.head);
    start_block(l.exit);
  }

  // Runs `emit` only when `gate` holds: returns the block the guarded code ended in.
  template <class F>
  std::string guarded(const std::string& gate, F emit) {
    std::string then = label(), join = label();
    line("br i1 " + gate + ", label %" + then + ", label %" + join);
    start_block(then);
    emit();
    std::string last = block_;
    line("br label %" + join);
    start_block(join);
    return last;
  }

  void spell_load(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    DType d = u->dtype();
    bool reg = idx->src(0)->op() == Ops::DEFINE_REG;
    if (idx->src().size() < 3) {
      names_[u.get()] = load_from(address(idx), d, align_of(idx, d), reg);
      prefetch_ahead(u);
      return;
    }
    std::string gate = expr(idx->src(2));
    if (reg) {  // a register is read only where its gate holds; zero elsewhere
      std::string before = block_, value;
      std::string then = guarded(gate, [&] { value = load_from(address(idx), d, "", reg); });
      define(u, "phi " + ir_type(d) + " [ " + value + ", %" + then + " ], [ " + zero(d) + ", %" + before + " ]");
      return;
    }
    // A gate per lane: a masked load, which reads only the lanes whose gate holds.
    if (idx->src(2)->dtype().count() > 1) {
      std::string t = ir_type(d), fn = "@llvm.masked.load." + intrinsic_suffix(d) + ".p0";
      declares_.insert("declare " + t + " " + fn + "(ptr, i32, " + ir_type(idx->src(2)->dtype()) + ", " + t + ")");
      define(u, "call " + t + " " + fn + "(ptr " + address(idx, true) + ", i32 " + align_of(idx, d) + ", " + ir_type(idx->src(2)->dtype()) + " " + gate + ", " + t + " zeroinitializer)");
      return;
    }
    // A gated load whose gate is false reads the kernel's zeros instead of its address (which may be
    // out of bounds): a select of two addresses, no branch, so a gate that does not change inside a
    // loop (a convolution's padding, over its input channels) costs the loop one select per load.
    // The terms of its address that loops opened after the gate step (a convolution's channels
    // in a block, inside the taps whose padding the gate tests) are added after the select, from
    // the zeros too, so the select itself does not change in those loops and leaves them.
    std::vector<UOpPtr> terms = index_terms(idx->src(1)), outer, inner;
    int64_t reach = 0;  // the elements the inner terms step over
    auto at = position_.find(idx->src(2).get());
    int64_t gated_at = at == position_.end() ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(at->second);
    for (const UOpPtr& t : terms) {
      bool after = last_range(t) > gated_at;
      (after ? inner : outer).push_back(t);
      if (after) reach = t->vmin() < 0 || t->vmax() > kMaxZeroBytes ? kMaxZeroBytes : std::min(kMaxZeroBytes, reach + t->vmax());
    }
    int64_t bytes = (reach + 1) * mem_bytes(idx) + d.itemsize();
    if (inner.empty() || bytes > kMaxZeroBytes) inner.clear(), bytes = d.itemsize();  // the whole address, as before
    zero_bytes_ = std::max(zero_bytes_, bytes);
    std::string p = fresh();
    line(p + " = select i1 " + gate + ", ptr " + (inner.empty() ? address(idx) : address(idx, outer, "", true)) + ", ptr @zeros");
    if (!inner.empty()) p = address(idx, inner, p, true);
    names_[u.get()] = load_from(p, d, align_of(idx, d), false);
  }

  // A streamed operand's load asks for what it reads kPrefetchBytes later (codegen/prefetch.hpp);
  // its steps are not `inbounds`, as the address may be past the buffer's end.
  void prefetch_ahead(const UOpPtr& load) {
    const UOpPtr& idx = load->src(0);
    std::optional<int64_t> ahead = prefetch_.distance(*load, open_.empty() ? nullptr : open_.back());
    if (!ahead) return;
    std::vector<UOpPtr> terms = index_terms(idx->src(1));
    terms.push_back(UOp::index_const(*ahead));
    std::string p = address(idx, terms, "", true);
    declares_.insert("declare void @llvm.prefetch.p0(ptr, i32, i32, i32)");
    line("call void @llvm.prefetch.p0(ptr " + p + ", i32 0, i32 3, i32 1)");  // a read, kept in every cache level, of data
  }

  // The position in the program of the last loop `u` depends on (-1: none).
  int64_t last_range(const UOpPtr& u) {
    if (auto it = last_range_.find(u.get()); it != last_range_.end()) return it->second;
    int64_t last = u->op() == Ops::RANGE ? static_cast<int64_t>(position_.at(u.get())) : -1;
    for (const UOpPtr& s : u->src()) last = std::max(last, last_range(s));
    last_range_.emplace(u.get(), last);
    return last;
  }

  // The bytes of one element of idx's buffer in memory.
  int64_t mem_bytes(const UOpPtr& idx) const {
    const UOpPtr& base = idx->src(0);
    if (base->op() == Ops::DEFINE_GLOBAL) return slot_types_.at(static_cast<size_t>(base->arg_as<int64_t>())).itemsize();
    return base->dtype().base().itemsize();
  }

  void spell_store(const UOpPtr& u) {
    const UOpPtr& idx = u->src(0);
    const UOpPtr& v = u->src(1);
    bool reg = idx->src(0)->op() == Ops::DEFINE_REG;
    auto store = [&] {
      std::string p = address(idx), value = expr(v);
      DType d = v->dtype();
      if (!reg && d.scalar().is_bool()) {
        std::string wide = fresh();
        line(wide + " = zext " + ir_type(d) + " " + value + " to " + mem_type(d));
        line("store " + mem_type(d) + " " + wide + ", ptr " + p + ", align 1");
      } else {
        line("store " + ir_type(d) + " " + value + ", ptr " + p + (reg ? "" : ", align " + align_of(idx, d)));
      }
    };
    if (idx->src().size() == 3) guarded(expr(idx->src(2)), store);
    else store();
  }

  // The (one or two) vectors a VECTORIZE picks all its lanes from, when they are of one type:
  // a tile transpose's step, spelled as one shufflevector.
  static std::vector<const UOp*> shuffled(const UOp& u) {
    std::vector<const UOp*> from;
    if (u.op() != Ops::VECTORIZE || u.dtype().is_bool()) return {};
    for (const UOpPtr& s : u.src()) {
      if (s->op() != Ops::GEP) return {};
      const UOp* v = s->src(0).get();
      if (std::find(from.begin(), from.end(), v) != from.end()) continue;
      if (from.size() == 2 || (!from.empty() && v->dtype() != from[0]->dtype())) return {};
      from.push_back(v);
    }
    return from;
  }

  std::string shuffle(const UOpPtr& u, const std::vector<const UOp*>& from) {
    int width = from[0]->dtype().count();
    std::string mask, t = ir_type(from[0]->dtype());
    for (const UOpPtr& s : u->src())
      mask += std::string(mask.empty() ? "" : ", ") + "i32 " + std::to_string(s->arg_as<int64_t>() + (s->src(0).get() == from[0] ? 0 : width));
    std::string second = "poison";
    for (const UOpPtr& s : u->src())
      if (s->src(0).get() != from[0]) second = expr(s->src(0));
    std::string r = fresh();
    line(r + " = shufflevector " + t + " " + expr(u->src(0)->src(0)) + ", " + t + " " + second + ", <" +
         std::to_string(u->src().size()) + " x i32> <" + mask + ">");
    return r;
  }

  // GEPs only shuffles read: never spelled (a transpose would otherwise leave an extractelement
  // per lane for LLVM to delete).
  void find_unread_lanes(const std::vector<UOpPtr>& program) {
    std::unordered_set<const UOp*> read;
    std::function<void(const UOp&)> reads = [&](const UOp& u) {
      if (!shuffled(u).empty()) return;
      for (const UOpPtr& s : u.src()) {
        if (s->op() == Ops::GEP) read.insert(s.get());
        else if (is_inline(s->op())) reads(*s);
      }
    };
    for (const UOpPtr& u : program) reads(*u);
    for (const UOpPtr& u : program)
      if (u->op() == Ops::GEP && !read.count(u.get())) unread_.insert(u.get());
  }

  std::string vectorize(const UOpPtr& u) {
    DType d = u->dtype();
    std::string t = ir_type(d), lt = lane_type(d);
    // First: lanes of other vectors (a splat of one lane among them) are a shuffle of those
    // vectors, whose GEPs find_unread_lanes left unspelled.
    if (std::vector<const UOp*> from = shuffled(*u); !from.empty()) return shuffle(u, from);
    if (UOpPtr value = splat_of(u)) {
      std::string one = fresh(), splat = fresh();
      line(one + " = insertelement " + t + " poison, " + lt + " " + expr(value) + ", i64 0");
      line(splat + " = shufflevector " + t + " " + one + ", " + t + " poison, " + vec_of("i32", d.count()) + " zeroinitializer");
      return splat;
    }
    std::string acc = "poison";
    for (size_t i = 0; i < u->src().size(); ++i) {
      std::string r = fresh();
      line(r + " = insertelement " + t + " " + acc + ", " + lt + " " + expr(u->src(i)) + ", i64 " + std::to_string(i));
      acc = r;
    }
    return acc;
  }

  std::string intrinsic(const std::string& name, DType d, const std::vector<std::string>& args, bool fast) {
    std::string t = ir_type(d), fn = "@llvm." + name + "." + intrinsic_suffix(d), params, call;
    for (size_t i = 0; i < args.size(); ++i) {
      params += std::string(i ? ", " : "") + t;
      call += std::string(i ? ", " : "") + t + " " + args[i];
    }
    declares_.insert("declare " + t + " " + fn + "(" + params + ")");
    std::string r = fresh();
    line(r + " = call " + std::string(fast ? kFast : "") + (fast ? " " : "") + t + " " + fn + "(" + call + ")");
    return r;
  }

  std::string op(const std::string& instr, DType d, const std::string& a, const std::string& b) {
    std::string r = fresh();
    line(r + " = " + instr + " " + ir_type(d) + " " + a + ", " + b);
    return r;
  }

  std::string alu(const UOpPtr& u) {
    std::vector<std::string> a;
    for (const UOpPtr& s : u->src()) a.push_back(expr(s));
    DType d = u->dtype(), in = u->src(0)->dtype();
    bool f = in.is_float(), sgn = !in.is_unsigned() && !in.is_bool();
    bool accumulates = std::any_of(u->src().begin(), u->src().end(), loads_accumulator);
    // A result rounded to a 16-bit float is rounded there: LLVM narrows `half(float(a) * float(b))`
    // to a half multiply, which `contract` would let it fuse with the next add on CPUs with
    // half-precision FMA (AVX512-FP16), one rounding fewer than the graph says.
    std::string fast = std::string(" ") + (rounded_.count(u.get()) ? "nsz" : accumulates ? kAccumulate : kFast);
    if (in.is_bool() && u->op() != Ops::WHERE) {  // logic: C computes bools as 0/1 integers
      switch (u->op()) {
        case Ops::ADD:
        case Ops::MAX:
        case Ops::OR: return op("or", d, a[0], a[1]);
        case Ops::MUL:
        case Ops::AND: return op("and", d, a[0], a[1]);
        case Ops::XOR:
        case Ops::CMPNE: return op("xor", d, a[0], a[1]);
        case Ops::CMPEQ: return op("icmp eq", in, a[0], a[1]);
        case Ops::CMPLT: {
          std::string n = op("xor", d, a[0], literal(d, "true"));
          return op("and", d, n, a[1]);
        }
        default: throw InternalError("the LLVM IR renderer has no spelling for " + to_string(*u));
      }
    }
    switch (u->op()) {
      case Ops::ADD: return op(f ? "fadd" + fast : "add", d, a[0], a[1]);
      case Ops::SUB: return op(f ? "fsub" + fast : "sub", d, a[0], a[1]);
      case Ops::MUL: return op(f ? "fmul" + fast : "mul", d, a[0], a[1]);
      case Ops::FDIV: return op("fdiv" + fast, d, a[0], a[1]);
      case Ops::IDIV: return narrow_int(sgn ? "sdiv" : "udiv", d, a[0], a[1]);
      case Ops::MOD: return narrow_int(sgn ? "srem" : "urem", d, a[0], a[1]);
      case Ops::SHL: return narrow_int("shl", d, a[0], a[1]);
      case Ops::SHR: return narrow_int(sgn ? "ashr" : "lshr", d, a[0], a[1]);
      case Ops::AND: return op("and", d, a[0], a[1]);
      case Ops::OR: return op("or", d, a[0], a[1]);
      case Ops::XOR: return op("xor", d, a[0], a[1]);
      case Ops::CMPLT: return op(f ? "fcmp olt" : sgn ? "icmp slt" : "icmp ult", in, a[0], a[1]);
      case Ops::CMPNE: return op(f ? "fcmp une" : "icmp ne", in, a[0], a[1]);
      case Ops::CMPEQ: return op(f ? "fcmp oeq" : "icmp eq", in, a[0], a[1]);
      case Ops::MAX: {  // a > b ? a : b, as C spells it
        std::string gt = op(f ? "fcmp ogt" : sgn ? "icmp sgt" : "icmp ugt", d, a[0], a[1]);
        return select(gt, a[0], a[1], d);
      }
      case Ops::WHERE: return select(a[0], a[1], a[2], d);
      case Ops::MULACC: {
        std::string p = op(f ? std::string("fmul ") + kFast : "mul", d, a[0], a[1]);
        return op(f ? "fadd" + fast : "add", d, p, a[2]);
      }
      case Ops::NEG: {
        if (!f) return op("sub", d, d.count() > 1 ? "zeroinitializer" : "0", a[0]);
        std::string r = fresh();
        line(r + " = fneg" + fast + " " + ir_type(d) + " " + a[0]);
        return r;
      }
      case Ops::RECIPROCAL: return op("fdiv" + fast, d, literal(d, hex_double(1.0)), a[0]);
      case Ops::SQRT: return intrinsic("sqrt", d, {a[0]}, true);
      case Ops::TRUNC: return f ? intrinsic("trunc", d, {a[0]}, true) : a[0];  // integers are already whole
      case Ops::POW: return intrinsic("pow", d, {a[0], a[1]}, true);
      case Ops::EXP2: return intrinsic("exp2", d, {a[0]}, true);
      case Ops::LOG2: return intrinsic("log2", d, {a[0]}, true);
      case Ops::SIN: return intrinsic("sin", d, {a[0]}, true);
      default: break;
    }
    throw InternalError("the LLVM IR renderer has no spelling for " + to_string(*u));
  }

  std::string select(const std::string& mask, const std::string& a, const std::string& b, DType d) {
    std::string r = fresh();
    line(r + " = select " + vec_of("i1", d.count()) + " " + mask + ", " + ir_type(d) + " " + a + ", " + ir_type(d) + " " + b);
    return r;
  }

  // Division, remainder and shifts of integers narrower than int: C computes them in int.
  std::string narrow_int(const std::string& instr, DType d, const std::string& a, const std::string& b) {
    if (d.scalar().itemsize() >= 4) return op(instr, d, a, b);
    DType wide = dtypes::int32.vec(d.count());
    std::string ext = d.is_unsigned() ? "zext" : "sext";
    std::string wa = fresh(), wb = fresh(), r = fresh();
    line(wa + " = " + ext + " " + ir_type(d) + " " + a + " to " + ir_type(wide));
    line(wb + " = " + ext + " " + ir_type(d) + " " + b + " to " + ir_type(wide));
    std::string w = op(instr, wide, wa, wb);
    line(r + " = trunc " + ir_type(wide) + " " + w + " to " + ir_type(d));
    return r;
  }

  std::string convert(const std::string& instr, const std::string& x, DType from, DType to) {
    std::string r = fresh();
    line(r + " = " + instr + " " + ir_type(from) + " " + x + " to " + ir_type(to));
    return r;
  }

  // The 16-bit conversion left to spell (codegen/half_casts lowered the others): float16 <-> float32
  // through the IR's half type, exact, and a single instruction where the CPU has one.
  std::string half_cast(const std::string& x, DType from, DType to) {
    int n = to.count();
    std::string h = fresh(), r = fresh();
    if (is_half(from) && to.scalar() == dtypes::float32) {
      line(h + " = bitcast " + ir_type(from) + " " + x + " to " + vec_of("half", n));
      line(r + " = fpext " + vec_of("half", n) + " " + h + " to " + ir_type(to));
      return r;
    }
    if (from.scalar() == dtypes::float32 && is_half(to)) {
      line(h + " = fptrunc " + ir_type(from) + " " + x + " to " + vec_of("half", n));
      line(r + " = bitcast " + vec_of("half", n) + " " + h + " to " + ir_type(to));
      return r;
    }
    throw InternalError("the LLVM IR renderer spells only float16 <-> float32 of the 16-bit casts, not " + from.name() + " -> " + to.name() +
                        " (codegen/half_casts lowers the others)");
  }

  // C's conversions between any two dtypes (bools as 0/1).
  std::string cast(const std::string& x, DType from, DType to) {
    if (is_16bit_float(from) || is_16bit_float(to)) return from == to ? x : half_cast(x, from, to);
    if (from == to || ir_type(from) == ir_type(to)) return x;
    if (to.is_bool()) {
      return op(from.is_float() ? "fcmp une" : "icmp ne", from, x, zero(from));
    }
    if (from.is_bool()) return convert(to.is_float() ? "uitofp" : "zext", x, from, to);
    if (from.is_float() && to.is_float()) return convert(from.scalar().itemsize() < to.scalar().itemsize() ? "fpext" : "fptrunc", x, from, to);
    if (from.is_float()) return convert(to.is_unsigned() ? "fptoui" : "fptosi", x, from, to);
    if (to.is_float()) return convert(from.is_unsigned() ? "uitofp" : "sitofp", x, from, to);
    int64_t fb = from.scalar().itemsize(), tb = to.scalar().itemsize();
    if (fb == tb) return x;
    return convert(fb > tb ? "trunc" : from.is_unsigned() ? "zext" : "sext", x, from, to);
  }

  static std::string zero(DType d) {
    std::string t = ir_type(d);
    return d.count() > 1 ? "zeroinitializer" : t == "float" || t == "double" ? "0.0" : t == "i1" ? "false" : "0";
  }

  struct Loop {
    std::string counter, head, latch, exit;
    int depth;  // loops open around it
  };

  std::string name_;
  const KernelSignature& sig_;
  std::ostringstream body_, entry_;  // the body; what the entry block computes first (allocas, variables)
  std::string block_ = "start";
  std::unordered_map<std::string, std::string> steps_;  // the address steps taken in this block, by their spelling
  int next_id_ = 0;
  int64_t vector_bits_ = 0;
  std::map<size_t, DType> slot_types_;
  std::unordered_map<const UOp*, std::string> names_;
  std::unordered_map<const UOp*, std::string> regs_;  // DEFINE_REG -> its alloca
  std::unordered_map<const UOp*, Loop> loops_;
  std::vector<UOpPtr> open_;                      // the loops open where spelling is, innermost last
  Prefetcher prefetch_;                           // what the program's loads ask for ahead
  std::vector<std::string> globals_;
  std::set<std::string> declares_;
  int64_t zero_bytes_ = 0;  // the widest gated load: the zeros it reads where its gate is false
  // The most zeros a gated load's inner terms may step over (beyond: the select takes the whole address).
  static constexpr int64_t kMaxZeroBytes = 4096;
  std::unordered_map<const UOp*, size_t> position_;        // each node's place in the program
  std::unordered_map<const UOp*, int64_t> last_range_;     // last_range's answers
  std::unordered_set<const UOp*> rounded_;  // values cast to a 16-bit float
  std::unordered_set<const UOp*> unread_;   // lanes (GEPs) only shuffles read
};

}  // namespace

std::string LlvmRenderer::render(const std::string& name, const std::vector<UOpPtr>& program, const KernelSignature& sig) const {
  return IrSpeller(name, sig).run(program);
}

}  // namespace lathe
