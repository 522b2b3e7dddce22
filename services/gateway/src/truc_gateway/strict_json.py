"""Proto3 JSON read strictly: every value is checked against its field before
``google.protobuf.json_format`` builds the message, and a refusal names the
field's path (``action.playCard.suit``, ``fixedDeals[0].hands[2].cards[1].rank``:
JSON names, list indexes in brackets).

``json_format`` on its own is lenient where a hostile or careless client can
make a request mean something it did not write: it reads an enum with
``int(value)``, so ``3.7``, ``true`` and ``"3"`` are all a suit, and it takes
an enum number no value has. Here:

* an **enum** is its value's name (a JSON string, ``"SUIT_COINS"``) or a JSON
  integer that is one of its values' numbers (``3``); never a float (``3.0``,
  ``3.7``), a bool, a string of digits (``"3"``: the proto3 JSON mapping
  writes enums as names and reads numbers as numbers; the gateway reads no
  third spelling) or an undefined number (``99``). A query parameter has no
  JSON types, so there an enum is its name or the decimal digits of a defined
  number (:mod:`truc_gateway.transcode` turns the digits into a number);
* an **integer** (``int32``, ``int64``, ``uint32``, ... every integer field
  that is not an enum) is a JSON number with no fraction (``2``, ``2.0``,
  ``2e3``) or a string of decimal digits (``"2"``, the proto3 JSON form of
  64-bit integers), within its type's range; never ``1.5``, ``"1.5"``,
  ``true``, ``NaN``;
* a **bool** is ``true`` or ``false``; a **string** or **bytes** field a JSON
  string; a **float** or **double** a JSON number or one of the strings the
  mapping allows (``"NaN"``, ``"Infinity"``, ...); never a bool;
* a **message** is a JSON object whose keys are its fields (JSON or proto
  names; an unknown key is refused, never ignored), a **repeated** field a
  JSON array (no ``null`` elements), a **map** an object;
* ``null`` for a field is its default, as the mapping says.

Well-known types (``google.protobuf.*``) keep ``json_format``'s own reading.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, Final, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

__all__ = ["ENUM_NUMBER", "JsonError", "parse_into"]

MAX_DEPTH: Final = 64
"""The deepest nesting of messages read (deeper: refused)."""

ENUM_NUMBER: Final = re.compile(r"-?[0-9]{1,10}")
"""The decimal digits of an enum number in a query parameter."""
_INTEGER_TEXT: Final = re.compile(r"-?[0-9]{1,20}")

_C = FieldDescriptor
_INTEGER_RANGE: Final = {
    _C.CPPTYPE_INT32: (-(1 << 31), (1 << 31) - 1),
    _C.CPPTYPE_UINT32: (0, (1 << 32) - 1),
    _C.CPPTYPE_INT64: (-(1 << 63), (1 << 63) - 1),
    _C.CPPTYPE_UINT64: (0, (1 << 64) - 1),
}
_FLOAT_WORDS: Final = frozenset({"NaN", "Infinity", "-Infinity"})


class JsonError(ValueError):
    """A JSON value that is not its field's; the message names the field."""


def parse_into(fields: dict[str, Any], message: Message) -> None:
    """Merge the proto3 JSON object ``fields`` into ``message``, strictly (see the
    module); :class:`JsonError` naming the field if a value is not its field's."""
    descriptor = cast(Descriptor, message.DESCRIPTOR)
    _check_message(descriptor, fields, "", 0)
    try:
        json_format.ParseDict(fields, message, max_recursion_depth=MAX_DEPTH)
    except json_format.ParseError as error:  # what the checks leave to it (oneofs twice, ...)
        raise JsonError(str(error)) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as error:
        raise JsonError(str(error)) from None


def _check_message(descriptor: Descriptor, value: object, path: str, depth: int) -> None:
    if descriptor.full_name.startswith("google.protobuf."):
        return  # a well-known type: json_format's own mapping (Timestamp as RFC 3339, ...)
    if not isinstance(value, dict):
        raise JsonError(f"{_name(path)}: a JSON object, not {_kind(value)}")
    if depth >= MAX_DEPTH:
        raise JsonError(f"{_name(path)}: nested deeper than {MAX_DEPTH} messages")
    for key, item in value.items():
        field = _field(descriptor, key)
        here = f"{path}.{key}" if path else str(key)
        if field is None:
            known = ", ".join(f.json_name for f in descriptor.fields)
            raise JsonError(f"{here}: no such field (the fields here: {known})")
        if item is None:
            continue  # null: the field's default
        _check_field(field, item, here, depth)


def _field(descriptor: Descriptor, key: object) -> FieldDescriptor | None:
    """The field a JSON key names (its JSON or its proto name), or None."""
    if not isinstance(key, str):
        return None
    return _names(descriptor).get(key)


@functools.cache
def _names(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by JSON name and by proto name (a descriptor lives as
    long as the process: the request types are few)."""
    return {
        **{f.json_name: f for f in descriptor.fields},
        **{f.name: f for f in descriptor.fields},
    }


def _check_field(field: FieldDescriptor, value: object, path: str, depth: int) -> None:
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        if not isinstance(value, dict):
            raise JsonError(f"{path}: a JSON object (a map), not {_kind(value)}")
        value_field = entry.fields_by_name["value"]
        for key, item in value.items():
            _check_single(value_field, item, f"{path}[{json.dumps(key)}]", depth)
        return
    if field.is_repeated:
        if not isinstance(value, list):
            raise JsonError(f"{path}: a JSON array, not {_kind(value)}")
        for index, item in enumerate(value):
            if item is None:
                raise JsonError(f"{path}[{index}]: null is not a list element")
            _check_single(field, item, f"{path}[{index}]", depth)
        return
    _check_single(field, value, path, depth)


def _check_single(field: FieldDescriptor, value: object, path: str, depth: int) -> None:
    """One value (not a list) of ``field``."""
    kind = field.cpp_type
    if field.message_type is not None:
        _check_message(field.message_type, value, path, depth + 1)
    elif field.enum_type is not None:
        _check_enum(field.enum_type, value, path)
    elif kind in _INTEGER_RANGE:
        _check_integer(kind, value, path)
    elif kind == _C.CPPTYPE_BOOL:
        if not isinstance(value, bool):
            raise JsonError(f"{path}: true or false, not {_kind(value)}")
    elif kind == _C.CPPTYPE_STRING:
        if not isinstance(value, str):
            raise JsonError(f"{path}: a JSON string, not {_kind(value)}")
    elif isinstance(value, bool) or not isinstance(value, int | float | str):
        raise JsonError(f"{path}: a number, not {_kind(value)}")
    elif isinstance(value, str) and value not in _FLOAT_WORDS:
        try:
            float(value)
        except ValueError:
            raise JsonError(f"{path}: a number, not {_kind(value)}") from None


def _check_enum(enum: EnumDescriptor, value: object, path: str) -> None:
    if isinstance(value, str) and value in enum.values_by_name:
        return
    if type(value) is int and value in enum.values_by_number:
        return
    names = ", ".join(v.name for v in enum.values)
    raise JsonError(
        f"{path}: {_kind(value)} is not a {enum.full_name}: give a value's name "
        f"({names}) or its number as a JSON integer"
    )


def _check_integer(kind: int, value: object, path: str) -> None:
    number = _whole(value)
    if number is None:
        raise JsonError(f"{path}: an integer, not {_kind(value)}")
    low, high = _INTEGER_RANGE[kind]
    if not low <= number <= high:
        raise JsonError(f"{path}: {number} is out of range ({low}..{high})")


def _whole(value: object) -> int | None:
    """The integer a JSON value spells (no fraction, not a bool), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    return None


def _kind(value: object) -> str:
    """A value as a refusal quotes it: its JSON, cut short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = json.dumps(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _name(path: str) -> str:
    return path or "the message"
