#include <math.h>
void E_7_13_43ced6(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  (void)vals;
  for (long long ridx0 = 0; ridx0 < 7ll; ridx0++) {
    long long alu0 = (ridx0 * 13ll);
    for (long long ridx1 = 0; ridx1 < 13ll; ridx1++) {
      long long alu1 = (ridx1 + alu0);
      float val2 = data1[alu1];
      float val3 = data2[alu1];
      float alu4 = (val2 * val3);
      float alu5 = (alu4 + 1.0f);
      float alu6 = (alu5 > 0.0f ? alu5 : 0.0f);
      data0[alu1] = alu6;
    }
  }
}
