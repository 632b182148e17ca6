"""A small streaming SpreadsheetML (.xlsx) writer: just what the cabling workbook needs, fast at 315k rows.

openpyxl spends ~30 s on a 100k-GPU cabling workbook (a Python object and a style lookup per cell); this
writer builds each sheet's XML with list comprehensions and string joins, a column at a time, and
deflates it into the zip as soon as it is built (level 1: the zip step is then ~15% of the time).
Deflating on a background thread was tried and measured slower: each of the 3,600 sheets hands the GIL
back and forth, and the main thread ends up waiting.

What it writes (ECMA-376 Part 1, SpreadsheetML): several worksheets of inline strings and numbers, a
fixed style sheet (``Style``), frozen header rows, print titles and autofilters (as workbook defined
names ``_xlnm.Print_Titles`` / ``_xlnm._FilterDatabase``, as Excel writes them), column widths, landscape
fit-to-width page setup, printed gridlines, margins, header and footer text. The bytes are deterministic:
fixed zip timestamps and permissions, fixed part order, fixed document dates.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache
from types import TracebackType
from typing import IO, Any
from xml.sax.saxutils import escape, quoteattr

Cell = str | int | float | None

# Any constant works; 2000-01-01 is recognisably "not a real date" and inside the zip format's range.
FIXED_TIME = dt.datetime(2000, 1, 1, 0, 0, 0)
_ZIP_TIME = (2000, 1, 1, 0, 0, 0)
# Deflate level 1: a 100k-GPU workbook is ~200 MB of XML; level 1 packs it to ~24 MB in a quarter of the
# time level 6 takes, for ~2 MB more.
COMPRESS_LEVEL = 1
MAX_SHEET_NAME = 31  # Excel's limit
MAX_CELL_CHARS = 32767  # Excel's limit on the text of one cell
_SHEET_NAME_BAD = re.compile(r"[\[\]:*?/\\]")
# Characters XML 1.0 does not allow at all (a file holding one will not open), lone surrogates included.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_XML_ILLEGAL_BUT_NUL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# C0 controls XML 1.0 forbids, plus NUL (the bulk escaper's separator) and CR (escaped, not dropped).
_ASCII_CONTROLS = bytes(c for c in range(32) if c not in (9, 10))
_CR = {"\r": "&#13;"}  # a raw CR in XML text reads back as LF
_PRESERVE = ' xml:space="preserve"'
_SPACE = re.compile(r"\s")
_SAMPLE = 64

NS_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_CT_SHEET = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"


class Style(IntEnum):
    """Cell formats of the fixed style sheet (cellXfs indices)."""

    DEFAULT = 0
    TITLE = 1  # bold 13 pt
    BOLD = 2
    SECTION = 3  # bold 11 pt (the same look as BOLD today; kept apart so titles of sections can change)
    HEADER = 4  # bold, grey fill, thin border, vertically centred
    FILL_BLUE = 5  # pale fills: still legible printed in black and white
    FILL_GREEN = 6
    FILL_ORANGE = 7


_FONTS = (  # (bold, size)
    (False, 11),
    (True, 13),
    (True, 11),
)
_FILLS = ("D9D9D9", "DDEBF7", "E2EFDA", "FCE4D6")  # fillId 2.. (0 none and 1 gray125 are required)
# Style → (fontId, fillId, borderId, vertically centred)
_XFS: dict[Style, tuple[int, int, int, bool]] = {
    Style.DEFAULT: (0, 0, 0, False),
    Style.TITLE: (1, 0, 0, False),
    Style.BOLD: (2, 0, 0, False),
    Style.SECTION: (2, 0, 0, False),
    Style.HEADER: (2, 2, 1, True),
    Style.FILL_BLUE: (0, 3, 0, False),
    Style.FILL_GREEN: (0, 4, 0, False),
    Style.FILL_ORANGE: (0, 5, 0, False),
}


def _styles_xml() -> str:
    fonts = "".join(
        f'<font>{"<b/>" if bold else ""}<sz val="{size}"/><color theme="1"/><name val="Calibri"/>'
        f'<family val="2"/></font>'
        for bold, size in _FONTS
    )
    fills = (
        '<fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>'
        + "".join(
            f'<fill><patternFill patternType="solid"><fgColor rgb="FF{rgb}"/>'
            '<bgColor indexed="64"/></patternFill></fill>'
            for rgb in _FILLS
        )
    )
    thin = '<{0} style="thin"><color rgb="FF808080"/></{0}>'
    borders = (
        "<border><left/><right/><top/><bottom/><diagonal/></border>"
        "<border>"
        + "".join(thin.format(side) for side in ("left", "right", "top", "bottom"))
        + "<diagonal/></border>"
    )
    xfs = []
    for style in Style:
        font, fill, border, centred = _XFS[style]
        flags = (
            f' applyFont="{int(font > 0)}" applyFill="{int(fill > 0)}" applyBorder="{int(border > 0)}"'
            f' applyAlignment="{int(centred)}"'
        )
        body = '<alignment vertical="center"/>' if centred else ""
        xfs.append(
            f'<xf numFmtId="0" fontId="{font}" fillId="{fill}" borderId="{border}" xfId="0"{flags}'
            + (f">{body}</xf>" if body else "/>")
        )
    return (
        f'{_XML_DECL}<styleSheet xmlns="{NS_MAIN}">'
        f'<fonts count="{len(_FONTS)}">{fonts}</fonts>'
        f'<fills count="{2 + len(_FILLS)}">{fills}</fills>'
        f'<borders count="2">{borders}</borders>'
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
        f'<cellXfs count="{len(xfs)}">{"".join(xfs)}</cellXfs>'
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
        '<dxfs count="0"/><tableStyles count="0"/></styleSheet>'
    )


def column_letter(col: int) -> str:
    """1 → A, 26 → Z, 27 → AA."""
    if col < 1:
        raise ValueError(f"column {col}: columns start at 1")
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def sheet_name(wanted: str, taken: Iterable[str] = ()) -> str:
    """A valid, unused sheet name close to ``wanted``.

    Excel: 1-31 characters, none of ``[]:*?/\\``, not starting or ending with an apostrophe, unique
    ignoring case, and not ``History`` (reserved).
    """
    return _free_name(wanted, {t.casefold() for t in taken})


def _free_name(wanted: str, used: set[str]) -> str:
    """sheet_name against ``used`` (casefolded names), which it extends with the name it returns."""
    name = (
        _XML_ILLEGAL.sub("", _SHEET_NAME_BAD.sub("_", wanted)).strip("'")[:MAX_SHEET_NAME].strip("'")
        or "Sheet"
    )
    candidate, n = name, 1
    while candidate.casefold() in used or candidate.casefold() == "history":
        n += 1
        suffix = f" ({n})"
        candidate = name[: MAX_SHEET_NAME - len(suffix)].rstrip("'") + suffix
    used.add(candidate.casefold())
    return candidate


def _escape_one(text: str) -> str:
    return escape(_XML_ILLEGAL.sub("", text[:MAX_CELL_CHARS]), _CR)


def _clean_joined(joined: str, parts: int, *, keep_all: bool = False) -> str | None:
    """``joined`` (``parts`` values joined by NUL) with XML-illegal characters but the NULs dropped and
    ``&<>``/CR escaped; None if a value itself holds a NUL (which would break the split), or if
    ``keep_all`` and some character had to be dropped (a value might have become empty)."""
    if joined.count("\x00") != parts - 1:
        return None
    if joined.isascii():  # the common case, checked in O(1); then bytes.translate finds control bytes fast
        raw = joined.encode("ascii")
        illegal = len(raw) - len(raw.translate(None, _ASCII_CONTROLS)) != parts - 1  # controls besides NULs
    else:
        illegal = _XML_ILLEGAL_BUT_NUL.search(joined) is not None
    if illegal:
        if keep_all:
            return None
        joined = _XML_ILLEGAL_BUT_NUL.sub("", joined)
    if "&" in joined or "<" in joined or ">" in joined or "\r" in joined:
        joined = escape(joined, _CR)
    return joined


def escape_all(values: list[str]) -> list[str]:
    """XML-escape many strings at once (``&<>``, CR as a character reference, XML-illegal characters
    dropped, text cut at Excel's 32,767 characters a cell).

    The values are joined with NUL (illegal in XML, so no value may keep one), fixed with a few C-speed
    passes over the one string, and split again: ~20x faster than escaping 300k labels one by one.
    """
    if not values:
        return []
    if max(map(len, values)) <= MAX_CELL_CHARS and (clean := _clean_joined("\x00".join(values), len(values))):
        return clean.split("\x00")
    return [_escape_one(v) for v in values]


def _has_space(joined: str) -> bool:
    """Whether ``joined`` holds whitespace (ASCII text is checked by a few fast substring searches)."""
    if joined.isascii():
        return any(ch in joined for ch in " \t\n\r\x0b\x0c")
    return _SPACE.search(joined) is not None


def _number(v: int | float) -> str | None:
    """A number as SpreadsheetML writes it, or None for values it cannot hold (NaN, infinities)."""
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return None
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(int(v))


def _inner(value: Cell, style: int) -> str:
    """A ``<c>`` element after its ``r`` attribute, or "" when the cell is left out (empty, unstyled).

    Empty strings, None, NaN and infinities (which SpreadsheetML cannot hold) make empty cells.
    """
    s = f' s="{int(style)}"' if style else ""
    empty = f"{s}/>" if style else ""
    if value is None:
        return empty
    if isinstance(value, bool):
        return f'{s} t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int | float):
        text = _number(value)
        return f"{s}><v>{text}</v></c>" if text is not None else empty
    text = _XML_ILLEGAL.sub("", str(value)[:MAX_CELL_CHARS])
    if not text:  # as openpyxl and Excel do: an empty string is an empty cell
        return empty
    space = _PRESERVE if text != text.strip() else ""
    return f'{s} t="inlineStr"><is><t{space}>{escape(text, _CR)}</t></is></c>'


def _cell(ref: str, value: Cell, style: int) -> str:
    """One ``<c>`` element, or "" (the general path; tables go through the column-wise one)."""
    inner = _inner(value, style)
    return f'<c r="{ref}"{inner}' if inner else ""


def text_width(value: Cell) -> int:
    """Characters the value shows as (for column widths): 3 for 3.0, 0 for empty."""
    if value is None:
        return 0
    if isinstance(value, float):
        return len(f"{value:g}") if value == value else 0
    return len(str(value))


def _wrapped(pre: str, texts: list[str], post: str) -> list[str]:
    """``[pre + t + post for t in texts]`` by one join and one split (C speed); no text may hold a NUL."""
    return (pre + (post + "\x00" + pre).join(texts) + post).split("\x00")


def _column_inner(
    values: Sequence[Cell], style: int | Mapping[Any, int]
) -> tuple[list[str], bool, list[int]] | None:
    """Each cell of one column after its ``r`` attribute (``_inner``), whether any is left out (""), and
    each cell's text width; None for a column with no cells at all.

    Work is done a column at a time so that each step is a C-level pass (map, join, split), never Python
    per cell: repeated values (fabric, layer, medium, unit, length) are rendered once each and looked up;
    unique strings (labels, cable ids) are escaped and wrapped in bulk; unique ints likewise. Only mixed
    columns of unique values (none in the cabling workbook's big sheets) go cell by cell.
    """
    kinds = set(map(type, values))
    if kinds <= {type(None)}:
        return None
    by_value = style if isinstance(style, dict) else None
    base = 0 if by_value is not None else int(style)  # type: ignore[arg-type]
    # Memoise columns of one value type (so no 1 == 1.0 == True clashes among the keys; nor 0.0 == -0.0,
    # whose widths differ) that repeat; a sample decides cheaply whether it is worth it (both paths write
    # the same XML).
    sample = values[:_SAMPLE]
    if (
        len(kinds - {type(None)}) == 1
        and len(set(sample)) * 2 <= len(sample)
        and len(distinct := set(values)) * 2 <= len(values)
        and not (float in kinds and 0.0 in distinct)
    ):
        memo = {v: _inner(v, by_value.get(v, 0) if by_value is not None else base) for v in distinct}
        width = {v: text_width(v) for v in distinct}
        return list(map(memo.__getitem__, values)), "" in memo.values(), list(map(width.__getitem__, values))
    s = f' s="{int(base)}"' if base else ""
    if by_value is None and kinds <= {str}:
        texts: list[str] = list(values)  # type: ignore[arg-type]
        if (
            "" not in texts
            and not _has_space("".join(texts))
            and max(map(len, texts)) <= MAX_CELL_CHARS
            and (clean := _clean_joined("\x00".join(texts), len(texts), keep_all=True)) is not None
        ):
            pre, post = f'{s} t="inlineStr"><is><t>', "</t></is></c>"
            return (
                (pre + clean.replace("\x00", post + "\x00" + pre) + post).split("\x00"),
                False,
                list(map(len, texts)),
            )
    if by_value is None and kinds <= {int}:
        texts = list(map(str, values))
        return _wrapped(f"{s}><v>", texts, "</v></c>"), False, list(map(len, texts))
    inner = [_inner(v, by_value.get(v, 0) if by_value is not None else base) for v in values]
    return inner, "" in inner, list(map(text_width, values))


class Columns:
    """A table body rendered once, a column at a time, for one sheet or for many sheets that each show a
    slice of its rows (the cabling workbook's 3,600 rack sheets share one 315k-row body: rendering it
    whole and slicing costs a fraction of rendering 50k small columns)."""

    def __init__(
        self,
        columns: Sequence[Sequence[Cell]],
        column_styles: Mapping[int, int | Mapping[Any, int]] | None = None,
    ) -> None:
        self.n = len(columns[0]) if columns else 0
        self.width = len(columns)
        styles = column_styles or {}
        self._cols: list[tuple[str, list[str], bool, list[int]] | None] = []
        for i, values in enumerate(columns):
            if len(values) != self.n:
                raise ValueError(f"column {i + 1} has {len(values)} cells, not {self.n}")
            done = _column_inner(values, styles.get(i, 0)) if self.n else None
            self._cols.append(None if done is None else (column_letter(i + 1), *done))

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[Sequence[Cell]],
        width: int,
        column_styles: Mapping[int, int | Mapping[Any, int]] | None = None,
    ) -> Columns:
        if not rows:
            return cls([[] for _ in range(width)], column_styles)
        columns = list(zip(*rows, strict=True))
        if len(columns) != width:
            raise ValueError(f"rows have {len(columns)} cells, the header {width}")
        return cls(columns, column_styles)

    def widths(self, start: int, stop: int) -> list[int]:
        """Each column's widest text over rows ``start:stop``."""
        return [max(col[3][start:stop], default=0) if col else 0 for col in self._cols]

    def rows_xml(self, refs: _Refs, first_row: int, start: int, stop: int) -> list[str]:
        """``<row>`` elements for rows ``start:stop``, numbered from ``first_row``."""
        n = stop - start
        parts: list[Sequence[str]] = [refs.rows(first_row, n)]
        for col in self._cols:
            if col is None:
                continue
            letter, inner, gaps, _ = col
            cell_refs = refs.cells(letter, first_row, n)
            if gaps:
                parts.append(
                    [ref + x if x else "" for ref, x in zip(cell_refs, inner[start:stop], strict=True)]
                )
            else:
                parts += [cell_refs, inner[start:stop]]
        parts.append(["</row>"] * n)
        return list(map("".join, zip(*parts, strict=True)))


class _Refs:
    """``<row r="N">`` and ``<c r="XN"`` openings, made once per workbook: the same rows and columns recur on
    each of 3,600 rack sheets."""

    def __init__(self) -> None:
        self._rows: list[str] = []
        self._cells: dict[str, list[str]] = {}

    def rows(self, first: int, n: int) -> list[str]:
        if len(self._rows) < first + n:
            self._rows.extend(f'<row r="{r}">' for r in range(len(self._rows), first + n))
        return self._rows[first : first + n]

    def cells(self, letter: str, first: int, n: int) -> list[str]:
        refs = self._cells.setdefault(letter, [])
        if len(refs) < first + n:
            refs.extend(f'<c r="{letter}{r}"' for r in range(len(refs), first + n))
        return refs[first : first + n]


@lru_cache(maxsize=64)
def _row_xml(r: int, values: tuple[Cell, ...], styles: tuple[int, ...], first_col: int) -> str:
    """A row given cell by cell; cached, since each rack sheet repeats the same header row."""
    cells = "".join(
        _cell(f"{column_letter(c)}{r}", v, st)
        for c, (v, st) in enumerate(zip(values, styles, strict=True), first_col)
    )
    return f'<row r="{r}">{cells}</row>'


@dataclass
class PageSetup:
    """How a sheet prints. Margins are in inches (left, right, top, bottom, header, footer); header and
    footer are Excel header/footer codes (``&L`` left, ``&C`` centre, ``&R`` right, ``&A`` sheet name,
    ``&P`` page, ``&N`` pages) — use ``hf_text`` for literal text."""

    landscape: bool = True
    fit_to_width: bool = True  # one page wide, as many tall as needed
    gridlines: bool = False
    margins: tuple[float, float, float, float, float, float] = (0.75, 0.75, 1.0, 1.0, 0.5, 0.5)
    header: str = ""
    footer: str = ""


def hf_text(text: str) -> str:
    """Literal text for a header/footer code (``&`` starts a code there, so it is doubled)."""
    return text.replace("&", "&&")


@dataclass
class Sheet:
    """One worksheet, built in memory then rendered once (rows may be added in any order)."""

    name: str
    freeze_rows: int = 0  # rows kept in view when scrolling
    print_title_rows: int = 0  # rows 1..n repeat at the top of every printed page
    autofilter: tuple[int, int, int] | None = None  # (header row, last row, last column)
    widths: dict[int, float] = field(default_factory=dict)  # column (1-based) → width in characters
    page: PageSetup = field(default_factory=PageSetup)
    _blocks: list[tuple[int, list[str]]] = field(default_factory=list, init=False)  # (first row, row XMLs)
    _max_col: int = field(default=0, init=False)
    _refs: _Refs = field(default_factory=_Refs, repr=False)

    def row(
        self, r: int, values: Sequence[Cell], styles: int | Sequence[int] = 0, first_col: int = 1
    ) -> None:
        """Cells of row ``r`` from column ``first_col`` on; ``styles`` one for all or one per value."""
        per = (styles,) * len(values) if isinstance(styles, int) else tuple(styles)
        self._blocks.append((r, [_row_xml(r, tuple(values), per, first_col)]))
        self._max_col = max(self._max_col, first_col + len(values) - 1)

    def table(
        self,
        top: int,
        header: Sequence[str],
        body: Columns | Sequence[Sequence[Cell]],
        span: tuple[int, int] | None = None,
        header_style: int = Style.HEADER,
        column_styles: Mapping[int, int | Mapping[Any, int]] | None = None,
    ) -> tuple[int, list[int]]:
        """Header at row ``top``, then the rows ``span`` (default: all) of ``body`` below it.

        ``body`` is rows of cells or a Columns (which may be shared by many sheets); ``column_styles``
        (rows only; a Columns carries its own) maps a 0-based column to one style or to {value: style}.
        Returns the last row written and each column's widest text (header included).
        """
        if not isinstance(body, Columns):
            body = Columns.from_rows(body, len(header), column_styles)
        if body.width != len(header):
            raise ValueError(f"sheet {self.name}: {body.width} columns under a header of {len(header)}")
        start, stop = span if span is not None else (0, body.n)
        self.row(top, list(header), header_style)
        widths = [max(len(h), w) for h, w in zip(header, body.widths(start, stop), strict=True)]
        if stop <= start:
            return top, widths
        self._blocks.append((top + 1, body.rows_xml(self._refs, top + 1, start, stop)))
        self._max_col = max(self._max_col, body.width)
        return top + stop - start, widths

    def _render(self, tab_selected: bool) -> bytes:
        blocks = sorted(self._blocks, key=lambda b: b[0])
        last_row = 1
        previous_end = 0
        for first, xml in blocks:
            if first <= previous_end:
                raise ValueError(f"sheet {self.name}: row {first} written twice")
            previous_end = first + len(xml) - 1
            last_row = previous_end
        last_col = column_letter(max(self._max_col, 1))
        head = [f'{_XML_DECL}<worksheet xmlns="{NS_MAIN}" xmlns:r="{NS_REL}">']
        if self.page.fit_to_width:
            head.append('<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>')
        head.append(f'<dimension ref="A1:{last_col}{last_row}"/>')
        selected = ' tabSelected="1"' if tab_selected else ""
        if self.freeze_rows:
            top = f"A{self.freeze_rows + 1}"
            head.append(
                f'<sheetViews><sheetView{selected} workbookViewId="0">'
                f'<pane ySplit="{self.freeze_rows}" topLeftCell="{top}" '
                'activePane="bottomLeft" state="frozen"/>'
                f'<selection pane="bottomLeft" activeCell="{top}" sqref="{top}"/></sheetView></sheetViews>'
            )
        else:
            head.append(f'<sheetViews><sheetView{selected} workbookViewId="0"/></sheetViews>')
        head.append('<sheetFormatPr defaultRowHeight="15"/>')
        if self.widths:
            head.append(
                "<cols>"
                + "".join(
                    f'<col min="{c}" max="{c}" width="{_num(w)}" customWidth="1"/>'
                    for c, w in sorted(self.widths.items())
                )
                + "</cols>"
            )
        head.append("<sheetData>")
        tail = ["</sheetData>"]
        if self.autofilter:
            tail.append(f'<autoFilter ref="{self._filter_ref()}"/>')
        if self.page.gridlines:
            tail.append('<printOptions gridLines="1"/>')
        left, right, top_m, bottom, header_m, footer_m = self.page.margins
        tail.append(
            f'<pageMargins left="{_num(left)}" right="{_num(right)}" top="{_num(top_m)}" '
            f'bottom="{_num(bottom)}" header="{_num(header_m)}" footer="{_num(footer_m)}"/>'
        )
        setup = [f'orientation="{"landscape" if self.page.landscape else "portrait"}"']
        if self.page.fit_to_width:
            setup += ['fitToWidth="1"', 'fitToHeight="0"']
        tail.append(f"<pageSetup {' '.join(setup)}/>")
        if self.page.header or self.page.footer:
            tail.append(
                "<headerFooter>"
                + (f"<oddHeader>{_escape_one(self.page.header)}</oddHeader>" if self.page.header else "")
                + (f"<oddFooter>{_escape_one(self.page.footer)}</oddFooter>" if self.page.footer else "")
                + "</headerFooter>"
            )
        tail.append("</worksheet>")
        body = [row for _, xml in blocks for row in xml]
        return "".join([*head, *body, *tail]).encode("utf-8")

    def _filter_ref(self) -> str:
        assert self.autofilter is not None
        header_row, last_row, last_col = self.autofilter
        return f"A{header_row}:{column_letter(last_col)}{max(last_row, header_row)}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _quoted_sheet(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


class StableZip(zipfile.ZipFile):
    """A ZipFile whose entries all carry one fixed timestamp and fixed permissions (deterministic bytes)."""

    def writestr(
        self,
        zinfo_or_arcname: Any,
        data: Any,
        compress_type: int | None = None,
        compresslevel: int | None = None,
    ) -> None:
        if not isinstance(zinfo_or_arcname, zipfile.ZipInfo):
            info = zipfile.ZipInfo(str(zinfo_or_arcname), date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zinfo_or_arcname = info
        else:
            zinfo_or_arcname.date_time = _ZIP_TIME
        # A ZipInfo made here does not inherit the archive's level (ZipFile.writestr sets it only on the
        # ZipInfo it makes itself), so pass it on.
        level = self.compresslevel if compresslevel is None else compresslevel
        super().writestr(zinfo_or_arcname, data, compress_type=compress_type, compresslevel=level)

    def write(
        self,
        filename: Any,
        arcname: Any = None,
        compress_type: int | None = None,
        compresslevel: int | None = None,
    ) -> None:
        # openpyxl streams each worksheet through a temporary file; ZipFile.write would stamp its mtime.
        with open(filename, "rb") as fh:
            self.writestr(str(arcname if arcname is not None else filename), fh.read())


class Workbook:
    """Streams sheets into an .xlsx as they are built; ``close`` (or leaving the ``with``) finishes it.

    The sheet names are given up front (made valid and unique, see ``sheet_name``) so the package parts
    that list them go first, as Office writes them; then each sheet, in that order; the workbook part,
    which carries each sheet's print titles and filter range, last.
    """

    def __init__(
        self, out: IO[bytes], sheet_names: Sequence[str], title: str = "", creator: str = ""
    ) -> None:
        if not sheet_names:
            raise ValueError("a workbook needs at least one sheet")
        used: set[str] = set()
        self.sheet_names: tuple[str, ...] = tuple(_free_name(wanted, used) for wanted in sheet_names)
        self._zip = StableZip(out, "w", zipfile.ZIP_DEFLATED, allowZip64=True, compresslevel=COMPRESS_LEVEL)
        self._defined: list[str] = []
        self._added = 0
        self._closed = False
        self._refs = _Refs()
        for part, text in _package_parts(self.sheet_names, title, creator):
            self._zip.writestr(part, text.encode("utf-8"))

    def __enter__(self) -> Workbook:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        elif not self._closed:  # leave the (unusable) archive closed; the caller drops it
            self._closed = True
            self._zip.close()

    def sheet(self, **options: Any) -> Sheet:
        """The next sheet to fill, under its name from ``sheet_names``."""
        if self._added >= len(self.sheet_names):
            raise ValueError(f"all {len(self.sheet_names)} sheets are written")
        return Sheet(self.sheet_names[self._added], _refs=self._refs, **options)

    def add(self, sheet: Sheet) -> None:
        """Write ``sheet`` (the one ``sheet()`` handed out last)."""
        index = self._added
        if index >= len(self.sheet_names) or sheet.name != self.sheet_names[index]:
            raise ValueError(
                f"sheet {sheet.name!r} is not the next one ({self.sheet_names[index : index + 1]})"
            )
        quoted = _quoted_sheet(sheet.name)
        if sheet.autofilter:
            header_row, last_row, last_col = sheet.autofilter
            ref = f"{quoted}!$A${header_row}:${column_letter(last_col)}${max(last_row, header_row)}"
            self._defined.append(
                f'<definedName name="_xlnm._FilterDatabase" localSheetId="{index}" hidden="1">'
                f"{escape(ref)}</definedName>"
            )
        if sheet.print_title_rows:
            self._defined.append(
                f'<definedName name="_xlnm.Print_Titles" localSheetId="{index}">'
                f"{escape(f'{quoted}!$1:${sheet.print_title_rows}')}</definedName>"
            )
        self._zip.writestr(f"xl/worksheets/sheet{index + 1}.xml", sheet._render(tab_selected=index == 0))
        self._added += 1

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._added != len(self.sheet_names):
            self._zip.close()
            raise ValueError(
                f"{len(self.sheet_names) - self._added} of the workbook's sheets were never written"
            )
        sheets = "".join(
            f'<sheet name={quoteattr(name)} sheetId="{i}" r:id="rId{i}"/>'
            for i, name in enumerate(self.sheet_names, 1)
        )
        defined = f"<definedNames>{''.join(self._defined)}</definedNames>" if self._defined else ""
        workbook = (
            f'{_XML_DECL}<workbook xmlns="{NS_MAIN}" xmlns:r="{NS_REL}"><workbookPr/>'
            '<bookViews><workbookView activeTab="0"/></bookViews>'
            f'<sheets>{sheets}</sheets>{defined}<calcPr calcId="124519" fullCalcOnLoad="1"/></workbook>'
        )
        self._zip.writestr("xl/workbook.xml", workbook.encode("utf-8"))
        self._zip.close()


def _package_parts(names: Sequence[str], title: str, creator: str) -> list[tuple[str, str]]:
    """Every part but the sheets and the workbook, in the order Office writes them."""
    n = len(names)
    overrides = [
        ("/xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"),
        *((f"/xl/worksheets/sheet{i}.xml", _CT_SHEET) for i in range(1, n + 1)),
        ("/xl/styles.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"),
        ("/docProps/core.xml", "application/vnd.openxmlformats-package.core-properties+xml"),
        ("/docProps/app.xml", "application/vnd.openxmlformats-officedocument.extended-properties+xml"),
    ]
    types = (
        f'{_XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        + "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in overrides)
        + "</Types>"
    )
    root_rels = (
        f'{_XML_DECL}<Relationships xmlns="{NS_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{NS_REL}/officeDocument" Target="xl/workbook.xml"/>'
        '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/'
        'metadata/core-properties" Target="docProps/core.xml"/>'
        f'<Relationship Id="rId3" Type="{NS_REL}/extended-properties" Target="docProps/app.xml"/>'
        "</Relationships>"
    )
    when = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
    core = (
        f"{_XML_DECL}<cp:coreProperties "
        'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        + (f"<dc:title>{_escape_one(title)}</dc:title>" if title else "")
        + (f"<dc:creator>{_escape_one(creator)}</dc:creator>" if creator else "")
        + f'<dcterms:created xsi:type="dcterms:W3CDTF">{when}</dcterms:created>'
        f'<dcterms:modified xsi:type="dcterms:W3CDTF">{when}</dcterms:modified></cp:coreProperties>'
    )
    app = (
        f"{_XML_DECL}<Properties "
        'xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
        f"<Application>{_escape_one(creator or 'xlsx_writer')}</Application>"
        "<DocSecurity>0</DocSecurity><ScaleCrop>false</ScaleCrop></Properties>"
    )
    rels = "".join(
        f'<Relationship Id="rId{i}" Type="{NS_REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, n + 1)
    )
    rels += f'<Relationship Id="rId{n + 1}" Type="{NS_REL}/styles" Target="styles.xml"/>'
    return [
        ("[Content_Types].xml", types),
        ("_rels/.rels", root_rels),
        ("docProps/app.xml", app),
        ("docProps/core.xml", core),
        (
            "xl/_rels/workbook.xml.rels",
            f'{_XML_DECL}<Relationships xmlns="{NS_PKG_REL}">{rels}</Relationships>',
        ),
        ("xl/styles.xml", _styles_xml()),
    ]
