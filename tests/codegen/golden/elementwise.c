#include <math.h>
void E_91_1d79b7(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  (void)vals;
  for (long long ridx0 = 0; ridx0 < 91ll; ridx0++) {
    float val0 = data1[ridx0];
    float val1 = data2[ridx0];
    float alu2 = (val0 * val1);
    float alu3 = (alu2 + 1.0f);
    float alu4 = (alu3 > 0.0f ? alu3 : 0.0f);
    data0[ridx0] = alu4;
  }
}
