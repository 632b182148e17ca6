"""Every string that reaches an output is data: one neutraliser per output format, used by every writer.

* ``one_line`` - comments and shell-sourced files: no raw line break can end the comment or start a command;
* ``shell_word`` - a value a POSIX shell reads as one literal word when it sources the file;
* ``csv_cell`` - a CSV cell a spreadsheet shows as text, never runs as a formula (OWASP "CSV Injection");
  XLSX needs no prefix: its writer stores text as typed string cells (``t="inlineStr"``), never ``<f>``;
* ``xml_text`` - text without the characters XML 1.0 forbids (a parser rejects the whole file otherwise);
* ``terminal`` - text without control or escape sequences (a dump's node description cannot drive the tty);
* ``inline`` - a foreign value inside one line of a report: every control shown as ``\\xNN``, LF and TAB too;
* ``markdown_line`` - one Markdown paragraph line that cannot open a heading, list or fence.
"""

from __future__ import annotations

import re
import shlex
from functools import cache

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators some readers treat as line breaks.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# ANSI/VT escape sequences (CSI ... final byte, OSC ... BEL/ST, two-character ESC x), dropped whole.
_ESCAPE_SEQ = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]"
)
# Characters XML 1.0 allows (section 2.2 "Characters"); everything else is dropped. Compiled on first
# use: this class alone takes longer to compile than Python takes to start (benchmarks/startup.py).
XML_ILLEGAL = "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
# OWASP CSV Injection: cells beginning with these are formulas in Excel, LibreOffice and Google Sheets.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_AT_CELL = re.compile("\x00[=+\\-@\t\r']")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_MARKDOWN_BLOCK = re.compile(r"^\s*(?:#|>|[-+*]\s|\d+[.)]\s|```|~~~|={3,}|-{3,}|\|)")


def one_line(text: str) -> str:
    """``text`` with every control character and line separator turned into a space."""
    return _CONTROL.sub(" ", text)


def shell_word(value: str) -> str:
    """``value`` quoted so that ``. file`` in sh/bash assigns it literally (no expansion, no command)."""
    return shlex.quote(one_line(value))


def csv_cell(text: str) -> str:
    """A cell a spreadsheet cannot evaluate: a leading ``'`` before = + - @ TAB CR; numbers stay numbers. A
    text that starts with ``'`` gets one too, so the prefix is reversible: reading a cell back takes exactly
    one off (sot/build.py), where a catalogue name `'=x` was read back as `=x`."""
    if text[:1] == "'" or (text[:1] in FORMULA_START and not _NUMBER.fullmatch(text)):
        return "'" + text
    return text


def csv_needs_neutralising(cells: list[str]) -> bool:
    """Whether any of ``cells`` starts with a formula character or ``'`` (one C-speed scan)."""
    return _FORMULA_AT_CELL.search("\x00" + "\x00".join(cells)) is not None


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (controls other than TAB/LF/CR, lone surrogates)."""
    return _xml_illegal().sub("", text)


@cache
def _xml_illegal() -> re.Pattern[str]:
    return re.compile(XML_ILLEGAL)


def terminal(text: str) -> str:
    """``text`` safe to print: escape sequences removed, other controls shown as ``\\xNN`` (LF/TAB kept)."""
    text = _ESCAPE_SEQ.sub("", text)
    return _CONTROL.sub(lambda m: m.group() if m.group() in "\n\t" else f"\\x{ord(m.group()):02x}", text)


def inline(text: str) -> str:
    """``text`` kept on the line it is printed in: every control character (LF, CR and TAB too, ESC of an
    escape sequence) and line separator shown as ``\\xNN`` / ``\\uNNNN``. ``terminal`` keeps LF/TAB since it
    is applied to a whole report; a foreign value inside that report goes through this first, so a port
    description holding ``\\n… MATCHES THE PLAN`` cannot print a line of its own."""
    if _CONTROL.search(text) is None:
        return text  # the usual case: one scan, nothing built
    return _CONTROL.sub(
        lambda m: "\\" + (f"u{ord(m[0]):04x}" if m[0] > "\xff" else f"x{ord(m[0]):02x}"), text
    )


# CommonMark's inline syntax outside code spans: HTML and autolinks (<), links and images ([ ]), entities (&),
# emphasis (* _), strikethrough (~), GFM table cells (|), code spans (`) and the escape itself; any ASCII
# punctuation "may be backslash-escaped" (CommonMark 0.31, "Backslash escapes")
_MARKDOWN_INLINE = re.compile(r"[\\`*_\[\]<>&~|]")
# characters that reorder or hide text where it is read (the bidirectional marks, embeddings, overrides and
# isolates of Unicode's Bidi_Control property with the Arabic letter mark, zero-width and invisible joiners
# and separators, the soft hyphen, the BOM): shown as their code point
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def markdown_line(text: str, *, code_spans: bool = False) -> str:
    """One Markdown line of plain text: no line break, no leading block marker, and no inline markup (HTML, a
    link, an entity, emphasis), each escaped with ``\\``. With ``code_spans`` the line's own `code spans`
    stay spans (their text is literal in Markdown) when every backtick pairs as CommonMark pairs them: single
    backticks, an even number of them; otherwise they are escaped with the rest. A description holding
    ``<!--`` hid the rest of SUMMARY.md."""
    line = _INVISIBLE.sub(lambda m: f"U+{ord(m[0]):04X}", one_line(text).strip())
    if code_spans and "``" not in line and line.count("`") % 2 == 0:
        parts = line.split("`")
        line = "`".join(p if i % 2 else _MARKDOWN_INLINE.sub(r"\\\g<0>", p) for i, p in enumerate(parts))
    else:
        line = _MARKDOWN_INLINE.sub(r"\\\g<0>", line)
    return "\\" + line if _MARKDOWN_BLOCK.match(line) else line
