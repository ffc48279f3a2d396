"""Markdown read with markdown-it-py (CommonMark with GFM tables), for the link checks (`links`),
the translations (`translation`) and the glossary checks (`glossary`).

`PARSER` gives the token stream; `read` collects what the tools compare in one text: its code spans
(as written), its link and image targets, its raw HTML tags and its prose. Raw HTML is read with
the standard library's `html.parser`; bare URLs (GFM autolinks, which Jupyter renders and
CommonMark leaves as text) are found in the prose.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.token import Token

BARE_URL_RE = re.compile(r"https?://[^\s<>()\[\]`\"']+")


class _Parser(MarkdownIt):
    """CommonMark with tables that keeps every link target as written."""

    def validateLink(self, url: str) -> bool:
        """Keeps every target, even one a renderer would drop (`javascript:`): all are compared."""
        return True

    def normalizeLink(self, url: str) -> str:
        """Keeps targets as written (not percent-encoded)."""
        return url


def _code_span(state: StateInline, silent: bool) -> bool:
    """markdown-it-py's code span rule, recording each span's source in `meta["source"]`."""
    start, count = state.pos, len(state.tokens)
    found = backtick(state, silent)
    if found and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        state.tokens[-1].meta["source"] = state.src[start : state.pos]
    return found


PARSER = _Parser("commonmark").enable("table")
PARSER.inline.ruler.at("backticks", _code_span)


@dataclass
class Reading:
    """What one markdown text holds outside code.

    Attributes:
        code_spans: Its inline code spans, backticks included, as written, in order.
        targets: Its link, image, autolink, HTML `href`/`src` (quoted) and bare URL targets in
            order, then the targets of its reference definitions.
        tags: Its raw HTML tags by name (`img`, `/script`).
        prose: Its text as read: without code, markup or link targets; blocks and lines on
            lines of their own.
    """

    code_spans: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    tags: Counter = field(default_factory=Counter)
    prose: str = ""

    def add_text(self, text: str, *, urls: bool = True) -> None:
        """Adds prose, and its bare URLs (trailing punctuation left out) to the targets."""
        self.prose += text
        if urls:
            self.targets += [url.rstrip(".,;:!?") for url in BARE_URL_RE.findall(text)]


class _HTMLReader(HTMLParser):
    """Adds the tags, quoted `href`/`src` values and text of raw HTML to a `Reading`."""

    def __init__(self, reading: Reading) -> None:
        super().__init__()
        self.reading = reading

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Counts the tag; a quoted `href` or `src` is a target."""
        self.reading.tags[tag] += 1
        raw = self.get_starttag_text() or ""
        for name, value in attrs:
            quoted = re.search(rf"{name}\s*=\s*[\"']", raw, re.IGNORECASE)
            if name in ("href", "src") and value and quoted:
                self.reading.targets.append(value)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Counts `<br/>` as `br`, like `<br>`."""
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        """Counts `</tag>` as `/tag`."""
        self.reading.tags[f"/{tag}"] += 1

    def handle_data(self, data: str) -> None:
        """The text between tags is prose."""
        self.reading.add_text(data)


def _read_tokens(tokens: list[Token], reading: Reading) -> None:
    """Adds what `tokens` (and their children) hold to `reading`."""
    in_autolink = False
    for token in tokens:
        if token.type == "code_inline":
            reading.code_spans.append(token.meta.get("source", token.markup + token.content))
            reading.add_text(" ")
        elif token.type in ("link_open", "image"):
            reading.targets.append(str(token.attrs["href" if token.type == "link_open" else "src"]))
            in_autolink = token.markup == "autolink"
        elif token.type == "link_close":
            in_autolink = False
        elif token.type == "text":
            reading.add_text(token.content, urls=not in_autolink)
        elif token.type in ("softbreak", "hardbreak"):
            reading.add_text("\n")
        elif token.type in ("html_inline", "html_block"):
            html = _HTMLReader(reading)
            html.feed(token.content)
            html.close()
        if token.children:
            _read_tokens(token.children, reading)
        if token.block and token.nesting == 0 and token.type not in ("fence", "code_block"):
            reading.add_text("\n")


def read(markdown: str) -> Reading:
    """Reads one markdown text: a notebook cell, one of its blocks, or a document.

    A block of a cell is read without the indentation common to its lines (that of the list item
    it continues), so it reads the same alone as in its cell.
    """
    env: dict = {}
    reading = Reading()
    _read_tokens(PARSER.parse(textwrap.dedent(markdown), env), reading)
    reading.targets += [reference["href"] for reference in env.get("references", {}).values()]
    return reading


def code_spans(markdown: str) -> list[str]:
    """Returns the inline code spans of `markdown` (not fenced or indented code), as written."""
    return read(markdown).code_spans


def link_targets(markdown: str) -> list[str]:
    """Returns every link and image target in `markdown` outside code (`Reading.targets`)."""
    return read(markdown).targets


if __name__ == "__main__":
    raise SystemExit("tools.markdown has no command line: the other tools import it.")
