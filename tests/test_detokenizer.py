"""IncrementalDetokenizer: streamed pieces add up to decode, hold back split characters, O(1)."""

from __future__ import annotations

import os
import random

import pytest
from conftest import build_tokenizer

from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.loader import smollm2_path
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
from roseinfer.tokenizer import Tokenizer

TEXTS = [
    "Plain English, with punctuation!",
    "emoji 😀👍🏽 family 👨\u200d👩\u200d👧\u200d👦 flags 🇫🇷🇯🇵🏳️\u200d🌈 done",
    "中文字符和日本語のテキスト、한국어 텍스트。",
    "café naïve résumé Ångström façade ñandú",
    "def f(x):\n\tif x:\n        return [1, 2]\n\n\n    # tab\tinside\n",
    "mixed: 😀中é\t\n x→y ≠ z ∑ 12345 “quotes” — dash",
]

SP_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world, hello there! How are you today?",
    "  indented   text with   several spaces",
    "numbers 123 456 7890 and more numbers",
    "def main():\n    print('hello')",
]


def stream(detok: IncrementalDetokenizer, ids: list[int]) -> list[str]:
    """All pieces, flush() last."""
    return [detok.on_token(i) for i in ids] + [detok.flush()]


# ---- tokenizers --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm() -> Tokenizer:
    return tokenizer_from_gguf(smollm2_path())


@pytest.fixture(scope="module")
def gpt2_style(tmp_path_factory) -> Tokenizer:
    """A small GPT-2-style byte-level BPE (all 256 byte symbols, merges learnt from English)."""
    directory = tmp_path_factory.mktemp("gpt2_style")
    build_tokenizer(
        500, SP_CORPUS * 10 + TEXTS[:1], chat_template=False, special_tokens=["<|endoftext|>"]
    ).save_pretrained(directory)
    return Tokenizer.from_pretrained(str(directory))


@pytest.fixture(params=["smollm", "gpt2_style"])
def byte_level(request) -> Tokenizer:
    return request.getfixturevalue(request.param)


def _train_sentencepiece(directory):
    import sentencepiece as spm

    prefix = os.path.join(str(directory), "sp")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SP_CORPUS * 20),
        model_prefix=prefix,
        vocab_size=360,  # 256 byte pieces + a hundred merges
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory):
    return _train_sentencepiece(tmp_path_factory.mktemp("sp"))


@pytest.fixture(scope="module")
def sp_gguf(sp_model, tmp_path_factory) -> Tokenizer:
    """The SentencePiece model as llama.cpp stores it (GGUF metadata), through from_gguf."""
    import gguf

    sp = sp_model
    n = sp.get_piece_size()
    types = [
        2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 6 if sp.is_byte(i) else 1
        for i in range(n)
    ]
    path = str(tmp_path_factory.mktemp("sp_gguf") / "sp.gguf")
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([sp.id_to_piece(i) for i in range(n)])
    writer.add_token_scores([sp.get_score(i) for i in range(n)])
    writer.add_token_types(types)
    writer.add_bos_token_id(sp.bos_id())
    writer.add_eos_token_id(sp.eos_id())
    writer.add_unk_token_id(sp.unk_id())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tokenizer_from_gguf(path)


@pytest.fixture(scope="module")
def sp_transformers(sp_model) -> Tokenizer:
    """The same model as transformers' LlamaTokenizer (Metaspace pre-tokenizer, byte fallback).

    LlamaTokenizer(vocab_file=...) would need protobuf to read the .model, so the vocabulary and
    merges are handed over directly (transformers 5 API).
    """
    from transformers import LlamaTokenizer

    from roseinfer.loader.gguf_tokenizer import _merges_from_scores

    sp = sp_model
    tokens = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = _merges_from_scores(vocab, {t: sp.get_score(i) for i, t in enumerate(tokens)})
    try:
        hf = LlamaTokenizer(
            vocab=vocab, merges=merges, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
        )
    except TypeError:
        pytest.skip("this transformers' LlamaTokenizer cannot be built from vocab + merges")
    if len(hf) != len(tokens):
        pytest.skip("this transformers' LlamaTokenizer ignored the vocabulary")
    return Tokenizer(hf)


@pytest.fixture(params=["sp_gguf", "sp_transformers"])
def sentencepiece(request) -> Tokenizer:
    return request.getfixturevalue(request.param)


# ---- byte-level BPE ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_pieces_add_up_to_decode(byte_level: Tokenizer, text: str) -> None:
    ids = byte_level.encode(text, add_special_tokens=False)
    expected = byte_level.decode(ids)
    assert expected == text
    for prompt in (None, byte_level.encode("The answer: ")):
        detok = IncrementalDetokenizer(byte_level)
        if prompt is not None:
            detok.start_prompt(prompt)
        pieces = stream(detok, ids)
        assert "".join(pieces) == expected
        assert detok.text == expected
        assert not any("\ufffd" in piece for piece in pieces), pieces


def test_split_character_is_held_back(smollm: Tokenizer) -> None:
    ids = smollm.encode("😀", add_special_tokens=False)
    assert len(ids) > 1  # the emoji's 4 bytes are split over several tokens
    detok = IncrementalDetokenizer(smollm)
    pieces = [detok.on_token(i) for i in ids]
    assert pieces[:-1] == [""] * (len(ids) - 1)
    assert pieces[-1] == "😀"
    assert detok.flush() == ""


def test_incomplete_character_at_end_is_flushed_as_decode_gives_it(smollm: Tokenizer) -> None:
    ids = smollm.encode("ok 😀", add_special_tokens=False)[:-1]  # last byte never comes
    detok = IncrementalDetokenizer(smollm)
    streamed = "".join(detok.on_token(i) for i in ids)
    assert "\ufffd" not in streamed
    tail = detok.flush()
    assert streamed + tail == smollm.decode(ids)
    assert tail.endswith("\ufffd")


@pytest.mark.parametrize("skip", [True, False])
def test_special_tokens(smollm: Tokenizer, skip: bool) -> None:
    messages = [{"role": "user", "content": "héllo 😀"}, {"role": "assistant", "content": "中文"}]
    ids = smollm.encode_chat(messages, add_generation_prompt=False)
    detok = IncrementalDetokenizer(smollm, skip_special_tokens=skip)
    text = "".join(stream(detok, ids))
    assert text == smollm.decode(ids, skip_special_tokens=skip)
    assert ("<|im_end|>" in text) is not skip
    assert IncrementalDetokenizer(smollm).on_token(smollm.eos_token_id) == ""


def test_random_ids_match_decode(byte_level: Tokenizer) -> None:
    """Any id stream, invalid UTF-8 included: the pieces still add up to decode."""
    rng = random.Random(1234)
    for trial in range(150):
        ids = [rng.randrange(byte_level.vocab_size) for _ in range(rng.randrange(1, 40))]
        skip = trial % 2 == 0
        detok = IncrementalDetokenizer(byte_level, skip_special_tokens=skip)
        assert "".join(stream(detok, ids)) == byte_level.decode(ids, skip_special_tokens=skip)


def _byte_token_ids(tok: Tokenizer, data: bytes) -> list[int]:
    """One token per byte: GPT-2's byte alphabet spelling of each byte, looked up."""
    from roseinfer.tokenizer import bytes_to_unicode

    table = bytes_to_unicode()
    return tok.hf.convert_tokens_to_ids([table[b] for b in data])


@pytest.mark.parametrize(
    "data",
    [
        b"\xe2" * 40 + b"\x82\xac ok",  # lead bytes that never complete, then a whole euro sign
        b"\xf0\x9f" * 30 + b"\x98\x80!",  # a long invalid run ending in a valid emoji
        "日本".encode() + b"\xe6" * 25,  # ends inside a character
    ],
)
def test_long_invalid_byte_runs(smollm: Tokenizer, data: bytes) -> None:
    """Past MAX_PENDING tokens the held text is released (the window must stay small), still
    exactly as decode renders it."""
    ids = _byte_token_ids(smollm, data)
    detok = IncrementalDetokenizer(smollm)
    assert "".join(stream(detok, ids)) == smollm.decode(ids)


def test_start_prompt_cut_inside_a_character(smollm: Tokenizer) -> None:
    prompt = smollm.encode("Translate 😀", add_special_tokens=False)[:-1]
    out = smollm.encode(" done", add_special_tokens=False)
    detok = IncrementalDetokenizer(smollm)
    detok.start_prompt(prompt)
    assert "".join(stream(detok, out)) == " done"


def test_start_prompt_after_tokens_is_an_error(smollm: Tokenizer) -> None:
    detok = IncrementalDetokenizer(smollm)
    detok.on_token(smollm.encode("a")[0])
    with pytest.raises(RuntimeError):
        detok.start_prompt([1, 2])


# ---- SentencePiece --------------------------------------------------------------------------------

SP_TEXTS = [
    "Hello world",
    " leading space and  two  spaces",
    "unknown chars: 世界 wörld 😀 → ✓ done",
    "  indented   text\n\twith tabs\nand lines",
    "🇫🇷🇯🇵 flags, then the quick brown fox",
]


def test_sentencepiece_uses_byte_fallback(sentencepiece: Tokenizer) -> None:
    pieces = sentencepiece.hf.convert_ids_to_tokens(sentencepiece.encode(SP_TEXTS[2]))
    assert "<0xE4>" in pieces and "<0xF0>" in pieces


@pytest.mark.parametrize("text", SP_TEXTS)
def test_sentencepiece_pieces_read_in_context(sentencepiece: Tokenizer, text: str) -> None:
    """With start_prompt, pieces = decode(prompt + output) - decode(prompt), for every cut."""
    ids = sentencepiece.encode(" " + text + " and more words after it")
    for cut in range(1, len(ids)):
        prompt, out = ids[:cut], ids[cut:]
        for skip in (True, False):
            before = sentencepiece.decode(prompt, skip_special_tokens=skip)
            if before.endswith("\ufffd"):
                continue  # prompt ends inside a character: there is no clean "minus"
            full = sentencepiece.decode(prompt + out, skip_special_tokens=skip)
            assert full.startswith(before)
            detok = IncrementalDetokenizer(sentencepiece, skip_special_tokens=skip)
            detok.start_prompt(prompt)
            pieces = stream(detok, out)
            assert "".join(pieces) == full[len(before) :], (cut, skip, pieces)
            assert not any("\ufffd" in piece for piece in pieces), pieces


@pytest.mark.parametrize("text", SP_TEXTS)
def test_sentencepiece_without_prompt_matches_decode(sentencepiece: Tokenizer, text: str) -> None:
    ids = sentencepiece.encode(text, add_special_tokens=False)
    detok = IncrementalDetokenizer(sentencepiece)
    pieces = stream(detok, ids)
    assert "".join(pieces) == sentencepiece.decode(ids)
    assert not any("\ufffd" in piece for piece in pieces)


def test_sentencepiece_first_token_keeps_its_space(sentencepiece: Tokenizer) -> None:
    ids = sentencepiece.encode("Hello world")
    cut = len(sentencepiece.encode("Hello"))
    prompt, out = ids[:cut], ids[cut:]
    assert sentencepiece.decode(prompt) == "Hello"
    assert sentencepiece.hf.convert_ids_to_tokens(out)[0].startswith("\u2581")
    detok = IncrementalDetokenizer(sentencepiece)
    detok.start_prompt(prompt)
    assert "".join(stream(detok, out)) == " world"
    # Decoded alone, the output loses that space (the decoder strips the first one): so does
    # the stream without a prompt, matching decode(output_ids).
    alone = IncrementalDetokenizer(sentencepiece)
    assert "".join(stream(alone, out)) == sentencepiece.decode(out) == "world"


# ---- cost per token ------------------------------------------------------------------------------


def test_work_per_token_is_constant(smollm: Tokenizer, monkeypatch) -> None:
    """~3000 tokens: every decode the detokenizer does covers a few tokens, never the output."""
    text = "".join(TEXTS) * 20
    ids = smollm.encode(text, add_special_tokens=False)
    assert len(ids) > 3000
    calls: list[int] = []
    real_decode = smollm.decode

    def counting_decode(token_ids, skip_special_tokens=True):
        calls.append(len(token_ids))
        return real_decode(token_ids, skip_special_tokens)

    monkeypatch.setattr(smollm, "decode", counting_decode)
    detok = IncrementalDetokenizer(smollm)
    detok.start_prompt(smollm.encode("Some prompt text " * 50))
    calls.clear()
    out = []
    for token in ids:
        before = len(calls)
        out.append(detok.on_token(token))
        assert len(calls) - before <= 2  # the window, then the next context on release
    out.append(detok.flush())
    monkeypatch.undo()

    assert "".join(out) == smollm.decode(ids)
    assert max(calls) <= 12  # a character's bytes span at most 4 tokens, plus context
    assert sum(calls) <= 10 * len(ids)
    assert len(detok._ids) < IncrementalDetokenizer._TRIM_AT + 32  # history is dropped too


def test_bad_input_is_a_value_error(smollm: Tokenizer) -> None:
    """`skip_special_tokens="no"` had read as true, and a negative id had been an OverflowError
    deep in the tokenizer."""
    with pytest.raises(ValueError, match="skip_special_tokens must be a boolean"):
        IncrementalDetokenizer(smollm, skip_special_tokens="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not negative"):
        IncrementalDetokenizer(smollm).on_token(-1)


def test_a_character_cut_by_the_output_limit_ends_as_decode_ends_it(smollm):
    """README: a cut character ends the text in U+FFFD, as `tokenizer.decode` of the tokens."""
    tok = smollm
    ids = tok.encode("Hi 😀", False)
    for cut in range(1, len(ids) + 1):
        d = IncrementalDetokenizer(tok)
        d.start_prompt([])
        text = "".join(d.on_token(i) for i in ids[:cut]) + d.flush()
        assert text == tok.decode(ids[:cut], skip_special_tokens=True)
    assert text == "Hi 😀" and tok.decode(ids[:-1], skip_special_tokens=True).endswith("\ufffd")
