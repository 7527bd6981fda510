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
    long long alu14 = (ridx2 * 16ll);
    long long alu15 = (alu11 + alu14);
    long long alu16 = (alu15 + alu7);
    lathe_f16 val17 = data1[alu16];
    float cast18 = lathe_f16_to_f32(val17);
    long long alu19 = (alu16 + 1ll);
    lathe_f16 val20 = data1[alu19];
    float cast21 = lathe_f16_to_f32(val20);
    long long alu22 = (alu16 + 384ll);
    lathe_f16 val23 = data1[alu22];
    float cast24 = lathe_f16_to_f32(val23);
    long long alu25 = (alu16 + 385ll);
    lathe_f16 val26 = data1[alu25];
    float cast27 = lathe_f16_to_f32(val26);
    long long alu28 = (alu16 + 8ll);
    lathe_f16 val29 = data1[alu28];
    float cast30 = lathe_f16_to_f32(val29);
    long long alu31 = (alu16 + 9ll);
    lathe_f16 val32 = data1[alu31];
    float cast33 = lathe_f16_to_f32(val32);
    long long alu34 = (alu16 + 392ll);
    lathe_f16 val35 = data1[alu34];
    float cast36 = lathe_f16_to_f32(val35);
    long long alu37 = (alu16 + 393ll);
    lathe_f16 val38 = data1[alu37];
    float cast39 = lathe_f16_to_f32(val38);
    long long alu40 = (ridx2 * 256ll);
    long long alu41 = (alu12 + alu40);
    long long alu42 = (alu41 + alu13);
    lathe_f16 val43 = data2[alu42];
    float cast44 = lathe_f16_to_f32(val43);
    long long alu45 = (alu42 + 16ll);
    lathe_f16 val46 = data2[alu45];
    float cast47 = lathe_f16_to_f32(val46);
    long long alu48 = (alu42 + 128ll);
    lathe_f16 val49 = data2[alu48];
    float cast50 = lathe_f16_to_f32(val49);
    long long alu51 = (alu42 + 144ll);
    lathe_f16 val52 = data2[alu51];
    float cast53 = lathe_f16_to_f32(val52);
    float val54 = acc0;
    float val55 = acc1;
    float val56 = acc2;
    float val57 = acc3;
    float wmma58[4];
    lathe_mma_f16(wmma58, ((unsigned)val17 | ((unsigned)val20 << 16)), ((unsigned)val23 | ((unsigned)val26 << 16)), ((unsigned)val29 | ((unsigned)val32 << 16)), ((unsigned)val35 | ((unsigned)val38 << 16)), ((unsigned)val43 | ((unsigned)val46 << 16)), ((unsigned)val49 | ((unsigned)val52 << 16)), val54, val55, val56, val57);
    float gep59 = wmma58[0];
    acc0 = gep59;
    float gep60 = wmma58[1];
    acc1 = gep60;
    float gep61 = wmma58[2];
    acc2 = gep61;
    float gep62 = wmma58[3];
    acc3 = gep62;
  }
  float val63 = acc0;
  lathe_f16 cast64 = lathe_f32_to_f16(val63);
  data0[alu8] = cast64;
  long long alu65 = (alu8 + 1ll);
  float val66 = acc1;
  lathe_f16 cast67 = lathe_f32_to_f16(val66);
  data0[alu65] = cast67;
  long long alu68 = (alu8 + 128ll);
  float val69 = acc2;
  lathe_f16 cast70 = lathe_f32_to_f16(val69);
  data0[alu68] = cast70;
  long long alu71 = (alu8 + 129ll);
  float val72 = acc3;
  lathe_f16 cast73 = lathe_f32_to_f16(val72);
  data0[alu71] = cast73;
}
