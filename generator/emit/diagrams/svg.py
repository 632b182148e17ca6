"""A small SVG writer: elements appended in drawing order, numbers rounded, styles in one <style> block.

Writing SVG by hand (rather than through matplotlib) keeps the bytes deterministic and the files small:
no embedded fonts, no path-encoded glyphs, no ids derived from hashes.
"""

from __future__ import annotations

from xml.sax.saxutils import escape as _xml_escape

from generator.safetext import xml_text

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"


def num(x: float) -> str:
    """Coordinates with at most one decimal; ``12`` not ``12.0``."""
    r = round(float(x), 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def escape(text: str) -> str:
    """Element text: ``&<>`` escaped and the characters XML 1.0 forbids dropped (catalogue text is data)."""
    return _xml_escape(xml_text(text))


def _q(text: str) -> str:
    """A double-quoted attribute value (the common case, nothing to escape, is kept cheap)."""
    text = xml_text(text)
    if "&" in text or "<" in text or ">" in text or '"' in text:
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return f'"{text}"'


def _attrs(attrs: dict[str, object]) -> str:
    out = []
    for k, v in attrs.items():
        if v is None or v == "":
            continue
        key = k.rstrip("_").replace("_", "-")
        if isinstance(v, float | int) and not isinstance(v, bool):
            out.append(f'{key}="{num(v)}"')
        else:
            out.append(f"{key}={_q(str(v))}")
    return (" " + " ".join(out)) if out else ""


class Svg:
    def __init__(self, width: float, height: float, title: str, css: str) -> None:
        self.width = width
        self.height = height
        self.title = title
        self.css = css
        self.parts: list[str] = []

    def raw(self, text: str) -> None:
        self.parts.append(text)

    def open(self, tag: str = "g", **attrs: object) -> None:
        self.parts.append(f"<{tag}{_attrs(attrs)}>")

    def close(self, tag: str = "g") -> None:
        self.parts.append(f"</{tag}>")

    def el(self, tag: str, tip: str | None = None, **attrs: object) -> None:
        """An empty element, or one holding a <title> tooltip."""
        if tip:
            self.parts.append(f"<{tag}{_attrs(attrs)}><title>{escape(tip)}</title></{tag}>")
        else:
            self.parts.append(f"<{tag}{_attrs(attrs)}/>")

    def rect(
        self, x: float, y: float, w: float, h: float, cls: str, tip: str | None = None, **attrs: object
    ) -> None:
        self.el("rect", tip, x=x, y=y, width=w, height=h, class_=cls, **attrs)

    def line(
        self, x1: float, y1: float, x2: float, y2: float, cls: str, tip: str | None = None, **attrs: object
    ) -> None:
        self.el("line", tip, x1=x1, y1=y1, x2=x2, y2=y2, class_=cls, **attrs)

    def path(self, d: str, cls: str, tip: str | None = None, **attrs: object) -> None:
        self.el("path", tip, d=d, class_=cls, **attrs)

    def text(
        self, x: float, y: float, s: str, cls: str = "", anchor: str = "middle", **attrs: object
    ) -> None:
        a = _attrs(
            {"x": x, "y": y, "class_": cls, "text_anchor": None if anchor == "start" else anchor, **attrs}
        )
        self.parts.append(f"<text{a}>{escape(s)}</text>")

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(self.width)}" height="{num(self.height)}" '
            f'viewBox="0 0 {num(self.width)} {num(self.height)}" font-family={_q(FONT)}>'
        )
        return "\n".join(
            [
                '<?xml version="1.0" encoding="UTF-8"?>',
                head,
                f"<title>{escape(self.title)}</title>",
                f"<style>{self.css}</style>",
                f'<rect x="0" y="0" width="{num(self.width)}" height="{num(self.height)}" fill="#ffffff"/>',
                *self.parts,
                "</svg>",
                "",
            ]
        )


# Rails: Okabe-Ito-like colours that stay distinct for colour-blind readers, then further hues.
RAIL_COLOURS = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#f0e442",
    "#000000",
    "#8c564b",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def rail_colour(rail: int | None) -> str:
    return "#555555" if rail is None else RAIL_COLOURS[rail % len(RAIL_COLOURS)]
