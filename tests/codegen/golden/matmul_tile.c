#include <math.h>
typedef float vf32x32 __attribute__((vector_size(128)));
typedef int vi32x32 __attribute__((vector_size(128)));
void r_2_3_40_4_32_ed527c(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  (void)vals;
  vf32x32 vec0 = ((vf32x32){} + 0.0f);
  for (long long ridx0 = 0; ridx0 < 2ll; ridx0++) {
    long long alu1 = (ridx0 * 384ll);
    long long alu2 = (ridx0 * 160ll);
    for (long long ridx1 = 0; ridx1 < 3ll; ridx1++) {
      long long alu3 = (ridx1 * 32ll);
      long long alu4 = (alu1 + alu3);
      vf32x32 acc0 = vec0;
      vf32x32 acc1 = vec0;
      vf32x32 acc2 = vec0;
      vf32x32 acc3 = vec0;
      for (long long ridx2 = 0; ridx2 < 40ll; ridx2++) {
        vf32x32 val5 = acc0;
        long long alu6 = (ridx2 + alu2);
        float val7 = data1[alu6];
        vf32x32 vec8 = ((vf32x32){} + val7);
        long long alu9 = (ridx2 * 96ll);
        long long alu10 = (alu9 + alu3);
        vf32x32 val11; __builtin_memcpy(&val11, &data2[alu10], sizeof(val11));
        vf32x32 alu12 = (vec8 * val11);
        vf32x32 alu13 = (val5 + alu12);
        acc0 = alu13;
        vf32x32 val14 = acc1;
        long long alu15 = (alu6 + 40ll);
        float val16 = data1[alu15];
        vf32x32 vec17 = ((vf32x32){} + val16);
        vf32x32 alu18 = (vec17 * val11);
        vf32x32 alu19 = (val14 + alu18);
        acc1 = alu19;
        vf32x32 val20 = acc2;
        long long alu21 = (alu6 + 80ll);
        float val22 = data1[alu21];
        vf32x32 vec23 = ((vf32x32){} + val22);
        vf32x32 alu24 = (vec23 * val11);
        vf32x32 alu25 = (val20 + alu24);
        acc2 = alu25;
        vf32x32 val26 = acc3;
        long long alu27 = (alu6 + 120ll);
        float val28 = data1[alu27];
        vf32x32 vec29 = ((vf32x32){} + val28);
        vf32x32 alu30 = (vec29 * val11);
        vf32x32 alu31 = (val26 + alu30);
        acc3 = alu31;
      }
      vf32x32 val32 = acc0;
      __builtin_memcpy(&data0[alu4], &val32, sizeof(val32));
      long long alu33 = (alu4 + 96ll);
      vf32x32 val34 = acc1;
      __builtin_memcpy(&data0[alu33], &val34, sizeof(val34));
      long long alu35 = (alu4 + 192ll);
      vf32x32 val36 = acc2;
      __builtin_memcpy(&data0[alu35], &val36, sizeof(val36));
      long long alu37 = (alu4 + 288ll);
      vf32x32 val38 = acc3;
      __builtin_memcpy(&data0[alu37], &val38, sizeof(val38));
    }
  }
}
