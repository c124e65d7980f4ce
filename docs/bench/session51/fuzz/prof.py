import cProfile, pstats, sys
sys.argv=["fuzz.py","1","1","300"]
import fuzz
cProfile.run("fuzz.main()", "/tmp/s51/fuzz/prof.out")
p=pstats.Stats("/tmp/s51/fuzz/prof.out"); p.sort_stats("cumulative").print_stats(40)
