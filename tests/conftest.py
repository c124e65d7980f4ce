"""Shared fixtures: tiny random-weight models built with transformers and saved to temp dirs."""

from __future__ import annotations

import contextlib
import json

import pytest
import torch

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! How are you today? I am fine, thank you.",
    "def add(a, b):\n    return a + b\n",
    "Paris is the capital of France. Berlin is the capital of Germany.",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024",
] * 20

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tokenizer(
    vocab_size: int = 384,
    corpus: list[str] | None = None,
    chat_template: bool = True,
    special_tokens: list[str] = SPECIAL_TOKENS,
):
    """A byte-level BPE tokenizer trained on a tiny corpus (no hub access needed)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS if corpus is None else corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    return fast


TINY_CONFIGS = {
    "gpt2": dict(
        architectures=["GPT2LMHeadModel"],
        model_type="gpt2",
        n_embd=64,
        n_layer=2,
        n_head=4,
        n_positions=256,
    ),
    "llama": dict(
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rope_theta=500000.0,
        tie_word_embeddings=False,
        rope_scaling={
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
    ),
    "llama_tied": dict(
        architectures=["LlamaForCausalLM"],
        model_type="llama",
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=1,
        max_position_embeddings=256,
        rope_theta=100000.0,
        tie_word_embeddings=True,
    ),
    "mistral": dict(
        architectures=["MistralForCausalLM"],
        model_type="mistral",
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        sliding_window=None,
        tie_word_embeddings=False,
    ),
    "qwen2": dict(
        architectures=["Qwen2ForCausalLM"],
        model_type="qwen2",
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        use_sliding_window=False,
    ),
    "qwen3": dict(
        architectures=["Qwen3ForCausalLM"],
        model_type="qwen3",
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        use_sliding_window=False,
    ),
}


def make_tiny_model(kind: str, path: str, seed: int = 0,
                    special_tokens: list[str] = SPECIAL_TOKENS,
                    added_tokens: tuple[str, ...] = (),
                    context: int | None = None) -> str:  # fmt: skip
    """Save a random-weight HF model of `kind` (and a tokenizer with `special_tokens`, and
    `added_tokens` as plain added tokens, written in the text as Qwen3's `<think>`; `context`:
    its max_position_embeddings, where not the kind's) to `path`; returns `path`."""
    import transformers

    tokenizer = build_tokenizer(special_tokens=special_tokens)
    tokenizer.add_tokens(list(added_tokens))
    cfg = dict(TINY_CONFIGS[kind])
    if context is not None:
        cfg["max_position_embeddings"] = context
    arch = cfg.pop("architectures")[0]
    model_type = cfg.pop("model_type")
    config = transformers.AutoConfig.for_model(
        model_type,
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **cfg,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, arch)(config).eval()
    with torch.no_grad():  # larger weights than the default init, so logits are not all near-equal
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0, 0.08)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """Factory: tiny_model_dir(kind) -> directory with a saved random model of that kind."""
    cache: dict[str, str] = {}

    def make(kind: str) -> str:
        if kind not in cache:
            cache[kind] = make_tiny_model(kind, str(tmp_path_factory.mktemp(kind)))
        return cache[kind]

    return make


def crowded_llm(model_dir: str):
    """An offline LLM that batches few sequences and chunks prompts (3 sequences, 16 tokens a
    step, blocks of 4): requests share steps and prompts span several of them."""
    from roseinfer import LLM

    return LLM(model=model_dir, dtype="float32", block_size=4, num_kv_blocks=256, max_num_seqs=3,
               max_num_batched_tokens=16, lone_prefill_tokens=0)  # fmt: skip


def record_preemptions(llm) -> list[int]:
    """The ids of the sequences `llm`'s scheduler preempts from now on (a spy on it)."""
    preempted: list[int] = []
    scheduler = llm.engine.scheduler
    original = scheduler._preempt

    def spy(seq):
        preempted.append(seq.seq_id)
        return original(seq)

    scheduler._preempt = spy
    return preempted


def assert_tile_tasks(
    flat: torch.Tensor, want: torch.Tensor, group: int, task_tiles: int = 3
) -> None:
    """`flat` (a packed weight, flattened) holds `want` [N, K] as the linear kernels pack it
    (`roseinfer/kernels/tile_tasks.h`): tiles of 16 outputs, `group` inputs per load, a task's
    tiles (`task_tiles`, the last task what is left) interleaved load by load,
    [K/group][tiles][16][group]."""
    n_out, k = want.shape
    assert flat.numel() == n_out * k
    for out in range(n_out):
        tile, o = divmod(out, 16)
        first = tile // task_tiles * task_tiles  # the task's first tile
        tiles = min(task_tiles, n_out // 16 - first)
        for i in range(k):
            p, j = divmod(i, group)
            at = first * k * 16 + ((p * tiles + tile - first) * 16 + o) * group + j
            assert flat[at] == want[out, i], (out, i)


def prefill_logits(model: torch.nn.Module, ids: torch.Tensor, block_size: int = 16) -> torch.Tensor:
    """Logits [T, V] of our model (not an engine) prefilling one sequence of T tokens through
    the paged-attention forward, reference attention, fp32 cache."""
    from roseinfer.layers.attention import AttentionMetadata, ForwardContext, ReferenceAttention
    from roseinfer.layers.kv_cache import KVCache

    t = ids.numel()
    num_blocks = -(-t // block_size)
    meta = AttentionMetadata(
        query_start_loc=torch.tensor([0, t]),
        context_lens=torch.tensor([t]),
        slot_mapping=torch.arange(t),
        block_tables=torch.arange(num_blocks)[None],
        query_lens=[t],
        context_lens_host=[t],
        num_decode_seqs=int(t == 1),
        block_size=block_size,
    )
    attention = ReferenceAttention()
    cache = KVCache(model.config, num_blocks, block_size, torch.float32, "cpu")
    ctx = ForwardContext(attention.prepare(meta), attention, cache)
    with torch.no_grad():
        return model.compute_logits(model(ids, torch.arange(t), ctx))


def lines_run(module_file: str, call):
    """(call(), how many lines the interpreter ran in files named `module_file`): a measure of a
    call's Python work that, unlike a timing, a test can assert."""
    import sys

    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if frame.f_code.co_filename.endswith(module_file):
            lines += event == "line"
        return trace

    sys.settrace(trace)
    try:
        result = call()
    finally:
        sys.settrace(None)
    return result, lines


def smollm2_gguf_path() -> str:
    from roseinfer.loader import smollm2_path

    return smollm2_path()


@pytest.fixture(scope="session", autouse=True)
def cpu_kernels_built() -> None:
    """Build (or load) the C++ kernels once, first: a server subprocess started by a test must
    not spend its startup budget on the ~1 min first build."""
    from roseinfer.kernels import load_cpu_kernels

    load_cpu_kernels()


@contextlib.contextmanager
def torch_threads(n: int):
    """torch's intra-op thread count set to `n` inside the block (more than the cores is fine
    for correctness), restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def serve_in_process(model_dir: str, num_kv_blocks: int = 64, server_config=None):
    """(app, base url) of the OpenAI server over `model_dir` (float32), in-process (uvicorn
    in a thread): seconds cheaper than a subprocess. `server_config`: a `ServerConfig` (its host
    and port are not used: 127.0.0.1 and a free port)."""
    import socket
    import threading
    import time

    import uvicorn

    from roseinfer.config import EngineConfig
    from roseinfer.engine import InferenceEngine
    from roseinfer.engine.client import EngineClient
    from roseinfer.server.app import create_app
    from roseinfer.server.cli import uvicorn_config
    from roseinfer.server.config import ServerConfig

    engine = InferenceEngine(
        EngineConfig(model=model_dir, dtype="float32", num_kv_blocks=num_kv_blocks)
    )
    server_config = server_config or ServerConfig()
    app = create_app(EngineClient(engine.new_core()), server_config)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(  # as served
        uvicorn_config(app, "127.0.0.1", port, "warning", server_config.request_timeout)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


FIM = ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>",
       "<|file_sep|>"]  # fmt: skip


@pytest.fixture(scope="session")
def fim_model(tmp_path_factory):
    """A tiny random qwen2 whose vocabulary has Qwen-Coder's FIM tokens (`FIM`); a 4,096-token
    context: room for the project's lines beside llama.cpp's 2,048-token batch."""
    import json

    path = make_tiny_model("qwen2", str(tmp_path_factory.mktemp("qwen2_fim")),
                           special_tokens=SPECIAL_TOKENS + FIM)  # fmt: skip
    with open(f"{path}/config.json") as f:
        config = json.load(f)
    with open(f"{path}/config.json", "w") as f:
        json.dump({**config, "max_position_embeddings": 4096}, f)
    return path


@pytest.fixture(scope="session")
def tiny_server(tiny_model_dir):
    """The tiny random llama served in-process, shared by the tests of the HTTP surface."""
    with serve_in_process(tiny_model_dir("llama")) as served:
        yield served


TINY_API_KEY = "tiny-secret"


@pytest.fixture(scope="session")
def tiny_locked_server(tiny_model_dir, tmp_path_factory):
    """The tiny random llama served in-process with `--api-key TINY_API_KEY`; its tokenizer adds
    a BOS token when asked for special tokens (the plain tiny tokenizer adds none), so that
    `add_special_tokens` can be seen to act."""
    import shutil

    from tokenizers import Tokenizer, processors

    from roseinfer.server.config import ServerConfig

    path = tmp_path_factory.mktemp("llama_bos") / "model"
    shutil.copytree(tiny_model_dir("llama"), path)
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    bos = "<|endoftext|>"
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", special_tokens=[(bos, tok.token_to_id(bos))]
    )
    tok.save(str(path / "tokenizer.json"))
    with serve_in_process(
        str(path), server_config=ServerConfig(api_keys=(TINY_API_KEY,))
    ) as served:
        yield served


_TOOLS_MODEL: dict[str, str] = {}


def tools_model_dir(tmp_path_factory) -> str:
    """A tiny random qwen2 with room for the tool prompt (≈ 900 tokens in its 384-token
    vocabulary), made once."""
    if "path" not in _TOOLS_MODEL:
        path = make_tiny_model("qwen2", str(tmp_path_factory.mktemp("qwen2_long")))
        with open(f"{path}/config.json") as f:
            config = json.load(f)
        with open(f"{path}/config.json", "w") as f:
            json.dump({**config, "max_position_embeddings": 2048}, f)
        _TOOLS_MODEL["path"] = path
    return _TOOLS_MODEL["path"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(app, url) of the tools model (`tools_model_dir`) served in-process, one server a test
    module; a module defines its own `served` to serve another."""
    with serve_in_process(tools_model_dir(tmp_path_factory), num_kv_blocks=256) as app_url:
        yield app_url


@pytest.fixture(scope="module")
def http(served):
    """An httpx client of the module's `served` server."""
    import httpx

    with httpx.Client(base_url=served[1], timeout=120) as client:
        yield client


@pytest.fixture(scope="module")
def sdk(served):
    """The openai package's client of the module's `served` server."""
    import openai

    return openai.OpenAI(base_url=served[1] + "/v1", api_key="unused", max_retries=0)


@pytest.fixture
def slow_engine(served):
    """Each engine step of the module's server 20 ms longer: a response runs long enough to be
    seen running, cancelled, or held while another comes."""
    import time

    engine = served[0].state.client.engine
    step = engine.step

    def slow_step():
        time.sleep(0.02)
        return step()

    engine.step = slow_step
    try:
        yield engine
    finally:
        del engine.step  # (the class's again)


def response_text(response: dict) -> str:
    """A Response object's text: its message items' parts, joined."""
    return "".join(part["text"] for item in response["output"] if item["type"] == "message"
                   for part in item["content"])  # fmt: skip


def read_events(r) -> list[dict]:
    """A /v1/responses stream's events (`r`: an httpx streamed response), each checked as the
    openai package's own event type and against its `event:` line."""
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    adapter = TypeAdapter(ResponseStreamEvent)
    assert r.status_code == 200, r.read()
    out, kind = [], None
    for line in r.iter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            event = json.loads(line[6:])
            assert event["type"] == kind
            adapter.validate_python(event)
            out.append(event)
    return out
