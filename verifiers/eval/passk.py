"""The unbiased pass@k estimator of Chen et al. (2021).

From "Evaluating Large Language Models Trained on Code": with ``n`` samples of which ``c``
are correct, the probability that at least one of ``k`` samples drawn without replacement
is correct.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from verifiers.errors import SpecError


def pass_at_k(n: int, c: int, k: int) -> float:
    """``1 - C(n - c, k) / C(n, k)``, computed as a product (no huge binomials).

    Args:
        n: Samples generated for the problem.
        c: Samples that passed.
        k: Samples the metric allows.

    Raises:
        SpecError: ``n < 1``, ``c`` outside ``[0, n]`` or ``k`` outside ``[1, n]``.
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise SpecError(name, f"expected an integer, got {value!r}")
    if n < 1:
        raise SpecError("n", f"expected at least one sample, got {n}")
    if not 0 <= c <= n:
        raise SpecError("c", f"expected 0 <= c <= n = {n}, got {c}")
    if not 1 <= k <= n:
        raise SpecError("k", f"expected 1 <= k <= n = {n} (pass@k needs n >= k samples), got {k}")
    if n - c < k:
        return 1.0
    # C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i)
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """The mean of :func:`pass_at_k` over problems given as ``(n, c)`` pairs."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    return sum(values) / len(values) if values else 0.0


def pass_at_ks(counts: Mapping[str, tuple[int, int]], ks: Iterable[int]) -> dict[int, float]:
    """pass@k for every ``k`` that every problem has samples for (the others are left out)."""
    pairs = list(counts.values())
    if not pairs:
        return {}
    fewest = min(n for n, _ in pairs)
    return {k: mean_pass_at_k(pairs, k) for k in sorted(set(ks)) if 1 <= k <= fewest}
