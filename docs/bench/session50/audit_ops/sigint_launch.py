# Launch the server with SIGINT's default handler restored (a background shell job starts with SIGINT ignored, and Python then keeps it ignored), as a terminal's Ctrl-C would find it.
import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["roseinfer.server"] + sys.argv[1:]
runpy.run_module("roseinfer.server", run_name="__main__")
