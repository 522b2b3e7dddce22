"""The route table: every RPC's ``google.api.http`` option, read from the proto
descriptors, as an HTTP method and a path template.

This table is the single source of the REST mapping: the transcoder
(:mod:`truc_gateway.transcode`) matches requests against it and the OpenAPI
generator (:mod:`truc_gateway.openapi`) describes it, so they cannot disagree.

Path templates follow ``google/api/http.proto``::

    Template = "/" Segments [ Verb ] ;   Segment = "*" | "**" | LITERAL | Variable ;
    Variable = "{" FieldPath [ "=" Segments ] "}" ;   Verb = ":" LITERAL ;

A variable without ``=`` matches one segment (``*``); ``*`` never crosses a ``/``.

A bidirectional-streaming RPC has no ``google.api.http`` rule (HTTP/1.1 cannot
carry one): the few the gateway serves as WebSockets are listed in
:data:`WEBSOCKET_ROUTES`, a ``GET`` template each, and join the table beside the
annotated ones (:mod:`truc_gateway.websocket` serves them).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from google.api import annotations_pb2, http_pb2
from google.protobuf.descriptor import (
    Descriptor,
    FieldDescriptor,
    MethodDescriptor,
    ServiceDescriptor,
)
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from truc.v1 import game_service_pb2, lobby_service_pb2

__all__ = [
    "SERVICES",
    "WEBSOCKET_ROUTES",
    "PathTemplate",
    "Route",
    "TemplateError",
    "Variable",
    "doubled_collection",
    "field_path",
    "most_specific",
    "route_table",
]

SERVICES: Final = (
    game_service_pb2.DESCRIPTOR.services_by_name["GameService"],
    lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"],
)
"""The services the gateway serves, in the order their routes are listed."""

RESUME_FIELD: Final = "after_version"
"""A streaming request field of this name takes the SSE ``Last-Event-ID``."""
WEBSOCKET_ROUTES: Final = {"truc.v1.GameService.Play": "/v1/{open.name=games/*}:play"}
"""Bidirectional RPCs served as a WebSocket: the path of the ``GET`` that upgrades.
The path sets the field of the first (``open``) message it names."""
EVENT_ID_FIELD: Final = "version"
"""A streamed response field of this name is the SSE event ``id``."""

_DOUBLED = re.compile(r"/v1/([A-Za-z][A-Za-z0-9]*)/\1/(.+)")
"""``/v1/games/games/g``: a resource name (``games/g``) pasted after its collection."""
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = re.compile(r"[A-Za-z0-9_.~-]+")


class TemplateError(ValueError):
    """A path template does not follow the grammar of google/api/http.proto."""


@dataclass(frozen=True, slots=True)
class Variable:
    """A ``{field=segments}`` of a template."""

    field: str
    """The request field it binds (a dotted path)."""
    segments: tuple[str, ...]
    """Its sub-template, e.g. ``("games", "*")``."""


@dataclass(frozen=True, slots=True)
class PathTemplate:
    """A parsed path template, compiled to a regular expression over raw paths."""

    text: str
    parts: tuple[str | Variable, ...]
    verb: str | None
    pattern: re.Pattern[str]

    @classmethod
    def parse(cls, text: str) -> PathTemplate:
        if not text.startswith("/"):
            raise TemplateError(f"{text!r}: a template starts with '/'")
        body, verb = text[1:], None
        closing = body.rfind("}")
        colon = body.rfind(":")
        if colon > closing:
            body, verb = body[:colon], body[colon + 1 :]
            if not _LITERAL.fullmatch(verb):
                raise TemplateError(f"{text!r}: bad verb {verb!r}")
        parts: list[str | Variable] = []
        for token in _split_segments(body, text):
            if token.startswith("{"):
                inner = token[1:-1]
                name, _, sub = inner.partition("=")
                if not all(_IDENT.fullmatch(p) for p in name.split(".")):
                    raise TemplateError(f"{text!r}: bad field path {name!r}")
                segments = tuple(sub.split("/")) if sub else ("*",)
                for segment in segments:
                    _check_segment(segment, text)
                parts.append(Variable(name, segments))
            else:
                _check_segment(token, text)
                parts.append(token)
        regex = "".join("/" + _part_regex(part, index) for index, part in enumerate(parts))
        if verb is not None:
            regex += re.escape(":" + verb)
        return cls(text, tuple(parts), verb, re.compile(regex))

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(p for p in self.parts if isinstance(p, Variable))

    def match(self, raw_path: str) -> dict[str, str] | None:
        """The variables' values (percent-decoded) if ``raw_path`` matches, else None."""
        found = self.pattern.fullmatch(raw_path)
        if found is None:
            return None
        return {
            part.field: urllib.parse.unquote(found.group(f"v{index}"))
            for index, part in enumerate(self.parts)
            if isinstance(part, Variable)
        }


def _split_segments(body: str, text: str) -> list[str]:
    """Split on '/' outside braces."""
    tokens: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "/" and depth == 0:
            tokens.append(body[start:index])
            start = index + 1
        if depth not in (0, 1):
            raise TemplateError(f"{text!r}: unbalanced braces")
    if depth:
        raise TemplateError(f"{text!r}: unbalanced braces")
    tokens.append(body[start:])
    return tokens


def _check_segment(segment: str, text: str) -> None:
    if segment not in ("*", "**") and not _LITERAL.fullmatch(segment):
        raise TemplateError(f"{text!r}: bad segment {segment!r}")


def _part_regex(part: str | Variable, index: int) -> str:
    if isinstance(part, Variable):
        inner = "/".join(_segment_regex(segment) for segment in part.segments)
        return f"(?P<v{index}>{inner})"
    return _segment_regex(part)


def _segment_regex(segment: str) -> str:
    if segment == "*":
        return "[^/]+"
    if segment == "**":
        return ".+"
    return re.escape(segment)


@dataclass(frozen=True, slots=True)
class Route:
    """One RPC as HTTP: what ``google.api.http`` says, with the descriptors it needs."""

    service: str
    """The gRPC service's full name, e.g. ``truc.v1.GameService``."""
    method: MethodDescriptor
    http_method: str
    template: PathTemplate
    body: str
    """``"*"`` (the whole request is the body), a field name, or ``""`` (no body)."""
    request_class: type[Message]
    response_class: type[Message]

    @property
    def grpc_path(self) -> str:
        return f"/{self.service}/{self.method.name}"

    @property
    def operation_id(self) -> str:
        return f"{self.method.containing_service.name}_{self.method.name}"

    @property
    def streaming(self) -> bool:
        """A server-streaming RPC: served as Server-Sent Events."""
        return bool(self.method.server_streaming) and not self.websocket

    @property
    def websocket(self) -> bool:
        """A bidirectional-streaming RPC: served as a WebSocket (:data:`WEBSOCKET_ROUTES`)."""
        return bool(self.method.client_streaming and self.method.server_streaming)

    @property
    def path_fields(self) -> frozenset[str]:
        return frozenset(v.field for v in self.template.variables)

    @property
    def resume_field(self) -> FieldDescriptor | None:
        """The streaming request's field that ``Last-Event-ID`` sets, if any."""
        if not self.streaming:
            return None
        return self.method.input_type.fields_by_name.get(RESUME_FIELD)

    @property
    def event_id_field(self) -> FieldDescriptor | None:
        """The streamed message's field that is each SSE event's ``id``, if any."""
        if not self.streaming:
            return None
        return self.method.output_type.fields_by_name.get(EVENT_ID_FIELD)


def field_path(message: Descriptor, dotted: str) -> list[FieldDescriptor]:
    """The fields a dotted path names (proto or JSON names); KeyError if one is unknown."""
    fields: list[FieldDescriptor] = []
    descriptor: Descriptor | None = message
    for name in dotted.split("."):
        if descriptor is None:
            raise KeyError(dotted)
        found = descriptor.fields_by_name.get(name) or next(
            (f for f in descriptor.fields if f.json_name == name), None
        )
        if found is None:
            raise KeyError(dotted)
        fields.append(found)
        descriptor = found.message_type
    return fields


def _rule_route(service: str, method: MethodDescriptor, rule: http_pb2.HttpRule) -> Route:
    pattern = rule.WhichOneof("pattern")
    if pattern is None:
        raise TemplateError(f"{method.full_name}: google.api.http without a pattern")
    if pattern == "custom":
        http_method, text = rule.custom.kind.upper(), rule.custom.path
    else:
        http_method, text = pattern.upper(), str(getattr(rule, pattern))
    return _route(service, method, http_method, text, rule.body)


def _route(service: str, method: MethodDescriptor, http_method: str, text: str, body: str) -> Route:
    template = PathTemplate.parse(text)
    request = method.input_type
    for variable in template.variables:
        try:
            leaf = field_path(request, variable.field)[-1]
        except KeyError:
            raise TemplateError(f"{method.full_name}: no field {variable.field!r}") from None
        if leaf.type != FieldDescriptor.TYPE_STRING or leaf.is_repeated:
            raise TemplateError(f"{method.full_name}: {variable.field!r} is not a string")
    if body not in ("", "*") and body not in request.fields_by_name:
        raise TemplateError(f"{method.full_name}: no body field {body!r}")
    return Route(
        service=service,
        method=method,
        http_method=http_method,
        template=template,
        body=body,
        request_class=GetMessageClass(request),
        response_class=GetMessageClass(method.output_type),
    )


def route_table(services: Iterable[ServiceDescriptor] = SERVICES) -> tuple[Route, ...]:
    """Every annotated RPC (and its additional bindings) of ``services`` and every
    one of :data:`WEBSOCKET_ROUTES`, in proto order."""
    routes: list[Route] = []
    for service in services:
        for method in service.methods:
            options = method.GetOptions()
            websocket = WEBSOCKET_ROUTES.get(method.full_name)
            if websocket is not None:
                if not (method.client_streaming and method.server_streaming):
                    raise TemplateError(f"{method.full_name}: a WebSocket route is bidirectional")
                routes.append(_route(service.full_name, method, "GET", websocket, ""))
                continue
            if not options.HasExtension(annotations_pb2.http):
                continue
            rule = options.Extensions[annotations_pb2.http]
            for binding in (rule, *rule.additional_bindings):
                routes.append(_rule_route(service.full_name, method, binding))
    return tuple(routes)


def most_specific(routes: Sequence[Route], raw_path: str) -> list[tuple[Route, dict[str, str]]]:
    """The routes whose template matches ``raw_path``, with their variables; when a
    template with a verb (``:watch``) matches, only those, so that a verb is never
    read as part of a resource name."""
    matched = [(r, v) for r in routes if (v := r.template.match(raw_path)) is not None]
    with_verb = [(r, v) for r, v in matched if r.template.verb is not None]
    return with_verb or matched


def doubled_collection(routes: Sequence[Route], raw_path: str) -> str | None:
    """The path meant when ``raw_path`` names its collection twice (``/v1/games/games/g``:
    a resource name, ``"games/g"``, pasted into ``/v1/games/{game}``) and the path
    with it once is a route's; else None."""
    found = _DOUBLED.fullmatch(raw_path)
    if found is None:
        return None
    meant = f"/v1/{found.group(1)}/{found.group(2)}"
    return meant if most_specific(routes, meant) else None
