#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 24
int main(int argc,char**argv){
  __m512i a[N]; for(int i=0;i<N;i++) a[i]=_mm512_set1_epi32(0);
  __m512i x=_mm512_set1_epi8(argc), y=_mm512_set1_epi8(1);
  long n=100000000;
  double t=now();
  for(long i=0;i<n;i++){
#pragma GCC unroll 24
    for(int j=0;j<N;j++) a[j]=_mm512_dpbusd_epi32(a[j],x,y); }
  double dt=now()-t; long s=0; for(int j=0;j<N;j++) s+=_mm512_reduce_add_epi32(a[j]);
  printf("vpdpbusd zmm: %.1f GMAC/s (%ld)\n", n*N*64/dt/1e9, s);
}
