#include <math.h>
typedef float vf32x4 __attribute__((vector_size(16)));
typedef int vi32x4 __attribute__((vector_size(16)));
void r_64_4_2_2a3c9f(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const long long n = vals[0];
  vf32x4 vec0 = ((vf32x4){} + 0.0f);
  vf32x4 acc0 = vec0;
  vf32x4 vec1 = ((vf32x4){} + 2.0f);
  vf32x4 acc1 = vec0;
  for (long long ridx1 = 0; ridx1 < n; ridx1++) {
    vf32x4 val2 = acc0;
    long long alu3 = (ridx1 * 8ll);
    vf32x4 val4; __builtin_memcpy(&val4, &data1[alu3], sizeof(val4));
    vf32x4 alu5 = (val4 * vec1);
    vf32x4 alu6 = (val2 + alu5);
    acc0 = alu6;
    vf32x4 val7 = acc1;
    long long alu8 = (alu3 + 4ll);
    vf32x4 val9; __builtin_memcpy(&val9, &data1[alu8], sizeof(val9));
    vf32x4 alu10 = (val9 * vec1);
    vf32x4 alu11 = (val7 + alu10);
    acc1 = alu11;
  }
  vf32x4 val12 = acc0;
  __builtin_memcpy(&data0[0ll], &val12, sizeof(val12));
  vf32x4 val13 = acc1;
  __builtin_memcpy(&data0[4ll], &val13, sizeof(val13));
}
