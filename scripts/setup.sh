#!/usr/bin/env bash
# Set up everything on a fresh Debian/Ubuntu machine: system packages (bubblewrap
# for the sandbox), a virtual environment in .venv, and the package with its
# development tools. Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 || {
    as_root apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  }
}

# A Python 3.10+ interpreter (PYTHON overrides the choice).
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
    if command -v "$candidate" >/dev/null &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      PYTHON=$candidate; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "setup: installing python3 (3.10 or newer needed)"
  apt_install python3 python3-venv
  PYTHON=python3
fi

if ! command -v bwrap >/dev/null; then
  echo "setup: installing bubblewrap (the local sandbox)"
  apt_install bubblewrap
fi

# Toolchains of the languages: Node.js, Go with testify (offline, Debian's package),
# Rust (the machine's rustup toolchain when there is one, else Debian's), GCC for C and C++
# (with the Boost and OpenSSL headers HumanEval-X C++ includes) and OpenJDK 17 for Java.
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v go >/dev/null || missing+=(golang-go)
[ -d /usr/share/gocode/src/github.com/stretchr/testify ] || missing+=(golang-github-stretchr-testify-dev)
command -v rustc >/dev/null || missing+=(rustc cargo)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
command -v g++ >/dev/null || missing+=(g++)
[ -f /usr/include/boost/any.hpp ] || missing+=(libboost-dev)
[ -f /usr/include/openssl/md5.h ] || missing+=(libssl-dev)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
# Headless Chromium: the evaluation report's test renders the page in it.
command -v chromium >/dev/null || missing+=(chromium)
# Kernel headers: the seccomp filter's system call numbers are checked against them.
[ -f /usr/include/asm-generic/unistd.h ] || missing+=(linux-libc-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  if ! "$PYTHON" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    apt_install python3-venv
    "$PYTHON" -m venv .venv
  fi
fi

# The integrations (torch, transformers, TRL, veRL) are large: several GB on the first run.
# ray: the Ray executor and its tests (tests/test_ray.py).
# service: verifiers serve and runtime="remote" (tests/service).
# eval: verifiers eval and report (tests/eval).
# docker: the Docker runtime and its images (tests/runtimes/test_docker.py).
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,integrations,bench,ray,service,eval,docker]"

# Rust crates (rand, regex, md5) and a warm Go build cache, built once with the
# network so that verification never needs it.
.venv/bin/verifiers toolchains build >/dev/null

# The Docker runtime's images, when a Docker daemon runs here: built offline from
# Debian's packages (debootstrap, then docker import); an image whose inputs did not
# change is kept, so a second run takes seconds.
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || apt_install debootstrap
  .venv/bin/verifiers images build --offline
  # gVisor (runsc) for DockerRuntime(docker_runtime="runsc"): a kernel boundary.
  scripts/gvisor.sh
fi
echo "setup: ready ($(.venv/bin/python --version), $(bwrap --version))"
