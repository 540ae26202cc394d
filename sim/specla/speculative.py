"""Greedy speculative decoding on a GDN target with a GDN draft (chains or token trees).

Each round the target's decoding state has consumed every emitted token but the last one, the
*pending* token ``x``. The draft proposes a tree rooted at ``x``: its ``branch`` most likely next
tokens, each extended greedily to ``depth`` draft tokens. The target verifies the whole tree in one
pass (:meth:`GDNModel.verify_tree`), the longest root path whose every draft token is the target's
greedy choice is accepted, the target's choice after it is the bonus token (the next pending
token), and the path from ``x`` is committed. Hence the output is exactly the target's greedy
output, whatever the draft.
"""

from dataclasses import dataclass

import numpy as np

from ahasd.spec.params import check_int

__all__ = ["greedy", "speculative_greedy", "SpecResult"]


@dataclass(frozen=True)
class SpecResult:
    """Output tokens and acceptance figures of :func:`speculative_greedy`.

    ``acceptance`` is the per-token acceptance of the first-branch chain: accepted draft tokens
    over draft tokens tried (a token is tried when its parent was accepted).
    """
    tokens: list
    rounds: int
    accepted: list
    acceptance: float


def _prefill(model, prompt):
    state = model.initial_state()
    for t in prompt[:-1]:
        _, state = model.step(state, t)
    return state


def greedy(model, prompt, n_new):
    """The model's greedy continuation (``n_new`` tokens) by plain recurrent decoding."""
    check_int("n_new", n_new, 0)
    state = _prefill(model, prompt)
    out, token = [], prompt[-1]
    for _ in range(n_new):
        logits, state = model.step(state, token)
        token = int(np.argmax(logits))
        out.append(token)
    return out


def _propose(draft, state, root, depth, branch):
    """Draft tree ``(tokens, parents)`` rooted at the pending token ``root``."""
    logits, after_root = draft.step(state, root)
    firsts = np.argsort(-logits, kind="stable")[:branch]
    tokens, parents = [root], [-1]
    for first in firsts:
        s, token, parent = after_root, int(first), 0
        for d in range(depth):
            tokens.append(token)
            parents.append(parent)
            parent = len(tokens) - 1
            if d + 1 < depth:
                lg, s = draft.step(s, token)
                token = int(np.argmax(lg))
    return tokens, parents


def speculative_greedy(target, draft, prompt, n_new, *, depth=4, branch=1, mode="factor"):
    """Greedy speculative decoding; returns a :class:`SpecResult` (``tokens`` = ``n_new``)."""
    check_int("n_new", n_new, 0)
    check_int("depth", depth, 1)
    check_int("branch", branch, 1)
    t_state, d_state = _prefill(target, prompt), _prefill(draft, prompt)
    pending, rounds = prompt[-1], 0
    out: list[int] = []
    accepted: list[int] = []
    tried = hits = 0
    while len(out) < n_new:
        tokens, parents = _propose(draft, d_state, pending, depth, branch)
        logits, record = target.verify_tree(t_state, tokens, parents, mode=mode)
        path, cur = [0], 0
        while True:
            want = int(np.argmax(logits[cur]))
            child = next((n for n, p in enumerate(parents) if p == cur and tokens[n] == want),
                         None)
            if child is None:
                break
            path.append(child)
            cur = child
        bonus = int(np.argmax(logits[cur]))
        # Acceptance of the first chain (nodes 1..depth): a token is tried when its parent
        # was accepted.
        k = 0
        while k + 1 < len(path) and path[k + 1] == k + 1:
            k += 1
        hits += k
        tried += min(depth, k + 1)
        out += [tokens[n] for n in path[1:]] + [bonus]
        accepted.append(len(path) - 1)
        rounds += 1
        t_state = target.commit(t_state, record, path)
        for n in path:
            _, d_state = draft.step(d_state, tokens[n])
        pending = bonus
    return SpecResult(out[:n_new], rounds, accepted, hits / tried if tried else 0.0)
