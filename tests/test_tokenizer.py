"""Tokenizer: GGUF tokenizers against transformers and sentencepiece, chat templates, errors."""

from __future__ import annotations

import os
import time

import pytest
from conftest import build_tokenizer

from roseinfer.loader import smollm2_path
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
from roseinfer.tokenizer import Tokenizer, TokenizerError, format_messages_as_prompt

PARITY_TEXTS = [
    "Hello world!",
    "12345",
    "Pi is 3.14159 and e is 2.71828; 1,000,000 > 999",
    "def add(a, b):\n    return a + b\n\n\nclass Foo:\n\tpass\n",
    "    indented\n        twice\n\t\ttabs\r\nwindows line",
    "emoji 😀👍🏽 family 👨\u200d👩\u200d👧\u200d👦 flags 🇫🇷🇯🇵",
    "中文字符和日本語のテキスト、한국어 텍스트",
    "café naïve résumé Ångström façade",
    "I'm sure they'll say it's fine, don't you think?",
    "  leading and trailing spaces  ",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "",
]

CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Write 12345 in words 😀"},
        {"role": "assistant", "content": "twelve thousand…"},
        {"role": "user", "content": "中文?"},
    ],
]


def smollm_gguf() -> tuple[str, str]:
    """(directory, file name) of the SmolLM2 GGUF shipped as a package."""
    return os.path.split(smollm2_path())


@pytest.fixture(scope="module")
def smollm() -> Tokenizer:
    directory, name = smollm_gguf()
    return tokenizer_from_gguf(os.path.join(directory, name))


@pytest.fixture(scope="module")
def reference():
    """transformers' own GGUF tokenizer: the oracle. Slow to build (~5 s), so built once."""
    from transformers import AutoTokenizer

    directory, name = smollm_gguf()
    return AutoTokenizer.from_pretrained(directory, gguf_file=name)


# ---- SmolLM2 from GGUF vs transformers ----------------------------------------------------------


def test_from_gguf_is_fast() -> None:
    directory, name = smollm_gguf()
    tokenizer_from_gguf(os.path.join(directory, name))  # imports and page cache warm
    start = time.perf_counter()
    tokenizer_from_gguf(os.path.join(directory, name))
    # transformers needs ~5-7 s for the same file; ours is ~0.4 s.
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("text", PARITY_TEXTS)
def test_gguf_encode_decode_match_transformers(smollm: Tokenizer, reference, text: str) -> None:
    ids = smollm.encode(text)
    assert ids == reference.encode(text)
    for skip in (True, False):
        assert smollm.decode(ids, skip_special_tokens=skip) == reference.decode(
            ids, skip_special_tokens=skip
        )


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_gguf_chat_template_matches_transformers(
    smollm: Tokenizer, reference, messages: list[dict], add_generation_prompt: bool
) -> None:
    expected = reference.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=add_generation_prompt
    )
    prompt = smollm.apply_chat_template(messages, add_generation_prompt)
    assert prompt == expected
    assert prompt.startswith("<|im_start|>system\n")
    ids = smollm.encode_chat(messages, add_generation_prompt)
    assert ids == reference.encode(expected, add_special_tokens=False)
    assert ids.count(1) == len(messages) + (messages[0]["role"] != "system") + add_generation_prompt


def test_smollm_special_tokens(smollm: Tokenizer, reference) -> None:
    assert smollm.vocab_size == len(reference) == 49152
    assert (smollm.bos_token_id, smollm.eos_token_id) == (1, 2)
    assert {0, 2} <= smollm.stop_token_ids  # <|endoftext|>, <|im_end|>
    assert 1 not in smollm.stop_token_ids
    assert all(smollm.is_special(i) for i in range(17))  # the file's 17 CONTROL tokens
    assert not smollm.is_special(17)
    assert smollm.encode("<|im_end|>") == [2]  # matched whole, not split into pieces
    # add_bos_token is False in this file: nothing is prepended.
    assert smollm.encode("hi", add_special_tokens=True) == smollm.encode("hi", False)


def test_smollm_splits_digits_like_llama_cpp(smollm: Tokenizer) -> None:
    """'smollm' pre-tokenizer = every digit split off, then GPT-2's regex (llama.cpp, and SmolLM2's
    tokenizer.json). transformers' GGUF loader skips the digit split, which only shows when two
    or more spaces precede a digit: it gives Ġ,Ġ,1 where the model's tokenizer gives ĠĠ,1."""
    ids = smollm.encode("a  1")
    assert smollm.hf.convert_ids_to_tokens(ids) == ["a", "ĠĠ", "1"]
    assert smollm.decode(ids) == "a  1"
    assert smollm.hf.convert_ids_to_tokens(smollm.encode("x=2024")) == [
        "x",
        "=",
        "2",
        "0",
        "2",
        "4",
    ]


def test_smollm_roundtrips_through_from_pretrained(smollm: Tokenizer, tmp_path) -> None:
    smollm.hf.save_pretrained(tmp_path)
    loaded = Tokenizer.from_pretrained(str(tmp_path), extra_eos_ids=[5])
    for text in PARITY_TEXTS:
        assert loaded.encode(text) == smollm.encode(text)
    assert loaded.apply_chat_template(CONVERSATIONS[1]) == smollm.apply_chat_template(
        CONVERSATIONS[1]
    )
    assert loaded.stop_token_ids == smollm.stop_token_ids | {5}


# ---- GGUF error handling ---------------------------------------------------------------------


def _write_gguf(path, **kv) -> str:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    for key, value in kv.items():
        if isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, list):
            writer.add_array(key, value)
        else:
            writer.add_uint32(key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


def test_from_gguf_rejects_unsupported_model(tmp_path) -> None:
    path = _write_gguf(
        tmp_path / "bert.gguf", **{"tokenizer.ggml.model": "bert", "tokenizer.ggml.tokens": ["a"]}
    )
    with pytest.raises(TokenizerError, match="'bert'"):
        tokenizer_from_gguf(path)


def test_from_gguf_errors(tmp_path) -> None:
    with pytest.raises(TokenizerError, match="no tokenizer metadata"):
        tokenizer_from_gguf(_write_gguf(tmp_path / "none.gguf"))
    (tmp_path / "not.gguf").write_bytes(b"definitely not a gguf file")
    with pytest.raises(TokenizerError, match="not a GGUF"):
        tokenizer_from_gguf(str(tmp_path / "not.gguf"))
    with pytest.raises(TokenizerError):
        tokenizer_from_gguf(str(tmp_path / "missing.gguf"))
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(TokenizerError):
        tokenizer_from_gguf(str(tmp_path / "empty.gguf"))


# ---- SentencePiece ("llama") GGUF vs sentencepiece ----------------------------------------------

SP_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world, hello there! How are you today?",
    "  indented   text with   several spaces",
    "numbers 123 456 7890 and more numbers",
    "def main():\n    print('hello')",
]


def build_sentencepiece_gguf(directory) -> tuple[str, object]:
    """Train a tiny byte-fallback BPE SentencePiece model and store it as a GGUF's metadata
    (no tensors), the way llama.cpp's converter does. Returns (gguf path, SentencePieceProcessor)."""
    import gguf
    import sentencepiece as spm

    prefix = os.path.join(str(directory), "sp")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SP_CORPUS * 20),
        model_prefix=prefix,
        vocab_size=360,  # 256 byte pieces + a hundred merges
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        # Llama's settings: no NFKC, spaces kept as they are.
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    n = sp.get_piece_size()

    def token_type(i: int) -> int:
        if sp.is_unknown(i):
            return 2
        if sp.is_control(i):
            return 3
        return 6 if sp.is_byte(i) else 1

    path = os.path.join(str(directory), "sp.gguf")
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([sp.id_to_piece(i) for i in range(n)])
    writer.add_token_scores([sp.get_score(i) for i in range(n)])
    writer.add_token_types([token_type(i) for i in range(n)])
    writer.add_bos_token_id(sp.bos_id())
    writer.add_eos_token_id(sp.eos_id())
    writer.add_unk_token_id(sp.unk_id())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path, sp


@pytest.fixture(scope="module")
def sentencepiece_gguf(tmp_path_factory):
    return build_sentencepiece_gguf(tmp_path_factory.mktemp("sp"))


SP_TEXTS = [
    "Hello world",
    " Hello with a leading space",
    "  indented   text\n\twith tabs",
    "unknown 世界 wörld 😀 → done",
    "def main():\n    print('hi')",
]


@pytest.mark.parametrize("text", SP_TEXTS)
def test_sentencepiece_gguf_matches_sentencepiece(sentencepiece_gguf, text: str) -> None:
    path, sp = sentencepiece_gguf
    tok = tokenizer_from_gguf(path)
    ids = tok.encode(text)
    assert ids == [sp.bos_id(), *sp.encode(text)]  # add_bos_token defaults to on for llama
    assert tok.encode(text, add_special_tokens=False) == sp.encode(text)
    assert tok.decode(ids) == sp.decode(sp.encode(text))


def test_sentencepiece_gguf_specials(sentencepiece_gguf) -> None:
    path, sp = sentencepiece_gguf
    tok = tokenizer_from_gguf(path)
    assert (tok.bos_token_id, tok.eos_token_id) == (sp.bos_id(), sp.eos_id())
    assert sp.eos_id() in tok.stop_token_ids
    assert tok.is_special(sp.bos_id()) and tok.is_special(sp.eos_id())
    pieces = tok.hf.convert_ids_to_tokens(tok.encode("世", add_special_tokens=False))
    assert pieces == ["▁", "<0xE4>", "<0xB8>", "<0x96>"]  # byte fallback
    # No chat template in the file: the plain fallback.
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}]) == "user: hi\nassistant:"


# ---- chat: fallback and validation -------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_bpe(tmp_path_factory) -> Tokenizer:
    """A tiny GPT-2-style byte-level BPE without a chat template, loaded with from_pretrained."""
    directory = tmp_path_factory.mktemp("bpe")
    build_tokenizer(
        400, SP_CORPUS * 10, chat_template=False, special_tokens=["<|endoftext|>"]
    ).save_pretrained(directory)
    return Tokenizer.from_pretrained(str(directory))


def test_fallback_prompt_without_template(plain_bpe: Tokenizer) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
    ]
    expected = "system: Be brief.\nuser: Hi\nassistant: Hello.\nuser: Bye\nassistant:"
    assert plain_bpe.apply_chat_template(messages) == expected
    assert format_messages_as_prompt(messages) == expected
    assert plain_bpe.apply_chat_template(
        messages, add_generation_prompt=False
    ) == expected.removesuffix("\nassistant:")
    assert plain_bpe.encode_chat(messages) == plain_bpe.encode(expected, add_special_tokens=False)
    assert plain_bpe.stop_token_ids == {plain_bpe.eos_token_id} == {0}


BAD_MESSAGES = [
    [],
    "hello",
    None,
    ["hello"],
    [{"role": "robot", "content": "hi"}],
    [{"content": "hi"}],
    [{"role": "user"}],
    [{"role": "user", "content": None}],
    [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    [{"role": "user", "content": "ok"}, {"role": "user", "content": 3}],
]


@pytest.mark.parametrize("messages", BAD_MESSAGES)
def test_bad_messages_raise(smollm: Tokenizer, plain_bpe: Tokenizer, messages) -> None:
    for tok in (smollm, plain_bpe):
        with pytest.raises(TokenizerError):
            tok.apply_chat_template(messages)
        with pytest.raises(TokenizerError):
            tok.encode_chat(messages)
    with pytest.raises(TokenizerError):
        format_messages_as_prompt(messages)


def test_tool_role_accepted() -> None:
    messages = [{"role": "user", "content": "2+2?"}, {"role": "tool", "content": "4"}]
    assert format_messages_as_prompt(messages) == "user: 2+2?\ntool: 4\nassistant:"


def test_encode_rejects_non_strings(plain_bpe: Tokenizer) -> None:
    with pytest.raises(TokenizerError):
        plain_bpe.encode(None)  # type: ignore[arg-type]
    with pytest.raises(TokenizerError):
        Tokenizer(plain_bpe.hf, extra_eos_ids=["2"])  # type: ignore[list-item]


# ---- from_pretrained errors ----------------------------------------------------------------------


def test_from_pretrained_missing_dir(tmp_path) -> None:
    with pytest.raises(TokenizerError, match="no such directory"):
        Tokenizer.from_pretrained(str(tmp_path / "does-not-exist"))


def test_from_pretrained_empty_dir(tmp_path) -> None:
    with pytest.raises(TokenizerError, match="no tokenizer in"):
        Tokenizer.from_pretrained(str(tmp_path))


def test_from_pretrained_file_and_broken_dir(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(TokenizerError, match="not a directory"):
        Tokenizer.from_pretrained(str(tmp_path / "config.json"))
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(TokenizerError, match="could not load"):
        Tokenizer.from_pretrained(str(tmp_path))
