// Two Zen 3 cores' fp32 FMA peak: 12 independent chains of 8-lane FMAs per thread.
//   gcc -O3 -march=native -fopenmp docs/bench/session16/fma_peak.c -o /tmp/fma_peak
//   OMP_NUM_THREADS=1 /tmp/fma_peak; OMP_NUM_THREADS=2 /tmp/fma_peak
#include <immintrin.h>
#include <stdio.h>
#include <omp.h>
int main(){
  double t0=omp_get_wtime(); long iters=200000000;
  float res=0;
  #pragma omp parallel reduction(+:res)
  {
    __m256 a[12]; for(int i=0;i<12;i++) a[i]=_mm256_set1_ps(i*0.001f);
    __m256 x=_mm256_set1_ps(0.9999f), y=_mm256_set1_ps(0.00001f);
    for(long k=0;k<iters;k++){ for(int i=0;i<12;i++) a[i]=_mm256_fmadd_ps(a[i],x,y); }
    for(int i=0;i<12;i++) res+=a[i][0];
  }
  double t=omp_get_wtime()-t0; int n=omp_get_max_threads();
  printf("threads %d: %.1f GFLOP/s (%.2f s) %f\n", n, n*iters*12*16.0/t/1e9, t, res);
}
