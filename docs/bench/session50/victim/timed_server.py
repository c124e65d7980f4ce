"""The server with each non-streamed response's writing (`serving.response_body`, on its worker
thread) timed: wall and thread CPU, to stderr."""
import sys, time
import roseinfer.server.serving as serving
import roseinfer.server.app as app

original = serving.response_body


def timed(*args, **kwargs):
    t0, c0 = time.perf_counter(), time.thread_time()
    out = original(*args, **kwargs)
    print(f"response_body {len(out) / 1e6:.1f} MB: wall {time.perf_counter() - t0:.3f} s, "
          f"cpu {time.thread_time() - c0:.3f} s", file=sys.stderr, flush=True)
    return out


app.response_body = timed
from roseinfer.server.cli import serve_main  # noqa: E402

sys.exit(serve_main(sys.argv[1:]))
