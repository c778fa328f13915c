# The base of every verifiers image: Debian bookworm, Python 3 for the sandbox agent,
# a non-root user, and the mount points the Docker runtime uses.
# Built by `verifiers images build` (versions from versions.env); BASE is
# debian:bookworm-slim from a registry, or verifiers/debian:bookworm bootstrapped
# offline with debootstrap (`verifiers images build --offline`).
ARG BASE=debian:bookworm-slim
FROM ${BASE}
ARG PYTHON3
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8
SHELL ["/bin/sh", "-eux", "-c"]
# A debootstrapped base knows only bookworm main: add the updates and security suites.
RUN if ! grep -rqs bookworm-security /etc/apt/sources.list /etc/apt/sources.list.d; then \
      printf '%s\n' 'deb http://deb.debian.org/debian bookworm main' \
        'deb http://deb.debian.org/debian bookworm-updates main' \
        'deb http://deb.debian.org/debian-security bookworm-security main' \
        > /etc/apt/sources.list; \
    fi; \
    apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends python3=${PYTHON3} python3-minimal=${PYTHON3}; \
    apt-get clean; rm -rf /var/lib/apt/lists/*; \
    useradd --uid 10001 --user-group --no-create-home --home-dir /sandbox \
      --shell /usr/sbin/nologin verifier; \
    mkdir -p /opt/verifiers /opt/program /sandbox; chown verifier:verifier /sandbox
USER 10001
WORKDIR /sandbox
LABEL org.verifiers.tool.python=/usr/bin/python3 \
      org.verifiers.version.python3=${PYTHON3}
