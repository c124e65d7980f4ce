"""Busy 0.1 ms of every 0.9 ms in even 20 ms wall-clock windows only (idle in odd ones), for
ab_clock.py's classing: its "on" side is the disturbed one."""
import sys, time
end = time.time() + float(sys.argv[1])
busy = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
while time.time() < end:
    now = time.time()
    if int(now * 1000) // 200 % 2 == 0:
        t = time.perf_counter()
        while time.perf_counter() - t < busy:
            pass
        time.sleep(0.0008)
    else:
        time.sleep(max(0.0, 0.200 - (now * 1000 % 200) / 1000))
