// ns for n dependent scalar adds on each of the two threads (CPU 0 and 1) at once, and alone
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double res[2]; static long N;
static void* w(void* a){ int t=(int)(long)a; cpu_set_t s; CPU_ZERO(&s); CPU_SET(t,&s); sched_setaffinity(0,sizeof s,&s);
  long x=1; double t0=now(); for(long i=0;i<N;i++) asm volatile("add $1, %0" : "+r"(x)); res[t]=(now()-t0)/N*1e9; return 0; }
// returns ns per add on thread t (both run at once when both != 0)
double chain_ns(long n, int both, int t){ N=n; pthread_t th[2];
  if(both){ for(long i=0;i<2;i++) pthread_create(&th[i],0,w,(void*)i); for(int i=0;i<2;i++) pthread_join(th[i],0); }
  else { pthread_create(&th[0],0,w,(void*)(long)t); pthread_join(th[0],0); }
  return res[t]; }
