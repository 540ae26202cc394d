"""Runs over several decoding seeds: means and 95 % confidence intervals.

A run's decoding is sampled (the draft's tokens, the verification's uniforms), so one seed's
figures move with decoding noise. Runs with different seeds are independent replicates of the
same configuration; a figure's interval is the two-sided 95 % Student t-interval over them:
``mean +- t(0.975, n - 1) x s / sqrt(n)`` with ``s`` the sample standard deviation of the ``n``
per-seed values. A ratio of two systems (or a headline made of ratios over a grid) is computed
per seed first, pairing the runs of one seed, and its interval taken over those per-seed values.

The t quantile is computed here, not looked up: for an integer number of degrees of freedom the
two-sided t probability has a closed form (Abramowitz and Stegun 26.7.3 and 26.7.4), solved for
0.95 by bisection (:func:`t_quantile`; tested against published table values).

:func:`combine` turns the per-seed results (nested dicts of numbers, the JSON of ``simulate`` or
the grid's headlines) into one tree of the same shape whose numbers are the means (a value every
seed agrees on is kept as it is, so one seed gives back today's JSON unchanged) and a tree of the
same shape whose numbers are :func:`interval` dicts (``mean``, ``ci95_low``, ``ci95_high``,
``n_seeds``).
"""

import math
import statistics
from typing import Any

from ahasd.spec.params import check_positive

__all__ = ["t_quantile", "interval", "combine", "aggregate_runs", "seed_list",
           "excludes_one", "paired_ratio", "row_ratio"]


def _two_sided(t, df):
    """P(|T| <= t) for Student's t with integer ``df`` degrees of freedom (A&S 26.7.3/4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2:                               # odd: (2/pi)(theta + sin(cos + 2/3 cos^3 + ...))
        term, total = c, c if df > 1 else 0.0
        for k in range(3, df - 1, 2):
            term *= (k - 1) / k * c * c
            total += term
        return 2 / math.pi * (theta + s * total)
    term, total = 1.0, 1.0                   # even: sin(1 + 1/2 cos^2 + 1.3/2.4 cos^4 + ...)
    for k in range(2, df - 1, 2):
        term *= (k - 1) / k * c * c
        total += term
    return s * total


def t_quantile(df, p=0.975):
    """The ``p`` quantile of Student's t with integer ``df`` >= 1 degrees of freedom
    (``p`` in (0.5, 1)): t with P(T <= t) = p, to about 1e-12."""
    check_positive("degrees of freedom", df, integer=True)
    if not 0.5 < p < 1:
        raise ValueError(f"quantile p must be in (0.5, 1), not {p}")
    target = 2 * p - 1
    lo, hi = 0.0, 1.0
    while _two_sided(hi, df) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _two_sided(mid, df) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * hi:
            break
    return (lo + hi) / 2


def interval(values):
    """``{"mean", "ci95_low", "ci95_high", "n_seeds"}`` of the per-seed ``values`` (None values
    left out: a figure a seed could not give). One value: no interval (bounds None); none: all
    None and ``n_seeds`` 0."""
    v = [x for x in values if x is not None]
    n = len(v)
    if n == 0:
        return {"mean": None, "ci95_low": None, "ci95_high": None, "n_seeds": 0}
    mean = v[0] if all(x == v[0] for x in v) else statistics.fmean(v)
    if n == 1:
        return {"mean": mean, "ci95_low": None, "ci95_high": None, "n_seeds": 1}
    half = t_quantile(n - 1) * statistics.stdev(v) / math.sqrt(n)
    return {"mean": mean, "ci95_low": mean - half, "ci95_high": mean + half, "n_seeds": n}


def excludes_one(iv):
    """True when the interval ``iv`` (an :func:`interval` dict) lies wholly above or below 1;
    False when it contains 1 or there is no interval."""
    lo, hi = iv.get("ci95_low"), iv.get("ci95_high")
    return lo is not None and hi is not None and (lo > 1 or hi < 1)


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def combine(trees, *, skip=()):
    """Per-seed trees of one shape -> ``(means, intervals)``.

    ``means`` has the trees' shape with each number the mean over seeds (a number every tree
    agrees on, or None in every tree, is kept as it is); ``intervals`` has the same shape with
    each number (or None) an :func:`interval` dict, and no other leaves (strings, booleans and
    lists of them are the same in every seed, or listed in ``means`` as their union in order).
    Keys in ``skip`` (at the top level) are copied from the first tree, without intervals.
    """
    trees = list(trees)
    if not trees:
        raise ValueError("combine needs at least one per-seed result")
    return _means(trees, skip), _intervals(trees, skip)


def _numeric(trees):
    return all(t is None or _number(t) for t in trees) and any(_number(t) for t in trees)


def _means(trees, skip=()):
    first = trees[0]
    if isinstance(first, dict):
        return {k: (first[k] if k in skip else _means([t.get(k) for t in trees]))
                for k in first}
    if isinstance(first, list):
        if all(isinstance(t, list) and len(t) == len(first) for t in trees) and any(
                _numeric([t[i] for t in trees]) or isinstance(first[i], (dict, list))
                for i in range(len(first))):
            return [_means([t[i] for t in trees]) for i in range(len(first))]
        union: list = []
        for t in trees:
            union += [x for x in t if x not in union]
        return union
    if _numeric(trees):
        return interval(trees)["mean"]
    return first


def _intervals(trees, skip=()):
    first = trees[0]
    if isinstance(first, dict):
        out = {}
        for k in first:
            if k in skip:
                continue
            sub = _intervals([t.get(k) for t in trees])
            if sub is not None:
                out[k] = sub
        return out or None
    if isinstance(first, list):
        if not all(isinstance(t, list) and len(t) == len(first) for t in trees):
            return None
        subs = [_intervals([t[i] for t in trees]) for i in range(len(first))]
        return subs if any(s is not None for s in subs) else None
    if _numeric(trees) or (first is None and all(t is None for t in trees)):
        return interval(trees)
    return None


def aggregate_runs(runs, seeds, *, skip=("config", "cell", "timeline", "derived", "memory")):
    """The per-seed result dicts of one configuration (``runs[i]`` with seed ``seeds[i]``) as
    one dict: every key as its mean (see :func:`combine`), plus ``n_seeds``, ``seeds`` and
    ``intervals`` (the same keys, each number an :func:`interval` dict). The keys in ``skip``
    (by default the configuration and the figures derived from it alone, which no seed
    changes, and the cell and timeline) are the first run's, without intervals."""
    if len(runs) != len(seeds):
        raise ValueError(f"{len(runs)} runs for {len(seeds)} seeds")
    means, ivs = combine(runs, skip=skip)
    means.update(n_seeds=len(runs), seeds=list(seeds), intervals=ivs or {})
    return means


def seed_list(first, n):
    """The ``n`` seeds ``first, first + 1, ...`` (``n`` >= 1)."""
    check_positive("seeds", n, integer=True)
    return [first + i for i in range(n)]


def paired_ratio(a_runs, b_runs, metric):
    """The :func:`interval` of ``a[metric] / b[metric]`` over seeds, run ``i`` of ``a`` paired
    with run ``i`` of ``b`` (the same seed); a pair with an error is left out."""
    vals: list[Any] = []
    for a, b in zip(a_runs, b_runs, strict=True):
        vals.append(None if "error" in a or "error" in b else a[metric] / b[metric])
    return interval(vals)


def row_ratio(a_row, b_row, metric):
    """:func:`paired_ratio` of two grid rows of ``ahasd reproduce`` (one cell each, the mean over
    seeds, with ``per_seed`` values: :func:`ahasd.sim.system.reproduce.reproduce`); a row with an
    error gives the empty interval."""
    if "error" in a_row or "error" in b_row:
        return interval([])
    if a_row["seeds"] != b_row["seeds"]:
        raise ValueError(f"rows of different seeds: {a_row['seeds']} and {b_row['seeds']}")
    return paired_ratio([{metric: x} for x in a_row["per_seed"][metric]],
                        [{metric: x} for x in b_row["per_seed"][metric]], metric)
