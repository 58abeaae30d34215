"""Read a rendered report back as a browser would see its markup: elements, ids, links, text per
section. The report tests assert on this, not on raw substrings alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)
    children: list[Element] = field(default_factory=list)

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def iter(self) -> list[Element]:
        out = [self]
        for c in self.children:
            out += c.iter()
        return out

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Element]:
        return [e for e in self.iter() if (tag is None or e.tag == tag)
                and all(e.attrs.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())]

    def has_class(self, name: str) -> bool:
        return name in self.attrs.get("class", "").split()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.stack = [self.root]
        self.starts: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.starts.append((tag, a))
        el = Element(tag, a)
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.starts.append((tag, a))
        self.stack[-1].children.append(Element(tag, a))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        for el in self.stack:
            el.text.append(data)


@dataclass
class Page:
    html: str
    root: Element
    starts: list[tuple[str, dict[str, str]]]

    @property
    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.starts if "id" in a}

    def by_id(self, ident: str) -> Element:
        for e in self.root.iter():
            if e.attrs.get("id") == ident:
                return e
        raise KeyError(ident)

    def hrefs(self) -> list[str]:
        return [a["href"] for _, a in self.starts if "href" in a]

    def section_text(self, ident: str) -> str:
        return " ".join(self.by_id(ident).all_text.split())


def parse(html: str) -> Page:
    b = _Builder()
    b.feed(html)
    b.close()
    return Page(html, b.root, b.starts)
