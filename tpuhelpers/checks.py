"""Parameter checks, one per kind of value: messages name the value, what it was, what is valid."""

import json
import math
import numbers
import re
from collections.abc import Collection
from typing import Any

NOTE_SECONDS = 30.0  # a wait (a TPU's answer) that lasts longer says what it waits for, this often


def integer(
    value: object,
    name: str,
    minimum: int | None = 1,
    maximum: int | None = None,
    hint: str = "",
    text: bool = False,
) -> int:
    """`value` as an int in minimum..maximum (no bool or float; with `text`, ASCII digits too)."""
    if text and isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip()):
        value = int(value.strip())
    wrong_type = isinstance(value, bool) or not isinstance(value, numbers.Integral)
    if wrong_type or (minimum is not None and value < minimum):
        kind = {1: "a positive integer", 0: "a non-negative integer"}.get(minimum)
        kind = kind or ("an integer" + (f" of at least {minimum}" if minimum is not None else ""))
        kind += f" and at most {maximum}" if maximum is not None else ""
        message = f"{name} must be {kind}, got {value!r}."
    elif maximum is not None and value > maximum:
        message = f"{name} must be at most {maximum}, got {value!r}."
    else:
        return int(value)
    raise ValueError(f"{message} {hint}".strip())


def number(
    value: object, name: str, minimum: float | None = 0.0, maximum: float | None = None
) -> float:
    """Returns `value` as a float if it is a finite real number (numpy's too) in the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value!r}.")
    return float(value)


def address(value: object, name: str) -> str:
    """Returns `host:port` (`localhost` as 127.0.0.1: one name a port); port: ASCII 1-65535."""
    host, _, port = str(value).strip().rpartition(":")
    host_ok = re.fullmatch(r"[^\s:\[\]/]+|\[[0-9a-fA-F:]+\]", host)
    port_ok = re.fullmatch(r"[0-9]{1,5}", port) and 0 < int(port) < 65536
    if not isinstance(value, str) or not host_ok or not port_ok:
        example = "e.g. 127.0.0.1:2222; port 1-65535"
        raise ValueError(f"{name} must be host:port ({example}), got {value!r}.")
    return f"{'127.0.0.1' if host.lower() == 'localhost' else host}:{int(port)}"


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


def for_hardware(value: Any, name: str, kind: str, *, accelerator: Any, cpu: Any) -> Any:
    """`value` if the reader set it, else `cpu` on a CPU `kind`, else `accelerator`; prints why."""
    kind = one_of(str(kind).upper(), ("TPU", "GPU", "CPU"), "hardware kind")
    default = cpu if kind == "CPU" else accelerator
    why = f"the default on a {kind} ({accelerator} on a TPU or GPU, {cpu} on a CPU)"
    why = why if value is None else f"set in the parameters ({why})"
    print(f"{name} = {default if value is None else value!r}: {why}")
    return default if value is None else value


def divides(total: int, name: str, parts: int, what: str) -> int:
    """`total` if `parts` divides it, else a ValueError naming `what` and values that would do."""
    if total % parts:
        low, high = total // parts * parts, (total // parts + 1) * parts
        use = f"use a multiple of {parts}, e.g. " + (f"{low} or {high}." if low else f"{high}.")
        raise ValueError(f"{name}={total} does not divide over {what}: {use}")
    return total
