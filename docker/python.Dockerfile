# Python (with the regex flavours and SQL engines the sandbox loads) and SQLite.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG PYTHON3
ARG SQLITE3
USER root
SHELL ["/bin/sh", "-eux", "-c"]
COPY python-requirements.txt /opt/verifiers/python-requirements.txt
# build-ca.crt: the host's CA bundle, for hosts behind a TLS-inspecting proxy (empty otherwise).
COPY build-ca.crt /tmp/build-ca.crt
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends python3-venv=${PYTHON3} sqlite3=${SQLITE3}; \
    python3 -m venv /opt/verifiers/venv; \
    if [ -s /tmp/build-ca.crt ]; then export PIP_CERT=/tmp/build-ca.crt; fi; \
    /opt/verifiers/venv/bin/pip install -q --no-cache-dir --disable-pip-version-check \
      -r /opt/verifiers/python-requirements.txt; \
    rm -f /tmp/build-ca.crt; apt-get clean; rm -rf /var/lib/apt/lists/*
USER 10001
LABEL org.verifiers.tool.python=/opt/verifiers/venv/bin/python \
      org.verifiers.version.sqlite3=${SQLITE3}
