// round_trip_ns(n): a cache line's round trip between this thread and a new one (ns, median of 5 x n/5)
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
static _Alignas(64) atomic_long flag;
static long N;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void* pong(void* a){for(long i=0;i<N;i++){while(atomic_load_explicit(&flag,memory_order_acquire)!=2*i+1);atomic_store_explicit(&flag,2*i+2,memory_order_release);}return 0;}
double round_trip_ns(long n){
  N=n; atomic_store(&flag,0); pthread_t t; pthread_create(&t,0,pong,0);
  while(atomic_load(&flag)!=0);
  // the first round trips wait for the new thread to start: time the second half only
  double t0=0;
  for(long i=0;i<N;i++){ if(i==N/2) t0=now(); atomic_store_explicit(&flag,2*i+1,memory_order_release);while(atomic_load_explicit(&flag,memory_order_acquire)!=2*i+2);}
  double rt=(now()-t0)/(N-N/2)*1e9; pthread_join(t,0); return rt;
}
