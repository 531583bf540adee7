"""A text-level check over every page of the example site, read as a person reads it: the
visible text (scripts and styles stripped, HTML parsed, no browser) must hold no scientific
notation, no ``None``/``nan``, no raw field names, no byte size without a unit or in decimal
units, no "1x faster", "-0%" or "1 cases", and no two identical bullets in one answer (the
rules of ``docs/writing.md``)."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

# text inside these is code a reader may copy (commands, parameter names): raw names are fine
CODE_TAGS = {"code", "pre", "kbd", "samp"}
# a stored error or skip message is shown verbatim, as the workload wrote it
VERBATIM_CLASSES = {"error", "reason"}
HIDDEN_TAGS = {"script", "style", "template"}
VOID_TAGS = {"br", "hr", "img", "input", "meta", "link", "wbr", "source", "col", "area"}
BREAKS = {
    "p",
    "li",
    "tr",
    "td",
    "th",
    "h1",
    "h2",
    "h3",
    "h4",
    "div",
    "dt",
    "dd",
    "summary",
    "figcaption",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "table",
    "ul",
    "ol",
}

RULES = {
    "scientific notation": re.compile(r"\b\d+(?:\.\d+)?[eE][+-]?\d+\b"),
    "None or nan": re.compile(r"\b(?:None|nan|NaN)\b"),
    # a name followed by "=" is a case's parameter as typed (image_size=224), not prose
    "raw field name": re.compile(r"\b(?:[a-z]+(?:_[a-z0-9]+)+|[a-z]+\.[a-z]+_[a-z_]+)\b(?!=)"),
    "bare SI prefix": re.compile(r"\b\d+(?:\.\d+)? ?[kMGTP](?![A-Za-z/])"),
    "decimal byte unit": re.compile(r"\b\d+(?:\.\d+)? ?[kMGTP]B\b(?!/s)"),
    "negative zero": re.compile(r"(?<![\w.])-0(?:\.0+)?(?:%|×)"),
    "no-change speedup": re.compile(r"(?<![\d.])1(?:\.0+)?[x×] (?:faster|slower)"),
    "slower called faster": re.compile(r"(?<![\d.])0\.\d+[x×] faster"),
    "singular count in plural": re.compile(
        r"(?<![\d.,])1 (?:threads|cases|rows|result rows|"
        r"samples|devices|runs|hosts|workloads|calls)\b"
    ),
}
RUN_ID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-z]+\b")  # a run's id is a name, not a number
# the visible words that are names a reader types, not field names leaked from the store
ALLOWED_NAMES = {"channels_last", "inference_mode", "fully_shard", "nvidia_uvm"}


ANSWER_CLASSES = {"answer", "explanation"}  # a finding's text: its bullets must differ


class VisibleText(HTMLParser):
    """The visible text of a page (code spans apart) and the bullets of each answer."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.answers: list[bool] = []  # per open element: inside a finding's answer
        self.verbatim: list[bool] = []  # per open element: inside a stored message
        self.text: list[str] = []
        self.lists: list[list[str]] = []  # the items of every <ul>/<ol>, innermost first
        self.open_lists: list[list[str]] = []
        self.item: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in VOID_TAGS:
            self.stack.append(tag)
            classes = set((dict(attrs).get("class") or "").split())
            self.answers.append(bool(classes & ANSWER_CLASSES) or any(self.answers[-1:]))
            self.verbatim.append(bool(classes & VERBATIM_CLASSES) or any(self.verbatim[-1:]))
        if tag in BREAKS:
            self.text.append("\n")
        if tag in ("ul", "ol"):
            self.open_lists.append([])
        elif tag == "li":
            self.item = []

    def handle_endtag(self, tag: str) -> None:
        in_answer = any(self.answers[-1:])
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                self.answers.pop()
                self.verbatim.pop()
            self.answers.pop()
            self.verbatim.pop()
        if tag == "li" and self.item is not None and self.open_lists:
            self.open_lists[-1].append(" ".join("".join(self.item).split()))
            self.item = None
        elif tag in ("ul", "ol") and self.open_lists:
            items = self.open_lists.pop()
            if in_answer:
                self.lists.append(items)

    def handle_data(self, data: str) -> None:
        if HIDDEN_TAGS & set(self.stack):
            return
        if self.item is not None:
            self.item.append(data)
        if not CODE_TAGS & set(self.stack) and not any(self.verbatim[-1:]):
            self.text.append(data)


def problems(page: Path) -> list[str]:
    """What a reader would trip over on ``page``, one line each."""
    parser = VisibleText()
    parser.feed(page.read_text(encoding="utf-8"))
    found = []
    for line in "".join(parser.text).splitlines():
        line = RUN_ID.sub("", line)
        for rule, pattern in RULES.items():
            for match in pattern.finditer(line):
                if rule == "raw field name" and match.group() in ALLOWED_NAMES:
                    continue
                found.append(f"{rule}: {match.group()!r} in {line.strip()[:160]!r}")
    for items in parser.lists:
        repeated = [text for text, count in Counter(items).items() if count > 1 and text]
        found += [f"identical bullets: {text[:160]!r}" for text in repeated]
    return found


def site_problems(folder: Path) -> dict[str, list[str]]:
    out = {}
    for page in sorted(folder.rglob("*.html")):
        found = problems(page)
        if found:
            out[str(page.relative_to(folder))] = found
    return out


def test_every_page_reads_as_prose(example_site):
    folder, _ = example_site
    found = site_problems(folder)
    report = [f"{page}: {line}" for page, lines in found.items() for line in lines[:5]]
    assert not found, f"{len(found)} pages:\n" + "\n".join(report[:80])


if __name__ == "__main__":  # `python tests/test_site_text.py SITE`: the report of a built site
    import sys

    for name, lines in site_problems(Path(sys.argv[1])).items():
        print(name, *lines, sep="\n  ")
