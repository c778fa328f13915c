"""Evaluation: generate completions with a model, verify them, pass@k, reports.

``verifiers eval`` and ``verifiers report`` are the command-line entry points; see
``docs/evaluation.md``.
"""

from verifiers.eval.passk import mean_pass_at_k, pass_at_k, pass_at_ks

__all__ = ["mean_pass_at_k", "pass_at_k", "pass_at_ks"]
