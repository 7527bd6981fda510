#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
extern "C" __global__ void __launch_bounds__(64, 1) r_64_2_4_6aa272(float* __restrict__ data0, const float* __restrict__ data1, const long long n) {
  _Bool alu0 = (((long long)threadIdx.x) < n);
  float acc0 = 0.0f;
  long long alu1 = (((long long)threadIdx.x) * 8ll);
  #pragma unroll 4
  for (long long ridx1 = 0; ridx1 < 2ll; ridx1++) {
    float val2 = acc0;
    long long alu3 = (ridx1 * 4ll);
    long long alu4 = (alu1 + alu3);
    float val5 = (alu0 ? data1[alu4] : (float)0);
    float alu6 = (val5 * 2.0f);
    long long alu7 = (alu4 + 1ll);
    float val8 = (alu0 ? data1[alu7] : (float)0);
    float alu9 = (val8 * 2.0f);
    float alu10 = (alu6 + alu9);
    long long alu11 = (alu4 + 2ll);
    float val12 = (alu0 ? data1[alu11] : (float)0);
    float alu13 = (val12 * 2.0f);
    long long alu14 = (alu4 + 3ll);
    float val15 = (alu0 ? data1[alu14] : (float)0);
    float alu16 = (val15 * 2.0f);
    float alu17 = (alu13 + alu16);
    float alu18 = (alu10 + alu17);
    float alu19 = (val2 + alu18);
    acc0 = alu19;
  }
  float val20 = acc0;
  if (alu0) data0[((long long)threadIdx.x)] = val20;
}
