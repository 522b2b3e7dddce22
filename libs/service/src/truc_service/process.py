"""Process start, serve and two-stage shutdown, the same for every truc service.

:func:`run_service` is each service's ``main``: it reads the settings
(a configuration error is printed, naming the variable, and exits 2),
configures logs and tracing, warns when the public development key is in use,
and runs the service on uvloop until a signal:

* the first SIGTERM or SIGINT starts the graceful stop (health NOT_SERVING,
  in-flight calls get ``grace_seconds``, then everything stops);
* a second one exits at once (status 1), whatever the stop is doing.

The signal handlers only set a flag or exit: they take no lock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import uvloop

from truc_telemetry import logs, tracing

from .settings import DEV_SECRET, ConfigError, ServiceSettings, SignedSettings

__all__ = ["Service", "run_service", "serve_until_signal"]

_Settings = TypeVar("_Settings", bound=ServiceSettings)


class Service(Protocol):
    """A built service: started once, stopped once (gracefully)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def serve_until_signal(service: Service, log: logging.Logger, grace: float) -> None:
    """Start ``service``, wait for SIGTERM or SIGINT, stop it; a second signal exits.

    The handlers are in place before the service starts: a signal that comes
    while it starts (or just after it says it is listening) stops it gracefully
    once started, instead of killing the process with the default action."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            log.warning("second signal: exiting now")
            os._exit(1)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal)
    await service.start()
    await stop.wait()
    log.info("shutting down (grace %.1f s)", grace)
    await service.stop()
    tracing.shutdown()
    log.info("stopped")


def run_service(
    name: str,
    settings_class: type[_Settings],
    build: Callable[[_Settings], Awaitable[Service]],
    log: logging.Logger,
    *,
    setup: Callable[[_Settings], None] | None = None,
) -> int:
    """The ``main`` of service ``name``: settings, logs, tracing, serve (uvloop).

    ``build`` makes the service from its settings; a :class:`ConfigError` it
    raises (a setting the service cannot do without) exits 2 like a bad variable."""
    try:
        settings = settings_class.from_env()
    except ConfigError as exc:
        print(f"{name}: configuration error: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level, settings.log_format)
    if setup is not None:
        setup(settings)
    if settings.tracing:
        tracing.configure(name)
        log.info("tracing on")
    if isinstance(settings, SignedSettings) and settings.jwt_secret == DEV_SECRET:
        log.warning("development mode: tokens are signed with the built-in development key")

    async def main() -> int:
        try:
            service = await build(settings)
        except ConfigError as exc:
            print(f"{name}: configuration error: {exc}", file=sys.stderr)
            return 2
        await serve_until_signal(service, log, settings.grace_seconds)
        return 0

    return uvloop.run(main())
