// Does a one-row step's K/V stay in L3 between steps, and which thread's L3?
// Two threads pinned to CPU 0 and 1 run 30 "layers": each streams its half of the layer's
// int8 weights (3.54 MB, prefetchnta 4 KB ahead as the kernels do), a barrier, then reads its
// half of the layer's K/V (kv_bytes, timed), a barrier. Modes: 0 stable halves, 1 halves swapped
// every step, 2 the other thread rewrites the half before each step, 3 no weight stream.
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define LAYERS 30
static long W_LAYER = 3540000, KV_LAYER;
static char *W, *KV;
static _Alignas(64) atomic_long bar_count, bar_gen;
static int MODE, STEPS;
static double times[2][64];
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void barrier(void){
  long g = atomic_load(&bar_gen);
  if (atomic_fetch_add(&bar_count,1)==1){atomic_store(&bar_count,0);atomic_store(&bar_gen,g+1);}
  else while(atomic_load(&bar_gen)==g) _mm_pause();
}
static __m512i stream(const char* p, long n){
  __m512i acc=_mm512_setzero_si512();
  for(long i=0;i<n;i+=64){ asm volatile("prefetchnta %0"::"m"(p[i+4096])); acc=_mm512_add_epi32(acc,_mm512_load_si512(p+i)); }
  return acc;
}
static __m512i readkv(const char* p, long n){
  __m512i acc=_mm512_setzero_si512();
  for(long i=0;i<n;i+=64){ asm volatile("prefetcht0 %0"::"m"(p[i+512])); acc=_mm512_add_epi32(acc,_mm512_load_si512(p+i)); }
  return acc;
}
static volatile long sink;
static void* worker(void* a){
  int t=(int)(long)a; cpu_set_t s; CPU_ZERO(&s); CPU_SET(t,&s); sched_setaffinity(0,sizeof s,&s);
  long half=KV_LAYER/2, wh=W_LAYER/2;
  __m512i acc=_mm512_setzero_si512();
  for(int step=0;step<STEPS;step++){
    int mine = (MODE==1) ? (t^(step&1)) : t;
    if(MODE==4){ for(int l=0;l<LAYERS;l++) for(long i=0;i<half;i+=64) _mm_clflushopt(KV+l*KV_LAYER+mine*half+i); _mm_sfence(); }
    if(MODE==2){ for(int l=0;l<LAYERS;l++) memset(KV+l*KV_LAYER+(1-t)*half, step, half); }
    barrier();
    double kv=0;
    for(int l=0;l<LAYERS;l++){
      if(MODE!=3) acc=_mm512_add_epi32(acc,stream(W+(long)l*W_LAYER+t*wh, wh));
      barrier();
      double t0=now();
      acc=_mm512_add_epi32(acc,readkv(KV+l*KV_LAYER+mine*half, half));
      kv+=now()-t0;
      barrier();
    }
    times[t][step]=kv*1e6;
  }
  sink+=_mm512_reduce_add_epi32(acc);
  return 0;
}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
// median over steps 2.. of thread t's K/V read time (us a step)
double run_mode(int mode, int steps, long kv_layer, int t){
  MODE=mode; STEPS=steps; KV_LAYER=kv_layer;
  if(!W){ W=aligned_alloc(2<<20,(long)LAYERS*W_LAYER+8192+(2<<20)); memset(W,1,(long)LAYERS*W_LAYER+8192);
          KV=aligned_alloc(2<<20,LAYERS*(4L<<20)); memset(KV,2,LAYERS*(4L<<20)); }
  pthread_t th[2]; for(long i=0;i<2;i++) pthread_create(&th[i],0,worker,(void*)i);
  for(int i=0;i<2;i++) pthread_join(th[i],0);
  double v[64]; int n=steps-2; memcpy(v,times[t]+2,n*sizeof(double)); qsort(v,n,sizeof(double),cmp);
  return v[n/2];
}
double median_of(int t, int steps){
  double v[64]; int n=steps-2; memcpy(v,times[t]+2,n*sizeof(double)); qsort(v,n,sizeof(double),cmp);
  return v[n/2];
}
