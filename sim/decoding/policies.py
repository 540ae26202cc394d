"""Adaptive draft-length policies: when does the draft model stop a batch and ask for verification?

Every policy has ``min_len`` and ``max_len`` (1 <= min_len <= max_len): the decoding engine
(:mod:`ahasd.sim.decoding.lookahead`) always drafts at least ``min_len`` tokens and never more than
``max_len``; it calls :meth:`DraftPolicy.stop` after every drafted token (so stateful rules see
the whole batch) and stops when the answer is yes and ``min_len`` is reached. After a batch is
verified the engine calls :meth:`DraftPolicy.observe` with the drafted and accepted lengths
(batches squashed by an earlier rejection are never verified, so they are not observed).

=============  ===================================================================================
policy         rule (source) and defaults here
=============  ===================================================================================
fixed          draft exactly ``k`` tokens (Leviathan et al. 2023); ``k = 4``.
specdecpp      SpecDec++ (Huang et al. 2024): stop when ``1 - prod_i a_i > h``, ``a_i`` the
               predicted acceptance probability of each token of the batch so far; the predictor
               is a logistic regression on draft-side features (entropy, q of the drafted token,
               log q, position) fitted on recorded traces; ``h = 0.5``.
svip           SVIP (Zhang et al. 2024): stop when ``sqrt(0.15 * H) > h``, H the drafted token's
               draft entropy in nats; ``h = 0.6`` (stop above 2.4 nats).
adaedl         AdaEDL (Agrawal et al. 2024): stop when ``1 - sqrt(gamma * H) < lambda``, the
               entropy lower bound on acceptance below ``lambda``; ``gamma = 0.15``, ``lambda``
               starts at 0.3 and adapts online after each verification,
               ``lambda += eta * (target - ema)``, ``ema`` the exponential moving average (weight
               ``beta``) of the per-token acceptance rate: acceptance above the target lowers
               lambda (longer drafts), below raises it; ``target = 0.5``, ``eta = 0.05``,
               ``beta = 0.9``, lambda clipped to [0, 1].
banditspec     BanditSpec (Hou et al. 2025): UCB1 over candidate draft lengths (the arms,
               ``(1, 2, 3, 4, 6, 8)`` clipped to [min_len, max_len]); reward of a verified batch of
               length k = (accepted + 1) / (k * draft_cost + verify_cost), divided by the best
               possible reward over the arms so it lies in [0, 1]; exploration weight ``c = 1``.
=============  ===================================================================================

The SVIP and AdaEDL thresholds are chosen for the n-gram pair (a small sweep on the calibration
prompts of :mod:`ahasd.sim.decoding.golden`, synchronous decoding, ``verify_cost = 5``), whose draft
entropies are higher than an LLM's; the papers' own values assume LLM entropies and are
parameters here.
"""

import math
from dataclasses import dataclass

import numpy as np

from ahasd.spec.params import ParameterTypeError, check_choice, check_instance, check_int, check_positive, check_unit

__all__ = ["policy_names", "DraftStep", "DraftPolicy", "FixedPolicy", "SpecDecPPPolicy", "SVIPPolicy",
           "AdaEDLPolicy", "BanditSpecPolicy", "AcceptancePredictor", "POLICIES", "make_policy"]


@dataclass(frozen=True)
class DraftStep:
    """Draft-side facts about one drafted token (all a policy may look at)."""
    position: int        #: 1-based position of the token in its batch
    entropy: float       #: entropy of the draft distribution at this position, nats
    q: float             #: draft probability of the drafted token


class DraftPolicy:
    """Base class: the ``min_len`` / ``max_len`` bounds and the engine-facing methods.

    Parameters
    ----------
    min_len, max_len : int
        Bounds on the batch length, ``1 <= min_len <= max_len``.
    """

    name = "base"

    def __init__(self, *, min_len=1, max_len=8):
        check_positive("min_len", min_len, integer=True)
        check_positive("max_len", max_len, integer=True)
        if min_len > max_len:
            raise ValueError(f"min_len must be <= max_len, not {min_len} > {max_len}")
        self.min_len = min_len
        self.max_len = max_len

    def begin(self):
        """A new batch starts."""

    def stop(self, step: DraftStep) -> bool:
        """After drafting ``step``: stop the batch here? (Only asked between the bounds.)"""
        raise NotImplementedError

    def observe(self, n_drafted, n_accepted):
        """A batch of ``n_drafted`` tokens was verified and ``n_accepted`` were accepted."""

    def params(self):
        """The policy's parameters, for trace headers."""
        return {"min_len": self.min_len, "max_len": self.max_len}


class FixedPolicy(DraftPolicy):
    """Draft exactly ``k`` tokens (within the bounds)."""

    name = "fixed"

    def __init__(self, *, k=4, min_len=1, max_len=8):
        super().__init__(min_len=min_len, max_len=max_len)
        check_positive("k", k, integer=True)
        self.k = k

    def stop(self, step):
        return step.position >= self.k

    def params(self):
        return {**super().params(), "k": self.k}


class AcceptancePredictor:
    """Logistic regression predicting a drafted token's acceptance from draft-side features.

    Features: ``[1, H, q, log q, position]``. Fitted with soft labels ``min(1, p/q)`` (the exact
    acceptance probability of each drafted token, known from a trace's recorded p and q) by
    Newton's method on the cross-entropy with a small L2 penalty.
    """

    def __init__(self, weights=None):
        try:
            self.weights = np.zeros(5) if weights is None else np.asarray(weights,
                                                                          dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterTypeError(f"weights must be 5 numbers, not {weights!r:.60}") from None
        if self.weights.shape != (5,):
            raise ValueError(f"weights must have shape (5,), not {self.weights.shape}")
        if not np.all(np.isfinite(self.weights)):
            raise ValueError(f"weights must be finite, not {self.weights.tolist()}")

    @staticmethod
    def features(entropy, q, position):
        entropy, q, position = (np.asarray(x, dtype=np.float64) for x in (entropy, q, position))
        return np.stack([np.ones_like(q), entropy, q, np.log(np.maximum(q, 1e-12)), position],
                        axis=-1)

    def predict(self, step):
        x = self.features(step.entropy, step.q, step.position)
        return float(1.0 / (1.0 + np.exp(-x @ self.weights)))

    @classmethod
    def fit(cls, records, *, l2=1e-3, iterations=25):
        """Fit on trace records (see :mod:`ahasd.sim.traces.decoding`): every token of every verified batch."""
        from ahasd.sim.traces.decoding import verified_batches
        return cls.fit_batches(verified_batches(records), l2=l2, iterations=iterations)

    @classmethod
    def fit_batches(cls, batches, *, l2=1e-3, iterations=25):
        """Fit on verified batches (:func:`ahasd.sim.traces.decoding.verified_batches` dicts)."""
        H, Q, P, pos = [], [], [], []
        for b in batches:
            H += b["entropy"]
            Q += b["q"]
            P += b["p"]
            pos += list(range(1, len(b["tokens"]) + 1))
        if not Q:
            raise ValueError("records hold no verified batch to fit the predictor on")
        X = cls.features(H, Q, pos)
        y = np.minimum(1.0, np.asarray(P) / np.asarray(Q))
        w = np.zeros(X.shape[1])
        for _ in range(iterations):
            s = 1.0 / (1.0 + np.exp(-X @ w))
            grad = X.T @ (s - y) + l2 * w
            hess = (X * (s * (1 - s))[:, None]).T @ X + l2 * np.eye(len(w))
            w -= np.linalg.solve(hess, grad)
        return cls(w)


class SpecDecPPPolicy(DraftPolicy):
    """SpecDec++: stop when the predicted probability that the batch holds a rejection exceeds h."""

    name = "specdecpp"

    def __init__(self, *, predictor=None, h=0.5, min_len=1, max_len=8):
        super().__init__(min_len=min_len, max_len=max_len)
        check_unit("h", h)
        check_instance("predictor", predictor, AcceptancePredictor, optional=True)
        self.predictor = predictor or AcceptancePredictor()
        self.h = h
        self._all_accept = 1.0

    def begin(self):
        self._all_accept = 1.0

    def stop(self, step):
        self._all_accept *= self.predictor.predict(step)
        return 1.0 - self._all_accept > self.h

    def params(self):
        return {**super().params(), "h": self.h,
                "predictor_weights": [round(float(w), 6) for w in self.predictor.weights]}


class SVIPPolicy(DraftPolicy):
    """SVIP: stop when ``sqrt(0.15 * H) > h``."""

    name = "svip"

    def __init__(self, *, h=0.6, min_len=1, max_len=8):
        super().__init__(min_len=min_len, max_len=max_len)
        check_positive("h", h)
        self.h = h

    def stop(self, step):
        return math.sqrt(0.15 * step.entropy) > self.h

    def params(self):
        return {**super().params(), "h": self.h}


class AdaEDLPolicy(DraftPolicy):
    """AdaEDL: stop when ``1 - sqrt(gamma * H) < lambda``; lambda adapts to the acceptance rate."""

    name = "adaedl"

    def __init__(self, *, gamma=0.15, lam=0.3, target=0.5, eta=0.05, beta=0.9,
                 min_len=1, max_len=8):
        super().__init__(min_len=min_len, max_len=max_len)
        check_positive("gamma", gamma)
        for name, value in (("lam", lam), ("target", target), ("eta", eta), ("beta", beta)):
            check_unit(name, value)
        self.gamma, self.lam, self.target, self.eta, self.beta = gamma, lam, target, eta, beta
        self.lam0 = lam
        self.ema = target

    def stop(self, step):
        return 1.0 - math.sqrt(self.gamma * step.entropy) < self.lam

    def observe(self, n_drafted, n_accepted):
        if n_drafted:
            self.ema = self.beta * self.ema + (1 - self.beta) * (n_accepted / n_drafted)
            self.lam = min(1.0, max(0.0, self.lam + self.eta * (self.target - self.ema)))

    def params(self):
        return {**super().params(), "gamma": self.gamma, "lambda0": self.lam0,
                "target": self.target, "eta": self.eta, "beta": self.beta}


class BanditSpecPolicy(DraftPolicy):
    """BanditSpec: UCB1 over candidate draft lengths, reward = accepted tokens per unit cost."""

    name = "banditspec"

    def __init__(self, *, arms=(1, 2, 3, 4, 6, 8), c=1.0, draft_cost=1.0, verify_cost=5.0,
                 min_len=1, max_len=8):
        super().__init__(min_len=min_len, max_len=max_len)
        check_positive("c", c)
        check_positive("draft_cost", draft_cost)
        check_positive("verify_cost", verify_cost)
        check_instance("arms", arms, (list, tuple))
        arms = sorted({check_int(f"arms[{i}]", a, 1) for i, a in enumerate(arms)})
        arms = [a for a in arms if min_len <= a <= max_len]
        if not arms:
            raise ValueError(f"arms must hold an integer within [min_len, max_len] = "
                             f"[{min_len}, {max_len}]")
        self.arms = arms
        self.c, self.draft_cost, self.verify_cost = c, draft_cost, verify_cost
        self._best = max((a + 1) / (a * draft_cost + verify_cost) for a in arms)
        self.pulls = {a: 0 for a in arms}
        self.reward = {a: 0.0 for a in arms}
        self.current = arms[0]

    def begin(self):
        for a in self.arms:  # UCB1 plays every arm once first
            if self.pulls[a] == 0:
                self.current = a
                return
        t = sum(self.pulls.values())
        self.current = max(self.arms, key=lambda a: self.reward[a] / self.pulls[a]
                           + self.c * math.sqrt(2 * math.log(t) / self.pulls[a]))

    def stop(self, step):
        return step.position >= self.current

    def observe(self, n_drafted, n_accepted):
        if n_drafted not in self.pulls:
            return  # a batch cut short by the engine (token budget): not an arm
        r = (n_accepted + 1) / (n_drafted * self.draft_cost + self.verify_cost) / self._best
        self.pulls[n_drafted] += 1
        self.reward[n_drafted] += r

    def params(self):
        return {**super().params(), "arms": self.arms, "c": self.c,
                "draft_cost": self.draft_cost, "verify_cost": self.verify_cost}


POLICIES = {cls.name: cls for cls in (FixedPolicy, SpecDecPPPolicy, SVIPPolicy, AdaEDLPolicy,
                                      BanditSpecPolicy)}


def policy_names():
    """The names of the drafting policies (:data:`POLICIES`), in registry order."""
    return tuple(POLICIES)


def make_policy(name, **params):
    """A policy by name (see :data:`POLICIES`) with keyword parameters."""
    check_choice("policy", name, tuple(POLICIES))
    return POLICIES[name](**params)
