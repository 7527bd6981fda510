#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
extern "C" __global__ void __launch_bounds__(256, 1) r_300_37_96827d(float* __restrict__ data0, const float* __restrict__ data1) {
  long long alu0 = (((long long)blockIdx.x) * 256ll);
  long long alu1 = (alu0 + ((long long)threadIdx.x));
  _Bool alu2 = (alu1 < 300ll);
  float acc0 = 0.0f;
  long long alu3 = (((long long)blockIdx.x) * 9472ll);
  long long alu4 = (((long long)threadIdx.x) * 37ll);
  #pragma unroll 4
  for (long long ridx1 = 0; ridx1 < 37ll; ridx1++) {
    float val5 = acc0;
    long long alu6 = (ridx1 + alu3);
    long long alu7 = (alu6 + alu4);
    float val8 = (alu2 ? data1[alu7] : (float)0);
    float alu9 = (val5 + val8);
    acc0 = alu9;
  }
  float val10 = acc0;
  if (alu2) data0[alu1] = val10;
}
