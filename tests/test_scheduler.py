"""Scheduler unit tests: plain Python, no model.

`FakeEngine.step` does what `LLMEngine.step` does around the forward: schedule, note which
sequences sample, advance computed counts, append a made-up token, finish at max_new_tokens.
"""

from __future__ import annotations

import random

import pytest

from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.scheduler import RequestTooLargeError, Scheduler, SchedulerOutput
from roseinfer.engine.sequence import Sequence, SequenceStatus
from roseinfer.sampling_params import SamplingParams

BS = 4


class FakeEngine:
    def __init__(
        self,
        num_blocks=64,
        max_num_seqs=8,
        max_num_batched_tokens=32,
        max_model_len=256,
        enable_prefix_cache=True,
        lone_prefill_tokens=0,
    ):
        self.bm = BlockManager(num_blocks, BS, enable_prefix_cache)
        self.sched = Scheduler(
            self.bm, max_num_seqs, max_num_batched_tokens, max_model_len, lone_prefill_tokens
        )
        self.next_id = 0
        self.history: list[SchedulerOutput] = []

    def add(self, prompt: list[int], max_new_tokens: int = 4) -> Sequence:
        self.sched.check_fits(len(prompt), max_new_tokens)
        seq = Sequence(
            self.next_id, list(prompt), len(prompt), SamplingParams(max_new_tokens=max_new_tokens)
        )
        self.next_id += 1
        self.sched.add(seq)
        return seq

    def step(self) -> SchedulerOutput:
        sched = self.sched
        out = sched.schedule()
        budget = sched.max_num_batched_tokens
        assert out.num_batched_tokens <= max(budget, sched.lone_prefill_tokens)
        if out.num_batched_tokens > budget:  # a long prompt's chunk, the step's only one
            assert sum(s.is_prefill for s in out.scheduled) == 1
        assert len(sched.running) <= sched.max_num_seqs
        for s in out.scheduled:
            assert 1 <= s.num_new_tokens <= s.seq.num_uncomputed_tokens
            assert s.seq.status is SequenceStatus.RUNNING
            # Every token computed this step has a slot.
            assert len(s.seq.block_table) * BS >= s.seq.num_computed_tokens + s.num_new_tokens
        sampling = [s.seq for s in out.scheduled if s.samples]
        self.sched.on_computed(out)
        for seq in sampling:
            seq.token_ids.append(1000 + seq.seq_id)  # a deterministic "sampled" token
            if seq.num_output_tokens >= seq.params.max_new_tokens:
                self.sched.finish(seq, "length")
        self.history.append(out)
        return out

    def run(self, max_steps: int = 10_000) -> int:
        steps = 0
        while self.sched.has_unfinished():
            self.step()
            steps += 1
            assert steps < max_steps, "scheduler made no progress"
        return steps

    def assert_no_leaks(self) -> None:
        assert not self.sched.running and self.sched.num_waiting == 0
        assert self.bm.num_free_blocks == self.bm.num_blocks
        assert all(b.ref_count == 0 for b in self.bm.blocks)


def prompt(n: int, start: int = 0) -> list[int]:
    return list(range(start, start + n))


def test_chunked_prefill_splits_a_long_prompt_by_the_token_budget():
    eng = FakeEngine(max_num_batched_tokens=16)
    seq = eng.add(prompt(50), max_new_tokens=3)
    chunks = []
    while not seq.is_finished:
        out = eng.step()
        chunks.append([(s.num_new_tokens, s.samples) for s in out.scheduled])
    assert chunks == [
        [(16, False)],
        [(16, False)],
        [(16, False)],
        [(2, True)],
        [(1, True)],
        [(1, True)],
    ]
    assert seq.output_token_ids == [1000] * 3
    assert seq.finish_reason == "length"
    eng.assert_no_leaks()


def test_a_long_prompts_chunk_grows_to_the_lone_prefill_tokens_and_is_the_steps_only_one():
    eng = FakeEngine(max_num_batched_tokens=8, lone_prefill_tokens=20)
    a = eng.add(prompt(50), max_new_tokens=3)
    assert [s.num_new_tokens for s in eng.step().scheduled] == [20]  # alone
    b = eng.add(prompt(30, 100), max_new_tokens=2)  # waits: a's chunk takes the step
    assert [(s.seq, s.num_new_tokens) for s in eng.step().scheduled] == [(a, 20)]
    assert [(s.seq, s.num_new_tokens, s.samples) for s in eng.step().scheduled] == [(a, 10, True)]
    # b's prompt is longer than the budget left after a's decode: its chunk fills the step to 20.
    assert [(s.seq, s.num_new_tokens) for s in eng.step().scheduled] == [(a, 1), (b, 19)]
    assert [(s.seq, s.num_new_tokens) for s in eng.step().scheduled] == [(a, 1), (b, 11)]
    eng.run()
    eng.assert_no_leaks()
    # Prompts the budget holds share it as before: a burst of short ones is not packed into
    # steps of 20.
    eng = FakeEngine(max_num_batched_tokens=8, lone_prefill_tokens=20)
    short = [eng.add(prompt(3, 10 * i), max_new_tokens=2) for i in range(6)]
    out = eng.step()
    assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [
        (short[0], 3), (short[1], 3), (short[2], 2)
    ]  # fmt: skip
    eng.run()
    assert max(out.num_batched_tokens for out in eng.history) == 8
    eng.assert_no_leaks()
    # A budget larger than the lone one stands; 0 turns the growth off.
    eng = FakeEngine(max_num_batched_tokens=16, lone_prefill_tokens=4)
    eng.add(prompt(50), max_new_tokens=1)
    assert [s.num_new_tokens for s in eng.step().scheduled] == [16]
    eng = FakeEngine(max_num_batched_tokens=8, lone_prefill_tokens=0)
    eng.add(prompt(50), max_new_tokens=1)
    assert [s.num_new_tokens for s in eng.step().scheduled] == [8]


def test_running_sequences_behind_a_grown_chunk_keep_their_token():
    eng = FakeEngine(max_num_batched_tokens=8, lone_prefill_tokens=20)
    a = eng.add(prompt(3), max_new_tokens=10)
    c = eng.add(prompt(2, 50), max_new_tokens=10)
    eng.step()  # both prefilled
    b = eng.add(prompt(40, 100), max_new_tokens=2)
    eng.step()  # a, c decode; b's first chunk
    # b first in the running order (forced: admission puts the one unfinished prompt last, but
    # the rule should not depend on it): the decodes behind its chunk still run, their tokens
    # kept out of its 20.
    eng.sched.running[:] = [b, a, c]
    out = eng.step()
    assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [(b, 18), (a, 1), (c, 1)]
    eng.run()
    eng.assert_no_leaks()


def test_a_grown_chunk_leaves_a_block_for_each_running_sequence_and_stops_at_the_prompt():
    eng = FakeEngine(num_blocks=8, max_num_batched_tokens=4, lone_prefill_tokens=40)
    a = eng.add(prompt(4), max_new_tokens=5)
    eng.step()
    b = eng.add(prompt(28, 100), max_new_tokens=1)
    # a's decode takes a second block; of the 6 left, b's chunk takes 5 (20 tokens, not 24):
    # one stays for a's next block, else a would preempt b and its chunk be lost.
    out = eng.step()
    assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [(a, 1), (b, 20)]
    assert eng.bm.num_free_blocks == 1
    eng.run()
    eng.assert_no_leaks()
    # A readmitted sequence recomputes its prompt and its tokens: only the prompt's part grows
    # (the step's checks in FakeEngine: one prompt chunk in a step over the budget, the bound).
    eng = FakeEngine(
        num_blocks=10, max_num_batched_tokens=4, lone_prefill_tokens=16, enable_prefix_cache=False
    )
    eng.add(prompt(4), max_new_tokens=30)
    eng.add(prompt(4, 100), max_new_tokens=30)
    eng.run()
    assert sum(len(out.preempted) for out in eng.history) > 0
    eng.assert_no_leaks()


def test_running_decodes_go_first_and_a_long_prompt_does_not_stall_them():
    eng = FakeEngine(max_num_batched_tokens=8)
    a = eng.add(prompt(3), max_new_tokens=10)
    eng.step()  # a prefilled, sampled its first token
    b = eng.add(prompt(40, 100), max_new_tokens=2)
    for _ in range(5):
        out = eng.step()
        assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [(a, 1), (b, 7)]
        assert out.num_prefill_tokens == 7
    assert a.num_output_tokens == 6 and b.num_computed_tokens == 35
    eng.run()
    eng.assert_no_leaks()


def test_max_num_seqs_and_fcfs_admission():
    eng = FakeEngine(max_num_seqs=3, max_num_batched_tokens=100)
    seqs = [eng.add(prompt(5, 10 * i), max_new_tokens=3) for i in range(7)]
    out = eng.step()
    assert [s.seq for s in out.scheduled] == seqs[:3]
    assert eng.sched.num_waiting == 4
    eng.step()
    eng.step()  # the first three finish here
    assert all(s.is_finished for s in seqs[:3])
    out = eng.step()
    assert [s.seq for s in out.scheduled] == seqs[3:6]
    eng.run()
    assert all(s.num_output_tokens == 3 for s in seqs)
    eng.assert_no_leaks()


def test_admission_stops_at_the_token_budget_and_continues_next_step():
    eng = FakeEngine(max_num_batched_tokens=10)
    a, b = eng.add(prompt(6), 2), eng.add(prompt(6, 50), 2)
    out = eng.step()
    assert [(s.seq, s.num_new_tokens, s.samples) for s in out.scheduled] == [
        (a, 6, True),
        (b, 4, False),
    ]
    out = eng.step()
    assert [(s.seq, s.num_new_tokens, s.samples) for s in out.scheduled] == [
        (a, 1, True),
        (b, 2, True),
    ]
    eng.run()
    eng.assert_no_leaks()


def test_preemption_frees_the_newest_and_requeues_it_first():
    # 6 blocks of 4 tokens: two 10-token prompts take 3 blocks each, so the pool is full.
    eng = FakeEngine(num_blocks=6, max_num_batched_tokens=64)
    a, b = eng.add(prompt(10), 8), eng.add(prompt(10, 100), 8)
    c = eng.add(prompt(3, 200), 2)
    eng.step()
    assert a.status is b.status is SequenceStatus.RUNNING and eng.bm.num_free_blocks == 0
    eng.step()  # both decode position 10, then 11, in their third block
    eng.step()
    out = eng.step()  # position 12 needs a new block for both: b (newest) is preempted
    assert out.preempted == [b]
    assert [s.seq for s in out.scheduled] == [a]
    assert b.status is SequenceStatus.WAITING and b.block_table == [] and b.num_computed_tokens == 0
    assert b.num_preemptions == 1
    assert list(eng.sched.waiting)[:2] == [b, c]  # ahead of the older waiting request
    assert c.status is SequenceStatus.WAITING
    # b keeps its generated tokens and recomputes prompt + outputs when readmitted.
    assert b.num_output_tokens == 3
    out = eng.step()  # a alone needs 4 of the 6 blocks: b cannot come back yet
    assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [(a, 1)]
    assert b.status is SequenceStatus.WAITING and b.block_table == []
    eng.run()
    assert [s.num_output_tokens for s in (a, b, c)] == [8, 8, 2]
    assert b.output_token_ids == [1001] * 8
    eng.assert_no_leaks()


def test_a_readmitted_sequence_keeps_its_first_count_of_cached_prompt_tokens():
    """After a preemption the prefix cache also holds the sequence's own generated tokens:
    `num_cached_tokens` counts prompt tokens at the first admission (vLLM's), never more."""
    eng = FakeEngine(num_blocks=6, max_num_batched_tokens=64)
    a, b = eng.add(prompt(10), 8), eng.add(prompt(10, 100), 8)
    eng.run()
    assert b.num_preemptions == 1  # as in the test above: b computed 12 tokens, then left
    assert (a.num_cached_tokens, b.num_cached_tokens) == (0, 0)
    assert eng.bm.prefix_hit_rate > 0  # b matched its own blocks when readmitted
    eng.assert_no_leaks()


def test_a_sequence_can_preempt_itself_when_it_is_the_newest():
    eng = FakeEngine(num_blocks=4, max_num_batched_tokens=64)
    a = eng.add(prompt(7), 9)  # 16 tokens: exactly the pool
    b = eng.add(prompt(7, 50), 9)
    eng.run()
    assert a.num_output_tokens == b.num_output_tokens == 9
    assert sum(len(o.preempted) for o in eng.history) >= 1
    eng.assert_no_leaks()


def test_preemption_storm_finishes_everything_without_leaks():
    rng = random.Random(1)
    eng = FakeEngine(num_blocks=10, max_num_seqs=6, max_num_batched_tokens=12)
    seqs = [eng.add(prompt(rng.randrange(1, 20), 100 * i), rng.randrange(1, 18)) for i in range(30)]
    eng.run()
    assert sum(len(o.preempted) for o in eng.history) > 5
    for seq in seqs:
        assert seq.is_finished and seq.num_output_tokens == seq.params.max_new_tokens
        assert seq.output_token_ids == [1000 + seq.seq_id] * seq.params.max_new_tokens
    eng.assert_no_leaks()


def test_abort_while_waiting_running_and_mid_prefill():
    eng = FakeEngine(max_num_seqs=2, max_num_batched_tokens=8)
    a, b, c = eng.add(prompt(3), 20), eng.add(prompt(30, 100), 5), eng.add(prompt(3, 200), 5)
    eng.step()
    assert b.status is SequenceStatus.RUNNING and 0 < b.num_computed_tokens < 30  # mid-prefill
    eng.sched.finish(c, "abort")  # waiting
    assert eng.sched.num_waiting == 0 and c.finish_reason == "abort"
    eng.sched.finish(b, "abort")  # running, mid-prefill
    assert b.block_table == [] and b not in eng.sched.running
    eng.sched.finish(b, "length")  # a second finish is a no-op
    assert b.finish_reason == "abort"
    eng.step()
    assert c.num_computed_tokens == 0 and c.block_table == []  # never scheduled
    eng.sched.finish(a, "abort")
    assert not eng.sched.has_unfinished()
    assert eng.sched.schedule().scheduled == []
    eng.assert_no_leaks()


def test_abort_of_a_preempted_sequence():
    eng = FakeEngine(num_blocks=6, max_num_batched_tokens=64)
    a, b = eng.add(prompt(10), 8), eng.add(prompt(10, 100), 8)
    while not any(o.preempted for o in eng.history):
        eng.step()
    assert b.status is SequenceStatus.WAITING
    eng.sched.finish(b, "abort")
    eng.run()
    assert a.num_output_tokens == 8 and b.num_output_tokens == 3
    eng.assert_no_leaks()


def test_prefix_cache_admits_with_cached_tokens_and_computes_only_the_rest():
    eng = FakeEngine(max_num_batched_tokens=64)
    shared = prompt(21)
    a = eng.add(shared + [500], 2)
    eng.run()
    b = eng.add(shared + [600, 601], 2)
    out = eng.step()
    assert b.num_cached_tokens == 20  # 5 full blocks of the shared 21 tokens
    assert [(s.seq, s.num_new_tokens) for s in out.scheduled] == [(b, 3)]
    eng.run()
    assert a.num_cached_tokens == 0
    eng.assert_no_leaks()


def test_a_requests_choices_wait_for_its_first_to_compute_the_prompt():
    """Choices 1..n-1 are admitted once choice 0 has its first token: the prompt is computed
    once and they take it from the prefix cache (all but its last block's tokens). A request
    behind them is admitted meanwhile; they stay first in the queue."""
    eng = FakeEngine(max_num_batched_tokens=8)
    leader = eng.add(prompt(22), 2)
    choices = [eng.add(prompt(22), 2) for _ in range(3)]
    for seq in choices:
        seq.prompt_leader = leader
    later = eng.add(prompt(7, 500), 2)
    scheduled = [[s.seq for s in eng.step().scheduled] for _ in range(3)]
    assert scheduled == [[leader], [leader], [leader, later]]  # 8 + 8 + 6 of the prompt, later 2
    assert leader.num_output_tokens == 1 and list(eng.sched.waiting) == choices
    out = eng.step()
    assert [s.seq for s in out.scheduled] == [leader, later, choices[0]]
    assert [s.num_new_tokens for s in out.scheduled] == [1, 5, 2]  # the budget's 8
    assert choices[0].num_cached_tokens == 20
    eng.run()
    assert [seq.num_cached_tokens for seq in choices] == [20, 20, 20]
    eng.assert_no_leaks()


def test_choices_whose_first_ended_before_a_token_are_not_held():
    eng = FakeEngine(max_num_batched_tokens=8)
    leader = eng.add(prompt(22), 2)
    other = eng.add(prompt(22), 2)
    other.prompt_leader = leader
    eng.step()
    eng.sched.finish(leader, "abort")  # (its client went away, say)
    out = eng.step()
    assert [s.seq for s in out.scheduled] == [other]
    eng.run()
    assert other.num_output_tokens == 2
    eng.assert_no_leaks()


def test_choices_wait_through_their_firsts_preemption():
    """Choice 0 preempted before its first token (an older request needs its blocks): the
    others still wait for its prompt, and all finish."""
    eng = FakeEngine(num_blocks=7, max_num_batched_tokens=8)
    eng.add(prompt(4, 900), 12)
    leader = eng.add(prompt(22), 2)
    choices = [eng.add(prompt(22), 2) for _ in range(2)]
    for seq in choices:
        seq.prompt_leader = leader
    preempted = False
    while eng.sched.has_unfinished():
        out = eng.step()
        if leader.num_output_tokens == 0:
            preempted |= leader in out.preempted
            assert not any(s.seq in choices for s in out.scheduled)
    assert preempted and [seq.num_output_tokens for seq in choices] == [2, 2]
    eng.assert_no_leaks()


def test_no_prefix_cache_computes_everything():
    eng = FakeEngine(max_num_batched_tokens=64, enable_prefix_cache=False)
    eng.add(prompt(21), 2)
    eng.run()
    b = eng.add(prompt(22), 2)
    out = eng.step()
    assert b.num_cached_tokens == 0 and out.scheduled[0].num_new_tokens == 22


def test_head_of_queue_that_does_not_fit_waits_and_returns_its_prefix_blocks():
    eng = FakeEngine(num_blocks=8, max_num_batched_tokens=64)
    a = eng.add(prompt(12), 1)
    eng.run()  # a's 3 full blocks are cached and free
    hog = eng.add(prompt(20, 300), 12)  # 32 tokens = 8 blocks eventually
    eng.step()
    eng.step()
    b = eng.add(prompt(12) + prompt(8, 50), 4)
    while hog.num_computed_tokens < 28:
        eng.step()
        # b cannot get even one token of room; its matched prefix blocks were given back.
        assert b.status is SequenceStatus.WAITING and b.block_table == []
    eng.run()
    assert b.num_output_tokens == 4 and a.is_finished
    eng.assert_no_leaks()


def test_prefix_stats_count_a_blocked_request_once():
    """A request retried at the head of the queue is looked up once per admission, not per step."""
    eng = FakeEngine(num_blocks=8, max_num_batched_tokens=64)
    eng.add(prompt(12), 1)
    eng.run()
    hog = eng.add(prompt(20, 300), 12)
    eng.step()
    b = eng.add(prompt(12) + prompt(8, 50), 4)
    blocked = 0
    while b.status is SequenceStatus.WAITING:
        eng.step()
        blocked += 1
    assert blocked > 3 and hog.is_finished
    eng.run()
    assert eng.bm.prefix_queries == 12 + 20 + 20
    assert eng.bm.prefix_hits == b.num_cached_tokens


def test_check_fits():
    eng = FakeEngine(num_blocks=4, max_model_len=20)
    eng.sched.check_fits(10, 6)  # 16 tokens = the whole pool, within the context
    with pytest.raises(RequestTooLargeError, match="maximum context length is 20 tokens"):
        eng.sched.check_fits(15, 6)
    with pytest.raises(RequestTooLargeError, match="needs 5 KV blocks; the cache has 4"):
        eng.sched.check_fits(15, 2)
    assert issubclass(RequestTooLargeError, ValueError)
    assert not eng.sched.has_unfinished()


def test_empty_schedule_when_idle():
    eng = FakeEngine()
    out = eng.sched.schedule()
    assert out.scheduled == [] and out.preempted == [] and out.num_batched_tokens == 0
