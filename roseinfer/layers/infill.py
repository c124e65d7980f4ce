"""llama.cpp's infill sampler (`llama_sampler_init_infill`: the `"infill"` of its `samplers`,
which llama.vim and llama.vscode ask for), over the tokens the truncation left a row.

On those candidates, by their probabilities among themselves (likeliest first):

1. where the end tokens' mass times the number of candidates times 3 passes the text's, only
   the end tokens stay (a fill that is more likely over than not ends);
2. a candidate whose text begins another's takes its mass into the likelier of the two, and
   the other leaves (`"re"`, `"ret"` and `"return"` are one choice, not three split ones);
3. the text candidates below 0.2 leave; where none is left, the answer is the end token;
4. of those left, renormalized, the text candidates below 1/(number of them + 1) leave.

The draw is then from the candidates left, weighed as they were before (llama.cpp's `dist`
recomputes the softmax of their logits: the merged masses only decide who stays). A token's
text is its bytes with special tokens empty (llama.cpp's `token_to_piece` without `special`),
so end and control tokens never merge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

__all__ = ["InfillFilter"]

_KEEP = 0.2  # step 3's floor


class InfillFilter:
    """The filter of one vocabulary: `token_piece(id)`, a token's text as bytes (b"" for a
    special one); `end_token`, the answer where no text candidate is left."""

    def __init__(self, token_piece: Callable[[int], bytes], end_token: int) -> None:
        self.token_piece = token_piece
        self.end_token = end_token

    def __call__(self, weights: torch.Tensor, ends: Iterable[int]) -> torch.Tensor:
        """A row's weights after the filter, in place. weights [V] >= 0 (unnormalised
        probabilities, a zero is not a candidate); `ends`: the tokens that end the output.
        Returns `weights`: the candidates kept at their weights, zero elsewhere (no pass over
        the vocabulary but the one that finds the candidates)."""
        cand = weights.nonzero().squeeze(1)  # ascending ids: ties stay in id order
        values = weights[cand]
        order = values.argsort(descending=True, stable=True)
        ids: list[int] = cand[order].tolist()
        total = float(values.sum())
        p = [v / total for v in values[order].tolist()]
        end_set = frozenset(ends)
        is_end = [t in end_set for t in ids]
        end_mass = sum(q for q, e in zip(p, is_end, strict=True) if e)
        if 3 * end_mass * len(ids) > sum(q for q, e in zip(p, is_end, strict=True) if not e):
            kept = [i for i, e in enumerate(is_end) if e]
            return self._weights(weights, ids, kept)
        alive = self._merge(ids, p)
        kept = [i for i in range(len(ids)) if is_end[i] or p[i] >= _KEEP]
        texts = sum(1 for i in kept if not is_end[i])
        if texts == 0:
            return self._one_hot(weights, self.end_token)
        mass = sum(p[i] for i in kept)
        floor = 1.0 / (texts + 1)
        kept = [i for i in kept if is_end[i] or p[i] / mass >= floor]
        return self._weights(weights, ids, [i for i in kept if alive[i]])

    def _merge(self, ids: list[int], p: list[float]) -> list[bool]:
        """Step 2, in place on `p` (candidates likeliest first), as llama.cpp's double loop
        over (i0, i1) runs it, visiting only the pairs where i0's text begins i1's (the others
        do nothing there): O(candidates x text length), not O(candidates^2). Returns which
        candidates are left."""
        pieces = [self.token_piece(t) for t in ids]
        at: dict[bytes, list[int]] = {}
        for i, piece in enumerate(pieces):
            at.setdefault(piece, []).append(i)
        longer: list[list[int]] = [[] for _ in ids]  # i -> the candidates whose text i's begins
        for j, piece in enumerate(pieces):
            for length in range(1, len(piece) + 1):
                for i in at.get(piece[:length], ()):
                    if i != j:
                        longer[i].append(j)
        alive = [True] * len(ids)
        for i in range(len(ids)):
            for j in sorted(longer[i]):
                if not alive[i]:
                    break
                if not alive[j]:
                    continue
                dst, src = (j, i) if p[j] > p[i] else (i, j)
                p[dst] += p[src]
                p[src] = 0.0
                alive[src] = False
        return alive

    def _weights(self, weights: torch.Tensor, ids: list[int], kept: list[int]) -> torch.Tensor:
        if not kept:  # (every end token merged away: not possible for special ones)
            return self._one_hot(weights, self.end_token)
        keep = set(kept)
        out = [t for i, t in enumerate(ids) if i not in keep]
        if out:
            weights[torch.tensor(out, dtype=torch.long, device=weights.device)] = 0.0
        return weights

    @staticmethod
    def _one_hot(weights: torch.Tensor, token: int) -> torch.Tensor:
        weights.zero_()
        weights[token] = 1.0
        return weights
