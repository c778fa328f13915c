# Node.js (JavaScript programs and the JavaScript regex flavour).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG NODEJS
USER root
SHELL ["/bin/sh", "-eux", "-c"]
RUN apt-get update -qq; \
    apt-get install -y -qq --no-install-recommends nodejs=${NODEJS}; \
    apt-get clean; rm -rf /var/lib/apt/lists/*
USER 10001
LABEL org.verifiers.tool.node=/usr/bin/node \
      org.verifiers.version.nodejs=${NODEJS}
