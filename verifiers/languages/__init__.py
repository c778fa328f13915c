"""Languages: each turns code and tests into a program and judges its runs.

Adding a language is one module here plus one line in :mod:`verifiers.registry`.
"""
