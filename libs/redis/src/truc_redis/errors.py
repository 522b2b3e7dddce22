"""Redis failures at the adapter boundary: a store that cannot be reached is the
protocol's ``UNAVAILABLE`` (reason ``STORE_UNAVAILABLE``), so nothing above the
adapters (use cases, servicers) knows Redis exists."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from redis.exceptions import RedisError

from truc_protocol.errors import Unavailable

__all__ = ["StoreUnavailable", "translate_errors"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class StoreUnavailable(Unavailable):
    """The store did not answer (connection lost, timeout, cluster down...)."""

    def __init__(self, what: str) -> None:
        super().__init__("STORE_UNAVAILABLE", f"the {what} cannot be reached; retry")


def translate_errors(
    what: str,
) -> Callable[[Callable[_P, Awaitable[_R]]], Callable[_P, Coroutine[Any, Any, _R]]]:
    """Decorate an adapter's coroutine: a ``RedisError`` becomes :class:`StoreUnavailable`
    (``what`` names the store in the message: "game store", "lobby store")."""

    def decorate(method: Callable[_P, Awaitable[_R]]) -> Callable[_P, Coroutine[Any, Any, _R]]:
        @functools.wraps(method)
        async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return await method(*args, **kwargs)
            except RedisError as exc:
                raise StoreUnavailable(what) from exc

        return call

    return decorate
