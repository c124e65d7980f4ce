"""`roseinfer bench throughput`'s default workload (64 sequences, seed 0) as JSON token ids, for
engines outside this project's virtual environment (`openvino_offline.py`).

    PYTHONPATH=. .venv/bin/python docs/bench/session15/workload_json.py > workload.json
"""

import argparse
import json

from roseinfer.bench.throughput import DEFAULTS, make_workload
from roseinfer.loader import smollm2_path
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf


def main() -> None:
    args = argparse.Namespace(seed=0, **DEFAULTS)
    tok = tokenizer_from_gguf(smollm2_path())
    requests = make_workload(args, tok.vocab_size, tok.special_token_ids)
    print(
        json.dumps([{"prompt": r.prompt_token_ids, "output_len": r.output_len} for r in requests])
    )


if __name__ == "__main__":
    main()
