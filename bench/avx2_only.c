// A preload that makes CPUID in one process answer as an AVX2-only CPU would: no AVX-512, no AMX,
// no AVX-VNNI, AVX-IFMA or AVX10. Libraries that choose their kernels by CPUID at run time (ONNX
// Runtime's MLAS, which has no setting to hold it to AVX2) then run the ones they run on an
// AVX2-only CPU such as an AMD EPYC of this project's kind. bench/onnx_models.py --avx2 runs ONNX
// Runtime under it.
//
//   gcc -O2 -shared -fPIC bench/avx2_only.c -o avx2_only.so -ldl
//   LD_PRELOAD=$PWD/avx2_only.so node ...      # exits 3 where the CPU cannot trap CPUID
//
// How: Linux's ARCH_SET_CPUID (x86 CPUs with the cpuid_fault flag in /proc/cpuinfo, Intel's since
// Ivy Bridge, most hypervisors' guests on them) makes every CPUID instruction of the process fault.
// This file's SIGSEGV handler runs the real instruction with the trap lifted, clears the bits above
// and steps over it. The constructor checks that a CPUID then reads no AVX-512F.
//
// What it does not cover, each of which fails loudly rather than time the wrong kernels:
// - The dynamic loader has already asked before this runs, so glibc's own string routines may still
//   use AVX-512; what is timed (the library's kernels) asks later, at its load or first run.
// - A SIGSEGV handler the process installs later through sigaction() (node's, for WebAssembly) is
//   kept behind this one and gets every other fault; one installed through signal(), bsd_signal()
//   or sigset() (which glibc routes past the interposed symbol) replaces it, and the next CPUID
//   then takes the default action.
// - A thread that blocks SIGSEGV and runs CPUID is killed by the kernel.
// The trap is inherited by the threads and children the process starts, not across an exec (the
// preload arms it again there). Caches, clocks and XGETBV stay the real CPU's: this is not a real
// AVX2 machine, and the benchmark says so.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

static int cpuid_traps(int trap) { return (int)syscall(SYS_arch_prctl, ARCH_SET_CPUID, trap ? 0 : 1); }

// Leaf 7, subleaf 0: EBX AVX512F 16, DQ 17, IFMA 21, PF 26, ER 27, CD 28, BW 30, VL 31; ECX VBMI 1,
// VBMI2 6, VNNI 11, BITALG 12, VPOPCNTDQ 14; EDX 4VNNIW 2, 4FMAPS 3, VP2INTERSECT 8, AMX-BF16 22,
// AVX512-FP16 23, AMX-TILE 24, AMX-INT8 25. Subleaf 1: EAX AVX-VNNI 4, AVX512-BF16 5, AMX-FP16 21,
// AVX-IFMA 23; EDX AVX-VNNI-INT8 4, AVX-NE-CONVERT 5, AMX-COMPLEX 8, AVX10 19.
static const uint32_t kLeaf7Ebx = (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31);
static const uint32_t kLeaf7Ecx = (1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14);
static const uint32_t kLeaf7Edx = (1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25);
static const uint32_t kLeaf7Sub1Eax = (1u << 4) | (1u << 5) | (1u << 21) | (1u << 23);
static const uint32_t kLeaf7Sub1Edx = (1u << 4) | (1u << 5) | (1u << 8) | (1u << 19);

typedef int (*sigaction_fn)(int, const struct sigaction*, struct sigaction*);
static sigaction_fn real_sigaction_fn;  // looked up once, outside any signal handler

static sigaction_fn real_sigaction(void) {
  if (!real_sigaction_fn) real_sigaction_fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
  return real_sigaction_fn;
}

// The SIGSEGV handler behind this one: one of two slots, published whole by an atomic index, so a
// fault on another thread never reads one half-written.
static struct sigaction behind[2];
static atomic_int current;
static int installed;

// The process's own sigaction: SIGSEGV's handler, once this file's is in place, is the one behind it.
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sig != SIGSEGV || !installed) return real_sigaction()(sig, act, old);
  int now = atomic_load(&current);
  if (old) *old = behind[now];
  if (act) {
    behind[1 - now] = *act;
    atomic_store(&current, 1 - now);
  }
  return 0;
}

static void on_fault(int sig, siginfo_t* info, void* context) {
  greg_t* r = ((ucontext_t*)context)->uc_mcontext.gregs;
  const unsigned char* ip = (const unsigned char*)r[REG_RIP];
  // A trapped CPUID is a general-protection fault (SI_KERNEL) at the instruction 0F A2.
  if (info->si_code != SI_KERNEL || ip[0] != 0x0f || ip[1] != 0xa2) {
    struct sigaction prev = behind[atomic_load(&current)];
    if (prev.sa_flags & SA_SIGINFO) {
      prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      prev.sa_handler(sig);
    } else {
      // The default action: a fault repeats when this returns; a signal sent by a process
      // (si_code <= 0) would not, so it is raised again.
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      real_sigaction_fn(SIGSEGV, &dfl, NULL);
      if (info->si_code <= 0) raise(sig);
    }
    return;
  }
  uint32_t leaf = (uint32_t)r[REG_RAX], sub = (uint32_t)r[REG_RCX], a, b, c, d;
  cpuid_traps(0);
  __cpuid_count(leaf, sub, a, b, c, d);
  cpuid_traps(1);
  if (leaf == 7 && sub == 0) b &= ~kLeaf7Ebx, c &= ~kLeaf7Ecx, d &= ~kLeaf7Edx;
  if (leaf == 7 && sub == 1) a &= ~kLeaf7Sub1Eax, d &= ~kLeaf7Sub1Edx;
  r[REG_RAX] = a, r[REG_RBX] = b, r[REG_RCX] = c, r[REG_RDX] = d;
  r[REG_RIP] += 2;
}

__attribute__((constructor)) static void hold_to_avx2(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  // SA_NODEFER: a CPUID inside another SIGSEGV handler (one behind this) traps too. SA_ONSTACK:
  // a stack overflow's fault still reaches a handler behind this one on its alternate stack.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  uint32_t a, b, c, d;
  if (!real_sigaction() || real_sigaction_fn(SIGSEGV, &sa, &behind[0]) != 0 || cpuid_traps(1) != 0) {
    fprintf(stderr, "avx2_only: this CPU or kernel cannot trap CPUID (no cpuid_fault in /proc/cpuinfo); not held to AVX2\n");
    exit(3);
  }
  installed = 1;
  __cpuid_count(7, 0, a, b, c, d);
  if (b & (1u << 16)) {
    fprintf(stderr, "avx2_only: CPUID still reports AVX-512F after the trap was armed; not held to AVX2\n");
    exit(3);
  }
}
