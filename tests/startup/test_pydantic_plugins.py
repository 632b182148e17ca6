"""The CLI builds its validators without Pydantic's plugin loader unless PYDANTIC_DISABLE_PLUGINS is set.

A real plugin is installed for the run (a distribution on PYTHONPATH whose entry point is in the `pydantic`
group, as https://docs.pydantic.dev/latest/concepts/plugins/ describes); it writes a line to a file each
time Pydantic asks it about a new validator. By default `blueprint validate` gives the same answer without
asking it (and without importing importlib.metadata, the loader's cost); with the variable set to the empty
string (disabling no plugin) Pydantic's own loader runs and the plugin is asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "single-dgx-h100.yaml"

PLUGIN = """
import os


class Plugin:
    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):
        with open(os.environ["PLUGIN_LOG"], "a") as fh:
            fh.write(f"{path.name}\\n")
        return None, None, None


plugin = Plugin()
"""

# The CLI as `blueprint` runs it, then the modules it imported (on stderr, after its own output).
RUN = """
import json, runpy, sys
sys.argv = ["blueprint", "validate", sys.argv[1]]
try:
    runpy.run_module("generator.cli", run_name="__main__")
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _install_plugin(where: Path) -> None:
    (where / "bp_test_plugin.py").write_text(PLUGIN)
    dist = where / "bp_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bp-test-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nbp_test = bp_test_plugin:plugin\n")


def _validate(tmp_path: Path, **env: str) -> tuple[int, str, list[str], list[str]]:
    """Exit code, stdout, imported modules and the plugin's log of one `blueprint validate`."""
    log = tmp_path / "plugin.log"
    log.unlink(missing_ok=True)
    base = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    pythonpath = os.pathsep.join(p for p in (str(tmp_path), base.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(EXAMPLE)],
        cwd=ROOT,
        env={**base, **env, "PYTHONPATH": pythonpath, "PLUGIN_LOG": str(log), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    result = json.loads(proc.stderr.rsplit("\n", 1)[1])
    logged = log.read_text().split() if log.exists() else []
    return result["code"], proc.stdout, result["modules"], logged


def test_plugins_are_not_loaded_by_default_and_are_when_asked(tmp_path: Path) -> None:
    _install_plugin(tmp_path)
    code, out, modules, logged = _validate(tmp_path)
    assert code == 0 and "valid" in out
    assert logged == []  # never asked
    assert "importlib.metadata" not in modules  # nor looked for

    code_on, out_on, modules_on, logged_on = _validate(tmp_path, PYDANTIC_DISABLE_PLUGINS="")
    assert (code_on, out_on) == (code, out)  # the same answer
    assert "Blueprint" in logged_on  # Pydantic's loader found the plugin and asked it
    assert "importlib.metadata" in modules_on


def test_the_variable_keeps_pydantics_meaning(tmp_path: Path) -> None:
    _install_plugin(tmp_path)
    assert _validate(tmp_path, PYDANTIC_DISABLE_PLUGINS="bp_test")[3] == []  # this plugin disabled by name
    assert _validate(tmp_path, PYDANTIC_DISABLE_PLUGINS="other")[3] != []  # another one disabled
