"""From a `perf record` of the one-row step: the 64-byte code lines sampled in the C/C++ libraries
a decode step's layers run (our kernels, libtorch_cpu, libc10, torch's libgomp, libc), as
(library path, file offset) with their sample counts -> lines.json."""
import collections, json, re, subprocess, sys
data = sys.argv[1]
out = subprocess.run(["perf", "script", "-i", data, "--show-mmap-events", "-F", "ip,dso"], capture_output=True, text=True).stdout
maps = collections.defaultdict(list)  # path -> [(start, len, pgoff)]
want = re.compile(r"roseinfer_cpu_kernels|libtorch_cpu\.so|libc10\.so|torch/lib/libgomp|libc\.so\.6")
counts = collections.Counter()
for line in out.splitlines():
    if "PERF_RECORD_MMAP" in line:
        m = re.search(r"\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: r-xp (\S+)", line)
        if m and want.search(m.group(4)):
            maps[m.group(4)].append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
        continue
    m = re.match(r"\s*([0-9a-f]+) \((\S+)\)", line)
    if not m or not want.search(m.group(2)):
        continue
    ip, path = int(m.group(1), 16), m.group(2)
    for start, n, off in maps.get(path, ()):
        if start <= ip < start + n:
            counts[(path, (ip - start + off) // 64 * 64)] += 1
            break
min_count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
lines = [[p, o, c] for (p, o), c in counts.items() if c >= min_count]
by = collections.Counter(p.split("/")[-1] for p, _, _ in lines)
print(len(lines), "lines;", dict(by))
json.dump(lines, open(sys.argv[3] if len(sys.argv) > 3 else "lines.json", "w"))
