#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
#define LATHE_MMA(t) \
LATHE_FN unsigned lathe_pack_##t##x2(float lo, float hi) { unsigned r; asm("cvt.rn." #t "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r; } \
LATHE_FN void lathe_mma_##t(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1, float c2, float c3) { \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." #t "." #t ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};" \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3)); \
}
LATHE_MMA(f16)
LATHE_MMA(bf16)
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
extern "C" __global__ void __launch_bounds__(128, 1) r_2_2_3_32_4_2_2_f3c994(lathe_f16* __restrict__ data0, const lathe_f16* __restrict__ data1, const lathe_f16* __restrict__ data2) {
  long long alu0 = (((long long)threadIdx.x) / 4ll);
  long long alu1 = (alu0 * 32ll);
  long long alu2 = (((long long)threadIdx.y) * 16ll);
  long long alu3 = (alu1 + alu2);
  long long alu4 = (((long long)threadIdx.z) * 1024ll);
  long long alu5 = (alu3 + alu4);
  long long alu6 = (((long long)threadIdx.x) % 4ll);
  long long alu7 = (alu6 * 2ll);
  long long alu8 = (alu5 + alu7);
  float acc0 = 0.0f;
  long long alu9 = (alu0 * 48ll);
  long long alu10 = (((long long)threadIdx.z) * 1536ll);
  long long alu11 = (alu9 + alu10);
  long long alu12 = (alu0 + alu2);
  long long alu13 = (alu6 * 64ll);
  float acc4 = 0.0f;
  float acc8 = 0.0f;
  float acc12 = 0.0f;
  float acc1 = 0.0f;
  float acc5 = 0.0f;
  float acc9 = 0.0f;
  float acc13 = 0.0f;
  float acc2 = 0.0f;
  float acc6 = 0.0f;
  float acc10 = 0.0f;
  float acc14 = 0.0f;
  float acc3 = 0.0f;
  float acc7 = 0.0f;
  float acc11 = 0.0f;
  float acc15 = 0.0f;
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
    long long alu40 = (ridx2 * 512ll);
    long long alu41 = (alu12 + alu40);
    long long alu42 = (alu41 + alu13);
    lathe_f16 val43 = data2[alu42];
    float cast44 = lathe_f16_to_f32(val43);
    long long alu45 = (alu42 + 32ll);
    lathe_f16 val46 = data2[alu45];
    float cast47 = lathe_f16_to_f32(val46);
    long long alu48 = (alu42 + 256ll);
    lathe_f16 val49 = data2[alu48];
    float cast50 = lathe_f16_to_f32(val49);
    long long alu51 = (alu42 + 288ll);
    lathe_f16 val52 = data2[alu51];
    float cast53 = lathe_f16_to_f32(val52);
    float val54 = acc0;
    float val55 = acc4;
    float val56 = acc8;
    float val57 = acc12;
    float wmma58[4];
    lathe_mma_f16(wmma58, ((unsigned)val17 | ((unsigned)val20 << 16)), ((unsigned)val23 | ((unsigned)val26 << 16)), ((unsigned)val29 | ((unsigned)val32 << 16)), ((unsigned)val35 | ((unsigned)val38 << 16)), ((unsigned)val43 | ((unsigned)val46 << 16)), ((unsigned)val49 | ((unsigned)val52 << 16)), val54, val55, val56, val57);
    float gep59 = wmma58[0];
    acc0 = gep59;
    long long alu60 = (alu16 + 768ll);
    lathe_f16 val61 = data1[alu60];
    float cast62 = lathe_f16_to_f32(val61);
    long long alu63 = (alu16 + 769ll);
    lathe_f16 val64 = data1[alu63];
    float cast65 = lathe_f16_to_f32(val64);
    long long alu66 = (alu16 + 1152ll);
    lathe_f16 val67 = data1[alu66];
    float cast68 = lathe_f16_to_f32(val67);
    long long alu69 = (alu16 + 1153ll);
    lathe_f16 val70 = data1[alu69];
    float cast71 = lathe_f16_to_f32(val70);
    long long alu72 = (alu16 + 776ll);
    lathe_f16 val73 = data1[alu72];
    float cast74 = lathe_f16_to_f32(val73);
    long long alu75 = (alu16 + 777ll);
    lathe_f16 val76 = data1[alu75];
    float cast77 = lathe_f16_to_f32(val76);
    long long alu78 = (alu16 + 1160ll);
    lathe_f16 val79 = data1[alu78];
    float cast80 = lathe_f16_to_f32(val79);
    long long alu81 = (alu16 + 1161ll);
    lathe_f16 val82 = data1[alu81];
    float cast83 = lathe_f16_to_f32(val82);
    float val84 = acc1;
    float val85 = acc5;
    float val86 = acc9;
    float val87 = acc13;
    float wmma88[4];
    lathe_mma_f16(wmma88, ((unsigned)val61 | ((unsigned)val64 << 16)), ((unsigned)val67 | ((unsigned)val70 << 16)), ((unsigned)val73 | ((unsigned)val76 << 16)), ((unsigned)val79 | ((unsigned)val82 << 16)), ((unsigned)val43 | ((unsigned)val46 << 16)), ((unsigned)val49 | ((unsigned)val52 << 16)), val84, val85, val86, val87);
    float gep89 = wmma88[0];
    acc1 = gep89;
    long long alu90 = (alu42 + 8ll);
    lathe_f16 val91 = data2[alu90];
    float cast92 = lathe_f16_to_f32(val91);
    long long alu93 = (alu42 + 40ll);
    lathe_f16 val94 = data2[alu93];
    float cast95 = lathe_f16_to_f32(val94);
    long long alu96 = (alu42 + 264ll);
    lathe_f16 val97 = data2[alu96];
    float cast98 = lathe_f16_to_f32(val97);
    long long alu99 = (alu42 + 296ll);
    lathe_f16 val100 = data2[alu99];
    float cast101 = lathe_f16_to_f32(val100);
    float val102 = acc2;
    float val103 = acc6;
    float val104 = acc10;
    float val105 = acc14;
    float wmma106[4];
    lathe_mma_f16(wmma106, ((unsigned)val17 | ((unsigned)val20 << 16)), ((unsigned)val23 | ((unsigned)val26 << 16)), ((unsigned)val29 | ((unsigned)val32 << 16)), ((unsigned)val35 | ((unsigned)val38 << 16)), ((unsigned)val91 | ((unsigned)val94 << 16)), ((unsigned)val97 | ((unsigned)val100 << 16)), val102, val103, val104, val105);
    float gep107 = wmma106[0];
    acc2 = gep107;
    float val108 = acc3;
    float val109 = acc7;
    float val110 = acc11;
    float val111 = acc15;
    float wmma112[4];
    lathe_mma_f16(wmma112, ((unsigned)val61 | ((unsigned)val64 << 16)), ((unsigned)val67 | ((unsigned)val70 << 16)), ((unsigned)val73 | ((unsigned)val76 << 16)), ((unsigned)val79 | ((unsigned)val82 << 16)), ((unsigned)val91 | ((unsigned)val94 << 16)), ((unsigned)val97 | ((unsigned)val100 << 16)), val108, val109, val110, val111);
    float gep113 = wmma112[0];
    acc3 = gep113;
    float gep114 = wmma58[1];
    acc4 = gep114;
    float gep115 = wmma88[1];
    acc5 = gep115;
    float gep116 = wmma106[1];
    acc6 = gep116;
    float gep117 = wmma112[1];
    acc7 = gep117;
    float gep118 = wmma58[2];
    acc8 = gep118;
    float gep119 = wmma88[2];
    acc9 = gep119;
    float gep120 = wmma106[2];
    acc10 = gep120;
    float gep121 = wmma112[2];
    acc11 = gep121;
    float gep122 = wmma58[3];
    acc12 = gep122;
    float gep123 = wmma88[3];
    acc13 = gep123;
    float gep124 = wmma106[3];
    acc14 = gep124;
    float gep125 = wmma112[3];
    acc15 = gep125;
  }
  float val126 = acc0;
  lathe_f16 cast127 = lathe_f32_to_f16(val126);
  data0[alu8] = cast127;
  long long alu128 = (alu8 + 512ll);
  float val129 = acc1;
  lathe_f16 cast130 = lathe_f32_to_f16(val129);
  data0[alu128] = cast130;
  long long alu131 = (alu8 + 8ll);
  float val132 = acc2;
  lathe_f16 cast133 = lathe_f32_to_f16(val132);
  data0[alu131] = cast133;
  long long alu134 = (alu8 + 520ll);
  float val135 = acc3;
  lathe_f16 cast136 = lathe_f32_to_f16(val135);
  data0[alu134] = cast136;
  long long alu137 = (alu8 + 1ll);
  float val138 = acc4;
  lathe_f16 cast139 = lathe_f32_to_f16(val138);
  data0[alu137] = cast139;
  long long alu140 = (alu8 + 513ll);
  float val141 = acc5;
  lathe_f16 cast142 = lathe_f32_to_f16(val141);
  data0[alu140] = cast142;
  long long alu143 = (alu8 + 9ll);
  float val144 = acc6;
  lathe_f16 cast145 = lathe_f32_to_f16(val144);
  data0[alu143] = cast145;
  long long alu146 = (alu8 + 521ll);
  float val147 = acc7;
  lathe_f16 cast148 = lathe_f32_to_f16(val147);
  data0[alu146] = cast148;
  long long alu149 = (alu8 + 256ll);
  float val150 = acc8;
  lathe_f16 cast151 = lathe_f32_to_f16(val150);
  data0[alu149] = cast151;
  long long alu152 = (alu8 + 768ll);
  float val153 = acc9;
  lathe_f16 cast154 = lathe_f32_to_f16(val153);
  data0[alu152] = cast154;
  long long alu155 = (alu8 + 264ll);
  float val156 = acc10;
  lathe_f16 cast157 = lathe_f32_to_f16(val156);
  data0[alu155] = cast157;
  long long alu158 = (alu8 + 776ll);
  float val159 = acc11;
  lathe_f16 cast160 = lathe_f32_to_f16(val159);
  data0[alu158] = cast160;
  long long alu161 = (alu8 + 257ll);
  float val162 = acc12;
  lathe_f16 cast163 = lathe_f32_to_f16(val162);
  data0[alu161] = cast163;
  long long alu164 = (alu8 + 769ll);
  float val165 = acc13;
  lathe_f16 cast166 = lathe_f32_to_f16(val165);
  data0[alu164] = cast166;
  long long alu167 = (alu8 + 265ll);
  float val168 = acc14;
  lathe_f16 cast169 = lathe_f32_to_f16(val168);
  data0[alu167] = cast169;
  long long alu170 = (alu8 + 777ll);
  float val171 = acc15;
  lathe_f16 cast172 = lathe_f32_to_f16(val171);
  data0[alu170] = cast172;
}
