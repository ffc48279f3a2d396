"""Argument checks shared by the helpers: one home for each, with messages that say the fix."""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from typing import Any


def positive_int(value: object, name: str, maximum: int | None = None, hint: str = "") -> int:
    """Returns `value` if it is an int in 1..maximum, else raises a ValueError with `hint`."""
    bound = f" and at most {maximum}" if maximum is not None else ""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer{bound}, got {value!r}. {hint}".strip())
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}. {hint}".strip())
    return value


def finite_number(value: object, name: str, minimum: float = 0.0) -> float:
    """Returns `value` as a float if it is a finite number of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}.")
    return float(value)


def one_of(value: object, allowed: Collection[Any], name: str) -> Any:
    """Returns `value` if it is one of `allowed`, else raises a ValueError listing them."""
    if value not in allowed:
        raise ValueError(f"Unknown {name} {value!r}: choose one of {', '.join(map(str, allowed))}.")
    return value


def of_type(value: object, kind: type | tuple[type, ...], name: str) -> Any:
    """Returns `value` if it is an instance of `kind`, else raises a TypeError naming both."""
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{name} must be a {names}, got {type(value).__name__} {value!r}.")
    return value


def json_object(text: object, what: str, example: str) -> dict[str, Any]:
    """Parses `text` as a JSON object; errors name `what`, what is wrong, and `example`."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} is empty or not text ({text!r}). Set it to JSON like {example}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} is not valid JSON ({error}); write it like {example}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object like {example}, got {type(value).__name__}")
    return value
