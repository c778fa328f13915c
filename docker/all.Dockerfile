# Every language in one image: the Python image plus Node.js, Go (with its warmed build
# cache) and Rust (with its crates), the caches copied from the go and rust images.
ARG PYTHON_IMAGE
ARG GO_IMAGE
ARG RUST_IMAGE
FROM ${GO_IMAGE} AS go
FROM ${RUST_IMAGE} AS rust
FROM ${PYTHON_IMAGE}
ARG NODEJS
ARG GOLANG_GO
ARG TESTIFY
ARG RUSTC_WEB
ARG GCC
USER root
SHELL ["/bin/sh", "-eux", "-c"]
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends nodejs=${NODEJS} golang-go=${GOLANG_GO} \
      golang-github-stretchr-testify-dev=${TESTIFY} rustc-web=${RUSTC_WEB} \
      libstd-rust-web-dev=${RUSTC_WEB} gcc=${GCC} libc6-dev; \
    apt-get clean; rm -rf /var/lib/apt/lists/*
COPY --from=go /opt/verifiers/go-build /opt/verifiers/go-build
COPY --from=rust /opt/verifiers/rust /opt/verifiers/rust
USER 10001
LABEL org.verifiers.tool.node=/usr/bin/node \
      org.verifiers.tool.go=/usr/bin/go \
      org.verifiers.tool.go_cache=/opt/verifiers/go-build \
      org.verifiers.tool.rustc=/usr/bin/rustc \
      org.verifiers.tool.rust_deps=/opt/verifiers/rust/deps \
      org.verifiers.version.nodejs=${NODEJS} \
      org.verifiers.version.golang-go=${GOLANG_GO} \
      org.verifiers.version.testify=${TESTIFY} \
      org.verifiers.version.rustc-web=${RUSTC_WEB}
