"""The OpenAPI 3 document of the REST mapping, generated from the route table
(:func:`truc_gateway.routes.route_table`, the one the transcoder serves) and the
proto descriptors, so the document and the gateway cannot disagree.

``make openapi`` writes it to ``services/gateway/src/truc_gateway/openapi.json``
(checked in, served at ``/openapi.json``); ``make test`` checks it is up to date.
With ``--proto-dir`` the proto sources' comments become descriptions.

Conventions: messages are ``components/schemas`` named by their full proto name,
fields by their JSON names (the gateway also accepts the proto names); 64-bit
integers are strings, enums their value names, ``google.protobuf.Timestamp`` an
RFC 3339 string (the proto3 JSON mapping). A path variable ``{name=games/*}``
becomes ``games/{game}``: each wildcard is a parameter named after the
collection before it, singular.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.rpc import status_pb2

from .routes import Route, Variable, route_table

__all__ = ["DOCUMENT", "document", "main", "openapi_path", "served_document"]

DOCUMENT: Final = "openapi.json"
"""The checked-in document, a resource of this package."""

_T = FieldDescriptor
_SCALARS: Final[dict[int, dict[str, Any]]] = {
    _T.TYPE_DOUBLE: {"type": "number", "format": "double"},
    _T.TYPE_FLOAT: {"type": "number", "format": "float"},
    _T.TYPE_INT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SINT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    _T.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0},
    _T.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0},
    _T.TYPE_INT64: {"type": "string", "format": "int64", "pattern": "^-?[0-9]+$"},
    _T.TYPE_SINT64: {"type": "string", "format": "int64", "pattern": "^-?[0-9]+$"},
    _T.TYPE_SFIXED64: {"type": "string", "format": "int64", "pattern": "^-?[0-9]+$"},
    _T.TYPE_UINT64: {"type": "string", "format": "uint64", "pattern": "^[0-9]+$"},
    _T.TYPE_FIXED64: {"type": "string", "format": "uint64", "pattern": "^[0-9]+$"},
    _T.TYPE_BOOL: {"type": "boolean"},
    _T.TYPE_STRING: {"type": "string"},
    _T.TYPE_BYTES: {"type": "string", "format": "byte"},
}
_WELL_KNOWN: Final[dict[str, dict[str, Any]]] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"},
    "google.protobuf.Any": {
        "type": "object",
        "properties": {"@type": {"type": "string"}},
        "additionalProperties": True,
    },
}


class _Builder:
    def __init__(self, comments: dict[str, str]) -> None:
        self.comments = comments
        self.schemas: dict[str, dict[str, Any]] = {}

    def describe(self, schema: dict[str, Any], full_name: str) -> dict[str, Any]:
        text = self.comments.get(full_name)
        if text:
            schema["description"] = text
        return schema

    def message_ref(self, message: Descriptor) -> dict[str, Any]:
        if message.full_name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[message.full_name])
        if message.full_name not in self.schemas:
            self.schemas[message.full_name] = {}  # placeholder: recursion stops here
            self.schemas[message.full_name] = self.message_schema(message)
        return {"$ref": f"#/components/schemas/{message.full_name}"}

    def message_schema(self, message: Descriptor, skip: frozenset[str] = frozenset()) -> Any:
        properties = {
            field.json_name: self.describe(self.field_schema(field), field.full_name)
            for field in message.fields
            if field.name not in skip
        }
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        return self.describe(schema, message.full_name)

    def field_schema(self, field: FieldDescriptor) -> dict[str, Any]:
        message = field.message_type
        if message is not None and message.GetOptions().map_entry:
            value = message.fields_by_name["value"]
            return {"type": "object", "additionalProperties": self.single(value)}
        single = self.single(field)
        return {"type": "array", "items": single} if field.is_repeated else single

    def single(self, field: FieldDescriptor) -> dict[str, Any]:
        if field.message_type is not None:
            return self.message_ref(field.message_type)
        if field.enum_type is not None:
            return self.enum_schema(field.enum_type)
        return dict(_SCALARS[field.type])

    def enum_schema(self, enum: EnumDescriptor) -> dict[str, Any]:
        if enum.full_name not in self.schemas:
            schema = {"type": "string", "enum": [v.name for v in enum.values]}
            self.schemas[enum.full_name] = self.describe_values(
                self.describe(schema, enum.full_name), enum
            )
        return {"$ref": f"#/components/schemas/{enum.full_name}"}

    def describe_values(self, schema: dict[str, Any], enum: EnumDescriptor) -> dict[str, Any]:
        """The values' comments: a list "`NAME`: text" after the enum's description,
        and ``x-enumDescriptions`` (value name to text, the form Redoc and others read)."""
        texts = {
            value.name: text
            for value in enum.values
            if (text := self.comments.get(f"{enum.full_name}.{value.name}"))
        }
        if texts:
            listing = "\n".join(f"* `{name}`: {text}" for name, text in texts.items())
            intro = schema.get("description")
            schema["description"] = f"{intro}\n\n{listing}" if intro else listing
            schema["x-enumDescriptions"] = texts
        return schema


def openapi_path(route: Route) -> tuple[str, list[str]]:
    """The OpenAPI path of a route and its path parameters' names."""
    segments: list[str] = []
    names: list[str] = []
    for part in route.template.parts:
        pieces = part.segments if isinstance(part, Variable) else (part,)
        for index, piece in enumerate(pieces):
            if piece in ("*", "**"):
                before = pieces[index - 1] if index else ""
                name = before[:-1] if before.endswith("s") else before or part_field(part)
                names.append(name)
                segments.append("{" + name + "}")
            else:
                segments.append(piece)
    verb = f":{route.template.verb}" if route.template.verb else ""
    return "/" + "/".join(segments) + verb, names


def part_field(part: str | Variable) -> str:
    return part.field.replace(".", "_") if isinstance(part, Variable) else "value"


def _query_parameters(builder: _Builder, route: Route) -> list[dict[str, Any]]:
    if route.body == "*":
        return []
    found: list[dict[str, Any]] = []

    def walk(message: Descriptor, prefix: str, seen: frozenset[str]) -> None:
        for field in message.fields:
            if not prefix and (field.name in route.path_fields or field.name == route.body):
                continue
            if field.message_type is not None:
                name = field.message_type.full_name
                if name not in seen and name not in _WELL_KNOWN:
                    walk(field.message_type, f"{prefix}{field.name}.", seen | {name})
                continue
            schema = builder.single(field)
            found.append(
                builder.describe(
                    {
                        "name": prefix + field.name,
                        "in": "query",
                        "required": False,
                        "schema": {"type": "array", "items": schema}
                        if field.is_repeated
                        else schema,
                    },
                    field.full_name,
                )
            )

    walk(route.method.input_type, "", frozenset({route.method.input_type.full_name}))
    return found


_WEBSOCKET: Final = (
    "Switching Protocols: a WebSocket carrying the session as JSON text frames "
    '(the proto3 JSON mapping). Client frames: `{"token": "<JWT>"}` first when the '
    "upgrade has no Authorization header (never in the URL), then one "
    '`{"open": {"afterVersion": "N"}}` (the path names the game), then '
    '`{"action": {...}}`: each a {request} (`x-websocket.client`). Server frames: '
    "each a {response} (`x-websocket.server`): one per new version, a `refused` for a "
    "refused action (also for an action frame that does not transcode: BAD_REQUEST; "
    "the socket stays open). Errors that end the session: a frame "
    '`{"error": <google.rpc.Status>, "httpStatus": N}`, then close 4000 + N '
    "(4400 malformed frame, 4401 token, 4403 not seated, 4404 no game, 4408 no open "
    "frame in time, 4503 the game replica stopped: resume). Close 1000: the match is "
    "over; 1001: the gateway is stopping (resume with afterVersion = the last version "
    "received, resending unanswered actions with the same requestId); 1003: a binary "
    "frame; 1009: a frame over the body limit."
)


def _websocket_operation(
    builder: _Builder, route: Route, parameters: list[dict[str, Any]]
) -> dict[str, Any]:
    """A WebSocket route: the GET that upgrades (101), its frames' schemas beside."""
    request, response = route.method.input_type, route.method.output_type
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "tags": [route.method.containing_service.name],
        "parameters": parameters,
    }
    builder.describe(operation, route.method.full_name)
    text = _WEBSOCKET.replace("{request}", request.full_name).replace(
        "{response}", response.full_name
    )
    operation["responses"] = {
        "101": {"description": text},
        "default": {
            "description": "Refused before the upgrade: a google.rpc.Status with an "
            "ErrorInfo (400 BAD_REQUEST for a query string, 403 ORIGIN_NOT_ALLOWED, "
            "426 UPGRADE_REQUIRED for a GET that is not a WebSocket upgrade).",
            "content": {
                "application/json": {"schema": builder.message_ref(status_pb2.Status.DESCRIPTOR)}
            },
        },
    }
    operation["x-websocket"] = {
        "client": builder.message_ref(request),
        "server": builder.message_ref(response),
    }
    return operation


def _operation(builder: _Builder, route: Route, path_names: list[str]) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
        for n in path_names
    ]
    if route.websocket:
        return _websocket_operation(builder, route, parameters)
    parameters += _query_parameters(builder, route)
    if route.streaming:
        parameters.append(
            {
                "name": "access_token",
                "in": "query",
                "required": False,
                "description": "A stream token (POST /v1/streamTokens: the claim "
                "scope=stream, a lifetime of at most 300 s), for clients that cannot set "
                "the Authorization header (a browser's EventSource); the header wins. Any "
                "other token here is refused: 401 TOKEN_IN_URL, before any call.",
                "schema": {"type": "string"},
            }
        )
    if route.resume_field is not None:
        parameters.append(
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": f"Resume after this event id: overrides {route.resume_field.name}.",
                "schema": {"type": "string", "pattern": "^[0-9]+$"},
            }
        )
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "tags": [route.method.containing_service.name],
        "parameters": parameters,
    }
    builder.describe(operation, route.method.full_name)
    if route.body:
        request = route.method.input_type
        if route.body == "*":
            body_schema = builder.message_schema(request, skip=route.path_fields)
        else:
            body_schema = builder.field_schema(request.fields_by_name[route.body])
        operation["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": body_schema}},
        }
    response = builder.message_ref(route.method.output_type)
    if route.streaming:
        ok = {
            "description": "Server-Sent Events: each `data:` line is one "
            f"{route.method.output_type.full_name} as JSON"
            + (f", with `id:` its {route.event_id_field.name}" if route.event_id_field else "")
            + "; then `event: end` (or `event: error` with a google.rpc.Status).",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    else:
        ok = {"description": "OK", "content": {"application/json": {"schema": response}}}
    status = builder.message_ref(status_pb2.Status.DESCRIPTOR)
    operation["responses"] = {
        "200": ok,
        "default": {
            "description": "An error: a google.rpc.Status with an ErrorInfo (domain truc.v1).",
            "content": {"application/json": {"schema": status}},
        },
    }
    if route.method.name == "SignInGuest":
        operation["security"] = []
    return operation


def document(routes: Sequence[Route], comments: dict[str, str] | None = None) -> dict[str, Any]:
    """The OpenAPI 3.0 document of ``routes``."""
    builder = _Builder(comments or {})
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        path, names = openapi_path(route)
        paths.setdefault(path, {})[route.http_method.lower()] = _operation(builder, route, names)
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "truc REST/JSON gateway",
            "version": "v1",
            "description": "The truc.v1 gRPC API (GameService, LobbyService) as REST/JSON, "
            "Server-Sent Events and a WebSocket (Play), generated from the google.api.http "
            "options of the proto and the gateway's WebSocket routes. "
            "Messages use the proto3 JSON mapping; errors are google.rpc.Status JSON.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
            },
            "schemas": dict(sorted(builder.schemas.items())),
        },
    }


def proto_comments(proto_dir: Path) -> dict[str, str]:
    """Leading comments of messages, fields, enums and their values, services and
    methods, by full name (an enum value's is ``truc.v1.Call.CALL_TRUC``)."""
    files = sorted(str(p.relative_to(proto_dir)) for p in (proto_dir / "truc").rglob("*.proto"))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "set.pb"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{proto_dir}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                *files,
            ],
            check=True,
        )
        descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    comments: dict[str, str] = {}
    for file in descriptor_set.file:
        names = _element_names(file)
        for location in file.source_code_info.location:
            name = names.get(tuple(location.path))
            text = location.leading_comments.strip()
            if name and text:
                paragraphs = (" ".join(p.split()) for p in text.split("\n\n"))
                comments[name] = "\n\n".join(p for p in paragraphs if p)
    return comments


def _element_names(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    names: dict[tuple[int, ...], str] = {}

    def message(proto: descriptor_pb2.DescriptorProto, path: tuple[int, ...], scope: str) -> None:
        full = f"{scope}.{proto.name}"
        names[path] = full
        for index, field in enumerate(proto.field):
            names[(*path, 2, index)] = f"{full}.{field.name}"
        for index, nested in enumerate(proto.nested_type):
            message(nested, (*path, 3, index), full)
        for index, enum in enumerate(proto.enum_type):
            enumeration(enum, (*path, 4, index), full)

    def enumeration(
        proto: descriptor_pb2.EnumDescriptorProto, path: tuple[int, ...], scope: str
    ) -> None:
        full = f"{scope}.{proto.name}"
        names[path] = full
        for index, value in enumerate(proto.value):
            names[(*path, 2, index)] = f"{full}.{value.name}"

    for index, proto in enumerate(file.message_type):
        message(proto, (4, index), file.package)
    for index, enum in enumerate(file.enum_type):
        enumeration(enum, (5, index), file.package)
    for index, service in enumerate(file.service):
        names[(6, index)] = f"{file.package}.{service.name}"
        for number, method in enumerate(service.method):
            names[(6, index, 2, number)] = f"{file.package}.{service.name}.{method.name}"
    return names


def render(comments: dict[str, str] | None = None) -> str:
    return json.dumps(document(route_table(), comments), indent=2, ensure_ascii=False) + "\n"


def served_document() -> str:
    """The checked-in document (what ``/openapi.json`` serves)."""
    return resources.files(__package__).joinpath(DOCUMENT).read_text(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the gateway's OpenAPI document.")
    parser.add_argument("output", type=Path, help="where to write it (or what to --check)")
    parser.add_argument("--proto-dir", type=Path, help="proto sources, for descriptions")
    parser.add_argument("--check", action="store_true", help="fail if OUTPUT is not current")
    args = parser.parse_args(argv)
    text = render(proto_comments(args.proto_dir) if args.proto_dir else None)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run make openapi", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
