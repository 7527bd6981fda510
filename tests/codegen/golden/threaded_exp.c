#include <math.h>
void E_256_512_6d12a0(void** bufs, const long long* vals) {
  float* restrict data0 = (float*)bufs[0];
  const float* restrict data1 = (const float*)bufs[1];
  const long long core_id = vals[0];
  long long alu0 = (core_id * 65536ll);
  for (long long ridx0 = 0; ridx0 < 128ll; ridx0++) {
    long long alu1 = (ridx0 * 512ll);
    for (long long ridx1 = 0; ridx1 < 512ll; ridx1++) {
      long long alu2 = (ridx1 + alu0);
      long long alu3 = (alu2 + alu1);
      float val4 = data1[alu3];
      float alu5 = (val4 * 1.442695f);
      _Bool alu6 = (alu5 != alu5);
      _Bool alu7 = (alu5 < -150.0f);
      _Bool alu8 = (128.0f < alu5);
      float alu9 = (alu8 ? 128.0f : alu5);
      float alu10 = (alu7 ? -150.0f : alu9);
      _Bool alu11 = (alu10 < 0.0f);
      float alu12 = (alu11 ? -0.5f : 0.5f);
      float alu13 = (alu10 + alu12);
      float alu14 = truncf(alu13);
      int cast15 = ((int)(alu14));
      _Bool alu16 = (((int)127) < cast15);
      float alu17 = (alu10 - alu14);
      float alu18 = (0.00015353362f * alu17);
      float alu19 = (alu18 + 0.0013398874f);
      float alu20 = (alu19 * alu17);
      float alu21 = (alu20 + 0.009618437f);
      float alu22 = (alu21 * alu17);
      float alu23 = (alu22 + 0.055503324f);
      float alu24 = (alu23 * alu17);
      float alu25 = (alu24 + 0.24022648f);
      float alu26 = (alu25 * alu17);
      float alu27 = (alu26 + 0.6931472f);
      float alu28 = (alu27 * alu17);
      float alu29 = (alu28 + 1.0f);
      float alu30 = (alu29 + alu29);
      _Bool alu31 = (cast15 < ((int)-126));
      int alu32 = (cast15 + ((int)126));
      int alu33 = (alu31 ? alu32 : ((int)0));
      int alu34 = (alu33 + ((int)127));
      int alu35 = (alu34 << ((int)23));
      unsigned int cast36 = ({ union { int a; unsigned int b; } u_; u_.a = alu35; u_.b; });
      float cast37 = ({ union { unsigned int a; float b; } u_; u_.a = cast36; u_.b; });
      float alu38 = (alu29 * cast37);
      float alu39 = (alu31 ? alu38 : alu29);
      float alu40 = (alu16 ? alu30 : alu39);
      int alu41 = (alu31 ? ((int)-126) : cast15);
      int alu42 = (alu16 ? ((int)127) : alu41);
      int alu43 = (alu42 + ((int)127));
      int alu44 = (alu43 << ((int)23));
      unsigned int cast45 = ({ union { int a; unsigned int b; } u_; u_.a = alu44; u_.b; });
      float cast46 = ({ union { unsigned int a; float b; } u_; u_.a = cast45; u_.b; });
      float alu47 = (alu40 * cast46);
      float alu48 = (alu6 ? alu5 : alu47);
      data0[alu3] = alu48;
    }
  }
}
