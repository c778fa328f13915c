#!/usr/bin/env bash
# Start a local PostgreSQL server for the SQL tests (installing it with apt-get if needed),
# with a role and a database the tests use through the Unix socket:
#   postgresql://verifiers:verifiers@/verifiers_test?host=/var/run/postgresql
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 || {
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  }
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h 2>/dev/null | grep -q .; then
  as_root pg_createcluster "$version" main >/dev/null
fi
cluster=$(pg_lsclusters -h | head -1 | awk '{print $1" "$2}')
if ! pg_lsclusters -h | head -1 | grep -q online; then
  as_root pg_ctlcluster $cluster start
fi
psql_admin() { as_root su postgres -c "psql -v ON_ERROR_STOP=1 -qAt -c \"$1\""; }
if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = 'verifiers'")" != 1 ]; then
  psql_admin "CREATE ROLE verifiers LOGIN PASSWORD 'verifiers'"
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = 'verifiers_test'")" != 1 ]; then
  psql_admin "CREATE DATABASE verifiers_test OWNER verifiers"
fi
# Password login for this role over the socket (the sandbox user has no peer identity).
hba=$(psql_admin "SHOW hba_file")
if ! as_root grep -q "^local all verifiers" "$hba"; then
  as_root sed -i '0,/^local/s//local all verifiers scram-sha-256\nlocal/' "$hba"
  psql_admin "SELECT pg_reload_conf()" >/dev/null
fi
echo "postgres: ready (postgresql://verifiers:verifiers@/verifiers_test?host=/var/run/postgresql)"
