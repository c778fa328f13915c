"""The language runtime images of the Docker runtime: definitions, builds and their cache.

The Dockerfiles live in the repository's ``docker/`` directory (``base``, one per language
family, and ``all``), with the Debian package versions pinned in ``docker/versions.env``.
Two ways to build, one command each (``verifiers images build [--offline]``):

* from a registry: ``base`` starts ``FROM debian:bookworm-slim``;
* offline (air-gapped hosts, CI): ``debootstrap --variant=minbase bookworm`` from Debian's
  mirror, imported with ``docker import`` as ``verifiers/debian:bookworm``; then the same
  Dockerfiles. Packages come from deb.debian.org, Python wheels from PyPI and Rust crates
  from crates.io at build time; running the images needs no network.

Every image is tagged ``verifiers/NAME:HASH`` and ``verifiers/NAME:latest``, where HASH
covers its Dockerfile, the files it copies, the pinned versions and its parents' hashes;
an image whose tag exists is not built again, so a second build with nothing changed
takes seconds.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifiers.errors import RuntimeUnavailableError

REPOSITORY = "verifiers"
#: The image the Docker runtime uses by default.
DEFAULT_IMAGE = f"{REPOSITORY}/all:latest"
OFFLINE_BASE = f"{REPOSITORY}/debian:bookworm"
ONLINE_BASE = "debian:bookworm-slim"
MIRROR = "http://deb.debian.org/debian"
HASH_LABEL = "org.verifiers.hash"
TOOL_LABEL = "org.verifiers.tool."
VERSION_LABEL = "org.verifiers.version."


@dataclass(frozen=True)
class ImageSpec:
    """One image: its Dockerfile, the context files it copies, and the images it builds on.

    ``parents`` map a build argument to the image whose tag it receives.
    """

    name: str
    dockerfile: str
    files: tuple[str, ...] = ()
    parents: Mapping[str, str] | None = None


IMAGES: dict[str, ImageSpec] = {
    "base": ImageSpec("base", "base.Dockerfile"),
    "python": ImageSpec(
        "python", "python.Dockerfile", ("python-requirements.txt",), {"BASE_IMAGE": "base"}
    ),
    "node": ImageSpec("node", "node.Dockerfile", (), {"BASE_IMAGE": "base"}),
    "go": ImageSpec("go", "go.Dockerfile", ("go-warmup_test.go",), {"BASE_IMAGE": "base"}),
    "rust": ImageSpec("rust", "rust.Dockerfile", ("rust-crates",), {"BASE_IMAGE": "base"}),
    "all": ImageSpec(
        "all",
        "all.Dockerfile",
        (),
        {"PYTHON_IMAGE": "python", "GO_IMAGE": "go", "RUST_IMAGE": "rust"},
    ),
}
#: Language (or alias) -> the image of its family.
FAMILIES = {
    "python": "python",
    "sql": "python",
    "regex": "python",
    "javascript": "node",
    "js": "node",
    "node": "node",
    "go": "go",
    "rust": "rust",
    "all": "all",
    "base": "base",
}


def docker_dir() -> Path:
    """The directory of the Dockerfiles (``docker/`` in a source checkout).

    ``VERIFIERS_DOCKER_DIR`` overrides it (for an installed package).
    """
    explicit = os.environ.get("VERIFIERS_DOCKER_DIR")
    if explicit:
        return Path(explicit)
    return Path(__file__).resolve().parent.parent / "docker"


def versions(directory: Path | None = None) -> dict[str, str]:
    """The pinned package versions (``docker/versions.env``)."""
    path = (directory or docker_dir()) / "versions.env"
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def _hash_path(h: Any, path: Path) -> None:
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and "target" not in child.relative_to(path).parts:
                h.update(str(child.relative_to(path)).encode() + b"\0" + child.read_bytes())
    else:
        h.update(path.read_bytes())


def image_hashes(offline: bool, directory: Path | None = None) -> dict[str, str]:
    """The content hash of every image (its inputs and its parents' hashes)."""
    directory = directory or docker_dir()
    pins = versions(directory)
    out: dict[str, str] = {}
    for name, spec in IMAGES.items():  # parents come first in IMAGES
        h = hashlib.sha256()
        h.update(f"{name}\0{'offline' if offline else 'online'}\0".encode())
        # Only the pins this Dockerfile declares: a new rustc rebuilds what uses it.
        text = (directory / spec.dockerfile).read_text()
        declared = set(re.findall(r"^ARG\s+(\w+)", text, re.M))
        h.update(repr(sorted((k, v) for k, v in pins.items() if k in declared)).encode())
        _hash_path(h, directory / spec.dockerfile)
        for rel in spec.files:
            _hash_path(h, directory / rel)
        for arg, parent in sorted((spec.parents or {}).items()):
            h.update(f"{arg}={out[parent]}".encode())
        out[name] = h.hexdigest()[:16]
    return out


def _closure(names: list[str]) -> list[str]:
    """The images to build for ``names``, parents first."""
    wanted: set[str] = set()

    def add(name: str) -> None:
        if name not in wanted:
            wanted.add(name)
            for parent in (IMAGES[name].parents or {}).values():
                add(parent)

    for name in names:
        add(name)
    return [n for n in IMAGES if n in wanted]


def sdk() -> Any:
    """The ``docker`` Python package.

    Imported by name: the repository's ``docker/`` directory of Dockerfiles would
    shadow the package for a type checker.
    """
    try:
        return importlib.import_module("docker")
    except ImportError as err:
        raise RuntimeUnavailableError(
            "the docker Python package is missing: pip install 'verifiers-sdk[docker]'"
        ) from err


def client(timeout: int = 600) -> Any:
    """A Docker client from the environment (``DOCKER_HOST``), or RuntimeUnavailableError."""
    docker = sdk()
    try:
        c = docker.from_env(timeout=timeout)
        c.ping()
    except Exception as err:
        raise RuntimeUnavailableError(f"the Docker daemon is not reachable: {err}") from err
    return c


def _exists(c: Any, tag: str) -> Any | None:
    try:
        return c.images.get(tag)
    except sdk().errors.ImageNotFound:
        return None


def bootstrap_base(c: Any, log: Callable[[str], None] = print) -> bool:
    """Create ``verifiers/debian:bookworm`` from Debian's packages (debootstrap) if missing.

    Returns:
        Whether it was built (False: it existed).
    """
    key = hashlib.sha256(f"minbase\0bookworm\0{MIRROR}\0v1".encode()).hexdigest()[:16]
    found = _exists(c, OFFLINE_BASE)
    if found is not None and found.labels.get(HASH_LABEL) == key:
        return False
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if os.access("/usr/sbin/debootstrap", os.X_OK) else None
    )
    if debootstrap is None:
        raise RuntimeUnavailableError("debootstrap not found: apt-get install debootstrap")
    if os.geteuid() != 0:
        raise RuntimeUnavailableError("the offline base image needs root (debootstrap)")
    with tempfile.TemporaryDirectory(prefix="verifiers-debootstrap-", dir="/var/tmp") as work:
        root = os.path.join(work, "root")
        log(f"debootstrap --variant=minbase bookworm {MIRROR}")
        done = subprocess.run(
            [debootstrap, "--variant=minbase", "bookworm", root, MIRROR],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"debootstrap failed:\n{(done.stdout + done.stderr)[-3000:]}")
        for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in Path(root, leftover).glob("*"):
                if entry.is_file():
                    entry.unlink()
        archive = os.path.join(work, "rootfs.tar")
        subprocess.run(["tar", "-C", root, "-cf", archive, "."], check=True, timeout=1800)
        log(f"docker import -> {OFFLINE_BASE}")
        repository, _, tag = OFFLINE_BASE.partition(":")
        c.api.import_image_from_file(
            archive,
            repository=repository,
            tag=tag,
            changes=[f"LABEL {HASH_LABEL}={key}", 'CMD ["/bin/sh"]'],
        )
    return True


@dataclass
class BuildReport:
    """What one build did: seconds per image, and which were already up to date."""

    seconds: dict[str, float]
    cached: list[str]
    total_s: float


def build(
    only: list[str] | None = None,
    offline: bool = False,
    log: Callable[[str], None] = print,
    directory: Path | None = None,
) -> BuildReport:
    """Build the images (those of ``only`` and their parents; default: all of them).

    Args:
        only: Languages or image names (``python``, ``javascript``, ``go``, ``rust``,
            ``all``); default: every image.
        offline: Start from a debootstrapped Debian instead of ``debian:bookworm-slim``.
        log: Where progress lines go.
        directory: The Dockerfiles (default: :func:`docker_dir`).

    Raises:
        RuntimeUnavailableError: No daemon, no debootstrap.
        RuntimeError: A build failed (with the end of its log).
    """
    started = time.monotonic()
    directory = directory or docker_dir()
    names = []
    for item in only or list(IMAGES):
        if item.lower() not in FAMILIES:
            raise ValueError(f"unknown image {item!r}: expected one of {sorted(FAMILIES)}")
        names.append(FAMILIES[item.lower()])
    c = client()
    seconds: dict[str, float] = {}
    cached: list[str] = []
    base_started = time.monotonic()
    if offline:
        if bootstrap_base(c, log):
            seconds["debian"] = time.monotonic() - base_started
        else:
            cached.append("debian")
    hashes = image_hashes(offline, directory)
    pins = versions(directory)
    with tempfile.TemporaryDirectory(prefix="verifiers-images-") as work:
        context: str | None = None
        for name in _closure(names):
            if _exists(c, f"{REPOSITORY}/{name}:{hashes[name]}") is None and context is None:
                context = _context(directory, work)
            _build_one(c, name, hashes, pins, offline, context, seconds, cached, log)
    return BuildReport(seconds, cached, time.monotonic() - started)


def _build_one(
    c: Any,
    name: str,
    hashes: Mapping[str, str],
    pins: Mapping[str, str],
    offline: bool,
    context: str | None,
    seconds: dict[str, float],
    cached: list[str],
    log: Callable[[str], None],
) -> None:
    spec = IMAGES[name]
    tag = f"{REPOSITORY}/{name}:{hashes[name]}"
    latest = f"{REPOSITORY}/{name}:latest"
    one_started = time.monotonic()
    if _exists(c, tag) is not None:
        c.api.tag(tag, f"{REPOSITORY}/{name}", "latest")
        cached.append(name)
        return
    assert context is not None
    args = dict(pins)
    args["BASE"] = OFFLINE_BASE if offline else ONLINE_BASE
    for arg, parent in (spec.parents or {}).items():
        args[arg] = f"{REPOSITORY}/{parent}:{hashes[parent]}"
    log(f"building {tag}")
    _docker_build(c, context, spec.dockerfile, tag, args, {HASH_LABEL: hashes[name]}, log)
    c.api.tag(tag, f"{REPOSITORY}/{name}", "latest")
    seconds[name] = time.monotonic() - one_started
    log(f"built {latest} in {seconds[name]:.0f}s")


def build_ca() -> str | None:
    """The CA bundle builds use for HTTPS (PyPI, crates.io), when the host names one.

    Hosts behind a TLS-inspecting proxy trust its certificate through ``PIP_CERT``,
    ``SSL_CERT_FILE`` or ``REQUESTS_CA_BUNDLE``; ``VERIFIERS_BUILD_CA`` overrides them.
    """
    for name in ("VERIFIERS_BUILD_CA", "PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        path = os.environ.get(name)
        if path and os.path.isfile(path):
            return path
    return None


def _context(directory: Path, work: str) -> str:
    """A build context: the Dockerfiles and their files, plus ``build-ca.crt``."""
    context = os.path.join(work, "context")
    shutil.copytree(directory, context, ignore=shutil.ignore_patterns("target"))
    ca = build_ca()
    with open(os.path.join(context, "build-ca.crt"), "wb") as out:
        if ca:
            with open(ca, "rb") as src:
                out.write(src.read())
    return context


def _docker_build(
    c: Any,
    directory: Path | str,
    dockerfile: str,
    tag: str,
    args: Mapping[str, str],
    labels: Mapping[str, str],
    log: Callable[[str], None],
) -> None:
    tail: list[str] = []
    stream: Iterator[dict[str, Any]] = c.api.build(
        path=str(directory),
        dockerfile=dockerfile,
        tag=tag,
        buildargs=dict(args),
        labels=dict(labels),
        rm=True,
        forcerm=True,
        decode=True,
        pull=False,
    )
    for chunk in stream:
        if "error" in chunk:
            text = "".join(tail[-40:])
            raise RuntimeError(f"docker build of {tag} failed: {chunk['error']}\n{text}")
        line = chunk.get("stream")
        if line:
            tail.append(line)
            del tail[:-200]
            if line.startswith("Step "):
                log("  " + line.strip()[:120])


@dataclass(frozen=True)
class ImageInfo:
    """An image as ``verifiers doctor`` and ``verifiers images list`` show it."""

    name: str
    tag: str
    present: bool
    current: bool
    image_id: str = ""
    size_mb: float = 0.0
    versions: Mapping[str, str] | None = None


def list_images(c: Any | None = None) -> list[ImageInfo]:
    """Every image: present or not, up to date with the definitions or not, its versions."""
    c = c or client()
    hashes = {mode: image_hashes(mode) for mode in (False, True)}
    out = []
    for name in IMAGES:
        tag = f"{REPOSITORY}/{name}:latest"
        found = _exists(c, tag)
        if found is None:
            out.append(ImageInfo(name, tag, False, False))
            continue
        labels = found.labels or {}
        digest = labels.get(HASH_LABEL, "")
        out.append(
            ImageInfo(
                name,
                tag,
                True,
                digest in (hashes[False][name], hashes[True][name]),
                found.short_id.removeprefix("sha256:"),
                round(found.attrs.get("Size", 0) / 2**20, 1),
                {
                    k.removeprefix(VERSION_LABEL): v
                    for k, v in sorted(labels.items())
                    if k.startswith(VERSION_LABEL)
                },
            )
        )
    return out


BUILD_HINT = "verifiers images build --offline (or without --offline where a registry is reachable)"
