"""Resolve `--hf-model-id org/name` to a snapshot already in the local Hugging Face cache.

roseinfer never downloads: the lookup is `snapshot_download(..., local_files_only=True)`, which
only reads `<cache>/models--org--name/refs/main` and `snapshots/<commit>/`.
"""

from __future__ import annotations

import os

from huggingface_hub import snapshot_download
from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError


class ModelNotCachedError(FileNotFoundError):
    """The model is not in the local Hugging Face cache (and roseinfer will not download it)."""


def hf_cache_dir() -> str:
    """The hub cache directory, by the same environment variables huggingface_hub uses.

    Read at call time: huggingface_hub reads them once at import, so a later change (a test's
    monkeypatch, a CLI flag setting HF_HOME) would otherwise be missed.
    """
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return os.path.expanduser(os.path.expandvars(os.environ[var]))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    home = os.environ.get("HF_HOME") or os.path.join(xdg, "huggingface")
    return os.path.join(os.path.expanduser(os.path.expandvars(home)), "hub")


def resolve_hf_model_id(model_id: str) -> str:
    """Local snapshot directory of `model_id` in the HF cache; offline only."""
    cache_dir = hf_cache_dir()
    try:
        return snapshot_download(model_id, cache_dir=cache_dir, local_files_only=True)
    except (LocalEntryNotFoundError, HFValidationError) as e:
        invalid = (
            " (nor is it a valid org/name model id)" if isinstance(e, HFValidationError) else ""
        )
        raise ModelNotCachedError(
            f"model {model_id!r} is not in the local Hugging Face cache ({cache_dir}){invalid}; "
            "roseinfer never downloads models. Download it yourself (e.g. `hf download "
            f"{model_id}`) or pass a local model directory instead: --model /path/to/dir"
        ) from None
