"""The generic transcoder: an HTTP request -> the RPC's request message, and a
response message -> JSON, from the route's descriptors alone (proto3 JSON
mapping, ``google.protobuf.json_format``). No endpoint has code of its own.

A request message is assembled in this order, each step overriding the last:

1. the body: the whole message (``body: "*"``) or one field of it, as JSON; an
   empty body is ``{}``; a route without a body refuses one;
2. query parameters, for fields the path and the body do not bind: dotted field
   paths (proto or JSON names), scalar and enum fields only, repeated by
   repeating the parameter; ``access_token`` is reserved (a stream token, on
   the streaming routes only: :mod:`truc_gateway.stream_tokens`);
3. the path template's variables;
4. for a streaming route with a resume field: ``Last-Event-ID``.

Every step reads its values strictly (:mod:`truc_gateway.strict_json`: an enum
is its name or a defined number as a JSON integer, never ``3.7``; an integer has
no fraction), the WebSocket session's frames too. Anything malformed (not JSON,
not an object, an unknown field or parameter, a wrong type) is 400
INVALID_ARGUMENT with reason BAD_REQUEST and a message naming the field
(``body: action.playCard.suit: ...``): unknown fields are refused, not ignored,
so that a misspelt field never silently means its default.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .errors import bad_request
from .routes import Route, field_path
from .strict_json import ENUM_NUMBER, JsonError, parse_into

__all__ = ["RESERVED_QUERY", "build_request", "message_dict", "message_json"]

RESERVED_QUERY: Final = frozenset({"access_token"})
"""Query parameters that are not request fields."""


def build_request(
    route: Route,
    variables: Mapping[str, str],
    query: Iterable[tuple[str, str]],
    body: bytes,
    last_event_id: str | None = None,
) -> Message:
    """The request message of ``route`` for one HTTP request (GatewayError 400 if malformed)."""
    message = route.request_class()
    _merge(message, _body_fields(route, body), "body")
    _merge(message, _query_fields(route, query), "query")
    path: dict[str, Any] = {}
    for name, value in variables.items():
        _put(path, name.split("."), value, repeated=False)
    _merge(message, path, "path")
    resume = route.resume_field
    if last_event_id is not None and resume is not None:
        if not last_event_id.isdigit():
            raise bad_request(f"Last-Event-ID must be a {resume.name}, not {last_event_id!r}")
        _merge(message, {resume.name: last_event_id}, "Last-Event-ID")
    return message


def message_dict(message: Message) -> dict[str, Any]:
    """The proto3 JSON object of ``message``, zero values included: a field at its
    default is present (``"seat": 0``), never missing."""
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


def message_json(message: Message) -> str:
    return json.dumps(message_dict(message), separators=(",", ":"))


def _body_fields(route: Route, body: bytes) -> dict[str, Any]:
    if not body.strip():
        return {}
    if not route.body:
        raise bad_request(f"{route.http_method} {route.template.text} takes no body")
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise bad_request(f"the body is not JSON: {error}") from None
    if not isinstance(decoded, dict) and (route.body == "*" or not _is_message(route)):
        raise bad_request("the body must be a JSON object")
    return decoded if route.body == "*" else {route.body: decoded}


def _is_message(route: Route) -> bool:
    field = route.method.input_type.fields_by_name[route.body]
    return field.message_type is not None and not field.is_repeated


def _query_fields(route: Route, query: Iterable[tuple[str, str]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in query:
        if key in RESERVED_QUERY:
            continue
        try:
            path = field_path(route.method.input_type, key)
        except KeyError:
            raise bad_request(f"unknown query parameter {key!r}") from None
        top = path[0].name
        if route.body in ("*", top) or top in route.path_fields:
            raise bad_request(f"query parameter {key!r}: the field is bound by the body or path")
        leaf = path[-1]
        if leaf.message_type is not None:
            raise bad_request(f"query parameter {key!r}: not a scalar field")
        _put(fields, [f.name for f in path], _scalar(leaf, key, value), leaf.is_repeated)
    return fields


def _scalar(field: FieldDescriptor, key: str, value: str) -> object:
    if field.type == FieldDescriptor.TYPE_BOOL:
        if value not in ("true", "false"):
            raise bad_request(f"query parameter {key!r}: true or false, not {value!r}")
        return value == "true"
    if field.enum_type is not None and ENUM_NUMBER.fullmatch(value):
        return int(value)  # a query has no JSON numbers: an enum's number is its digits
    return value  # strict_json reads integers from digits; names, strings and bytes as given


def _put(tree: dict[str, Any], names: list[str], value: object, repeated: bool) -> None:
    for name in names[:-1]:
        child = tree.setdefault(name, {})
        if not isinstance(child, dict):
            raise bad_request(f"{'.'.join(names)}: conflicting parameters")
        tree = child
    last = names[-1]
    if repeated:
        tree.setdefault(last, []).append(value)
    elif last in tree:
        raise bad_request(f"{'.'.join(names)} is given twice")
    else:
        tree[last] = value


def _merge(message: Message, fields: dict[str, Any], where: str) -> None:
    if not fields:
        return
    try:
        parse_into(fields, message)
    except JsonError as error:
        raise bad_request(f"{where}: {error}") from None
