#define LATHE_FN static __device__ inline
#define _Bool bool
template <class To, class From> LATHE_FN To lathe_bitcast(From x) { To y; memcpy(&y, &x, sizeof y); return y; }
extern "C" __global__ void __launch_bounds__(128, 1) r_3_1001_b2302f(float* __restrict__ data0, const float* __restrict__ data1) {
  __shared__ float local0[128];
  float acc0 = 0.0f;
  long long alu0 = (((long long)threadIdx.x) * 127ll);
  long long alu1 = (alu0 + 104ll);
  long long alu2 = (alu1 / 128ll);
  long long alu3 = (((long long)threadIdx.x) * -1ll);
  long long alu4 = (alu2 + alu3);
  long long alu5 = (alu4 + 8ll);
  long long alu6 = (((long long)blockIdx.x) * 1001ll);
  #pragma unroll 4
  for (long long ridx2 = 0; ridx2 < alu5; ridx2++) {
    float val7 = acc0;
    long long alu8 = (ridx2 * 128ll);
    long long alu9 = (alu8 + ((long long)threadIdx.x));
    long long alu10 = (alu9 + alu6);
    float val11 = data1[alu10];
    float alu12 = (val7 + val11);
    acc0 = alu12;
  }
  float val13 = acc0;
  local0[((long long)threadIdx.x)] = val13;
  __syncthreads();
  long long bar14 = ((long long)threadIdx.x + (long long)blockDim.x * ((long long)threadIdx.y + (long long)blockDim.y * (long long)threadIdx.z));
  _Bool alu15 = (bar14 < 16ll);
  float acc1 = 0.0f;
  #pragma unroll 4
  for (long long ridx3 = 0; ridx3 < 8ll; ridx3++) {
    float val16 = acc1;
    long long alu17 = (ridx3 * 16ll);
    long long alu18 = (bar14 + alu17);
    _Bool alu19 = (alu18 < 128ll);
    _Bool alu20 = (alu15 & alu19);
    float val21 = (alu20 ? local0[alu18] : (float)0);
    float alu22 = (alu20 ? val21 : 0.0f);
    float alu23 = (val16 + alu22);
    acc1 = alu23;
  }
  float val24 = acc1;
  if (alu15) local0[bar14] = val24;
  __syncthreads();
  long long bar25 = ((long long)threadIdx.x + (long long)blockDim.x * ((long long)threadIdx.y + (long long)blockDim.y * (long long)threadIdx.z));
  _Bool alu26 = (bar25 == 0ll);
  float acc2 = 0.0f;
  #pragma unroll 4
  for (long long ridx4 = 0; ridx4 < 16ll; ridx4++) {
    float val27 = acc2;
    float val28 = (alu26 ? local0[ridx4] : (float)0);
    float alu29 = (val27 + val28);
    acc2 = alu29;
  }
  float val30 = acc2;
  if (alu26) data0[((long long)blockIdx.x)] = val30;
}
