"""The language runtime images of the Docker runtime: definitions, builds and their cache.

Two images belong to the runtime itself, with their Dockerfiles in the repository's
``docker/`` directory: ``base`` (Debian bookworm, Python 3 for the sandbox agent, a
non-root user) and ``python`` (a virtual environment with the packages the Python-hosted
languages load, and SQLite). Every other image is generated from what the languages
declare (:class:`verifiers.program.ImageRecipe` on their toolchains): one image per
family, ``FROM`` base, with the family's Debian packages and set-up commands, and ``all``,
the python image plus every family. Adding a language adds its image; no table here names
one. The runtime images' own package versions are pinned in ``docker/versions.env``.

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

import importlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers import registry
from verifiers.errors import RuntimeUnavailableError
from verifiers.keys import content_key
from verifiers.program import ImageRecipe

REPOSITORY = "verifiers"
#: The image the Docker runtime uses by default.
DEFAULT_IMAGE = f"{REPOSITORY}/all:latest"
OFFLINE_BASE = f"{REPOSITORY}/debian:bookworm"
ONLINE_BASE = "debian:bookworm-slim"
MIRROR = "http://deb.debian.org/debian"
HASH_LABEL = "org.verifiers.hash"
TOOL_LABEL = "org.verifiers.tool."
VERSION_LABEL = "org.verifiers.version."
#: The images of the runtime itself (Dockerfiles in docker/), the rest are languages'.
RUNTIME_IMAGES = ("base", "python")
#: Where a family's files are while its image is built, and its commands' script there.
BUILD_DIR = "/tmp/verifiers-build"
SETUP_SCRIPT = "verifiers-setup.sh"


@dataclass(frozen=True)
class ImageSpec:
    """One image: its Dockerfile, the context files it needs, and the images it builds on.

    ``parents`` map a build argument to the image whose tag it receives; ``files`` map a
    path of the build context to its content (generated images carry their own).
    """

    name: str
    dockerfile: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    parents: Mapping[str, str] = field(default_factory=dict)


def docker_dir() -> Path:
    """The directory of the runtime's Dockerfiles (``docker/`` in a source checkout).

    ``VERIFIERS_DOCKER_DIR`` overrides it (for an installed package).
    """
    explicit = os.environ.get("VERIFIERS_DOCKER_DIR")
    if explicit:
        return Path(explicit)
    return Path(__file__).resolve().parent.parent / "docker"


def versions(directory: Path | None = None) -> dict[str, str]:
    """The pinned package versions of the runtime's images (``docker/versions.env``)."""
    path = (directory or docker_dir()) / "versions.env"
    out = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def families() -> dict[str, ImageRecipe]:
    """Every image family the registered languages declare, their recipes merged by family.

    Raises:
        ValueError: Two toolchains of one family disagree on a package's version or a
            placeholder's path.
    """
    found: dict[str, ImageRecipe] = {}
    for name in registry.language_names():
        for tool in getattr(registry.get_language(name), "toolchains", ()):
            recipe = tool.image
            if recipe is None or recipe is found.get(recipe.family):
                continue
            if recipe.family in (*RUNTIME_IMAGES, "all"):
                raise ValueError(f"toolchain {tool.name}: image family {recipe.family!r} is taken")
            found[recipe.family] = _merge(found.get(recipe.family), recipe)
    return found


def _merge(old: ImageRecipe | None, new: ImageRecipe) -> ImageRecipe:
    if old is None or old == new:
        return new
    for what, a, b in (("package", old.packages, new.packages), ("label", old.labels, new.labels)):
        for key in a.keys() & b.keys():
            if a[key] != b[key]:
                raise ValueError(
                    f"image family {new.family}: {what} {key} is {a[key]} and {b[key]}"
                )
    return ImageRecipe(
        family=new.family,
        packages={**old.packages, **new.packages},
        labels={**old.labels, **new.labels},
        run="\n".join(r for r in (old.run, new.run) if r),
        files={**old.files, **new.files},
        keep=tuple(dict.fromkeys((*old.keep, *new.keep))),
    )


def language_families() -> dict[str, str]:
    """Language names and aliases -> their image (``python`` for those without a toolchain)."""
    out: dict[str, str] = {}
    for name in registry.language_names():
        language = registry.get_language(name)
        images = [t.image.family for t in getattr(language, "toolchains", ()) if t.image]
        for alias in (name, *getattr(language, "aliases", ())):
            out[alias] = images[0] if images else "python"
    return out


def _install(packages: Mapping[str, str]) -> str:
    pinned = " ".join(f"{p}={v}" if v else p for p, v in sorted(packages.items()))
    return (
        "apt-get update -qq; \\\n"
        f"    apt-get install -y -qq --no-install-recommends {pinned}; \\\n"
        "    apt-get clean; rm -rf /var/lib/apt/lists/*"
    )


def _labels(recipe: ImageRecipe) -> list[str]:
    tools = [f"{TOOL_LABEL}{k.strip('{}')}={v}" for k, v in sorted(recipe.labels.items())]
    pins = [f"{VERSION_LABEL}{p}={v}" for p, v in sorted(recipe.packages.items()) if v]
    return tools + pins


def _family_dockerfile(recipe: ImageRecipe) -> str:
    lines = [
        f"# {recipe.family}: generated by verifiers.images from the languages' ImageRecipe.",
        "ARG BASE_IMAGE",
        "FROM ${BASE_IMAGE}",
        "USER root",
        'SHELL ["/bin/sh", "-eux", "-c"]',
        f"RUN {_install(recipe.packages)}",
    ]
    if recipe.run:
        # The commands run as a script (multi-line constructs stay intact); build-ca.crt
        # is the host's CA bundle for hosts behind a TLS-inspecting proxy (empty otherwise).
        lines.append(f"COPY {recipe.family}/ {BUILD_DIR}/")
        lines.append("COPY build-ca.crt /tmp/build-ca.crt")
        lines.append(
            f"RUN cd {BUILD_DIR}; if [ -s /tmp/build-ca.crt ]; then "
            "export VERIFIERS_BUILD_CA=/tmp/build-ca.crt; fi; \\\n"
            f"    sh -eux ./{SETUP_SCRIPT}; cd /; rm -rf {BUILD_DIR} /tmp/build-ca.crt"
        )
    lines += ["USER 10001", "LABEL " + " \\\n      ".join(_labels(recipe))]
    return "\n".join(lines) + "\n"


def _all_dockerfile(recipes: Mapping[str, ImageRecipe]) -> str:
    lines = ["# all: the python image plus every family, generated by verifiers.images."]
    lines += ["ARG PYTHON_IMAGE"] + [f"ARG {_arg(f)}" for f in recipes]
    lines += [f"FROM ${{{_arg(f)}}} AS {f}" for f in recipes]
    lines += ["FROM ${PYTHON_IMAGE}", "USER root", 'SHELL ["/bin/sh", "-eux", "-c"]']
    packages: dict[str, str] = {}
    for recipe in recipes.values():
        packages.update(recipe.packages)
    if packages:
        lines.append(f"RUN {_install(packages)}")
    labels: list[str] = []
    for family, recipe in recipes.items():
        lines += [f"COPY --from={family} {path} {path}" for path in recipe.keep]
        labels += _labels(recipe)
    lines.append("USER 10001")
    if labels:
        lines.append("LABEL " + " \\\n      ".join(labels))
    return "\n".join(lines) + "\n"


def _arg(family: str) -> str:
    return re.sub(r"\W", "_", family.upper()) + "_IMAGE"


def image_specs(directory: Path | None = None) -> dict[str, ImageSpec]:
    """Every image, parents before children: the runtime's, each family's, then ``all``."""
    directory = directory or docker_dir()
    requirements = "python-requirements.txt"
    specs = {
        "base": ImageSpec("base", (directory / "base.Dockerfile").read_text()),
        "python": ImageSpec(
            "python",
            (directory / "python.Dockerfile").read_text(),
            {requirements: (directory / requirements).read_bytes()},
            {"BASE_IMAGE": "base"},
        ),
    }
    recipes = families()
    for family, recipe in recipes.items():
        files = {f"{family}/{name}": data for name, data in recipe.files.items()}
        if recipe.run:
            files[f"{family}/{SETUP_SCRIPT}"] = recipe.run.encode()
        specs[family] = ImageSpec(family, _family_dockerfile(recipe), files, {"BASE_IMAGE": "base"})
    parents = {"PYTHON_IMAGE": "python", **{_arg(f): f for f in recipes}}
    specs["all"] = ImageSpec("all", _all_dockerfile(recipes), {}, parents)
    return specs


def image_hashes(
    offline: bool, directory: Path | None = None, specs: Mapping[str, ImageSpec] | None = None
) -> dict[str, str]:
    """The content hash of every image (its inputs and its parents' hashes)."""
    directory = directory or docker_dir()
    specs = specs or image_specs(directory)
    pins = versions(directory)
    out: dict[str, str] = {}
    for name, spec in specs.items():  # parents come first
        # Only the pins this Dockerfile declares: a new python3 rebuilds what uses it.
        declared = set(re.findall(r"^ARG\s+(\w+)", spec.dockerfile, re.M))
        parts: list[str | bytes] = [name, "offline" if offline else "online", spec.dockerfile]
        parts.append(repr(sorted((k, v) for k, v in pins.items() if k in declared)))
        for rel, data in sorted(spec.files.items()):
            parts += [rel, data]
        parts += [f"{arg}={out[parent]}" for arg, parent in sorted(spec.parents.items())]
        out[name] = content_key(*parts)[:16]
    return out


def _closure(names: list[str], specs: Mapping[str, ImageSpec]) -> list[str]:
    """The images to build for ``names``, parents first."""
    wanted: set[str] = set()

    def add(name: str) -> None:
        if name not in wanted:
            wanted.add(name)
            for parent in specs[name].parents.values():
                add(parent)

    for name in names:
        add(name)
    return [n for n in specs if n in wanted]


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
    key = content_key("minbase", "bookworm", MIRROR, "v1")[:16]
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
        only: Languages (or their aliases) or image names (``base``, ``python``, a
            family, ``all``); default: every image.
        offline: Start from a debootstrapped Debian instead of ``debian:bookworm-slim``.
        log: Where progress lines go.
        directory: The Dockerfiles (default: :func:`docker_dir`).

    Raises:
        RuntimeUnavailableError: No daemon, no debootstrap.
        RuntimeError: A build failed (with the end of its log).
    """
    started = time.monotonic()
    directory = directory or docker_dir()
    specs = image_specs(directory)
    known = {**language_families(), **{name: name for name in specs}}
    names = []
    for item in only or list(specs):
        if item.lower() not in known:
            raise ValueError(f"unknown image {item!r}: expected one of {sorted(known)}")
        names.append(known[item.lower()])
    c = client()
    seconds: dict[str, float] = {}
    cached: list[str] = []
    base_started = time.monotonic()
    if offline:
        if bootstrap_base(c, log):
            seconds["debian"] = time.monotonic() - base_started
        else:
            cached.append("debian")
    hashes = image_hashes(offline, directory, specs)
    pins = versions(directory)
    with tempfile.TemporaryDirectory(prefix="verifiers-images-") as work:
        context: str | None = None
        for name in _closure(names, specs):
            if _exists(c, f"{REPOSITORY}/{name}:{hashes[name]}") is None and context is None:
                context = _context(specs, work)
            _build_one(c, specs[name], hashes, pins, offline, context, seconds, cached, log)
    return BuildReport(seconds, cached, time.monotonic() - started)


def _build_one(
    c: Any,
    spec: ImageSpec,
    hashes: Mapping[str, str],
    pins: Mapping[str, str],
    offline: bool,
    context: str | None,
    seconds: dict[str, float],
    cached: list[str],
    log: Callable[[str], None],
) -> None:
    name = spec.name
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
    for arg, parent in spec.parents.items():
        args[arg] = f"{REPOSITORY}/{parent}:{hashes[parent]}"
    log(f"building {tag}")
    _docker_build(c, context, f"{name}.Dockerfile", tag, args, {HASH_LABEL: hashes[name]}, log)
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


def _context(specs: Mapping[str, ImageSpec], work: str) -> str:
    """A build context: every image's Dockerfile and files, plus ``build-ca.crt``."""
    context = os.path.join(work, "context")
    for spec in specs.values():
        for rel, data in {
            f"{spec.name}.Dockerfile": spec.dockerfile.encode(),
            **spec.files,
        }.items():
            target = os.path.join(context, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
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
    specs = image_specs()
    hashes = {mode: image_hashes(mode, specs=specs) for mode in (False, True)}
    out = []
    for name in specs:
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
