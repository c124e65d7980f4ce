# The placement over time: region_handoff_ns, the pthread round trip (rt.c), the sum.  watch.py N_SAMPLES SLEEP_S
import os, roseinfer.backends as b, time, ctypes, torch, sys
k=b.load_cpu_kernels()
rt=ctypes.CDLL(os.environ.get("RT_SO", "/tmp/s45/rt.so")); rt.round_trip_ns.restype=ctypes.c_double
a=torch.ones(128*1024*1024)
for i in range(int(sys.argv[1])):
    h=k.region_handoff_ns(2000); r=rt.round_trip_ns(2000)
    a.sum(); t=time.perf_counter(); a.sum(); bw=a.numel()*4/(time.perf_counter()-t)/1e9
    print(time.strftime('%H:%M:%S'), f"handoff {h:.0f} ns, round trip {r:.0f} ns, sum {bw:.1f} GB/s", flush=True); time.sleep(float(sys.argv[2]))
