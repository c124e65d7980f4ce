"""Which sequences run this step, and how many of their tokens: plain Python over plain data.

Policy (vLLM V1 style, one token budget for prefill and decode alike):
- running sequences first, oldest first: a decode takes 1 token, an unfinished prefill takes
  the next chunk that fits the step's budget (or grows, below), so a long prompt computes
  beside the running decodes, never ahead of them;
- when a running sequence needs a block and none is free, the newest running sequence is
  preempted (blocks freed, requeued at the front, recomputed later);
- then waiting sequences are admitted, oldest first, while a sequence slot, budget and blocks
  remain; a newly admitted sequence first takes its cached prefix blocks. A request's choices
  1..n-1 wait (first in the queue still, the requests behind them admitted meanwhile) until
  its choice 0 has computed the prompt, then take it from the cache: the prompt is computed
  once, not n times;
- a step's first prompt chunk, when the budget left cannot hold the rest of its prompt, grows
  to `lone_prefill_tokens` tokens for the whole step (when larger than the budget; the running
  sequences behind it keep a token each, and each running sequence a free block for its next
  token; never past the prompt) and is the step's only prompt chunk: the matmuls and
  the attention run faster in fewer, larger chunks (a 2,000-token prompt alone -11 % to its
  first token, eight at once +11-22 % output tok/s on a 2-core Xeon; BENCHMARKS.md, sessions 66
  and 69), while short prompts still share 512-token steps (a burst of them packed into one
  2,048-token step waits for all of it: 32 streams' TTFT p50 1.7x, session 67). Like vLLM's
  CPU server (2,048-token steps), a long prompt then holds the running decodes for one longer
  step rather than a few shorter ones.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.sequence import ScheduledSequence, Sequence, SequenceStatus


class RequestTooLargeError(ValueError):
    """A request that can never fit the model's context or the KV cache."""


class ContextLengthError(RequestTooLargeError):
    """A request longer than the context window (OpenAI's `context_length_exceeded`)."""


def no_room_message(num_prompt_tokens: int, max_model_len: int) -> str:
    """A prompt that fills the context window, in OpenAI's and vLLM's words (client libraries
    read "maximum context length" to shorten a conversation and retry)."""
    return (
        f"This model's maximum context length is {max_model_len} tokens. However, the prompt "
        f"has {num_prompt_tokens} tokens, which leaves no room to generate"
    )


@dataclass
class SchedulerOutput:
    scheduled: list[ScheduledSequence] = field(default_factory=list)
    preempted: list[Sequence] = field(default_factory=list)

    @property
    def num_batched_tokens(self) -> int:
        return sum(s.num_new_tokens for s in self.scheduled)

    @property
    def num_prefill_tokens(self) -> int:
        return sum(s.num_new_tokens for s in self.scheduled if s.is_prefill)


class Scheduler:
    def __init__(
        self,
        block_manager: BlockManager,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        lone_prefill_tokens: int = 0,
    ) -> None:
        self.block_manager = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.lone_prefill_tokens = lone_prefill_tokens
        self.max_model_len = max_model_len
        self.waiting: deque[Sequence] = deque()  # aborted entries are skipped lazily
        self.running: list[Sequence] = []  # admission order: the last is the newest
        self.num_waiting = 0

    def check_fits(self, num_prompt_tokens: int, max_new_tokens: int) -> None:
        """Refuse a request that could never run: over the context window or the whole cache.
        The message names max_tokens, the `SamplingParams` field (a server names its own)."""
        total = num_prompt_tokens + max_new_tokens
        prompt = f"prompt ({num_prompt_tokens} tokens)"
        if total > self.max_model_len:
            if num_prompt_tokens >= self.max_model_len:
                raise ContextLengthError(no_room_message(num_prompt_tokens, self.max_model_len))
            raise ContextLengthError(
                f"This model's maximum context length is {self.max_model_len} tokens. However, "
                f"you requested {total} tokens: the {prompt} plus max_tokens ({max_new_tokens})"
            )
        bm = self.block_manager
        if bm.blocks_needed(total) > bm.num_blocks:
            cache = f"the cache has {bm.num_blocks} ({bm.num_blocks * bm.block_size} tokens)"
            alone = bm.blocks_needed(num_prompt_tokens + 1)
            if alone > bm.num_blocks:
                raise RequestTooLargeError(
                    f"{prompt} needs {alone} KV blocks with one token to generate; {cache}"
                )
            raise RequestTooLargeError(
                f"{prompt} plus max_tokens ({max_new_tokens}) needs {bm.blocks_needed(total)} KV "
                f"blocks; {cache}"
            )

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)
        self.num_waiting += 1

    def has_unfinished(self) -> bool:
        return bool(self.running) or self.num_waiting > 0

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.max_num_batched_tokens
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            behind = len(self.running) - i - 1  # running sequences still to schedule
            limit = self._limit(out, seq, budget, behind)
            n = self._fit(seq, limit)
            while n == 0:
                victim = self.running.pop()  # the newest
                self._preempt(victim)
                out.preempted.append(victim)
                if victim is seq:
                    break
                n = self._fit(seq, self._limit(out, seq, budget, len(self.running) - i - 1))
            if seq.status is not SequenceStatus.RUNNING:
                break
            self.block_manager.allocate(seq, n)
            out.scheduled.append(ScheduledSequence(seq, n))
            budget = len(self.running) - i - 1 if n > budget else budget - n
            i += 1
        if out.preempted:
            return out  # no room: admitting now would only preempt again
        held: list[Sequence] = []  # choices waiting for their choice 0: first again next step
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            seq = self.waiting[0]
            if seq.is_finished:  # aborted while waiting
                self.waiting.popleft()
                continue
            if seq.waits_for_prompt:  # the requests behind it need not wait with it
                held.append(self.waiting.popleft())
                continue
            cached = self.block_manager.match_prefix(seq, not seq.needs_prompt_positions)
            seq.num_computed_tokens = cached
            if not seq.num_preemptions:  # vLLM's: the first admission's (a readmitted
                # sequence also matches its own generated tokens)
                seq.num_cached_tokens = min(cached, seq.num_prompt_tokens)
            n = self._fit(seq, self._limit(out, seq, budget, 0))
            if n == 0:
                self.block_manager.unmatch(seq)
                seq.num_computed_tokens = 0
                break
            self.block_manager.allocate(seq, n)
            self.waiting.popleft()
            self.num_waiting -= 1
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.scheduled.append(ScheduledSequence(seq, n))
            budget = 0 if n > budget else budget - n
        self.waiting.extendleft(reversed(held))
        return out

    def on_computed(self, out: SchedulerOutput) -> None:
        """The step's forward ran: advance computed counts and publish full blocks to the cache."""
        for s in out.scheduled:
            s.seq.num_computed_tokens += s.num_new_tokens
            self.block_manager.cache_computed_blocks(s.seq)

    def finish(self, seq: Sequence, reason: str) -> None:
        """Finish or abort a sequence: its blocks are freed now."""
        if seq.is_finished:
            return
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
        else:
            self.num_waiting -= 1  # its deque entry is skipped lazily
        self.block_manager.free(seq)
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason
        seq.finish_time = time.perf_counter()

    def _limit(self, out: SchedulerOutput, seq: Sequence, budget: int, behind: int) -> int:
        """The most tokens `seq` may take this step: the budget left; or, for the step's first
        prompt chunk when that cannot hold the rest of the prompt, up to the prompt's end and
        `lone_prefill_tokens` for the whole step, keeping a token for each of the `behind`
        running sequences and a free block for each running sequence's next token (a chunk
        that took those would be preempted for them, its work lost, the next step)."""
        want = seq.num_uncomputed_tokens
        prompt_left = seq.num_prompt_tokens - seq.num_computed_tokens
        if prompt_left <= budget or any(s.is_prefill for s in out.scheduled):
            return min(want, budget)
        bm = self.block_manager
        step_room = self.lone_prefill_tokens - out.num_batched_tokens - behind
        spare_blocks = max(0, bm.num_free_blocks - len(self.running))
        block_room = (
            len(seq.block_table) * bm.block_size - seq.num_computed_tokens
            + spare_blocks * bm.block_size
        )  # fmt: skip
        return min(prompt_left, max(budget, min(step_room, block_room)))

    def _fit(self, seq: Sequence, n: int) -> int:
        """How many of the next `n` tokens can get slots without evicting anyone."""
        bm = self.block_manager
        room = (
            len(seq.block_table) * bm.block_size
            - seq.num_computed_tokens
            + bm.num_free_blocks * bm.block_size
        )
        return max(0, min(n, room))

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.num_preemptions += 1
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.num_waiting += 1
