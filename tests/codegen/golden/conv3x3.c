#include <math.h>
void r_6_8_8_4_9_312695(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  const float* restrict data3 = (const float*)bufs[3];
  const long long core_id = vals[0];
  long long alu0 = (core_id * 192ll);
  long long alu1 = (core_id * 108ll);
  long long alu2 = (core_id * 3ll);
  for (long long ridx0 = 0; ridx0 < 3ll; ridx0++) {
    long long alu3 = (ridx0 * 64ll);
    long long alu4 = (alu3 + alu0);
    long long alu5 = (ridx0 * 36ll);
    long long alu6 = (ridx0 + alu2);
    float val7 = data3[alu6];
    for (long long ridx1 = 0; ridx1 < 8ll; ridx1++) {
      long long alu8 = (ridx1 * 8ll);
      long long alu9 = (alu4 + alu8);
      for (long long ridx2 = 0; ridx2 < 8ll; ridx2++) {
        long long alu10 = (alu9 + ridx2);
        float acc0 = 0.0f;
        for (long long ridx3 = 0; ridx3 < 4ll; ridx3++) {
          long long alu11 = (ridx3 * 64ll);
          long long alu12 = (ridx3 * 9ll);
          for (long long ridx4 = 0; ridx4 < 9ll; ridx4++) {
            float val13 = acc0;
            long long alu14 = (ridx4 / 3ll);
            long long alu15 = (alu14 * 8ll);
            long long alu16 = (alu11 + alu15);
            long long alu17 = (alu16 + alu8);
            long long alu18 = (alu17 + ridx2);
            long long alu19 = (ridx4 % 3ll);
            long long alu20 = (alu18 + alu19);
            long long alu21 = (alu20 + -9ll);
            long long alu22 = (alu14 + ridx1);
            _Bool alu23 = (alu22 < 1ll);
            _Bool alu24 = (alu23 != 1);
            _Bool alu25 = (alu22 < 9ll);
            _Bool alu26 = (alu24 & alu25);
            long long alu27 = (ridx2 + alu19);
            _Bool alu28 = (alu27 < 1ll);
            _Bool alu29 = (alu28 != 1);
            _Bool alu30 = (alu27 < 9ll);
            _Bool alu31 = (alu29 & alu30);
            _Bool alu32 = (alu26 & alu31);
            float val33 = (alu32 ? data1[alu21] : (float)0);
            long long alu34 = (alu5 + ridx4);
            long long alu35 = (alu34 + alu12);
            long long alu36 = (alu35 + alu1);
            float val37 = data2[alu36];
            float alu38 = (val33 * val37);
            float alu39 = (val13 + alu38);
            acc0 = alu39;
          }
        }
        float val40 = acc0;
        float alu41 = (val40 + val7);
        float alu42 = (alu41 > 0.0f ? alu41 : 0.0f);
        data0[alu10] = alu42;
      }
    }
  }
}
