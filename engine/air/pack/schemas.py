"""JSON Schema validation of packs, frameworks and reports, with one-line error messages.

A document is first checked by `jsonschema-rs`, which validates in native code: a document it
finds valid needs nothing more. Otherwise `jsonschema` finds the problems and names the first;
its verdict stands. The schemas' patterns are written in explicit ASCII classes, where the
native engine never accepts what `re` rejects (`re`'s `$` even accepts a final line break).

The row schema's clause is completed from the registry of evidence kinds: each kind brings its
key and its spec's definition (`SCHEMA` of its module).

`decimal` is imported here, not left to `jsonschema-rs`, which imports it the first time it
validates: from native code, where an interrupt arriving during that import aborts the process
instead of ending the check.
"""

from __future__ import annotations

import decimal  # noqa: F401  # see the module's docstring
import json
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from air.evidence import KINDS
from air.resources import SCHEMA_FILES, data_dir
from air.yamldoc import YamlDocument

if TYPE_CHECKING:
    import jsonschema_rs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry


@lru_cache(maxsize=1)
def _schemas() -> dict[str, dict]:
    schemas = {
        name: json.loads((data_dir("schemas") / f"{name}.schema.json").read_text(encoding="utf-8"))
        for name in SCHEMA_FILES
    }
    _add_kinds(schemas["row"])
    return schemas


def _add_kinds(row_schema: dict) -> None:
    definitions = row_schema["$defs"]
    clause = definitions["clause"]
    for name, module in KINDS.items():
        definitions[name] = module.SCHEMA
        clause["properties"][name] = {"$ref": f"#/$defs/{name}"}
    clause["oneOf"] = [{"required": ["use"]}, *({"required": [name]} for name in KINDS)]


def schema(name: str) -> dict:
    """The schema `name` (one of SCHEMA_FILES) as air validates with it."""
    return _schemas()[name]


@lru_cache(maxsize=1)
def _registry() -> tuple[Registry, dict[str, dict]]:
    from referencing import Registry, Resource  # imported only when jsonschema must decide

    schemas = _schemas()
    resources = []
    for schema in schemas.values():
        resource = Resource.from_contents(schema)
        resources.append((schema["$id"], resource))
        resources.append((schema["$id"].rsplit("/", 1)[-1], resource))
    return Registry().with_resources(resources), schemas


@cache
def _native_validator(name: str) -> jsonschema_rs.Draft202012Validator:
    import jsonschema_rs  # imported when a pack is read from its files: a kept pack was validated then

    schemas = _schemas()
    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in schemas.values()])
    return jsonschema_rs.Draft202012Validator(schemas[name], registry=registry)


def _natively_valid(data: object, schema: str) -> bool:
    try:
        return _native_validator(schema).is_valid(data)
    except (ValueError, TypeError):  # a value JSON has no type for (a YAML date, say): jsonschema decides
        return False


def defined_properties(schema: str, definition: str) -> frozenset[str]:
    """The keys an object of `$defs/<definition>` of a schema may have (the fields of a row, say)."""
    return frozenset(_schemas()[schema]["$defs"][definition]["properties"])


def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    registry, schemas = _registry()
    return Draft202012Validator(schemas[name], registry=registry)


def validate_document(document: YamlDocument, schema: str) -> None:
    """Raise PackError naming the file, the line and the YAML path of the first problem."""
    if _natively_valid(document.data, schema):
        return
    errors = sorted(validator(schema).iter_errors(document.data), key=_error_rank)
    if errors:
        error = errors[0]
        raise document.error(_location(error), describe(error))


def _location(error: ValidationError) -> tuple:
    """Where to point: at the offending key itself when the problem is an unknown key."""
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str)
        if unknown:
            return path + (unknown[0],)
    return path


def _error_rank(error: ValidationError) -> tuple:
    # Prefer the most specific problem: an unknown key (often a typo that also explains a
    # "required" error beside it), then the deepest; "not valid under oneOf" comes last.
    generic = error.validator in ("oneOf", "anyOf")
    unknown_key = error.validator == "additionalProperties"
    return (generic, not unknown_key, -len(error.absolute_path), str(error.absolute_path), error.message)


def describe(error: ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return f"unknown key {', '.join(map(repr, unknown))}{hint}"
    if error.validator == "oneOf" and isinstance(error.instance, dict):
        choices = [next(iter(branch.get("required", ["?"]))) for branch in error.validator_value]
        present = [key for key in choices if key in error.instance]
        if len(present) != 1:
            return f"needs exactly one of: {', '.join(choices)} (found {', '.join(present) or 'none'})"
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    return error.message.splitlines()[0]
