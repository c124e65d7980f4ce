"""`resolve_hf_model_id`: finds snapshots in a fake HF cache, never downloads."""

from __future__ import annotations

import os
import socket

import pytest

from roseinfer.loader.hub_cache import ModelNotCachedError, hf_cache_dir, resolve_hf_model_id

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _fake_cache(root: str, model_id: str) -> str:
    """Lay out `models--org--name/{refs/main,snapshots/<commit>/config.json}` as the hub does."""
    repo = os.path.join(root, "models--" + model_id.replace("/", "--"))
    snapshot = os.path.join(repo, "snapshots", COMMIT)
    os.makedirs(snapshot)
    os.makedirs(os.path.join(repo, "refs"))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(COMMIT)
    with open(os.path.join(snapshot, "config.json"), "w") as f:
        f.write('{"model_type": "llama"}')
    return snapshot


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a socket fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("resolve_hf_model_id touched the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_resolves_cached_snapshot(tmp_path, monkeypatch, no_network) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snapshot = _fake_cache(str(tmp_path), "my-org/tiny-model")
    path = resolve_hf_model_id("my-org/tiny-model")
    assert os.path.samefile(path, snapshot)
    assert os.path.isfile(os.path.join(path, "config.json"))


def test_hf_home_is_honoured(tmp_path, monkeypatch, no_network) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hf_cache_dir() == os.path.join(str(tmp_path), "hub")
    snapshot = _fake_cache(os.path.join(str(tmp_path), "hub"), "org/name")
    assert os.path.samefile(resolve_hf_model_id("org/name"), snapshot)


def test_not_cached(tmp_path, monkeypatch, no_network) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelNotCachedError) as info:
        resolve_hf_model_id("some-org/not-downloaded")
    msg = str(info.value)
    assert "not in the local Hugging Face cache" in msg
    assert "never downloads" in msg
    assert "--model /path/to/dir" in msg
    assert isinstance(info.value, FileNotFoundError)


def test_invalid_id(tmp_path, monkeypatch, no_network) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelNotCachedError, match="not in the local Hugging Face cache"):
        resolve_hf_model_id("not a valid//id")
