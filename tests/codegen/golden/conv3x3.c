#include <math.h>
typedef float vf32x4 __attribute__((vector_size(16)));
typedef int vi32x4 __attribute__((vector_size(16)));
void r_2_8_4_3_3_4_2_3_caf88c(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  const float* restrict data3 = (const float*)bufs[3];
  (void)vals;
  vf32x4 vec0 = ((vf32x4){} + 0.0f);
  for (long long ridx0 = 0; ridx0 < 2ll; ridx0++) {
    long long alu1 = (ridx0 * 192ll);
    long long alu2 = (ridx0 * 108ll);
    long long alu3 = (ridx0 * 3ll);
    float val4 = data3[alu3];
    vf32x4 vec5 = ((vf32x4){} + val4);
    long long alu6 = (alu3 + 1ll);
    float val7 = data3[alu6];
    vf32x4 vec8 = ((vf32x4){} + val7);
    long long alu9 = (alu3 + 2ll);
    float val10 = data3[alu9];
    vf32x4 vec11 = ((vf32x4){} + val10);
    for (long long ridx1 = 0; ridx1 < 8ll; ridx1++) {
      long long alu12 = (ridx1 * 8ll);
      long long alu13 = (alu1 + alu12);
      vf32x4 acc0 = vec0;
      vf32x4 acc1 = vec0;
      vf32x4 acc2 = vec0;
      vf32x4 acc3 = vec0;
      vf32x4 acc4 = vec0;
      vf32x4 acc5 = vec0;
      for (long long ridx3 = 0; ridx3 < 4ll; ridx3++) {
        long long alu14 = (ridx3 * 64ll);
        long long alu15 = (ridx3 * 9ll);
        long long alu16 = (alu2 + alu15);
        for (long long ridx4 = 0; ridx4 < 3ll; ridx4++) {
          long long alu17 = (ridx4 * 8ll);
          long long alu18 = (ridx1 + ridx4);
          _Bool alu19 = (alu18 < 1ll);
          _Bool alu20 = (alu19 != 1);
          _Bool alu21 = (alu18 < 9ll);
          _Bool alu22 = (alu20 & alu21);
          long long alu23 = (ridx4 * 3ll);
          for (long long ridx5 = 0; ridx5 < 3ll; ridx5++) {
            vf32x4 val24 = acc0;
            long long alu25 = (alu14 + ridx5);
            long long alu26 = (alu25 + alu12);
            long long alu27 = (alu26 + alu17);
            long long alu28 = (alu27 + -9ll);
            _Bool alu29 = (ridx5 < 1ll);
            _Bool alu30 = (alu29 != 1);
            _Bool alu31 = (alu22 & alu30);
            float val32 = (alu31 ? data1[alu28] : (float)0);
            long long alu33 = (alu27 + -8ll);
            float val34 = (alu22 ? data1[alu33] : (float)0);
            long long alu35 = (alu27 + -7ll);
            float val36 = (alu22 ? data1[alu35] : (float)0);
            long long alu37 = (alu27 + -6ll);
            float val38 = (alu22 ? data1[alu37] : (float)0);
            vf32x4 vec39 = ((vf32x4){val32, val34, val36, val38});
            long long alu40 = (alu16 + ridx5);
            long long alu41 = (alu40 + alu23);
            float val42 = data2[alu41];
            vf32x4 vec43 = ((vf32x4){} + val42);
            vf32x4 alu44 = (vec39 * vec43);
            vf32x4 alu45 = (val24 + alu44);
            acc0 = alu45;
            vf32x4 val46 = acc1;
            long long alu47 = (alu27 + -5ll);
            float val48 = (alu22 ? data1[alu47] : (float)0);
            long long alu49 = (alu27 + -4ll);
            float val50 = (alu22 ? data1[alu49] : (float)0);
            long long alu51 = (alu27 + -3ll);
            float val52 = (alu22 ? data1[alu51] : (float)0);
            long long alu53 = (alu27 + -2ll);
            _Bool alu54 = (ridx5 < 2ll);
            _Bool alu55 = (alu22 & alu54);
            float val56 = (alu55 ? data1[alu53] : (float)0);
            vf32x4 vec57 = ((vf32x4){val48, val50, val52, val56});
            vf32x4 alu58 = (vec57 * vec43);
            vf32x4 alu59 = (val46 + alu58);
            acc1 = alu59;
            vf32x4 val60 = acc2;
            long long alu61 = (alu41 + 36ll);
            float val62 = data2[alu61];
            vf32x4 vec63 = ((vf32x4){} + val62);
            vf32x4 alu64 = (vec39 * vec63);
            vf32x4 alu65 = (val60 + alu64);
            acc2 = alu65;
            vf32x4 val66 = acc3;
            vf32x4 alu67 = (vec57 * vec63);
            vf32x4 alu68 = (val66 + alu67);
            acc3 = alu68;
            vf32x4 val69 = acc4;
            long long alu70 = (alu41 + 72ll);
            float val71 = data2[alu70];
            vf32x4 vec72 = ((vf32x4){} + val71);
            vf32x4 alu73 = (vec39 * vec72);
            vf32x4 alu74 = (val69 + alu73);
            acc4 = alu74;
            vf32x4 val75 = acc5;
            vf32x4 alu76 = (vec57 * vec72);
            vf32x4 alu77 = (val75 + alu76);
            acc5 = alu77;
          }
        }
      }
      vf32x4 val78 = acc0;
      vf32x4 alu79 = (val78 + vec5);
      vf32x4 alu80 = ((vf32x4)(((alu79 > vec0) & (vi32x4)(alu79)) | (~(alu79 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu13], &alu80, sizeof(alu80));
      long long alu81 = (alu13 + 4ll);
      vf32x4 val82 = acc1;
      vf32x4 alu83 = (val82 + vec5);
      vf32x4 alu84 = ((vf32x4)(((alu83 > vec0) & (vi32x4)(alu83)) | (~(alu83 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu81], &alu84, sizeof(alu84));
      long long alu85 = (alu13 + 64ll);
      vf32x4 val86 = acc2;
      vf32x4 alu87 = (val86 + vec8);
      vf32x4 alu88 = ((vf32x4)(((alu87 > vec0) & (vi32x4)(alu87)) | (~(alu87 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu85], &alu88, sizeof(alu88));
      long long alu89 = (alu13 + 68ll);
      vf32x4 val90 = acc3;
      vf32x4 alu91 = (val90 + vec8);
      vf32x4 alu92 = ((vf32x4)(((alu91 > vec0) & (vi32x4)(alu91)) | (~(alu91 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu89], &alu92, sizeof(alu92));
      long long alu93 = (alu13 + 128ll);
      vf32x4 val94 = acc4;
      vf32x4 alu95 = (val94 + vec11);
      vf32x4 alu96 = ((vf32x4)(((alu95 > vec0) & (vi32x4)(alu95)) | (~(alu95 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu93], &alu96, sizeof(alu96));
      long long alu97 = (alu13 + 132ll);
      vf32x4 val98 = acc5;
      vf32x4 alu99 = (val98 + vec11);
      vf32x4 alu100 = ((vf32x4)(((alu99 > vec0) & (vi32x4)(alu99)) | (~(alu99 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu97], &alu100, sizeof(alu100));
    }
  }
}
