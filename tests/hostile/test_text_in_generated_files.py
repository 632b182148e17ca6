"""Strings a user writes that reach generated files stay data in the format that reads them: a mount option
fstab cannot hold is refused (a carriage return added a line to /etc/fstab through ansible.posix.mount, a
form feed or `#` made every run report a change), a blueprint file name with a line break cannot add a line
to report/SUMMARY.md, and a catalogue's port names hold no space or quote (they reach cable labels, lnet.conf,
ibstat's argv and ibnetdiscover's quoted descriptions; generate ended in an internal error)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli
from pydantic import ValidationError
from ruamel.yaml import YAML

from blueprints.catalog.schema import MappedPort


def _example_with(tmp_path: Path, example: str, edit: Callable[[Any], None]) -> Path:
    """``example`` (an examples/ stem) with ``edit`` applied to its document, written as bp.yaml."""
    yaml = YAML()
    doc = yaml.load((EXAMPLES / f"{example}.yaml").read_text())
    edit(doc)
    out = tmp_path / "bp.yaml"
    with out.open("w") as fh:
        yaml.dump(doc, fh)
    return out


def _with_storage_options(tmp_path: Path, options: list[str]) -> Path:
    return _example_with(tmp_path, "superpod-h100-4su", lambda doc: doc["storage"][0].update(options=options))


@pytest.mark.parametrize("option", ["a=b\rc", "x\x0by", "noatime\x0c", "noatime#x", "a b", "a,b", "", "é"])
def test_a_mount_option_fstab_cannot_hold_is_refused(tmp_path: Path, option: str) -> None:
    code, out, _ = run_cli("validate", str(_with_storage_options(tmp_path, ["noatime", option])))
    assert code == 2 and "is not one fstab can hold" in out


@pytest.mark.parametrize(
    ("mount", "says"),
    [
        ("/", "the system lives there"),  # the generated fstab line replaced the root's own
        ("/tmp", "the system lives there"),  # made root-only (0755) by the mount point task
        ("/etc", "the system lives there"),
        ("/home/../../etc", "no `.` or `..` parts"),
        ("/home/", "no trailing `/`"),
        ("/lustre//scratch", "no `//`"),
    ],
)
def test_a_mount_point_the_system_lives_in_is_refused(tmp_path: Path, mount: str, says: str) -> None:
    bp = _example_with(tmp_path, "superpod-h100-4su", lambda doc: doc["storage"][0].update(mount=mount))
    code, out, _ = run_cli("validate", str(bp))
    assert code == 2 and says in out and "storage[0]" in out, out


def test_two_storages_on_one_mount_point_are_refused(tmp_path: Path) -> None:
    """One fstab line a mount point: ansible.posix.mount replaced the first storage's line with the second's."""

    def second_home(doc: Any) -> None:
        doc["storage"].append({**doc["storage"][0], "name": "scratch", "export": "/export/scratch"})

    bp = _example_with(tmp_path, "roce-rail-2tier", second_home)
    code, out, _ = run_cli("validate", str(bp))
    assert code == 2 and "storage `scratch` mounts on `/home`, as `home` does" in out, out
    assert f"{bp}:" in out and ":1:1:" not in out, out


def test_a_driver_branch_is_its_number(tmp_path: Path) -> None:
    """`550-server` passed the schema and ended SFT001 and SFT002 in an internal error."""
    bp = _example_with(
        tmp_path, "roce-rail-2tier", lambda doc: doc["software"].update(driver_branch="550-server")
    )
    code, out, _ = run_cli("validate", str(bp))
    assert code == 2 and "software.driver_branch" in out and "a bug" not in out, out


def test_real_mount_options_pass(tmp_path: Path) -> None:
    """Options as vendors document them (NFS, systemd, WEKA's net=, BeeGFS's cfgFile=)."""
    options = ["vers=4.1", "x-systemd.requires=weka-agent.service", "net=mlx5_0/10.0.0.1/24", "_netdev"]
    code, _, err = run_cli("validate", str(_with_storage_options(tmp_path, options)))
    assert code == 0, err


def test_a_blueprint_file_name_cannot_add_a_summary_line(tmp_path: Path) -> None:
    """A finding names the blueprint file; a name holding a line break and an ESC stays on its line."""
    name = tmp_path / 'odd\n- "forged" \x1b[31m.yaml'
    shutil.copy(EXAMPLES / "single-dgx-h100.yaml", name)
    code, _, err = run_cli("generate", str(name), "-o", str(tmp_path / "b"), "--only", "report")
    assert code == 0, err
    summary = (tmp_path / "b" / "report" / "SUMMARY.md").read_text()
    assert not any(line.startswith('- "forged"') for line in summary.split("\n"))
    assert "\x1b" not in summary and 'odd - "forged"  \\[31m.yaml:' in summary


def _summary_html(tmp_path: Path, description: str) -> tuple[str, str]:
    """SUMMARY.md of the superpod example with ``description``, and its HTML as a CommonMark reader makes it
    (markdown-it-py, the parser rich uses)."""
    from markdown_it import MarkdownIt

    bp = _example_with(tmp_path, "superpod-h100-4su", lambda doc: doc.update(description=description))
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "b"), "--quiet", "--only", "report")
    assert code == 0, out + err
    summary = (tmp_path / "b" / "report" / "SUMMARY.md").read_text()
    return summary, MarkdownIt("commonmark").enable("table").render(summary)


def test_an_html_comment_in_the_description_hides_nothing(tmp_path: Path) -> None:
    """`<!--` opened an HTML block never closed: a reader showed the title and nothing else, findings too."""
    summary, html = _summary_html(tmp_path, "<!-- the generated plan below is reviewed")
    assert "<!--" not in html and "&lt;!-- the generated plan below is reviewed" in html, html
    assert "<h2>Findings</h2>" in html and html.count("<li>") > 10, html
    # the findings' own code spans are still code
    assert "<code>ufm01</code>" in html, html


@pytest.mark.parametrize(
    ("description", "shown"),
    [
        ("<h1>Forged</h1>", "&lt;h1&gt;Forged&lt;/h1&gt;"),
        ("[click](javascript:alert(1))", "[click](javascript:alert(1))"),
        ("![t](http://evil/t.png)", "![t](http://evil/t.png)"),
        ("a &amp; b *not emphasis* `not code`", "a &amp;amp; b *not emphasis* `not code`"),
        ("admin\u202egnp.exe and a\u200bb", "adminU+202Egnp.exe and aU+200Bb"),
        ("a\u061cb\u00adc\u034fd\u180ee", "aU+061CbU+00ADcU+034FdU+180Ee"),
    ],
)
def test_a_description_is_text_in_the_summary(tmp_path: Path, description: str, shown: str) -> None:
    summary, html = _summary_html(tmp_path, description)
    paragraph = html.split("</h1>", 1)[1].split("</p>", 1)[0]
    assert paragraph == f"\n<p>{shown}", (summary.splitlines()[2], paragraph)


@pytest.mark.parametrize("field", ["faceplate", "pci", "rdma", "netdev", "netdev_optional"])
@pytest.mark.parametrize("value", ['mlx5_0 "x', "enp0';$(id)#", "a b", "mlx5_0\n"])
def test_a_catalogue_port_name_with_a_space_or_quote_is_refused(field: str, value: str) -> None:
    with pytest.raises(ValidationError):
        MappedPort.model_validate({"role": "compute", field: value, "source": "test"})
    MappedPort.model_validate({"role": "compute", field: "mlx5_11", "source": "test"})
