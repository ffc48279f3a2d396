"""Markdown parsing shared by the link checks (`links`), the translations (`l10n`) and the
glossary checks (`glossary`).

It holds fenced code blocks (`fenced`), inline code spans (`code_spans`, `prose`), link and image
targets (`link_targets`), the blocks a markdown cell splits into (`split_blocks`, `kind`) and the
structure a translation must keep (`structure`, `table_shape`, `html_tags`).
"""

from __future__ import annotations

import re
from collections import Counter

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_LINK_RE = re.compile(r"\]\(\s*(<[^>\n]*>|(?:[^\s()]|\([^\s()]*\))+)")
REFERENCE_RE = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*<?([^\s>]+)>?", re.MULTILINE)
AUTOLINK_RE = re.compile(r"<((?:https?|mailto|ftp):[^\s>]+)>")
HTML_LINK_RE = re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
BARE_URL_RE = re.compile(r"https?://[^\s<>()\[\]`\"']+")
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:\s|$)")
LIST_ITEM_RE = re.compile(r"^\s*(?:[*+-]|\d{1,9}[.)])\s+\S")
HTML_TAG_RE = re.compile(r"<\s*(/?[A-Za-z][\w:-]*)[^>]*>")


# ----------------------------------------------------------------------------- code


def fenced(lines: list[str]) -> list[bool]:
    """Marks the lines that belong to fenced code blocks (the fence lines included).

    Args:
        lines: Markdown, one line each, without newlines.

    Returns:
        One flag per line: True inside a fenced code block.
    """
    flags = []
    fence = ""
    for line in lines:
        if fence:
            flags.append(True)
            closing = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if set(closing) == {fence[0]} and len(closing) >= len(fence) and indent <= 3:
                fence = ""
            continue
        match = FENCE_RE.match(line)
        # A backtick fence's info string holds no backtick: "```x```" is inline code.
        opens = bool(match) and not (match.group(1)[0] == "`" and "`" in line[match.end() :])
        if opens:
            fence = match.group(1)
        flags.append(opens)
    return flags


def _code_span_ranges(text: str) -> list[tuple[int, int]]:
    """Returns (start, end) of each inline code span, backticks included (CommonMark rules)."""
    ranges = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char != "`":
            index += 1
            continue
        run = len(text[index:]) - len(text[index:].lstrip("`"))
        closing = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(text, index + run)
        if closing:
            ranges.append((index, closing.end()))
            index = closing.end()
        else:
            index += run
    return ranges


def _without_fences(markdown: str) -> str:
    """Blanks the lines of fenced code blocks, keeping the line structure."""
    lines = markdown.split("\n")
    return "\n".join(
        "" if inside else line for line, inside in zip(lines, fenced(lines), strict=True)
    )


def code_spans(markdown: str) -> list[str]:
    """Returns the inline code spans of `markdown`, backticks included, in order.

    Fenced code blocks are not inline code and are left out.
    """
    text = _without_fences(markdown)
    return [text[start:end] for start, end in _code_span_ranges(text)]


def prose(markdown: str) -> str:
    """Returns `markdown` with fenced code blocks and code spans blanked out (lengths kept)."""
    text = _without_fences(markdown)
    for start, end in _code_span_ranges(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


# ----------------------------------------------------------------------------- links


def link_targets(markdown: str) -> list[str]:
    """Returns every link and image target in `markdown` outside code, in order of kind.

    Covers inline links and images (`[text](target)`, `![alt](target)`), reference definitions
    (`[id]: target`), autolinks (`<https://...>`), HTML `href`/`src` attributes and bare URLs.
    """
    text = prose(markdown)
    targets = []
    for pattern in (INLINE_LINK_RE, REFERENCE_RE, AUTOLINK_RE, HTML_LINK_RE):
        for match in pattern.finditer(text):
            targets.append(match.group(1).strip("<>"))
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    targets.extend(url.rstrip(".,;:!?") for url in BARE_URL_RE.findall(text))
    return targets


# ----------------------------------------------------------------------------- blocks


def split_blocks(markdown: str) -> list[tuple[bool, str]]:
    """Splits markdown at blank lines, keeping fenced code blocks whole.

    Args:
        markdown: The source of a markdown cell.

    Returns:
        `(is_block, text)` pairs, blocks alternating with runs of blank lines; joining the texts
        with newlines gives `markdown` back exactly.
    """
    lines = markdown.split("\n")
    groups: list[tuple[bool, list[str]]] = []
    for line, inside_fence in zip(lines, fenced(lines), strict=True):
        is_block = inside_fence or bool(line.strip())
        if groups and groups[-1][0] == is_block:
            groups[-1][1].append(line)
        else:
            groups.append((is_block, [line]))
    return [(is_block, "\n".join(group)) for is_block, group in groups]


def kind(block: str) -> str:
    """Returns "fence", "table" or "text"."""
    lines = block.split("\n")
    if all(fenced(lines)):
        return "fence"
    if all(line.lstrip().startswith("|") for line in lines):
        return "table"
    return "text"


# ----------------------------------------------------------------------------- structure


def table_shape(block: str) -> list[int]:
    """Cells per row of a table: unescaped '|' outside code spans, per line."""
    text = prose(block)
    return [len(re.findall(r"(?<!\\)\|", line)) for line in text.split("\n") if line.strip()]


def structure(block: str) -> dict[str, object]:
    """The markdown structure a translation must keep.

    Args:
        block: One block of markdown (`split_blocks`).

    Returns:
        Its indentation, heading levels, list items and blank lines; for a table, its cells per
        row; for a fenced code block, its fence lines.
    """
    lines = block.split("\n")
    text = prose(block).split("\n")
    shape: dict[str, object] = {
        "indentation": len(lines[0]) - len(lines[0].lstrip()),
        "headings": [m.group(1) for line in text if (m := HEADING_RE.match(line))],
        "list items": sum(bool(LIST_ITEM_RE.match(line)) for line in text),
        "blank lines": sum(not line.strip() for line in lines),
    }
    if kind(block) == "table":
        shape["table cells per row"] = table_shape(block)
    if kind(block) == "fence":
        shape["fence lines"] = (lines[0].strip(), lines[-1].strip())
    return shape


def html_tags(text: str) -> Counter:
    """Raw HTML tags (`<script>`, `<img ...>`) outside code spans and fences, by name."""
    prose_only = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.DOTALL)
    return Counter(tag.lower() for tag in HTML_TAG_RE.findall(prose_only))


if __name__ == "__main__":
    raise SystemExit("tools.markdown has no command line: the other tools import it.")
