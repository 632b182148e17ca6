"""The platform's Slurm job prolog/epilog in the slurm.conf fragment (GCP A3 Mega: slurm-gcp's RxDM
prolog), compared with how Google's A3 Mega Slurm blueprint stages it (stage_scripts.sh, test data) and
the slurm.conf template it gives its controller (long-prolog-slurm.conf.tpl, test data)."""

from __future__ import annotations

import re

import pytest
from slurm_blueprints import planned
from vendor_tables import TABLES, gcp_a3_mega_stage_scripts, gcp_long_prolog_timers

from generator.emit.slurm import render

SETTINGS = ("Prolog", "Epilog", "PrologFlags", "PrologEpilogTimeout", "MessageTimeout", "BatchStartTimeout")


def _settings(fragment: str) -> list[tuple[str, str]]:
    out = []
    for line in fragment.splitlines():
        if line and not line.startswith("#") and "=" in line and " " not in line:
            key, value = line.split("=", 1)
            out.append((key, value))
    return out


def _prolog_commit() -> str:
    """The slurm-gcp commit the prolog excerpt (test data) was read at, from its source header."""
    header = (TABLES / "gcp_a3_mega_rxdm_prolog.sh").read_text().split("\n\n", 1)[0]
    found = re.search(r"\(commit\s+#\s+([0-9a-f]{40})\)", header)
    assert found, header
    return found.group(1)


def test_a3_mega_runs_the_staged_script_as_prolog_and_epilog() -> None:
    cluster, plan = planned("a3mega")
    fragment = render(cluster, plan)["slurm.conf.fragment"]
    staged = gcp_a3_mega_stage_scripts()
    got = dict(kv for kv in _settings(fragment) if kv[0] in SETTINGS)
    # the Toolkit links the one script for both contexts; slurmd sets SLURM_SCRIPT_CONTEXT accordingly
    assert staged.contexts == ["prolog_slurmd", "epilog_slurmd"]
    assert got["Prolog"] == staged.path and got["Epilog"] == staged.path
    assert {k: v for k, v in got.items() if k not in ("Prolog", "Epilog")} == gcp_long_prolog_timers()
    # fetched from the commit the TCPXO install was read at, not from master
    pinned = staged.url.replace("/master/", f"/{_prolog_commit()}/")
    assert pinned != staged.url and f"# {pinned}" in fragment.splitlines()


@pytest.mark.parametrize("name", ["a3mixed", "superpod", "cloud"])
def test_no_prolog_unless_every_slurm_node_has_the_script(name: str) -> None:
    cluster, plan = planned(name)
    fragment = render(cluster, plan)["slurm.conf.fragment"]
    assert not [kv for kv in _settings(fragment) if kv[0] in SETTINGS]
    said = "\n".join(ln for ln in fragment.splitlines() if ln.startswith("# No Prolog=/Epilog="))
    if name == "a3mixed":  # said why, naming both pools and the script
        text = fragment[fragment.index("# No Prolog=/Epilog=") :]
        assert "mega (gcp/a3-megagpu-8g)" in text and "(ultra)" in text
        assert gcp_a3_mega_stage_scripts().path in text
    else:
        assert said == ""


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (
            "url",
            "https://raw.githubusercontent.com/GoogleCloudPlatform/slurm-gcp/master/tools/x",
        ),  # not pinned
        ("url", "http://example.com/" + "0" * 40 + "/x"),
        ("path", "/opt/apps/adm/slurm/scripts/rxdm;reboot"),  # reaches slurm.conf and a task's dest
        ("path", "/opt/apps/x\nProlog=/tmp/evil"),
        ("mode", "755"),
    ],
)
def test_a_catalogue_job_script_must_be_pinned_and_plain(field: str, value: str) -> None:
    from pydantic import ValidationError

    from blueprints.catalog.schema import JobScript

    good = {
        "url": "https://raw.githubusercontent.com/o/r/" + "0" * 40 + "/tools/x",
        "path": "/opt/x",
        "mode": "0755",
        "dir_mode": "0755",
        "source": "s",
    }
    JobScript(**good)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        JobScript(**{**good, field: value})  # type: ignore[arg-type]
