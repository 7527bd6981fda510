#include <math.h>
void r_8_37_ad4b47(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  (void)vals;
  for (long long ridx0 = 0; ridx0 < 8ll; ridx0++) {
    float acc0 = 0.0f;
    long long alu0 = (ridx0 * 37ll);
    for (long long ridx1 = 0; ridx1 < 37ll; ridx1++) {
      float val1 = acc0;
      long long alu2 = (ridx1 + alu0);
      float val3 = data1[alu2];
      float alu4 = (val1 + val3);
      acc0 = alu4;
    }
    float val5 = acc0;
    data0[ridx0] = val5;
  }
}
