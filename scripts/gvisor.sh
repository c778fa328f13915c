#!/usr/bin/env bash
# Install gVisor (runsc, Debian's package) and register it with the Docker engine as the
# runtime "runsc", so that DockerRuntime(docker_runtime="runsc") runs containers under a
# user-space kernel. Idempotent; needs root and a running dockerd. gVisor's own network
# stack is off (--network=none): our containers have no network, and with it on, runsc
# refuses to start a container without one on this kind of host. (Not --oci-seccomp: with
# Docker's default profile, this gVisor refuses threads and select(2); the sandbox agent
# loads the SDK's own filter into every program instead.)
set -euo pipefail

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v runsc >/dev/null; then
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null 2>&1 || {
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null
  }
fi
RUNSC=$(command -v runsc)

config=/etc/docker/daemon.json
wanted='"runtimeArgs":["--network=none"]}'
if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -qF "$wanted"; then
  exit 0
fi
as_root python3 - "$config" "$RUNSC" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path):
    with open(path) as f:
        text = f.read().strip()
    config = json.loads(text) if text else {}
config.setdefault("runtimes", {})["runsc"] = {
    "path": runsc,
    "runtimeArgs": ["--network=none"],
}
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path + ".tmp", "w") as f:
    json.dump(config, f, indent=2)
os.replace(path + ".tmp", path)
PY
# dockerd reloads its runtimes on SIGHUP (no restart: running containers stay).
as_root pkill -HUP -x dockerd
for _ in $(seq 50); do
  if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -qF "$wanted"; then
    echo "gvisor: runsc registered with the Docker engine"
    exit 0
  fi
  sleep 0.1
done
echo "gvisor: dockerd did not pick up the runsc runtime" >&2
exit 1
