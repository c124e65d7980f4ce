"""One connection sends part of the request head and stops; another sends nothing at all. Does the server close them (and when)?"""
import socket, time, sys
port = int(sys.argv[1])
a = socket.create_connection(("127.0.0.1", port)); a.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
b = socket.create_connection(("127.0.0.1", port))
t = time.time()
for s, name in ((a, "partial head"), (b, "silent")):
    s.settimeout(max(0.1, 12 - (time.time() - t)))
    try:
        d = s.recv(100)
        print(f"{name}: server closed/answered after {time.time()-t:.1f}s: {d[:60]!r}")
    except socket.timeout:
        print(f"{name}: still open after {time.time()-t:.1f}s")
    s.close()
