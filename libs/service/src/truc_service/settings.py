"""Settings from the environment, for every truc service: one parser, one error.

Each service declares its settings as a subclass of :class:`ServiceSettings`
(a ``pydantic-settings`` model): one field per environment variable, named by
its ``validation_alias``, typed and bounded, with its default and meaning in the
field's description (the table in the service's ``config`` module docstring is
the same list, for people). Empty variables count as unset.

* :meth:`ServiceSettings.from_env` reads ``os.environ`` (or a given mapping)
  and raises :class:`ConfigError` naming every variable that is wrong;
* ``TRUC_DEV_MODE`` is parsed here once for all services (:func:`flag`:
  ``1/true/yes/on`` or ``0/false/no/off``, any case);
* ``TRUC_JWT_SECRET`` is required unless dev mode: at least 32 bytes in
  UTF-8 (RFC 7518 §3.2) and, outside dev mode, none of :data:`KNOWN_KEYS` (the
  public development key, the key committed for the Kubernetes dev overlay:
  anyone can sign tokens with those); dev mode falls back to :data:`DEV_SECRET`;
* ``TRUC_MAX_TOKEN_SECONDS`` bounds how far in the future a token's ``exp``
  may be (:class:`truc_service.tokens.TokenVerifier`'s ``max_lifetime``);
* ``TRUC_LOG_*``, ``TRUC_METRICS_PORT``, ``TRUC_TRACING`` and
  ``TRUC_GRACE_SECONDS`` are common to all services.

A ConfigError quotes the wrong value, but never a secret's (a field with
``repr=False``) and never a URL's password (:func:`truc_telemetry.logs.redacted_url`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Self

from pydantic import BeforeValidator, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from truc_protocol.tokens import DEV_SECRET
from truc_telemetry import logs, tracing

from .addresses import IPNetwork, networks

__all__ = [
    "DEV_SECRET",
    "KNOWN_KEYS",
    "MIN_KEY_BYTES",
    "Choice",
    "ConfigError",
    "Flag",
    "Networks",
    "ServiceSettings",
    "SignedSettings",
    "flag",
    "weak_key",
]


KNOWN_KEYS: Final = frozenset(
    {
        DEV_SECRET,
        # deploy/k8s/overlays/dev (its secretGenerator truc-jwt): committed on purpose.
        "dev-only-NOT-SECRET-truc-jwt-key-committed-to-git",
    }
)
"""JWT keys anyone can read (in this repository): refused outside dev mode.
tests/deploy checks that every key committed under deploy/ is here."""
MIN_KEY_BYTES: Final = 32
"""The shortest TRUC_JWT_SECRET outside dev mode, in UTF-8 bytes (RFC 7518 §3.2: an
HS256 key at least as long as the hash)."""
_DAY: Final = 86400

_TRUE: Final = frozenset(("1", "true", "yes", "on"))
_FALSE: Final = frozenset(("0", "false", "no", "off", ""))


class ConfigError(ValueError):
    """The environment does not describe a valid configuration."""


def flag(value: object) -> bool:
    """A yes/no variable: ``1/true/yes/on`` or ``0/false/no/off`` (any case)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("must be 0 or 1 (or true/false, yes/no, on/off)")


Flag = Annotated[bool, BeforeValidator(flag)]
"""A boolean setting parsed by :func:`flag`."""


def _networks(value: object) -> object:
    return networks(value) if isinstance(value, str) else value


Networks = Annotated[tuple[IPNetwork, ...], NoDecode, BeforeValidator(_networks)]
"""A setting that is a comma list of CIDRs (``10.0.0.0/8, fd00::/8``; an
address alone is one host), read by :func:`truc_service.addresses.networks`."""


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


def Choice(*choices: str) -> Any:  # noqa: N802 - reads as a type in a field declaration
    """A string setting that is one of ``choices`` (any case; the first is the default)."""

    def check(value: object) -> str:
        text = str(_lower(value))
        if text not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return text

    return Annotated[str, BeforeValidator(check)]


class ServiceSettings(BaseSettings):
    """What every truc service reads: logging, metrics, tracing, the stop grace."""

    model_config = SettingsConfigDict(
        frozen=True, extra="ignore", env_ignore_empty=True, populate_by_name=True
    )

    service: ClassVar[str] = "truc"
    """The service's name in messages (``truc-game``, ...)."""

    log_level: str = Field(
        "INFO",
        validation_alias="TRUC_LOG_LEVEL",
        description="logging level (DEBUG adds a line per RPC)",
    )
    log_format: Choice(*logs.FORMATS) = Field(  # type: ignore[valid-type]
        logs.FORMATS[0],
        validation_alias="TRUC_LOG_FORMAT",
        description="json (an object per line) or text",
    )
    tracing: bool = Field(
        False,
        validation_alias="TRUC_TRACING",
        description="1: OpenTelemetry tracing (also on with OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    grace_seconds: float = Field(
        5.0,
        ge=0,
        le=600,
        validation_alias="TRUC_GRACE_SECONDS",
        description="on SIGTERM, how long in-flight calls may finish",
    )

    @model_validator(mode="before")
    @classmethod
    def _common(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            data = dict(data)
            data["TRUC_LOG_LEVEL"] = str(data.get("TRUC_LOG_LEVEL") or "INFO").upper()
        return data

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings ``env`` (default: ``os.environ``) describes, or ConfigError."""
        source = os.environ if env is None else env
        names = {f.validation_alias for f in cls.model_fields.values()}
        raw: dict[str, Any] = {k: v for k, v in source.items() if v != "" and k in names}
        raw["TRUC_TRACING"] = tracing.wanted(source)  # TRUC_TRACING or the OTEL_* variables
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            secret = {f.validation_alias for f in cls.model_fields.values() if not f.repr}
            shown = {
                name: "(hidden)" if name in secret else logs.redacted_url(str(value))
                for name, value in raw.items()
            }
            raise ConfigError(_explain(exc, shown, cls._bounds())) from None

    @classmethod
    def _bounds(cls) -> dict[str, tuple[object, object]]:
        """(low, high) of each bounded variable, by name."""
        bounds: dict[str, tuple[object, object]] = {}
        for field in cls.model_fields.values():
            low = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
            high = next((m.le for m in field.metadata if hasattr(m, "le")), None)
            if low is not None and high is not None and isinstance(field.validation_alias, str):
                bounds[field.validation_alias] = (low, high)
        return bounds


def _explain(
    error: ValidationError, raw: Mapping[str, Any], bounds: Mapping[str, tuple[object, object]]
) -> str:
    """One line per wrong variable: its name, what it must be, what it was."""
    lines = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"]) or "configuration"
        message = str(problem["msg"]).removeprefix("Value error, ")
        if problem["type"] in ("greater_than_equal", "less_than_equal") and name in bounds:
            low, high = bounds[name]
            message = f"must be between {low} and {high}"
        elif problem["type"] == "greater_than_equal":
            message = f"must be at least {problem['ctx']['ge']}"
        elif problem["type"] == "less_than_equal":
            message = f"must be at most {problem['ctx']['le']}"
        elif problem["type"] in ("int_parsing", "int_from_float"):
            message = "must be an integer"
        elif problem["type"] == "float_parsing":
            message = "must be a number"
        elif problem["type"] == "missing":
            message = "is not set"
        if name in raw:
            lines.append(f"{name} {message}, not {raw[name]!r}")
        else:
            lines.append(f"{name}: {message}" if name != "configuration" else message)
    return "; ".join(lines)


class SignedSettings(ServiceSettings):
    """Settings of a service that signs or checks tokens: dev mode and the JWT key."""

    dev_mode: Flag = Field(
        False,
        validation_alias="TRUC_DEV_MODE",
        description="1 allows the built-in development JWT key (never in production)",
    )
    jwt_secret: str = Field(
        "",
        repr=False,
        validation_alias="TRUC_JWT_SECRET",
        description="the HS256 key the lobby and the game service share (required unless dev "
        "mode): at least 32 bytes, not a publicly known key",
    )
    max_token_seconds: int = Field(
        30 * _DAY,
        ge=60,
        le=365 * _DAY,
        validation_alias="TRUC_MAX_TOKEN_SECONDS",
        description="the longest a token may still be valid: one whose exp is further "
        "ahead is refused (TOKEN_INVALID)",
    )

    @model_validator(mode="after")
    def _secret(self) -> Self:
        if not self.jwt_secret:
            if not self.dev_mode:
                raise ValueError(
                    "TRUC_JWT_SECRET is not set: set it to the HS256 key the lobby and the "
                    "game service share (or TRUC_DEV_MODE=1 to use the built-in development key)"
                )
            object.__setattr__(self, "jwt_secret", DEV_SECRET)
        elif weak := weak_key(self.jwt_secret, dev_mode=self.dev_mode):
            raise ValueError(f"TRUC_JWT_SECRET {weak} {_NEW_KEY}")
        return self


_NEW_KEY: Final = (
    "(generate one: python -c 'import secrets; print(secrets.token_urlsafe(32))'; "
    "TRUC_DEV_MODE=1 accepts a known key, for development only)"
)


def weak_key(secret: str, *, dev_mode: bool = False) -> str:
    """Why ``secret`` may not sign tokens ("" if it may): too short, or (outside
    dev mode) publicly known (:data:`KNOWN_KEYS`)."""
    if secret in KNOWN_KEYS and not dev_mode:
        which = "the built-in development key" if secret == DEV_SECRET else "committed to git"
        return f"is a publicly known key ({which}): anyone can sign tokens with it"
    size = len(secret.encode("utf-8"))
    if size < MIN_KEY_BYTES:
        return (
            f"must be at least {MIN_KEY_BYTES} bytes long ({MIN_KEY_BYTES} characters of ASCII; "
            f"RFC 7518 §3.2), not {size}"
        )
    return ""
