# The placement against memory latency: region_handoff_ns, then pointer chases (lat.c) over 256 MB on each CPU, 8 MB on each, 1 MB on CPU 0.  lat_watch.py N_SAMPLES SLEEP_S
import ctypes, time, sys, os
import roseinfer.backends as b
k = b.load_cpu_kernels()
l = ctypes.CDLL(os.environ.get("LAT_SO", "/tmp/s45/lat.so")); l.chase_ns.restype = ctypes.c_double; l.chase_ns.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_int]
for i in range(int(sys.argv[1])):
    h = k.region_handoff_ns(2000)
    d0 = l.chase_ns(256 << 20, 2_000_000, 0); d1 = l.chase_ns(256 << 20, 2_000_000, 1)
    c0 = l.chase_ns(8 << 20, 2_000_000, 0); c1 = l.chase_ns(8 << 20, 2_000_000, 1); m0 = l.chase_ns(1 << 20, 2_000_000, 0)
    print(time.strftime('%H:%M:%S'), f"handoff {h:.0f} ns; DRAM chase cpu0 {d0:.0f} cpu1 {d1:.0f} ns; 8 MB chase cpu0 {c0:.1f} cpu1 {c1:.1f} ns; 1 MB cpu0 {m0:.1f} ns", flush=True)
    time.sleep(float(sys.argv[2]))
