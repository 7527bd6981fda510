#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
extern "C" __global__ void __launch_bounds__(128, 1) E_91_1d79b7(float* __restrict__ data0, const float* __restrict__ data1, const float* __restrict__ data2) {
  _Bool alu0 = (((long long)threadIdx.x) < 91ll);
  float val1 = (alu0 ? data1[((long long)threadIdx.x)] : (float)0);
  float val2 = (alu0 ? data2[((long long)threadIdx.x)] : (float)0);
  float alu3 = (val1 * val2);
  float alu4 = (alu3 + 1.0f);
  float alu5 = (alu4 > 0.0f ? alu4 : 0.0f);
  if (alu0) data0[((long long)threadIdx.x)] = alu5;
}
