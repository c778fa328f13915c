"""Reusable test suites: runtime conformance and the case table every language passes.

Use them on your own runtimes and languages::

    from verifiers.testing.conformance import RUNTIME_CHECKS
    for check in RUNTIME_CHECKS:
        asyncio.run(check(my_runtime))
"""
