#include <math.h>
typedef float vf32x4 __attribute__((vector_size(16)));
typedef int vi32x4 __attribute__((vector_size(16)));
typedef long long vi64x4 __attribute__((vector_size(32)));
void r_8_2_4_3_3_4_2_3_4b43c8(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const float* restrict data2 = (const float*)bufs[2];
  const float* restrict data3 = (const float*)bufs[3];
  (void)vals;
  vf32x4 vec0 = ((vf32x4){} + 0.0f);
  vi32x4 vec1 = ((vi32x4){} + -(int)(1));
  vi64x4 vec2 = ((vi64x4){0ll, 1ll, 2ll, 3ll});
  vi64x4 vec3 = ((vi64x4){} + 1ll);
  vi64x4 vec4 = ((vi64x4){} + 5ll);
  for (long long ridx0 = 0; ridx0 < 8ll; ridx0++) {
    long long alu5 = (ridx0 * 8ll);
    long long alu6 = (ridx0 * -1ll);
    long long alu7 = (alu6 + 1ll);
    long long alu8 = (0ll > alu7 ? 0ll : alu7);
    long long alu9 = (alu8 * -1ll);
    long long alu10 = (ridx0 + -9ll);
    long long alu11 = (-3ll > alu10 ? -3ll : alu10);
    long long alu12 = (alu11 * -1ll);
    long long alu13 = (alu9 + alu12);
    for (long long ridx1 = 0; ridx1 < 2ll; ridx1++) {
      long long alu14 = (ridx1 * 192ll);
      long long alu15 = (alu14 + alu5);
      vf32x4 acc0 = vec0;
      long long alu16 = (ridx1 * 3ll);
      vf32x4 acc1 = vec0;
      vf32x4 acc2 = vec0;
      vf32x4 acc3 = vec0;
      vf32x4 acc4 = vec0;
      vf32x4 acc5 = vec0;
      for (long long ridx3 = 0; ridx3 < 4ll; ridx3++) {
        long long alu17 = (ridx3 * 64ll);
        long long alu18 = (ridx3 * 54ll);
        long long alu19 = (alu18 + alu16);
        for (long long ridx4 = 0; ridx4 < alu13; ridx4++) {
          long long alu20 = (ridx4 + alu8);
          long long alu21 = (alu20 * 8ll);
          long long alu22 = (alu20 * 18ll);
          for (long long ridx5 = 0; ridx5 < 3ll; ridx5++) {
            vf32x4 val23 = acc0;
            long long alu24 = (alu17 + ridx5);
            long long alu25 = (alu24 + alu5);
            long long alu26 = (alu25 + alu21);
            long long alu27 = (alu26 + -9ll);
            vi64x4 vec28 = ((vi64x4){} + ridx5);
            vi64x4 alu29 = (vec2 + vec28);
            vi32x4 alu30 = __builtin_convertvector((alu29 < vec3), vi32x4);
            vi32x4 alu31 = (alu30 != vec1);
            vi32x4 alu32 = (vec1 & alu31);
            vf32x4 val33 = (vf32x4){}; for (int l = 0; l < 4; ++l) if (alu32[l]) val33[l] = data1[alu27 + l];
            long long alu34 = (ridx5 * 6ll);
            long long alu35 = (alu19 + alu34);
            long long alu36 = (alu35 + alu22);
            float val37 = data2[alu36];
            vf32x4 vec38 = ((vf32x4){} + val37);
            vf32x4 alu39 = (val33 * vec38);
            vf32x4 alu40 = (val23 + alu39);
            acc0 = alu40;
            vf32x4 val41 = acc1;
            long long alu42 = (alu26 + -5ll);
            vi32x4 alu43 = __builtin_convertvector((alu29 < vec4), vi32x4);
            vi32x4 alu44 = (vec1 & alu43);
            vf32x4 val45 = (vf32x4){}; for (int l = 0; l < 4; ++l) if (alu44[l]) val45[l] = data1[alu42 + l];
            vf32x4 alu46 = (val45 * vec38);
            vf32x4 alu47 = (val41 + alu46);
            acc1 = alu47;
            vf32x4 val48 = acc2;
            long long alu49 = (alu36 + 1ll);
            float val50 = data2[alu49];
            vf32x4 vec51 = ((vf32x4){} + val50);
            vf32x4 alu52 = (val33 * vec51);
            vf32x4 alu53 = (val48 + alu52);
            acc2 = alu53;
            vf32x4 val54 = acc3;
            vf32x4 alu55 = (val45 * vec51);
            vf32x4 alu56 = (val54 + alu55);
            acc3 = alu56;
            vf32x4 val57 = acc4;
            long long alu58 = (alu36 + 2ll);
            float val59 = data2[alu58];
            vf32x4 vec60 = ((vf32x4){} + val59);
            vf32x4 alu61 = (val33 * vec60);
            vf32x4 alu62 = (val57 + alu61);
            acc4 = alu62;
            vf32x4 val63 = acc5;
            vf32x4 alu64 = (val45 * vec60);
            vf32x4 alu65 = (val63 + alu64);
            acc5 = alu65;
          }
        }
      }
      vf32x4 val66 = acc0;
      float val67 = data3[alu16];
      vf32x4 vec68 = ((vf32x4){} + val67);
      vf32x4 alu69 = (val66 + vec68);
      vf32x4 alu70 = ((vf32x4)(((alu69 > vec0) & (vi32x4)(alu69)) | (~(alu69 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu15], &alu70, sizeof(alu70));
      long long alu71 = (alu15 + 4ll);
      vf32x4 val72 = acc1;
      vf32x4 alu73 = (val72 + vec68);
      vf32x4 alu74 = ((vf32x4)(((alu73 > vec0) & (vi32x4)(alu73)) | (~(alu73 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu71], &alu74, sizeof(alu74));
      long long alu75 = (alu15 + 64ll);
      vf32x4 val76 = acc2;
      long long alu77 = (alu16 + 1ll);
      float val78 = data3[alu77];
      vf32x4 vec79 = ((vf32x4){} + val78);
      vf32x4 alu80 = (val76 + vec79);
      vf32x4 alu81 = ((vf32x4)(((alu80 > vec0) & (vi32x4)(alu80)) | (~(alu80 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu75], &alu81, sizeof(alu81));
      long long alu82 = (alu15 + 68ll);
      vf32x4 val83 = acc3;
      vf32x4 alu84 = (val83 + vec79);
      vf32x4 alu85 = ((vf32x4)(((alu84 > vec0) & (vi32x4)(alu84)) | (~(alu84 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu82], &alu85, sizeof(alu85));
      long long alu86 = (alu15 + 128ll);
      vf32x4 val87 = acc4;
      long long alu88 = (alu16 + 2ll);
      float val89 = data3[alu88];
      vf32x4 vec90 = ((vf32x4){} + val89);
      vf32x4 alu91 = (val87 + vec90);
      vf32x4 alu92 = ((vf32x4)(((alu91 > vec0) & (vi32x4)(alu91)) | (~(alu91 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu86], &alu92, sizeof(alu92));
      long long alu93 = (alu15 + 132ll);
      vf32x4 val94 = acc5;
      vf32x4 alu95 = (val94 + vec90);
      vf32x4 alu96 = ((vf32x4)(((alu95 > vec0) & (vi32x4)(alu95)) | (~(alu95 > vec0) & (vi32x4)(vec0))));
      __builtin_memcpy(&data0[alu93], &alu96, sizeof(alu96));
    }
  }
}
