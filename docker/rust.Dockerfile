# Rust (Debian's rustc-web) with the crates programs may use (rand, regex, md5 at the
# versions of rust-crates/Cargo.lock), built from crates.io in a first stage.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS crates
ARG RUSTC_WEB
ARG GCC
USER root
SHELL ["/bin/sh", "-eux", "-c"]
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends rustc-web=${RUSTC_WEB} libstd-rust-web-dev=${RUSTC_WEB} \
      cargo-web=${RUSTC_WEB} gcc=${GCC} libc6-dev ca-certificates
COPY rust-crates/ /tmp/crates/
# build-ca.crt: the host's CA bundle, for hosts behind a TLS-inspecting proxy (empty otherwise).
COPY build-ca.crt /tmp/build-ca.crt
RUN cd /tmp/crates; \
    if [ -s /tmp/build-ca.crt ]; then export CARGO_HTTP_CAINFO=/tmp/build-ca.crt; fi; \
    CARGO_HOME=/tmp/cargo-home cargo build --release --locked --quiet; \
    mkdir -p /opt/verifiers/rust; cp -r target/release/deps /opt/verifiers/rust/deps; \
    chmod -R a+rX /opt/verifiers/rust

FROM ${BASE_IMAGE}
ARG RUSTC_WEB
ARG GCC
USER root
SHELL ["/bin/sh", "-eux", "-c"]
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends rustc-web=${RUSTC_WEB} \
      libstd-rust-web-dev=${RUSTC_WEB} gcc=${GCC} libc6-dev; \
    apt-get clean; rm -rf /var/lib/apt/lists/*
COPY --from=crates /opt/verifiers/rust /opt/verifiers/rust
USER 10001
LABEL org.verifiers.tool.rustc=/usr/bin/rustc \
      org.verifiers.tool.rust_deps=/opt/verifiers/rust/deps \
      org.verifiers.version.rustc-web=${RUSTC_WEB}
