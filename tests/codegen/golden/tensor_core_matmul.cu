#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
LATHE_FN unsigned lathe_pack_f16x2(float lo, float hi) { unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
LATHE_FN unsigned lathe_pack_bf16x2(float lo, float hi) { unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; }
LATHE_FN void lathe_mma_f16(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1, float c2, float c3) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
}
LATHE_FN void lathe_mma_bf16(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1, float c2, float c3) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
}
/* float16 and bfloat16 are stored as 16-bit integers and computed in float. */
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
extern "C" __global__ void __launch_bounds__(128, 1) r_2_2_3_32_4_20b679(lathe_f16* __restrict__ data0, const lathe_f16* __restrict__ data1, const lathe_f16* __restrict__ data2) {
  long long alu0 = (((long long)threadIdx.x) / 4ll);
  long long alu1 = (alu0 * 16ll);
  long long alu2 = (((long long)threadIdx.y) * 8ll);
  long long alu3 = (alu1 + alu2);
  long long alu4 = (((long long)threadIdx.z) * 256ll);
  long long alu5 = (alu3 + alu4);
  long long alu6 = (((long long)threadIdx.x) % 4ll);
  long long alu7 = (alu6 * 2ll);
  long long alu8 = (alu5 + alu7);
  float acc0 = 0.0f;
  long long alu9 = (alu0 * 48ll);
  long long alu10 = (((long long)threadIdx.z) * 768ll);
  long long alu11 = (alu9 + alu10);
  long long alu12 = (alu0 + alu2);
  long long alu13 = (alu6 * 32ll);
  float acc1 = 0.0f;
  float acc2 = 0.0f;
  float acc3 = 0.0f;
  #pragma unroll 4
  for (long long ridx2 = 0; ridx2 < 3ll; ridx2++) {
    float val14 = acc0;
    long long alu15 = (ridx2 * 16ll);
    long long alu16 = (alu11 + alu15);
    long long alu17 = (alu16 + alu7);
    lathe_f16 val18 = data1[alu17];
    float cast19 = lathe_f16_to_f32(val18);
    long long alu20 = (alu17 + 1ll);
    lathe_f16 val21 = data1[alu20];
    float cast22 = lathe_f16_to_f32(val21);
    long long alu23 = (alu17 + 384ll);
    lathe_f16 val24 = data1[alu23];
    float cast25 = lathe_f16_to_f32(val24);
    long long alu26 = (alu17 + 385ll);
    lathe_f16 val27 = data1[alu26];
    float cast28 = lathe_f16_to_f32(val27);
    long long alu29 = (alu17 + 8ll);
    lathe_f16 val30 = data1[alu29];
    float cast31 = lathe_f16_to_f32(val30);
    long long alu32 = (alu17 + 9ll);
    lathe_f16 val33 = data1[alu32];
    float cast34 = lathe_f16_to_f32(val33);
    long long alu35 = (alu17 + 392ll);
    lathe_f16 val36 = data1[alu35];
    float cast37 = lathe_f16_to_f32(val36);
    long long alu38 = (alu17 + 393ll);
    lathe_f16 val39 = data1[alu38];
    float cast40 = lathe_f16_to_f32(val39);
    long long alu41 = (ridx2 * 256ll);
    long long alu42 = (alu12 + alu41);
    long long alu43 = (alu42 + alu13);
    lathe_f16 val44 = data2[alu43];
    float cast45 = lathe_f16_to_f32(val44);
    long long alu46 = (alu43 + 16ll);
    lathe_f16 val47 = data2[alu46];
    float cast48 = lathe_f16_to_f32(val47);
    long long alu49 = (alu43 + 128ll);
    lathe_f16 val50 = data2[alu49];
    float cast51 = lathe_f16_to_f32(val50);
    long long alu52 = (alu43 + 144ll);
    lathe_f16 val53 = data2[alu52];
    float cast54 = lathe_f16_to_f32(val53);
    float wmma55[4];
    lathe_mma_f16(wmma55, lathe_pack_f16x2(cast19, cast22), lathe_pack_f16x2(cast25, cast28), lathe_pack_f16x2(cast31, cast34), lathe_pack_f16x2(cast37, cast40), lathe_pack_f16x2(cast45, cast48), lathe_pack_f16x2(cast51, cast54), 0.0f, 0.0f, 0.0f, 0.0f);
    float gep56 = wmma55[0];
    float alu57 = (val14 + gep56);
    acc0 = alu57;
    float val58 = acc1;
    float gep59 = wmma55[1];
    float alu60 = (val58 + gep59);
    acc1 = alu60;
    float val61 = acc2;
    float gep62 = wmma55[2];
    float alu63 = (val61 + gep62);
    acc2 = alu63;
    float val64 = acc3;
    float gep65 = wmma55[3];
    float alu66 = (val64 + gep65);
    acc3 = alu66;
  }
  float val67 = acc0;
  lathe_f16 cast68 = lathe_f32_to_f16(val67);
  data0[alu8] = cast68;
  long long alu69 = (alu8 + 1ll);
  float val70 = acc1;
  lathe_f16 cast71 = lathe_f32_to_f16(val70);
  data0[alu69] = cast71;
  long long alu72 = (alu8 + 128ll);
  float val73 = acc2;
  lathe_f16 cast74 = lathe_f32_to_f16(val73);
  data0[alu72] = cast74;
  long long alu75 = (alu8 + 129ll);
  float val76 = acc3;
  lathe_f16 cast77 = lathe_f32_to_f16(val76);
  data0[alu75] = cast77;
}
