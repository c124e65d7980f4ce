#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 24
int main(int argc,char**argv){
  __m512 a[N]; for(int i=0;i<N;i++) a[i]=_mm512_set1_ps(0.f);
  __m512 x=_mm512_set1_ps(1e-9f*argc), y=_mm512_set1_ps(1e-9f);
  long n=100000000;
  double t=now();
  for(long i=0;i<n;i++){
#pragma GCC unroll 24
    for(int j=0;j<N;j++) a[j]=_mm512_fmadd_ps(x,y,a[j]); }
  double dt=now()-t; float s=0; for(int j=0;j<N;j++) s+=_mm512_reduce_add_ps(a[j]);
  printf("fma zmm: %.1f GFLOP/s (%g)\n", n*N*32/dt/1e9, s);
  __m512bh xb=(__m512bh)_mm512_set1_epi16(0x3f80+argc), yb=xb;
  for(int i=0;i<N;i++) a[i]=_mm512_set1_ps(0.f);
  t=now();
  for(long i=0;i<n;i++){
#pragma GCC unroll 24
    for(int j=0;j<N;j++) a[j]=_mm512_dpbf16_ps(a[j],xb,yb); }
  dt=now()-t; s=0; for(int j=0;j<N;j++) s+=_mm512_reduce_add_ps(a[j]);
  printf("dpbf16 zmm: %.1f GFLOP/s (%g)\n", n*N*64/dt/1e9, s);
}
