# Go with testify (GOPATH mode, Debian's packages) and a build cache warmed with it,
# under the same settings as verifiers.toolchains.GO_ENV (a cache entry is only
# reused under the same settings).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG GOLANG_GO
ARG TESTIFY
USER root
SHELL ["/bin/sh", "-eux", "-c"]
COPY go-warmup_test.go /tmp/warmup/warmup_test.go
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends golang-go=${GOLANG_GO} \
      golang-github-stretchr-testify-dev=${TESTIFY}; \
    apt-get clean; rm -rf /var/lib/apt/lists/*; \
    cd /tmp/warmup; \
    env GO111MODULE=off GOPATH=/usr/share/gocode CGO_ENABLED=0 GOFLAGS=-trimpath \
      GOPROXY=off GOTOOLCHAIN=local GOCACHE=/opt/verifiers/go-build HOME=/tmp/warmup \
      go test -c -vet=off -o /tmp/warmup/warmup.test .; \
    rm -rf /tmp/warmup; chmod -R a+rX /opt/verifiers/go-build
USER 10001
LABEL org.verifiers.tool.go=/usr/bin/go \
      org.verifiers.tool.go_cache=/opt/verifiers/go-build \
      org.verifiers.version.golang-go=${GOLANG_GO} \
      org.verifiers.version.testify=${TESTIFY}
