"""Session 34's throwaway timers, applied to a tree at `e4d0b84` (run from its root): where a
one-row step's region spends its time between the parallel jobs. parallel.h counts, per step,
the main thread's time between one job's end and the next job's start ("serial"), each job's
time on both threads, and the job index within a layer (5 jobs a layer: attention, o_proj,
gate_up, down, the next qkv); vnni_linear.cpp and decode_stack.cpp add the linears' set-up
before the quantizing, the quantizing, the norms, and the attention call as a whole. Printed to
stderr every 300 steps by `run300.py`.

    python docs/bench/session34/gap_timers.py && PYTHONPATH=. python run300.py int8 2
"""

p = "roseinfer/kernels/parallel.h"
s = open(p).read()
s = s.replace("#include <mutex>\n", "#include <mutex>\n#include <chrono>\n#include <cstdio>\n", 1)
s = s.replace(
    "class WaitingTeam {\n public:",
    """inline uint64_t now_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }
struct Prof { uint64_t gap[8]={0}; uint64_t chunkm[8]={0}; uint64_t chunkw[8]={0}; int idx=0;
  uint64_t lin_prep=0, lin_after=0, norm=0, attn_total=0, lin_n=0, lin_quant=0;
  uint64_t serial=0, main_chunk=0, main_wait=0, worker_lag=0, worker_chunk=0, jobs=0, steps=0, last_done=0; };
inline Prof& prof() { static Prof p; return p; }
class WaitingTeam {
 public:""",
)
s = s.replace(
    """    busy_ = true;
    const uint64_t job = go_.load(std::memory_order_relaxed) + 1;
    go_.store(job, std::memory_order_release);""",
    """    busy_ = true;
    const uint64_t job = go_.load(std::memory_order_relaxed) + 1;
    uint64_t t0 = now_ns(); Prof& P = prof();
    if (P.last_done) { P.serial += t0 - P.last_done; if (P.idx >= 1 && P.idx <= 150) P.gap[(P.idx - 1) % 5] += t0 - P.last_done; }
    go_.store(job, std::memory_order_release);""",
)
s = s.replace(
    """    for (int t = 1; t < size_; ++t)
      while (done_[t].jobs.load(std::memory_order_acquire) != job) spin_pause();
    busy_ = false;""",
    """    uint64_t t1 = now_ns();
    for (int t = 1; t < size_; ++t)
      while (done_[t].jobs.load(std::memory_order_acquire) != job) spin_pause();
    uint64_t t2 = now_ns();
    if (P.idx >= 1 && P.idx <= 150) { P.chunkm[(P.idx - 1) % 5] += t2 - t0; P.chunkw[(P.idx - 1) % 5] += worker_end_ - t0; }
    P.idx++;
    P.main_chunk += t1 - t0; P.main_wait += t2 - t1; P.jobs++; P.last_done = t2;
    P.worker_lag += worker_begin_ - t0; P.worker_chunk += worker_end_ - worker_begin_;
    busy_ = false;""",
)
s = s.replace(
    "      if (tid < parts_) {\n        try {",
    "      if (tid == 1) worker_begin_ = now_ns();\n      if (tid < parts_) {\n        try {",
)
s = s.replace(
    "      done_[tid].jobs.store(job, std::memory_order_release);\n    }",
    "      if (tid == 1) worker_end_ = now_ns();\n      done_[tid].jobs.store(job, std::memory_order_release);\n    }",
)
s = s.replace(
    "  int size_ = 1;\n  alignas(64)",
    "  alignas(64) uint64_t worker_begin_ = 0, worker_end_ = 0;\n  int size_ = 1;\n  alignas(64)",
)
s = s.replace(
    "      current_team() = nullptr;\n      team.release();",
    """      current_team() = nullptr;
      team.release();
      { Prof& P = prof(); P.last_done = 0; P.idx = 0;
        if (P.steps % 300 == 299) for (int k = 0; k < 5; ++k)
          fprintf(stderr, "  job %d: gap before %.2f us, job %.2f us, worker done at %.2f\\n", k,
                  P.gap[k] / 30.0 / 299e3, P.chunkm[k] / 30.0 / 299e3, P.chunkw[k] / 30.0 / 299e3);
        if (++P.steps % 300 == 0) { double n = P.steps;
          fprintf(stderr, "  linear prep %.1f quant %.1f after %.1f norm %.1f attention call %.1f (us a step; %.1f linears)\\n",
            P.lin_prep / n / 1e3, P.lin_quant / n / 1e3, P.lin_after / n / 1e3, P.norm / n / 1e3, P.attn_total / n / 1e3, P.lin_n / n);
          fprintf(stderr, "PROF us a step: jobs %.1f serial %.1f main_chunk %.1f main_wait %.1f worker_lag %.1f worker_chunk %.1f\\n",
            P.jobs / n, P.serial / n / 1e3, P.main_chunk / n / 1e3, P.main_wait / n / 1e3, P.worker_lag / n / 1e3, P.worker_chunk / n / 1e3);
          P = Prof(); } }""",
)
open(p, "w").write(s)

p = "roseinfer/kernels/vnni_linear.cpp"
s = open(p).read()
s = s.replace(
    '  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), name, ": x must be contiguous [M, K]");\n  TORCH_CHECK(packed.dim() == 4',
    '  const uint64_t te = now_ns(); uint64_t tq = 0, tp = 0;\n  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), name, ": x must be contiguous [M, K]");\n  TORCH_CHECK(packed.dim() == 4',
)
s = s.replace(
    "    quantize_activations(x.data_ptr<Out>(), M, K, q.data(), scales.data(), correction.data());",
    "    tq = now_ns();\n    quantize_activations(x.data_ptr<Out>(), M, K, q.data(), scales.data(), correction.data());\n    tp = now_ns();",
)
s = s.replace(
    "  dispatch(x.scalar_type(), name, run);\n  return y;",
    "  dispatch(x.scalar_type(), name, run);\n  if (current_team() != nullptr) { Prof& P = prof(); P.lin_prep += tq - te; P.lin_quant += tp - tq; P.lin_n++; P.lin_after += now_ns() - P.last_done; }\n  return y;",
)
open(p, "w").write(s)

p = "roseinfer/kernels/decode_stack.cpp"
s = open(p).read()
s = s.replace(
    """    x = i == 0 ? rms_norm(residual, layer.input_norm, eps_)
               : add_rms_norm(x, residual, layer.input_norm, eps_);""",
    """    uint64_t tn = now_ns();
    x = i == 0 ? rms_norm(residual, layer.input_norm, eps_)
               : add_rms_norm(x, residual, layer.input_norm, eps_);
    prof().norm += now_ns() - tn;""",
)
s = s.replace(
    "      attn = paged_decode_attention_qkv(qkv,",
    "      tn = now_ns();\n      attn = paged_decode_attention_qkv(qkv,",
)
s = s.replace(
    """    x = layer.o_proj(attn.view({rows, q_size}));
    x = add_rms_norm(x, residual, layer.post_norm, eps_);""",
    """    prof().attn_total += now_ns() - tn;
    x = layer.o_proj(attn.view({rows, q_size}));
    tn = now_ns();
    x = add_rms_norm(x, residual, layer.post_norm, eps_);
    prof().norm += now_ns() - tn;""",
)
open(p, "w").write(s)
print("timers applied")
