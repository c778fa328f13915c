"""Verification as a service: an HTTP server (``verifiers serve``) and its pieces.

* :mod:`verifiers.service.app`: the FastAPI application (``create_app``): ``/score``,
  ``/score_batch``, ``/health``, ``/metrics`` and SandboxFusion's ``/run_code``;
* :mod:`verifiers.service.config`: :class:`ServiceConfig`, every knob of the server;
* :mod:`verifiers.service.sandbox_fusion`: the SandboxFusion compatibility layer;
* :mod:`verifiers.service.admission`: the bounded queue behind the 503 answers;
* :mod:`verifiers.service.metrics`: Prometheus metrics;
* :mod:`verifiers.service.server`: starting uvicorn (``serve``).

The server needs the ``service`` extra (``pip install 'verifiers-sdk[service]'``). Nothing
here is imported by ``import verifiers``; this module itself imports no web framework. The
client side is :class:`verifiers.runtimes.RemoteRuntime` (``runtime="remote"``). See
``docs/service.md``.
"""

from verifiers.service.config import ServiceConfig

__all__ = ["ServiceConfig"]
