# Server on a copy of tinysmol whose generation_config.json sets repetition_penalty 1.3
# (/tmp/s51/review/m_gc: top_k 1, temperature 0.9, max_new_tokens 5, repetition_penalty 1.3).
# The start-up line says: "sampling defaults ...: ..., repetition_penalty 1.3, ...".
# Then repeat_last_n 64 (and 0) are accepted as "no penalty is set", but a penalty is in effect:
cd /tmp/s51/review && /work/main/.venv/bin/python req.py 18607 \
 'show("repeat_last_n 64", C, {"prompt": P, "repeat_last_n": 64})' \
 'show("repeat_last_n 0", C, {"prompt": P, "repeat_last_n": 0})' \
 'show("same with penalty sent", C, {"prompt": P, "repeat_last_n": 64, "repeat_penalty": 1.3})'
