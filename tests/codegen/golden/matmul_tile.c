#include <math.h>
void r_2_3_40_4_32_ed527c(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  (void)vals;
  for (long long ridx0 = 0; ridx0 < 2ll; ridx0++) {
    long long alu0 = (ridx0 * 384ll);
    long long alu1 = (ridx0 * 160ll);
    for (long long ridx1 = 0; ridx1 < 3ll; ridx1++) {
      long long alu2 = (ridx1 * 32ll);
      long long alu3 = (alu0 + alu2);
      float acc0[128];
      for (int i = 0; i < 128; i++) acc0[i] = 0.0f;
      for (long long ridx2 = 0; ridx2 < 40ll; ridx2++) {
        long long alu4 = (ridx2 + alu1);
        long long alu5 = (ridx2 * 96ll);
        long long alu6 = (alu5 + alu2);
        for (long long ridx3 = 0; ridx3 < 4ll; ridx3++) {
          long long alu7 = (ridx3 * 32ll);
          long long alu8 = (ridx3 * 40ll);
          long long alu9 = (alu4 + alu8);
          float val10 = data1[alu9];
          for (long long ridx4 = 0; ridx4 < 32ll; ridx4++) {
            long long alu11 = (ridx4 + alu7);
            float val12 = acc0[alu11];
            long long alu13 = (alu6 + ridx4);
            float val14 = data2[alu13];
            float alu15 = (val10 * val14);
            float alu16 = (val12 + alu15);
            acc0[alu11] = alu16;
          }
        }
      }
      float res0[128];
      for (int i = 0; i < 128; i++) res0[i] = acc0[i];
      for (long long ridx3 = 0; ridx3 < 4ll; ridx3++) {
        long long alu17 = (ridx3 * 96ll);
        long long alu18 = (ridx3 * 32ll);
        for (long long ridx4 = 0; ridx4 < 32ll; ridx4++) {
          long long alu19 = (alu3 + ridx4);
          long long alu20 = (alu19 + alu17);
          long long alu21 = (ridx4 + alu18);
          float val22 = res0[alu21];
          data0[alu20] = val22;
        }
      }
    }
  }
}
