"""`read_checkpoint`: trainer GPT-2 checkpoints load into our GPT-2 and give transformers' logits."""

from __future__ import annotations

import pytest
import torch
from conftest import prefill_logits
from transformers import GPT2Config, GPT2LMHeadModel

from roseinfer.backends import BackendOptions, TorchBackend
from roseinfer.loader.checkpoint import CheckpointError, read_checkpoint
from roseinfer.models import ModelConfig, build_model


@pytest.fixture(scope="module")
def hf_gpt2() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=100, n_positions=64, n_embd=64, n_layer=2, n_head=4, n_inner=96)
    return GPT2LMHeadModel(config).eval()


def _hf_logits(model: GPT2LMHeadModel, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(ids[None]).logits[0]


def _check_logits(path: str, hf_model: GPT2LMHeadModel, n_head: int = 4) -> dict:
    cfg, weights = read_checkpoint(path)
    assert cfg["n_head"] == n_head and cfg["n_layer"] == 2 and cfg["n_inner"] == 96
    assert (cfg["vocab_size"], cfg["n_embd"], cfg["n_positions"]) == (100, 64, 64)
    model = build_model(ModelConfig.from_hf(cfg), TorchBackend(BackendOptions(torch.device("cpu"))))
    model.load_weights(weights)
    if n_head != hf_model.config.n_head:  # same weights, split into the inferred head count
        twin = GPT2LMHeadModel(GPT2Config(**{**hf_model.config.to_dict(), "n_head": n_head})).eval()
        twin.load_state_dict(hf_model.state_dict())
        hf_model = twin
    ids = torch.randint(0, 100, (20,), generator=torch.Generator().manual_seed(1))  # spans 2 blocks
    torch.testing.assert_close(
        prefill_logits(model, ids), _hf_logits(hf_model, ids), rtol=1e-4, atol=1e-4
    )
    return cfg


def test_trainer_dict_with_config(tmp_path, hf_gpt2) -> None:
    path = str(tmp_path / "ckpt.pt")
    torch.save(
        {"model": hf_gpt2.state_dict(), "optimizer": {}, "step": 10, "config": {"n_head": 4}}, path
    )
    _check_logits(path, hf_gpt2)


def test_ddp_compiled_bare_state_dict(tmp_path, hf_gpt2) -> None:
    """DDP + torch.compile prefixes, no transformer. prefix, no config: n_head = n_embd // 64 = 1."""
    sd = {
        f"module._orig_mod.{k.removeprefix('transformer.')}": v
        for k, v in hf_gpt2.state_dict().items()
    }
    path = str(tmp_path / "bare.pt")
    torch.save(sd, path)
    cfg = _check_logits(path, hf_gpt2, n_head=1)
    assert cfg["tie_word_embeddings"] is True


def test_module_prefix_with_model_args(tmp_path, hf_gpt2) -> None:
    sd = {f"module.{k}": v for k, v in hf_gpt2.state_dict().items()}
    path = str(tmp_path / "ddp.pt")
    torch.save({"model_state_dict": sd, "model_args": {"n_head": 4, "n_layer": 2}}, path)
    _check_logits(path, hf_gpt2)


def test_linear_layout_without_biases(tmp_path, hf_gpt2) -> None:
    """nanoGPT-style: nn.Linear [out, in] weights; a bias=False run saves no biases at all."""
    conv1d = ("c_attn.weight", "c_proj.weight", "c_fc.weight")
    sd = {}
    for k, v in hf_gpt2.state_dict().items():
        sd[k] = v.t().contiguous() if k.endswith(conv1d) else v
    path = str(tmp_path / "linear.pt")
    torch.save({"state_dict": sd, "config": {"num_heads": 4}}, path)
    _check_logits(path, hf_gpt2)

    no_bias = GPT2LMHeadModel(hf_gpt2.config).eval()
    with torch.no_grad():
        for name, p in no_bias.named_parameters():
            if name.endswith(".bias"):
                p.zero_()
    sd = {k: v for k, v in no_bias.state_dict().items() if not k.endswith(".bias")}
    torch.save({"model": sd, "config": {"n_head": 4}}, path)
    _check_logits(path, no_bias)


def test_errors(tmp_path, hf_gpt2) -> None:
    with pytest.raises(CheckpointError, match="not found"):
        read_checkpoint(str(tmp_path / "missing.pt"))
    (tmp_path / "text.pt").write_text("not a torch file")
    with pytest.raises(CheckpointError, match="not a loadable torch checkpoint"):
        read_checkpoint(str(tmp_path / "text.pt"))
    torch.save({"model": {"encoder.weight": torch.zeros(2)}}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="no GPT-2 weights"):
        read_checkpoint(str(tmp_path / "other.pt"))
    torch.save([1, 2, 3], tmp_path / "list.pt")
    with pytest.raises(CheckpointError, match="not a dict"):
        read_checkpoint(str(tmp_path / "list.pt"))
    sd = dict(hf_gpt2.state_dict())
    sd["lm_head.weight"] = torch.randn_like(sd["lm_head.weight"])
    torch.save(sd, tmp_path / "untied.pt")
    with pytest.raises(CheckpointError, match="ties them"):
        read_checkpoint(str(tmp_path / "untied.pt"))
    torch.save({"model": hf_gpt2.state_dict(), "config": {"n_head": 5}}, tmp_path / "heads.pt")
    with pytest.raises(CheckpointError, match="does not divide"):
        read_checkpoint(str(tmp_path / "heads.pt"))
