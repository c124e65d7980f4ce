"""Session 36: writes an experiment roseinfer/kernels/parallel.h holding two teams, a tree's
WaitingTeam and BASE's (as OldTeam); with AB set, each region picks BASE's in odd 20 ms windows of
the wall clock, so session 34's ab_clock.py reads the new team as "on". From the repository root:
    git show 1211b94:roseinfer/kernels/parallel.h > /tmp/base_parallel.h
    cp roseinfer/kernels/parallel.h /tmp/new_parallel.h
    python docs/bench/session36/make_team_ab.py /tmp/base_parallel.h /tmp/new_parallel.h
    AB=1 PYTHONPATH=. python docs/bench/session34/ab_clock.py int8 3 1"""
import sys
base = open(sys.argv[1]).read()  # BASE's parallel.h
new = open(sys.argv[2]).read()  # the team to compare
b0 = base.index("class WaitingTeam {"); b1 = base.index("// The CPUs this process may run on")
old_cls = base[b0:b1].replace("class WaitingTeam {", "class OldTeam {")
s = new.replace("#include <mutex>\n", "#include <mutex>\n#include <cstdlib>\n", 1)
i = s.index("// The CPUs this process may run on")
s = s[:i] + old_cls + s[i:]
s = s.replace('''inline WaitingTeam*& current_team() {
  thread_local WaitingTeam* team = nullptr;
  return team;
}''', '''inline WaitingTeam*& current_team() {
  thread_local WaitingTeam* team = nullptr;
  return team;
}
inline OldTeam*& current_old_team() {
  thread_local OldTeam* team = nullptr;
  return team;
}''')
s = s.replace('''void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  WaitingTeam* team = current_team();''', '''void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  if (OldTeam* old = current_old_team()) {
    const int64_t range = end - begin;
    if (range <= 0) return;
    if (range <= grain || range == 1 || old->size() < 2 || old->busy()) {
      c10::ParallelGuard guard(true);
      f(begin, end);
      return;
    }
    const int64_t parts =
        grain > 0 ? std::min<int64_t>(old->size(), (range + grain - 1) / grain) : old->size();
    const int64_t chunk = (range + parts - 1) / parts;
    old->run(static_cast<int>(parts), [&](int part) {
      const int64_t b = begin + part * chunk;
      if (b < end) f(b, std::min(end, b + chunk));
    });
    return;
  }
  WaitingTeam* team = current_team();''')
j0 = s.index("  WaitingTeam team;\n  std::exception_ptr error;")
j1 = s.index("  if (error) std::rethrow_exception(error);\n}\n", j0)
region = s[j0:j1]
old_region = region.replace("WaitingTeam team;", "OldTeam team;").replace("current_team()", "current_old_team()")
s = s[:j0] + '''  static const bool ab = getenv("AB") != nullptr;
  const bool use_old = ab && (std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count() / 20 % 2 == 1);
  if (use_old) {
''' + old_region + '''    if (error) std::rethrow_exception(error);
    return;
  }
''' + region + s[j1:]
open("roseinfer/kernels/parallel.h", "w").write(s)
