#include <math.h>
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
void r_16_16_6a8556(void** bufs, const long long* vals) {
  lathe_f16* restrict data0 = (lathe_f16*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  (void)vals;
  float cast0 = ((float)(lathe_f16_to_f32(((lathe_f16)15360u))));
  for (long long ridx0 = 0; ridx0 < 16ll; ridx0++) {
    float acc0 = 0.0f;
    long long alu1 = (ridx0 * 16ll);
    for (long long ridx1 = 0; ridx1 < 16ll; ridx1++) {
      float val2 = acc0;
      long long alu3 = (ridx1 + alu1);
      float val4 = data1[alu3];
      lathe_f16 cast5 = lathe_f32_to_f16(val4);
      float cast6 = ((float)(lathe_f16_to_f32(cast5)));
      float alu7 = (cast6 * cast6);
      lathe_f16 cast8 = lathe_f32_to_f16(alu7);
      float cast9 = ((float)(lathe_f16_to_f32(cast8)));
      float alu10 = (cast9 + cast0);
      lathe_f16 cast11 = lathe_f32_to_f16(alu10);
      float cast12 = ((float)(lathe_f16_to_f32(cast11)));
      float alu13 = (val2 + cast12);
      acc0 = alu13;
    }
    float val14 = acc0;
    lathe_f16 cast15 = lathe_f32_to_f16(val14);
    data0[ridx0] = cast15;
  }
}
