"""llama.cpp's sampler chain (`samplers`), its temperature-last order and its infill sampler.

The oracles: transformers' own warpers chained in llama.cpp's order (top-k, top-p, min-p, then
the temperature) for the distribution the sampler draws from; for the infill filter, a port of
llama.cpp's `llama_sampler_infill_apply` loop for loop (`reference_infill`, its O(n^2) double
loop as written); for `samplers` itself, which orders change the output."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from transformers import (
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers import draw as draw_module
from roseinfer.layers import sampler as sampler_module
from roseinfer.layers.draw import sample_from
from roseinfer.layers.infill import InfillFilter
from roseinfer.layers.sampler import Sampler
from roseinfer.layers.truncation import (
    CandidateOps,
    Late,
    apply_top_k_top_p,
    draw_among,
    expand,
    min_p_filter,
    truncate,
    truncate_in_tiers,
    unnormalised_probs,
)
from roseinfer.sampling_params import SamplingParams
from roseinfer.server.errors import APIError
from roseinfer.server.params import Chain
from roseinfer.server.sampler_chain import LLAMACPP_DEFAULT_SAMPLERS, parse_names, sampler_chain

V = 64
ACTIVE = frozenset({"top_k", "top_p", "min_p", "penalties"})


# ---- the `samplers` value ----------------------------------------------------------------------


def test_names_aliases_and_letters_as_llama_cpp_reads_them():
    assert parse_names(["Top-K", "topp", "min-p", "TEMP", "infill"]) == (
        "top_k", "top_p", "min_p", "temperature", "infill")  # fmt: skip
    assert parse_names("ekpmti") == ("penalties", "top_k", "top_p", "min_p", "temperature",
                                     "infill")  # fmt: skip
    assert parse_names(["nucleus", "typ", "xtc"]) == ("top_p", "typ_p", "xtc")
    assert parse_names(list(LLAMACPP_DEFAULT_SAMPLERS)) == LLAMACPP_DEFAULT_SAMPLERS
    assert parse_names([]) == () and parse_names("") == ()
    assert parse_names(["typ", "typ_p"]) == ("typ_p", "typ_p")  # (inert: twice is fine)


@pytest.mark.parametrize(
    ("samplers", "says"),
    [(["top_k", "mirostat"], "'mirostat' names no sampler"), ("kz", "'z' names no sampler"),
     (["top_k", "top-k"], "top_k twice"), (["dry", "DRY"], "dry twice"),
     (["top_\u212a"], "names no sampler")],  # (Kelvin)
)  # fmt: skip
def test_what_names_no_sampler_or_one_twice_is_a_400(samplers, says):
    with pytest.raises(APIError) as e:
        parse_names(samplers)
    assert e.value.param == "samplers" and says in str(e.value)


@pytest.mark.parametrize(
    ("samplers", "temperature", "active", "temperature_last"),
    [
        (list(LLAMACPP_DEFAULT_SAMPLERS), 0.8, ACTIVE, True),  # llama.cpp's default: last
        (["temperature", "top_k", "top_p", "min_p"], 0.8, ACTIVE, False),  # vLLM's order
        (["top_k", "top_p", "infill"], 1.0, ACTIVE, False),  # llama.vim's: no temperature
        (["min_p", "top_k", "temperature"], 0.8, ACTIVE, True),  # top-k and min-p commute
        (["top_p", "top_k"], 0.8, ACTIVE - {"top_k"}, False),  # a neutral top-k has no place
        (["top_k", "penalties"], 0.8, ACTIVE - {"penalties"}, False),
        (["top_p", "temperature", "min_p"], 1.0, ACTIVE, False),  # T = 1 is neutral
        (["top_p", "temperature", "min_p"], 0.0, ACTIVE, False),  # greedy: argmax either way
        (["top_k", "infill", "temperature"], 0.0, ACTIVE, True),  # greedy after the infill
        (["top_k", "temperature", "infill"], 0.0, ACTIVE, False),
    ],
)  # fmt: skip
def test_orders_the_engine_runs(samplers, temperature, active, temperature_last):
    chain = sampler_chain(samplers, temperature, active)
    assert chain.temperature_last is temperature_last


@pytest.mark.parametrize(
    ("samplers", "temperature", "says"),
    [
        (["top_p", "top_k"], 0.8, "top_p before top_k"),
        (["min_p", "top_p"], 0.8, "min_p before top_p"),
        (["infill", "top_k"], 0.8, "infill before top_k"),
        (["top_k", "penalties"], 0.8, "top_k before penalties"),
        (["temperature", "penalties"], 0.8, "temperature before penalties"),
        (["temperature", "penalties"], 0.8, None),  # (a repetition penalty alone: a factor)
        (["temperature", "penalties"], 0.0, "temperature before penalties"),  # (but greedy)
        (["top_p", "temperature", "min_p"], 0.8, "temperature between top_p and min_p"),
        (["top_k", "top_p", "temperature", "infill"], 0.0, None),  # (greedy: runs)
        (["top_k", "top_p", "temperature", "infill"], 0.8, "between top_p and infill"),
    ],
)  # fmt: skip
def test_orders_that_would_change_the_output_are_400s(samplers, temperature, says):
    # ("shift": a presence or frequency penalty; greedy refuses that order without one)
    active = ACTIVE | {"shift"} if says and temperature > 0 else ACTIVE
    if says is None:
        sampler_chain(samplers, temperature, active)
        return
    with pytest.raises(APIError) as e:
        sampler_chain(samplers, temperature, active)
    assert e.value.param == "samplers" and says in str(e.value), str(e.value)


def test_a_sampler_left_out_runs_at_its_neutral_value():
    chain = Chain(0.5, 40, 0.9, 0.05, 1.3, 0.4, 0.2).of(["top_k", "top_p", "infill"])
    assert (chain.temperature, chain.top_k, chain.top_p, chain.min_p) == (1.0, 40, 0.9, 0.0)
    assert (chain.repetition_penalty, chain.presence_penalty, chain.frequency_penalty) == (
        1.0, 0.0, 0.0)  # fmt: skip
    assert chain.infill and not chain.temperature_last
    everything = Chain(0.5, 40, 0.9, 0.05, 1.3, 0.4, 0.2).of(list(LLAMACPP_DEFAULT_SAMPLERS))
    assert everything == Chain(0.5, 40, 0.9, 0.05, 1.3, 0.4, 0.2, temperature_last=True)
    # the infill sampler without top_k before it: the 400 names samplers and the top_k sent
    # (it had said "top_k ... got 0", the neutral value, not what the client sent)
    with pytest.raises(APIError) as e:
        Chain(0.5, 50, 0.9, 0.05, 1.3, 0.4, 0.2).of(["infill"])
    assert e.value.param == "samplers" and "top_k is 50" in str(e.value), str(e.value)


# ---- the distribution the sampler draws from ---------------------------------------------------


def drawn_from(monkeypatch, logits: torch.Tensor, params: list[SamplingParams],
               infill: InfillFilter | None = None, stops: tuple[int, ...] = (0,)) -> torch.Tensor:  # fmt: skip
    """The probabilities (normalised rows [B, V]) the sampler hands its draws: over the
    vocabulary (`sample_from`) or over a row's candidates (`sample_candidates`), each row's
    where it went (`stops`: the model's end tokens; every row sampled)."""
    seen: dict[str, torch.Tensor] = {}
    vocabulary_rows: list[int] = []
    weights_of, draw, among = (
        Sampler._weights,
        sampler_module.sample_from,
        draw_module.sample_candidates,
    )

    def rows_of(self, logits, given, truncation, rows, *rest):  # noqa: ANN001, ANN202
        vocabulary_rows.extend(rows)
        return weights_of(self, logits, given, truncation, rows, *rest)

    def over_vocabulary(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        seen["vocabulary"] = probs.clone()
        return draw(probs, u)

    def over_candidates(weights: torch.Tensor, ids: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        full = torch.zeros(len(ids), logits.shape[-1])
        seen["candidates"] = full.scatter_(1, ids, weights)
        return among(weights, ids, u)

    monkeypatch.setattr(Sampler, "_weights", rows_of)
    monkeypatch.setattr(sampler_module, "sample_from", over_vocabulary)
    sampler = Sampler(
        "cpu", 0, stops, infill=infill, candidate_ops=CandidateOps(draw=over_candidates)
    )
    states = [sampler.new_row_state(p) for p in params]
    sampler(logits.clone(), params, states, [0] * len(params))
    probs = torch.zeros(len(params), logits.shape[-1])
    if vocabulary_rows:
        probs[vocabulary_rows] = seen["vocabulary"]
    candidate_rows = [i for i in range(len(params)) if i not in vocabulary_rows]
    if candidate_rows:
        probs[candidate_rows] = seen["candidates"]
    return probs / probs.sum(dim=-1, keepdim=True)


def chained(logits: torch.Tensor, *warpers) -> torch.Tensor:
    ids = torch.zeros(1, 1, dtype=torch.long)
    for warp in warpers:
        logits = warp(ids, logits)
    return logits.softmax(dim=-1)


@pytest.mark.parametrize("temperature", [0.4, 1.7])
def test_temperature_last_is_transformers_warpers_in_llama_cpps_order(monkeypatch, temperature):
    gen = torch.Generator().manual_seed(7)
    logits = torch.randn(2, V, generator=gen) * 3
    last = SamplingParams(temperature=temperature, top_k=20, top_p=0.8, min_p=0.05,
                          temperature_last=True)  # fmt: skip
    first = SamplingParams(temperature=temperature, top_k=20, top_p=0.8, min_p=0.05)
    got = drawn_from(monkeypatch, logits, [last, first])
    for i, order in enumerate([("k", "p", "m", "t"), ("t", "k", "p", "m")]):
        warp = {"k": TopKLogitsWarper(20), "p": TopPLogitsWarper(0.8),
                "m": MinPLogitsWarper(0.05), "t": TemperatureLogitsWarper(temperature)}  # fmt: skip
        want = chained(logits[i : i + 1].clone(), *(warp[w] for w in order))[0]
        torch.testing.assert_close(got[i], want, atol=1e-6, rtol=1e-5)
    assert not torch.equal(got[0] > 0, got[1] > 0)  # the two orders keep different sets here


def xtc_reference(p: torch.Tensor, threshold: float) -> torch.Tensor:
    """llama.cpp's XTC on one normalised row, by its own steps: the tokens sorted likeliest
    first, those at least `threshold` likely all dropped but the last of them, where two or
    more are (equal ones: the later id goes last here)."""
    order = sorted(range(len(p)), key=lambda t: (-float(p[t]), -t))
    above = [t for t in order if float(p[t]) >= threshold]
    out = p.clone()
    if len(above) >= 2:
        out[above[:-1]] = 0.0
    return out / out.sum()


@pytest.mark.parametrize("temperature", [0.5, 1.0, 1.6])
def test_xtc_drops_the_top_choices_but_the_least_as_llama_cpp(monkeypatch, temperature):
    """XTC (probability 1) on the distribution min-p left: before a late temperature
    (llama.cpp's chain), after a first one (vLLM's order); off above a threshold of 0.5, or at
    probability 0; a greedy row with the temperature last takes the least of the top choices."""
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(1, V, generator=gen) * 0.5
    logits[0, [5, 9, 17]] += torch.tensor([6.0, 5.8, 5.3])  # three top choices
    xtc = dict(xtc_probability=1.0, xtc_threshold=0.1, min_p=0.02)
    last = SamplingParams(temperature=temperature, temperature_last=True, **xtc)
    first = SamplingParams(temperature=temperature, **xtc)
    off = [replace(first, xtc_threshold=0.6), replace(first, xtc_probability=0.0)]
    got = drawn_from(monkeypatch, logits.repeat(4, 1), [last, first, *off])
    min_p = MinPLogitsWarper(0.02)
    untempered = chained(logits.clone(), min_p)[0]
    dropped = xtc_reference(untempered, 0.1)
    want_last = (dropped.log() / temperature).softmax(dim=-1)  # (log 0 = -inf: still cut)
    tempered = chained(logits.clone(), TemperatureLogitsWarper(temperature), min_p)[0]
    want = [want_last, xtc_reference(tempered, 0.1), tempered, tempered]
    for row, expected in zip(got, want, strict=True):
        torch.testing.assert_close(row, expected, atol=1e-6, rtol=1e-5)
    least = min((5, 9, 17), key=lambda t: float(untempered[t]))
    assert [t for t in (5, 9, 17) if got[0, t] > 0] == [least]  # (the two likeliest went)
    greedy = SamplingParams(temperature=0.0, temperature_last=True, **xtc)
    sampler = Sampler("cpu", 0, (0,))
    out = sampler(logits.clone(), [greedy], [sampler.new_row_state(greedy)], [0])
    assert out.token_ids.tolist() == [least]
    plain = SamplingParams(temperature=0.0, **xtc)  # (the temperature first: the argmax alone)
    out = sampler(logits.clone(), [plain], [sampler.new_row_state(plain)], [0])
    assert out.token_ids.tolist() == [int(logits.argmax())]


@pytest.mark.parametrize(
    ("samplers", "temperature", "says"),
    [
        (["min_p", "xtc", "temperature"], 0.8, None),
        (["temperature", "min_p", "xtc"], 0.8, None),
        (["xtc", "min_p"], 0.8, "xtc before min_p"),
        (["top_k", "min_p", "temperature", "xtc"], 0.8, "between min_p and xtc"),
        (["top_k", "temperature", "xtc"], 0.0, None),  # (greedy first: one token, no XTC)
        (["top_k", "xtc", "temperature"], 0.0, None),
    ],
)  # fmt: skip
def test_xtcs_place_in_the_chain(samplers, temperature, says):
    active = ACTIVE | {"xtc"}
    if says is None:
        chain = sampler_chain(samplers, temperature, active)
        assert chain.temperature_last is (samplers[-1] == "temperature")
        return
    with pytest.raises(APIError) as e:
        sampler_chain(samplers, temperature, active)
    assert e.value.param == "samplers" and says in str(e.value), str(e.value)


def sorted_top_k_top_p(
    logits: torch.Tensor, top_k: torch.Tensor | None, top_p: torch.Tensor | None
) -> torch.Tensor:
    """The top-k / top-p cut over a sort of each row's whole vocabulary (equal logits: the
    lower token id counts as the likelier), by its own arithmetic: the reference the engine's
    candidates are held to."""
    descending, order = logits.neg().sort(dim=-1, stable=True)
    sorted_logits, order = descending.neg_().flip(-1), order.flip(-1)  # ascending
    vocab = logits.shape[-1]
    if top_k is not None:
        k = torch.where(top_k > 0, top_k, vocab).clamp(max=vocab)
        kth = sorted_logits.gather(1, (vocab - k).unsqueeze(1))  # [B, 1]
        sorted_logits = sorted_logits.masked_fill(sorted_logits < kth, float("-inf"))
    if top_p is not None:
        cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        drop = (cum <= (1 - top_p).unsqueeze(1)) & (top_p < 1).unsqueeze(1)
        drop[:, -1] = False  # always keep the most likely token
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(1, order, sorted_logits)


def candidate_ops(which: str) -> CandidateOps:
    """torch's passes, or the CPU backend's kernels (skipped where they do not build)."""
    if which == "torch":
        return CandidateOps()
    kernels = load_cpu_kernels()
    if kernels is None:
        pytest.skip("no C++ kernels here: the torch passes run")
    return CandidateOps(
        kernels.top_candidates_rows, kernels.logsumexp_rows, kernels.sample_candidates_rows
    )


@pytest.mark.parametrize("ops", ["torch", "kernels"])
@pytest.mark.parametrize("vocab", [300, 1000, 49152])
def test_top_k_top_p_among_candidates_equals_the_full_sort(vocab, ops):
    """The pass over each row's likeliest tokens keeps what a sort of the whole vocabulary
    keeps, with torch's passes and the kernels': bit for bit where the top-p cut is not within
    float32's rounding of a token's cumulative mass (there the two sums may round it either
    way: the sort's ascending softmax cumsum, transformers' arithmetic, against the running
    mass before each candidate); rows with a k, with a p, both, neither, a top-p set past 256,
    1,024 and 4,096 candidates (flat rows), a k-th logit tied past them, a p that is 0 in
    float32, equal logits at a top-p cut, many tied at the last candidate."""
    passes = candidate_ops(ops)
    gen = torch.Generator().manual_seed(vocab)
    top_k = torch.tensor([0, 5, 40, 300, 0, 2, 0])
    top_p = torch.tensor([1.0, 0.9, 0.5, 0.99, 0.95, 1.0, 1e-46])  # (1e-46: 0 in float32)
    rounded = 0
    for scale in (0.05, 0.5, 3.0, 8.0, "bf16", "far"):  # (0.05: flat; 8: a few tokens hold it)
        if scale == "bf16":  # a bf16 model's logits: equal ones at a top-p cut, kept alike
            logits = (torch.randn(7, vocab, generator=gen) * 3).bfloat16().float()
        elif scale == "far":  # tokens whose probability underflows: a row with p 1 keeps them
            logits = torch.randn(7, vocab, generator=gen)
            logits[:, 1 : vocab // 2] -= 200.0
        else:
            logits = torch.randn(7, vocab, generator=gen) * scale
        logits[5, :400] = 7.0  # row 5: its 2nd logit tied far past 256 candidates
        logits[6, 100:500] = logits[6].max() - 3.0  # row 6: tied across the 256th candidate
        for k, p in ((top_k, top_p), (top_k, None), (None, top_p)):
            got = apply_top_k_top_p(logits.clone(), k, p, passes)
            want = sorted_top_k_top_p(logits.clone(), k, p)
            for r in range(len(logits)):
                if not torch.equal(got[r], want[r]):
                    row_k = 0 if k is None else int(k[r])
                    assert p is not None
                    assert at_a_rounded_cut(got[r], want[r], logits[r], row_k, float(p[r]))
                    rounded += 1
    assert rounded <= 8  # (of 126 rows: 0-5 here, bf16 rows whose set reaches past 4,096)


@pytest.mark.parametrize("ops", ["torch", "kernels"])
def test_a_rows_set_is_the_same_whatever_tier_it_lands_in(ops):
    """The tiers route each row to the first that can hold its set (`Truncation.reach`), so
    rows skip tiers: bit for bit the sets all rows get from the whole vocabulary's tier alone
    (what the old route, every tier in turn, gave too), for flat, peaked and mixed rows, top-k,
    top-p, both, p within float32's rounding of a tier's mass, NaN and -inf rows."""
    passes = candidate_ops(ops)
    gen = torch.Generator().manual_seed(11)
    vocab = 49152
    for trial in range(6):
        scale = torch.tensor([0.02, 0.3, 1.0, 3.0, 6.0, 0.1, 2.0, 0.5]).unsqueeze(1)
        logits = torch.randn(8, vocab, generator=gen) * scale
        for row, width in ((5, 700), (6, 3000)):  # sets past 256 and past 1,024 candidates
            logits[row, torch.randperm(vocab, generator=gen)[:width]] += 14.0
        top_p = torch.rand(8, generator=gen) * 0.5 + 0.5
        top_p[7] = 0.99999994  # (the float32 just under 1)
        top_k = torch.tensor([0, 0, 50, 0, 9000, 0, 0, 0])
        if trial % 2:
            logits[3, 10] = float("nan")
            logits[4] = float("-inf")
            logits[4, 3] = 1.0
        if trial >= 2:  # p at the float32 mass of a tier's candidates
            m = (256, 1024)[trial % 2]
            probs = logits[1].double().softmax(-1).sort(descending=True).values
            top_p[1] = float(probs[:m].float().cumsum(0)[-1])
        k = top_k if trial % 3 else None
        got = apply_top_k_top_p(logits.clone(), k, top_p, passes)
        whole = expand(logits, [(list(range(8)), truncate(logits, k, top_p, passes, vocab))])
        assert torch.equal(got.isfinite(), whole.isfinite()), trial
        assert torch.equal(got[got.isfinite()], whole[whole.isfinite()]), trial


def at_a_rounded_cut(got: torch.Tensor, want: torch.Tensor, logits: torch.Tensor, k: int,
                     p: float) -> bool:  # fmt: skip
    """Whether two top-p cuts of one row (its `logits`, top-k k) differ only by tokens at the
    cut whose mass before them (in float64, of the distribution after top-k) is within 1e-5 of
    p, the kept logits otherwise equal."""
    kept, wanted = got.isfinite(), want.isfinite()
    if not torch.equal(got[kept & wanted], want[kept & wanted]):
        return False
    row = logits.double()
    if 0 < k < len(row):
        row = row.masked_fill(row < row.sort(descending=True).values[k - 1], float("-inf"))
    ordered = row.softmax(-1).sort(descending=True).values
    before = ordered.cumsum(-1) - ordered
    odd, edge = int((kept ^ wanted).sum()), int((kept & wanted).sum())
    return bool((before[edge : edge + odd] - p).abs().max() < 1e-5)


@pytest.mark.parametrize("ops", ["torch", "kernels"])
@pytest.mark.parametrize("vocab", [300, 49152])
def test_equal_logits_at_a_top_p_cut_keep_the_lower_ids_as_greedy_does(vocab, ops):
    """A run of equal logits cut by top-p keeps its lower ids, the ones greedy's argmax takes,
    so that a top-p near 0 keeps greedy's token. (transformers' TopPLogitsWarper and vLLM sort
    with torch's unstable sort, which leaves a run's members in no set order: session 60's
    audit saw it keep the higher ids on one row, and here it keeps lower and higher alike.)"""
    passes = candidate_ops(ops)
    gen = torch.Generator().manual_seed(vocab)
    logits = (torch.randn(4, vocab // 4 + 1, generator=gen) * 3).repeat_interleave(4, dim=1)
    logits = logits[:, :vocab].contiguous()  # runs of four equal logits
    cut_inside_a_run = 0
    for p in (1e-6, 0.05, 0.3, 0.5, 0.9):
        got = apply_top_k_top_p(logits.clone(), None, torch.full((4,), p), passes)
        for r in range(4):
            kept = got[r].isfinite().nonzero().squeeze(1)
            least = logits[r, kept].min()
            run = (logits[r] == least).nonzero().squeeze(1)  # the run at the cut
            kept_of_run = kept[logits[r, kept] == least]
            assert torch.equal(kept_of_run, run[: len(kept_of_run)]), (p, r)  # its first ones
            cut_inside_a_run += len(kept_of_run) < len(run)
            if p == 1e-6:
                assert kept.tolist() == [int(logits[r].argmax())]
    assert cut_inside_a_run >= 4  # (the case itself)


@pytest.mark.parametrize("ops", ["torch", "kernels"])
def test_a_top_k_tied_past_the_candidates_normalises_top_p_over_the_whole_set(ops):
    """top-k 200 with 300 logits tied at the 200th (past 256 candidates) and top-p 0.5: the
    top-p mass is read over all 399 tokens of the top-k set, as the sort reads it (over the
    first 256 alone it kept 25 tokens where the sort keeps 28)."""
    x = torch.full((1, 2048), -10.0)
    x[0, :100] = 4 - 0.03 * torch.arange(100)
    x[0, 100:400] = 0.0
    k, p = torch.tensor([200]), torch.tensor([0.5])
    got = apply_top_k_top_p(x.clone(), k, p, candidate_ops(ops))
    assert torch.equal(got, sorted_top_k_top_p(x.clone(), k, p))
    assert int(got.isfinite().sum()) == 28


def test_a_rows_draw_does_not_depend_on_the_batch_nor_on_post_sampling_logprobs():
    """A row kept among three tokens (a grammar's mask) with top-p at a cumulative mass's edge:
    the same token for every seed alone, beside a row whose top-k (20,000) takes the whole
    vocabulary (it once sent every row there, to the sort), and asking for post-sampling
    logprobs (which once took another path)."""
    vocab = 49152
    row = torch.full((vocab,), float("-inf"))
    row[:3] = torch.tensor([1.5409960746765137, -0.293428897857666, -2.1787893772125244])
    other = torch.randn(vocab, generator=torch.Generator().manual_seed(0))
    sampler = Sampler("cpu", 0, [0])
    wide = SamplingParams(top_k=20000)
    tiers = truncate_in_tiers(torch.stack([row, other]), torch.tensor([0, 20000]),
                              torch.tensor([0.8446342349052429, 1.0]))  # fmt: skip
    assert [(rows, t.values.shape[1]) for rows, t in tiers] == [([0], 256), ([1], vocab)]
    for seed in range(100):
        p = SamplingParams(top_p=0.8446342349052429, seed=seed)
        processed = replace(p, logprobs=0, logprobs_processed=True)
        alone = sampler(row[None].clone(), [p], [sampler.new_row_state(p)], [0]).token_ids
        states = [sampler.new_row_state(q) for q in (p, wide)]
        beside = sampler(torch.stack([row, other]), [p, wide], states, [0, 0]).token_ids
        asked = sampler(row[None].clone(), [processed], [sampler.new_row_state(processed)], [0])
        assert int(alone) == int(beside[0]) == int(asked.token_ids), seed


@pytest.mark.parametrize("vocab", [300, 49152])  # (300: the whole vocabulary, one tier)
@pytest.mark.parametrize("ops", ["torch", "kernels"])
def test_a_draw_among_candidates_is_the_draw_over_the_vocabulary(ops, vocab):
    """A row's draw among its candidates (`draw_among`, each tier's) gives, for every uniform,
    the token `sample_from` gives over the whole vocabulary with the other tokens at 0: by T,
    top-k, top-p and min-p, rows inside 256, 1,024 and 4,096 candidates and past them."""
    passes = candidate_ops(ops)
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(8, vocab, generator=gen) * 4
    logits[5] *= 0.01  # flat: top-p 0.9 reaches past every tier (the whole vocabulary)
    for row, width in ((6, 600), (7, 3000)):  # top-p 0.95 past 256 candidates, past 1,024
        logits[row] = torch.randn(vocab, generator=gen) * 0.1 - 12.0
        logits[row, torch.randperm(vocab, generator=gen)[:width]] += 12.0
    logits /= torch.tensor([0.7, 1.0, 1.5, 1.0, 0.8, 0.9, 1.0, 1.0]).unsqueeze(1)
    top_k = torch.tensor([0, 40, 20, 1, 0, 0, 0, 0])
    top_p = torch.tensor([0.9, 0.95, 1.0, 1.0, 0.5, 0.9, 0.95, 0.95])
    min_p = [0.0, 0.05, 0.1, 0.0, 0.2, 0.0, 0.0, 0.5]
    tiers = truncate_in_tiers(logits, top_k, top_p, passes)
    if vocab == 49152:  # rows 6 and 7 inside the second and third tiers, 5 past them: each
        # goes straight to the first tier that can hold its set (the mass its p lacks over the
        # 257th logit's weight), not through the tiers before it
        assert [rows for rows, _ in tiers] == [list(range(8)), [6], [7], [5]]
        assert [t.inside.tolist() for _, t in tiers] == [[True] * 5 + [False] * 3,
                                                         [True], [True], [True]]  # fmt: skip
    whole = unnormalised_probs(expand(logits, tiers), masked=[True] * 8)
    whole = min_p_filter(whole, min_p)
    draws = 200
    for tier_rows, truncation in tiers:
        local = [j for j, inside in enumerate(truncation.inside.tolist()) if inside]
        rows = [tier_rows[j] for j in local]
        u = torch.rand(len(rows) * draws, generator=gen, dtype=torch.float64)
        late = Late([1.0] * len(u), [min_p[r] for r in rows] * draws, frozenset())
        among = draw_among(truncation.select(torch.tensor(local * draws)), late, u, passes.draw)
        over_vocabulary = sample_from(whole[rows * draws], u)
        assert torch.equal(among.token_ids, over_vocabulary), tier_rows
    assert int(whole[3].argmax()) == int(logits[3].argmax()) and int((whole[3] > 0).sum()) == 1


@pytest.mark.parametrize("ops", ["torch", "kernels"])
def test_a_rows_token_is_the_same_alone_batched_and_asking_for_post_sampling_logprobs(ops):
    """Seeded rows by T, top-k, top-p and min-p, temperature first or last, in every tier: the
    same tokens batched, alone, and with `logprobs_processed` on every other row."""
    passes = candidate_ops(ops)
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(6, 49152, generator=gen) * 4
    logits[5] = torch.randn(49152, generator=gen) * 0.1 - 12.0
    logits[5, torch.randperm(49152, generator=gen)[:3000]] += 12.0  # (the third tier)
    cases = [dict(temperature=0.7, top_p=0.9), dict(top_k=40, top_p=0.95, min_p=0.05),
             dict(temperature=1.5, top_k=20, temperature_last=True, min_p=0.1),
             dict(temperature=0.8, top_p=0.5, min_p=0.2), dict(temperature=0.0),
             dict(top_p=0.95)]  # fmt: skip
    sampler = Sampler("cpu", 0, (0,), candidate_ops=passes)
    for seed in range(20):
        params = [SamplingParams(seed=seed * 10 + i, **case) for i, case in enumerate(cases)]
        asking = [replace(p, logprobs=0, logprobs_processed=True) if i % 2 else p
                  for i, p in enumerate(params)]  # fmt: skip
        got = {}
        for name, batch in (("batched", params), ("asking", asking)):
            states = [sampler.new_row_state(p) for p in batch]
            got[name] = sampler(logits.clone(), batch, states, [0] * len(batch)).token_ids
        alone = [int(sampler(logits[i : i + 1].clone(), [p], [sampler.new_row_state(p)],
                             [0]).token_ids) for i, p in enumerate(params)]  # fmt: skip
        assert got["batched"].tolist() == got["asking"].tolist() == alone, seed


# ---- the infill filter -------------------------------------------------------------------------


def reference_infill(logits: list[float], ids: list[int], pieces: dict[int, bytes],
                     ends: set[int], eot: int) -> dict[int, float]:  # fmt: skip
    """llama.cpp's llama_sampler_infill_apply then its dist's softmax, as written (candidates
    sorted by logit, its double loop over them): {token: probability} of the final draw."""
    cur = sorted(([t, x, 0.0] for t, x in zip(ids, logits, strict=True)),
                 key=lambda c: (-c[1], c[0]))  # fmt: skip
    top = cur[0][1]
    total = sum(pow(2.718281828459045, c[1] - top) for c in cur)
    for c in cur:
        c[2] = pow(2.718281828459045, c[1] - top) / total
    p_eog = sum(c[2] for c in cur if c[0] in ends)
    p_txt = sum(c[2] for c in cur if c[0] not in ends)
    if 3 * p_eog * len(cur) > p_txt:
        cur = [c for c in cur if c[0] in ends]
    else:
        for i0 in range(len(cur)):
            for i1 in range(len(cur)):
                if cur[i0][1] == float("-inf"):
                    break
                if i0 == i1 or cur[i1][1] == float("-inf"):
                    continue
                a, b = pieces[cur[i0][0]], pieces[cur[i1][0]]
                if a and len(a) <= len(b) and b[: len(a)] == a:
                    dst, src = (i1, i0) if cur[i1][2] > cur[i0][2] else (i0, i1)
                    cur[dst][2] += cur[src][2]
                    cur[src][1], cur[src][2] = float("-inf"), 0.0
        kept = [c for c in cur if not (c[2] < 0.2 and c[0] not in ends)]
        texts = sum(1 for c in kept if c[0] not in ends)
        if texts == 0:
            return {eot: 1.0}
        mass = sum(c[2] for c in kept)
        for c in kept:
            c[2] /= mass
        cur = [c for c in kept if not (c[2] < 1.0 / (texts + 1) and c[0] not in ends)]
    live = [c for c in cur if c[1] != float("-inf")]
    top = max(c[1] for c in live)
    total = sum(pow(2.718281828459045, c[1] - top) for c in live)
    return {c[0]: pow(2.718281828459045, c[1] - top) / total for c in live}


WORDS = [b"re", b"ret", b"return", b"r", b"x", b"xs", b"print", b"pr", b"p", b"(", b"()", b"\n",
         b"\n    ", b"", b"self", b"s", b"se"]  # fmt: skip


def test_infill_filter_is_llama_cpps_loop(monkeypatch):
    gen = torch.Generator().manual_seed(11)
    pieces = {t: WORDS[t % len(WORDS)] for t in range(V)}  # shared and equal texts, b"" ones
    ends = {0, 13, 30}  # (13's text is b"": an end token that never merges)
    pieces[0] = pieces[30] = b""
    infill = InfillFilter(pieces.__getitem__, end_token=0)
    checked = {"ends": 0, "eot": 0, "merged": 0}
    for trial in range(300):
        k = int(torch.randint(2, 30, (1,), generator=gen))
        scale = float(torch.rand(1, generator=gen)) * 6
        logits = torch.randn(1, V, generator=gen) * scale
        if trial % 3 == 0:
            logits[0, 13] += 4  # end tokens likely: the first branch
        params = SamplingParams(top_k=k, infill=True)
        got = drawn_from(monkeypatch, logits, [params], infill, tuple(ends))[0]
        monkeypatch.undo()
        top = logits[0].topk(k)
        want = reference_infill(top.values.tolist(), top.indices.tolist(), pieces, ends, 0)
        expected = torch.zeros(V)
        for t, q in want.items():
            expected[t] = q
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
        kept = set(want)
        checked["ends"] += kept <= ends
        checked["eot"] += kept == {0}
        checked["merged"] += len(kept) > 1 and not kept <= ends
    assert all(n > 10 for n in checked.values()), checked  # every branch was taken


def test_the_infill_sampler_needs_a_bounded_top_k_before_it():
    """Its pass compares every candidate's text with the others': the whole vocabulary would
    hold every request's step (0.3 s on SmolLM2's 49,152 tokens)."""
    for k in (0, 1001):
        with pytest.raises(ValueError, match=r"top_k must be in \[1, 1000\] before .* infill"):
            SamplingParams(top_k=k, infill=True)
    assert SamplingParams(top_k=1000, infill=True).infill
    with pytest.raises(ValueError, match="ignore_eos cannot be true beside .* infill"):
        SamplingParams(top_k=40, infill=True, ignore_eos=True)
    from roseinfer.sampling_params import StructuredOutputs

    for field, value in (("min_tokens", 2), ("allowed_token_ids", (1, 2)),
                         ("structured_outputs", StructuredOutputs(regex="a+"))):  # fmt: skip
        with pytest.raises(ValueError, match=f"{field} cannot be set beside .* infill"):
            SamplingParams(top_k=40, infill=True, **{field: value})


def test_infill_merges_prefixes_and_picks_the_end_token():
    pieces = {0: b"", 1: b"re", 2: b"ret", 3: b"return", 4: b"x", 5: b"y", 6: b"z", 7: b"w"}
    infill = InfillFilter(pieces.__getitem__, end_token=0)
    w = torch.tensor([0.0, 0.30, 0.25, 0.20, 0.15, 0.05, 0.05, 0.0])
    out = infill(w, ends=[0])
    # re, ret, return merge into "re" (0.75): x (0.15) falls under 0.2, y and z too
    assert out.nonzero().squeeze(1).tolist() == [1] and float(out[1]) == pytest.approx(0.30)
    flat = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.34, 0.33, 0.33, 0.0])  # no text candidate >= 1/(3+1)
    assert infill(flat, ends=[0]).nonzero().squeeze(1).tolist() == [4, 5, 6]
    six = InfillFilter({0: b"", **{t: b"abcdef"[t - 1 :][:1] for t in range(1, 7)}}.__getitem__, 0)
    spread = torch.tensor([0.0] + [0.1] * 6)  # six texts, each 1/6 of the mass: none 0.2
    assert six(spread, ends=[0]).nonzero().squeeze(1).tolist() == [0]  # the end token
    likely_end = torch.tensor([0.2, 0.0, 0.0, 0.0, 0.5, 0.3, 0.0, 0.0])  # 3 x 0.2 x 3 > 0.8
    assert infill(likely_end, ends=[0]).nonzero().squeeze(1).tolist() == [0]


def test_a_rows_distribution_does_not_depend_on_its_neighbours(monkeypatch):
    """A late temperature of 100 over tokens far below the likeliest (their untempered weights
    underflow): the exact softmax of logits / T, alone and beside a top-k row (whose batch
    floors exp); a min-p row's cut stays cut."""
    gen = torch.Generator().manual_seed(9)
    logits = torch.randn(2, V, generator=gen) * 3
    logits[:, 10:40] -= 200.0
    late = SamplingParams(temperature=100.0, temperature_last=True)
    want = (logits[0] / 100.0).softmax(dim=-1)
    alone = drawn_from(monkeypatch, logits[:1], [late])[0]
    monkeypatch.undo()
    beside = drawn_from(monkeypatch, logits, [late, SamplingParams(top_k=5)])[0]
    monkeypatch.undo()
    torch.testing.assert_close(alone, want, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(beside, want, atol=1e-6, rtol=1e-4)
    cut = SamplingParams(temperature=100.0, temperature_last=True, min_p=0.01)
    kept = drawn_from(monkeypatch, logits[:1], [cut])[0] > 0
    assert torch.equal(kept, logits[0].softmax(dim=-1) >= 0.01 * logits[0].softmax(dim=-1).max())


def test_the_infill_filters_end_token_beside_a_late_temperature(monkeypatch):
    """Six texts of one sixth each: the end token, though top-k had cut it; a temperature after
    the filter (llama.cpp's order) keeps it."""
    six = InfillFilter({0: b"", **{t: bytes([96 + t]) for t in range(1, V)}}.__getitem__, 0)
    logits = torch.full((1, V), -10.0)
    logits[0, 1:7] = 1.0
    for temperature in (0.5, 0.0):
        params = SamplingParams(temperature=temperature, top_k=6, infill=True,
                                temperature_last=True)  # fmt: skip
        drawn = drawn_from(monkeypatch, logits, [params], six)[0]
        monkeypatch.undo()
        assert drawn.nonzero().tolist() == [[0]] and float(drawn[0]) == 1.0


def test_greedy_after_the_infill_filter_takes_its_likeliest(monkeypatch):
    """x 0.24, a 0.23, ab 0.22, abc 0.21, t5 0.10: ab and abc merge into a (0.66), t5 falls
    under 0.2, and x (0.24 of 0.90) under 1/3: greedy after the filter is "a", before it the
    argmax "x"."""
    pieces = {t: b"t%d" % t for t in range(V)}
    pieces[1], pieces[2], pieces[3], pieces[4] = b"a", b"ab", b"abc", b"x"
    infill = InfillFilter(pieces.__getitem__, end_token=0)
    logits = torch.full((1, V), -10.0)
    for token, p in ((4, 0.24), (1, 0.23), (2, 0.22), (3, 0.21), (5, 0.10)):
        logits[0, token] = float(torch.tensor(p).log())
    after = SamplingParams(temperature=0, top_k=5, infill=True, temperature_last=True)
    assert drawn_from(monkeypatch, logits, [after], infill)[0].nonzero().tolist() == [[1]]
    monkeypatch.undo()
    sampler = Sampler("cpu", 0, [0], infill=infill)
    before = SamplingParams(temperature=0, top_k=5, infill=True)
    out = sampler(logits.clone(), [before], [sampler.new_row_state(before)], [0])
    assert out.token_ids.tolist() == [4]


# ---- logprobs of the distribution drawn from (llama.cpp's post_sampling_probs) -----------------


def test_processed_logprobs_are_the_drawn_distribution_beside_raw_rows():
    """Rows asking for the drawn distribution's logprobs get transformers' chain (temperature,
    top-k) as log-probabilities, tokens of probability 0 left out of the top N; a greedy row
    its token alone at 0; a row beside them asking for the model's own keeps those."""
    from roseinfer.layers.logprobs import to_records

    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(4, V, generator=gen) * 2
    drawn = SamplingParams(temperature=0.7, top_k=3, logprobs=5, logprobs_processed=True)
    greedy = SamplingParams(temperature=0, logprobs=2, logprobs_processed=True)
    raw = SamplingParams(temperature=0.7, top_k=3, logprobs=2)
    cold = SamplingParams(temperature=0.01, logprobs=5, logprobs_processed=True)
    sampler = Sampler("cpu", 0, [0])
    params = [drawn, greedy, raw, cold]
    out = sampler(logits.clone(), params, [sampler.new_row_state(p) for p in params], [0] * 4)
    ids = out.token_ids.tolist()
    assert out.logprob_rows == [0, 1, 2, 3]
    records = to_records(out.logprobs, ids, [5, 2, 2, 5])
    # an untruncated row beside truncated ones: its own exact values, none at exp's floor
    exact = (logits[3] / 0.01).log_softmax(dim=-1)
    assert records[3].top and all(v == pytest.approx(float(exact[t]), abs=1e-3)
                                  for t, v in records[3].top)  # fmt: skip
    assert len(records[3].top) == min(5, int((exact > -87).sum()))
    ref = torch.zeros(1, 1, dtype=torch.long)
    want = TopKLogitsWarper(3)(ref, TemperatureLogitsWarper(0.7)(ref, logits[:1].clone()))
    want = want.log_softmax(dim=-1)[0]
    assert len(records[0].top) == 3  # (5 asked: 3 have a probability above 0)
    for token, logprob in records[0].top:
        assert logprob == pytest.approx(float(want[token]), abs=1e-5)
    assert records[0].logprob == pytest.approx(float(want[ids[0]]), abs=1e-5)
    assert (records[1].logprob, records[1].rank, records[1].top) == (0.0, 1, ((ids[1], 0.0),))
    model = logits[2].log_softmax(dim=-1)
    assert records[2].logprob == pytest.approx(float(model[ids[2]]), abs=1e-5)
