"""Statistical checks shared by tests of sampled outputs (speculative sampling, look-ahead)."""

import statistics

import numpy as np

__all__ = ["chi_square", "chi_square_critical"]


def chi_square_critical(df, alpha):
    """Upper critical value of chi-square (Wilson-Hilferty; accurate to ~1 % for df >= 3)."""
    z = statistics.NormalDist().inv_cdf(1 - alpha)
    return df * (1 - 2 / (9 * df) + z * (2 / (9 * df)) ** 0.5) ** 3


def chi_square(observed, expected_probs):
    expected = np.asarray(expected_probs) * np.sum(observed)
    return float(((np.asarray(observed) - expected) ** 2 / expected).sum())
