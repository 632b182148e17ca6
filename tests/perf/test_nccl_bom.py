"""An nccl-tests output saved with a UTF-8 byte order mark (EF BB BF, as an editor or a Windows tool may write
it) is read as the same output without it. The BOM hid the first line from the anchored `^#` patterns: the
`# nThread 1 nGpus 8` header (the run was predicted as one GPU a process) or the `# nccl-tests version ...
nccl-library=22602` header (predicted on the blueprint's NCCL release, not the run's 2.26.2), with no
warning; a -J file with a BOM was refused as not JSON."""

from __future__ import annotations

from pathlib import Path

from nccl_text import nccl_json, nccl_text

from generator.perf.nccl_results import read_runs

BOM = b"\xef\xbb\xbf"
HOSTS = ["gpu001", "gpu002"]
ROWS = [(1 << 30, 47.0)]


def _write(path: Path, text: str) -> Path:
    path.write_bytes(BOM + text.encode())
    return path


def test_a_bom_does_not_hide_the_nccl_release_of_the_header(tmp_path: Path) -> None:
    text = nccl_text(HOSTS, 8, ROWS)
    assert text.startswith("# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602\n")
    (run,) = read_runs(_write(tmp_path / "all_reduce.txt", text))
    assert run.settings.nccl_version == "2.26.2"


def test_a_bom_does_not_hide_the_gpus_a_process_of_the_nthread_line(tmp_path: Path) -> None:
    nthread = "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 4(factor) warmup iters: 5 iters: 20"
    (run,) = read_runs(_write(tmp_path / "all_reduce.txt", f"{nthread}\n{nccl_text(HOSTS, 8, ROWS)}"))
    assert (run.ranks, run.settings.gpus_per_process) == (16, 8)


def test_a_json_file_with_a_bom_is_read(tmp_path: Path) -> None:
    text = nccl_json(HOSTS, "mlx5_0", ROWS)
    for name in ("all_reduce.json", "all_reduce.log"):  # by its name, and by its first character
        (run,) = read_runs(_write(tmp_path / name, text))
        assert (run.source_format, run.ranks, run.hosts) == ("json", 2, tuple(HOSTS)), name
