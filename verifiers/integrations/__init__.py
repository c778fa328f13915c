"""Integrations with training and evaluation libraries (veRL, TRL, GRPO, data preparation).

Each integration imports its library lazily, so that ``import verifiers`` never
pulls in torch, veRL or TRL.
"""
