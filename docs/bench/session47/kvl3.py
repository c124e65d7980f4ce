import ctypes, sys, time
k = ctypes.CDLL("/tmp/s47/kvl3.so"); k.run_mode.restype = ctypes.c_double; k.median_of.restype = ctypes.c_double
rt = ctypes.CDLL("/tmp/s46/rt.so"); rt.round_trip_ns.restype = ctypes.c_double
ck = ctypes.CDLL("/tmp/s47/clk.so"); ck.chain_ns.restype = ctypes.c_double
rounds, kv = int(sys.argv[1]), int(sys.argv[2])
names = ["stable", "swapped", "other-wrote", "no-stream", "flushed"]
for r in range(rounds):
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)
    trip = rt.round_trip_ns(4000)
    out = [f"GHz {1/ck.chain_ns(20000000,1,0):.2f}/{1/ck.chain_ns(20000000,0,1):.2f}"]
    for m in (0, 1, 2, 3, 4):
        k.run_mode(m, 20, kv, 0)
        out.append(f"{names[m]} {k.median_of(0, 20):6.1f}/{k.median_of(1, 20):6.1f}")
    print(time.strftime("%H:%M:%S"), f"rt {trip:4.0f}", " | ".join(out), flush=True)
