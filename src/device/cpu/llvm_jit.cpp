#include "device/cpu/llvm_jit.hpp"

#include <llvm/AsmParser/Parser.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <mutex>

#include "device/cpu/cpu_program.hpp"
#include "device/cpu/cpu_target.hpp"
#include "device/disk_cache.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

// The process's JIT, made on first use and never destroyed: programs may outlive static destruction.
llvm::orc::LLJIT& jit() {
  static llvm::orc::LLJIT* j = [] {
    init_llvm();
    auto made = llvm::orc::LLJITBuilder().create();
    if (!made) throw CompileError("LLVM's JIT cannot start: " + message(made.takeError()));
    return made->release();
  }();
  return *j;
}

// A new target machine for a CPU.
std::unique_ptr<llvm::TargetMachine> target_machine(const std::string& cpu, const std::string& features) {
  init_llvm();
  std::string triple = llvm::sys::getProcessTriple(), err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) throw CompileError("LLVM has no target for " + triple + ": " + err);
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;  // fused where an instruction says `contract`
  options.MCOptions.AsmVerbose = true;  // assembly text (DEBUG=6) says where loops are and what spills; objects do not change
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(triple, cpu, features, options, llvm::Reloc::PIC_,
                                                                 llvm::CodeModel::Small, llvm::CodeGenOptLevel::Default));
  if (!tm) throw CompileError("LLVM cannot build for the CPU '" + cpu + "'");
  return tm;
}

// The calling thread's target machine for a CPU: made once per thread, since building one (and
// the subtarget its first compilation makes) costs a few milliseconds, and a target machine may
// compile one module at a time only.
llvm::TargetMachine* thread_target_machine(const std::string& cpu, const std::string& features) {
  thread_local std::unique_ptr<llvm::TargetMachine> tm;
  if (!tm || tm->getTargetCPU() != cpu || tm->getTargetFeatureString() != features) tm = target_machine(cpu, features);
  return tm.get();
}

// What lathe's IR needs from LLVM's optimiser: O2's function passes without its interprocedural
// ones (a kernel is one function, its entry point a call) and without the passes that found
// nothing in lathe's kernels (dead stores, jump threading, loop idioms, unswitching...). Kept:
// the accumulators promoted to registers, loops rotated and their invariant arithmetic hoisted,
// induction variables simplified, loads and index arithmetic combined, the loop and SLP
// vectorizers (a scalar gated copy, lanes stored one by one), and partial unrolling, which the
// register-tiled convolutions need (a 16-trip loop of 14 FMAs ran 2.6x slower without it on
// Zen 5). Half of O2's time; no kernel of the benchmarked models measured slower.
// (instcombine without its fixpoint check, which LLVM's textual pipelines turn on and which
// aborts the process when a kernel needs a second round.)
const char* const kPasses =
    "function(sroa,early-cse,simplifycfg,instcombine<no-verify-fixpoint>,loop-mssa(licm,loop-rotate,licm),"
    "simplifycfg,instcombine<no-verify-fixpoint>,loop(indvars,loop-unroll-full),gvn,instcombine<no-verify-fixpoint>,"
    "loop-mssa(licm),simplifycfg,loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg,slp-vectorizer,"
    "vector-combine,instcombine<no-verify-fixpoint>,loop-unroll<O2>,instcombine<no-verify-fixpoint>,loop-mssa(licm),"
    "simplifycfg)";

// IR text -> optimised module -> object file bytes (or, `kind` AssemblyFile, assembly text).
std::vector<uint8_t> compile_ir(const std::string& name, const std::string& src, const std::string& cpu, const std::string& features,
                                llvm::CodeGenFileType kind = llvm::CodeGenFileType::ObjectFile) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> m = llvm::parseAssembly(llvm::MemoryBufferRef(src, name), diag, ctx);
  if (!m) {
    std::string why;
    llvm::raw_string_ostream os(why);
    diag.print(name.c_str(), os);
    throw CompileError("kernel " + name + " is not valid LLVM IR:\n" + why + "\nsource:\n" + src);
  }
  llvm::TargetMachine* tm = thread_target_machine(cpu, features);
  m->setTargetTriple(tm->getTargetTriple().str());
  m->setDataLayout(tm->createDataLayout());
  std::string broken;
  llvm::raw_string_ostream bos(broken);
  if (llvm::verifyModule(*m, &bos)) throw CompileError("kernel " + name + " is malformed LLVM IR:\n" + broken + "\nsource:\n" + src);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  if (llvm::Error e = pb.parsePassPipeline(passes, kPasses)) throw CompileError("LLVM rejects lathe's pass list: " + message(std::move(e)));
  passes.run(*m, mam);

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, kind))
    throw CompileError(std::string("LLVM cannot emit ") + (kind == llvm::CodeGenFileType::AssemblyFile ? "assembly" : "object code") +
                       " for the CPU '" + cpu + "'");
  codegen.run(*m);
  return std::vector<uint8_t>(object.begin(), object.end());
}

}  // namespace

const LlvmCompiler& LlvmCompiler::get() {
  static const LlvmCompiler c(cpu_target_from_env());
  return c;
}

LlvmCompiler::LlvmCompiler(const std::string& target) {
  check_cpu_name(target);
  if (target == "native") {
    cpu_ = llvm::sys::getHostCPUName().str();
    for (const auto& f : llvm::sys::getHostCPUFeatures()) features_ += std::string(features_.empty() ? "" : ",") + (f.second ? "+" : "-") + f.first().str();
  } else {
    cpu_ = target;
  }
#if defined(__x86_64__) || defined(__i386__)
  // lathe's optimizer lays out the vectors it wants; the loop vectorizer would otherwise turn
  // loops that are not innermost after unrolling into AVX-512 gathers and scatters (slower than
  // the scalar loop on Zen 5 and most Intel cores: up to 5x on a layernorm).
  features_ += std::string(features_.empty() ? "" : ",") + "+prefer-no-gather,+prefer-no-scatter";
#endif
  if (!target_machine("", "")->getMCSubtargetInfo()->isCPUStringValid(cpu_))
    throw CompileError("LLVM does not know the CPU '" + cpu_ + "' (LATHE_CPU_TARGET)");
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(cpu_, features_);
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  auto has = [&](const char* f) { return sti->checkFeatures(std::string("+") + f); };
  std::string triple = tm->getTargetTriple().str();
  bool arm = triple.rfind("aarch64", 0) == 0;
  target_ = cpu_target_of(has("avx512f"), has("avx"), arm);
  if (target != "native") {
    // The named CPU's instruction-set features that LLVM finds off on this machine (its tuning
    // flags are not in the host's list, and do not matter).
    std::vector<std::string> missing;
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const llvm::SubtargetFeatureKV& f : sti->getAllProcessorFeatures())
      if (sti->getFeatureBits().test(f.Value))
        if (auto it = host.find(f.Key); it != host.end() && !it->second) missing.emplace_back(f.Key);
    cannot_run_ = cannot_run_message(target, missing);
  }
  // The CPU's name and the features asked for: for the host every feature it reports (two CPUs
  // sharing a name may differ, e.g. in AVX512-FP16), for a named target its tuning flags.
  identity_ = std::string("LLVM ") + LLVM_VERSION_STRING + " | passes " + std::string(kPasses) + " | " + triple + " | cpu " + cpu_ + " | features " + cache_key(features_);
}

void LlvmCompiler::check_runs_here() const {
  if (!cannot_run_.empty()) throw Error(cannot_run_);
}

CompiledSpec LlvmCompiler::compile(const ProgramSpec& spec) const {
  CompiledSpec c = CompiledSpec::from_bytes(
      spec.name, cached_kernel(identity_, spec.src, ".o", [&] { return compile_ir(spec.name, spec.src, cpu_, features_); }), spec.ast);
  c.src = spec.src;  // the IR it was built from (the seed: a JIT backend carries its source)
  return c;
}

std::string LlvmCompiler::assembly(const ProgramSpec& spec) const {
  std::vector<uint8_t> text = compile_ir(spec.name, spec.src, cpu_, features_, llvm::CodeGenFileType::AssemblyFile);
  return std::string(text.begin(), text.end());
}

std::unique_ptr<Program> load_llvm_program(const CompiledSpec& compiled, size_t num_vals, bool threaded, bool one_launch_at_a_time) {
  llvm::orc::LLJIT& j = jit();
  static std::atomic<uint64_t> loaded{0};
  auto made = j.createJITDylib("lathe-kernel-" + std::to_string(loaded++) + "-" + compiled.name);
  if (!made) throw CompileError("cannot load kernel " + compiled.name + ": " + message(made.takeError()));
  llvm::orc::JITDylib* lib = &*made;
  auto release = [lib] {
    if (llvm::Error e = jit().getExecutionSession().removeJITDylib(*lib)) llvm::consumeError(std::move(e));
  };
  llvm::StringRef object(reinterpret_cast<const char*>(compiled.bytes.data()), compiled.bytes.size());
  if (llvm::Error e = j.addObjectFile(*lib, llvm::MemoryBuffer::getMemBufferCopy(object, compiled.name))) {
    release();
    throw CompileError("cannot load kernel " + compiled.name + ": " + message(std::move(e)));
  }
  auto entry = j.lookup(*lib, compiled.name);
  if (!entry) {
    release();
    throw CompileError("cannot load kernel " + compiled.name + ": " + message(entry.takeError()));
  }
  return make_cpu_program(entry->toPtr<CpuKernelFn>(), release, num_vals, threaded, one_launch_at_a_time);
}

}  // namespace lathe
