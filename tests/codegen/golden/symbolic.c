#include <math.h>
void r_8_64_1078f0(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const long long n = vals[0];
  for (long long ridx0 = 0; ridx0 < 8ll; ridx0++) {
    float acc0 = 0.0f;
    for (long long ridx1 = 0; ridx1 < n; ridx1++) {
      float val0 = acc0;
      long long alu1 = (ridx1 * 8ll);
      long long alu2 = (alu1 + ridx0);
      float val3 = data1[alu2];
      float alu4 = (val3 * 2.0f);
      float alu5 = (val0 + alu4);
      acc0 = alu5;
    }
    float val6 = acc0;
    data0[ridx0] = val6;
  }
}
