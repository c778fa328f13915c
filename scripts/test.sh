#!/usr/bin/env bash
# Lint, type-check and run the test suite (arguments go to pytest).
# Under CI=true a test that cannot find the sandbox or a toolchain fails instead of
# skipping. Benchmark data never skips: the shared sets when present, else the bundled
# records (verifiers.testing.datasets).
set -uo pipefail
cd "$(dirname "$0")/.."

.venv/bin/ruff check verifiers tests bench examples scripts || exit 1
.venv/bin/ruff format --check verifiers tests bench examples scripts || exit 1
.venv/bin/mypy || exit 1

# The PostgreSQL tests need a local server (installed and started here, idempotent).
./scripts/postgres.sh || echo "test.sh: no PostgreSQL server; its tests will say so"

.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
status=$?
if [ "$status" = 5 ]; then
  # pytest: no tests were collected. With a filter that is the caller's choice;
  # without one it means the suite itself went missing.
  if [ "$#" -gt 0 ]; then
    echo "test.sh: no test matched the given arguments"
    exit 0
  fi
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
