"""Validation of the workflow configuration against its JSON schema, with one clear message.

``snakemake.utils.validate`` reports the full jsonschema error dump; researchers editing a sweep want
one line that names the key, the accepted range and the value they wrote. :func:`validate_config`
gives exactly that, and adds the checks a schema cannot express (ordered bounding boxes, ...).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["ConfigError", "load_schema", "validate_config", "dotted", "retype_overrides"]


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key, accepted values and received value."""


def load_schema(path) -> dict:
    """Read a YAML or JSON schema file; every ``{x-accountants: SET}`` in it becomes an ``enum`` of the
    accountant names of that set, read from the registry (:func:`shuffledp.accounting.accountant_sets`),
    so that a newly registered accountant is accepted without editing the schema."""
    with open(Path(path), encoding="utf-8") as handle:
        # libyaml's parser where PyYAML has it (the same safe constructor, so the same values): the schema
        # is read at every Snakefile parse, and the pure-Python parser takes ~0.05 s CPU over it.
        schema = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    from shuffledp.accounting import accountant_sets

    return _fill_accountants(schema, accountant_sets())


def _fill_accountants(node, sets: dict):
    if isinstance(node, dict):
        if "x-accountants" in node:
            name = node["x-accountants"]
            if name not in sets:
                raise ValueError(f"`x-accountants` must be one of {', '.join(sorted(sets))}; got {name!r}.")
            rest = {key: value for key, value in node.items() if key != "x-accountants"}
            return {**rest, "enum": list(sets[name])}
        return {key: _fill_accountants(value, sets) for key, value in node.items()}
    if isinstance(node, list):
        return [_fill_accountants(value, sets) for value in node]
    return node


def dotted(path) -> str:
    """Render a jsonschema path deque such as ['regions', 'paris', 'grid', 'n_lat'] as text."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def _describe(error: jsonschema.ValidationError) -> str:
    key = dotted(error.absolute_path)
    # any JSON value (jsonschema types them "or unset" for errors made by hand; a validator sets them)
    value: Any = error.instance
    kind = error.validator
    arg: Any = error.validator_value
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, Mapping) else []
        unknown = extra[0] if extra else "?"
        where = f"`{key}`" if error.absolute_path else "the top level"
        hint = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
        pattern = schema.get("patternProperties")
        if pattern:
            hint += f" Names must match {', '.join(pattern)}."
        return f"unknown key `{unknown}` under {where}.{hint}"
    if kind == "required":
        missing = [name for name in arg if name not in value]
        return f"`{key}` is missing required key `{missing[0] if missing else arg}`."
    if kind == "minimum":
        return f"`{key}` must be >= {arg}; got {value!r}."
    if kind == "exclusiveMinimum":
        return f"`{key}` must be > {arg}; got {value!r}."
    if kind == "maximum":
        return f"`{key}` must be <= {arg}; got {value!r}."
    if kind == "exclusiveMaximum":
        return f"`{key}` must be < {arg}; got {value!r}."
    if kind == "enum":
        return f"`{key}` must be one of {', '.join(map(repr, arg))}; got {value!r}."
    if kind == "type":
        return f"`{key}` must be of type {arg}; got {value!r} ({type(value).__name__})."
    if kind == "minItems":
        return f"`{key}` must have at least {arg} item(s); got {len(value)}."
    if kind == "maxItems":
        return f"`{key}` must have at most {arg} item(s); got {len(value)}."
    if kind == "pattern":
        return f"`{key}` must match the pattern {arg!r}; got {value!r}."
    if kind == "uniqueItems":
        return f"`{key}` must not repeat items; got {value!r}."
    return f"`{key}`: {error.message}"


def _non_finite(node, path=()):
    """First (path, value) of a NaN or infinite number anywhere in ``node``, else None."""
    if isinstance(node, float) and not math.isfinite(node):
        return path, node
    if isinstance(node, Mapping):
        items = node.items()
    elif isinstance(node, (list, tuple)):
        items = enumerate(node)
    else:
        return None
    for key, value in items:
        found = _non_finite(value, (*path, key))
        if found is not None:
            return found
    return None


def _scalar(text: str):
    """Type one command-line scalar as Snakemake types top-level ``--config`` values: int, then float,
    then YAML's true/false/null, else the text itself."""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    loaded = yaml.safe_load(text) if text.strip() else text
    return loaded if isinstance(loaded, bool) or loaded is None else text


def retype_overrides(overrides: Mapping) -> dict:
    """Give nested ``--config`` values the types a top-level value gets.

    Snakemake types ``--config seed=7`` as the integer 7 but reads ``--config 'utility={"delta_floor":
    1e-12}'`` with YAML's BaseLoader, which leaves every nested scalar a string ("1e-12"). This applies
    the top-level rule (int, float, true/false/null, else text) to every nested string, so that
    nested overrides validate like the same values written in a config file.
    """

    def retype(node):
        if isinstance(node, Mapping):
            return {key: retype(value) for key, value in node.items()}
        if isinstance(node, list):
            return [retype(value) for value in node]
        return _scalar(node) if isinstance(node, str) else node

    return {
        key: retype(value) if isinstance(value, (Mapping, list)) else value
        for key, value in overrides.items()
    }


def _semantic_checks(config: Mapping) -> None:
    """Checks a JSON schema cannot state: ordered bounds, files for a local data source."""
    data = config.get("data") or {}
    if data.get("source") == "local" and not data.get("local_files"):
        raise ConfigError(
            "config: `data.source` is 'local' but `data.local_files` is empty; list the files "
            "(see data/README.md) or set data.source: auto."
        )
    for name, region in (config.get("regions") or {}).items():
        for axis in ("lat", "lon"):
            low, high = region[f"{axis}_min"], region[f"{axis}_max"]
            if not low < high:
                raise ConfigError(
                    f"config: `regions.{name}.{axis}_max` must be greater than "
                    f"`regions.{name}.{axis}_min` ({low}); got {high}. The bounding box is inverted or empty."
                )


def validate_config(config: Mapping, schema: Mapping) -> dict:
    """Validate ``config`` against ``schema`` (filling schema defaults) and return a checked copy.

    Raises :class:`ConfigError` with one message naming the key, the accepted range and the value.
    Where several errors exist, the one jsonschema ranks most relevant is reported.
    """
    checked = copy.deepcopy(dict(config))
    found = _non_finite(checked)
    if found is not None:
        path, value = found
        raise ConfigError(
            f"config: `{dotted(path)}` must be a finite number (not NaN or infinity); got {value!r}."
        )
    validator_cls = jsonschema.validators.validator_for(schema)
    validator = validator_cls(schema)
    errors = list(validator.iter_errors(checked))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        # best_match prefers shallow errors; descend into anyOf/oneOf context for a precise message.
        while error.context:
            error = jsonschema.exceptions.best_match(error.context)
        raise ConfigError(f"config: {_describe(error)}")
    _semantic_checks(checked)
    return checked
