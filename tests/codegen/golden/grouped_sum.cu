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
  _Bool last14 = (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0);
  float acc1 = 0.0f;
  #pragma unroll 4
  for (long long ridx3 = 0; ridx3 < 128ll; ridx3++) {
    float val15 = acc1;
    float val16 = (last14 ? local0[ridx3] : (float)0);
    float alu17 = (val15 + val16);
    acc1 = alu17;
  }
  float val18 = acc1;
  if (last14) data0[((long long)blockIdx.x)] = val18;
}
