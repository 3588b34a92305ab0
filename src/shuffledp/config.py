"""Validation of the workflow configuration against its JSON schema, with one clear message.

``snakemake.utils.validate`` reports the full jsonschema error dump; researchers editing a sweep want
one line that names the key, the accepted range and the value they wrote. :func:`validate_config`
gives exactly that, and adds the checks a schema cannot express (ordered bounding boxes, ...).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

import jsonschema
import yaml

__all__ = ["ConfigError", "load_schema", "validate_config", "dotted"]


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key, accepted values and received value."""


def load_schema(path) -> dict:
    """Read a YAML or JSON schema file."""
    with open(Path(path), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def dotted(path) -> str:
    """Render a jsonschema path deque such as ['regions', 'paris', 'grid', 'n_lat'] as text."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<root>"


def _describe(error: jsonschema.ValidationError) -> str:
    key = dotted(error.absolute_path)
    value = error.instance
    kind = error.validator
    arg = error.validator_value
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, Mapping) else []
        unknown = extra[0] if extra else "?"
        where = f"`{key}`" if error.absolute_path else "the top level"
        hint = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
        pattern = error.schema.get("patternProperties")
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


def _semantic_checks(config: Mapping) -> None:
    """Checks a JSON schema cannot state: ordered bounds."""
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
