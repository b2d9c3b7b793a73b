"""`simulate --out DIR`: every way DIR cannot be made or written is found before the run, one line and exit
code 2, leaving nothing behind; a write that fails after the run (the disk filled meanwhile) is one line
and exit code 1, never a traceback (cli/simulate.py check_out_dir)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tests.e2e.helpers import run_cli
from wasmsched.cli import simulate

GENERATE = ("--generate", "nodes=2,pods=2")


def refused(capsys: pytest.CaptureFixture[str], out: str) -> str:
    rc, stdout, err = run_cli(capsys, "simulate", "--out", out, *GENERATE)
    assert (rc, stdout) == (2, "")  # refused before any result is printed
    assert err.startswith(f"error: --out {out}: ") and err.count("\n") == 1, err
    return err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs procfs")
def test_a_directory_procfs_cannot_hold(capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot create directory: No such file or directory" in refused(capsys, "/proc/x")


def test_a_name_too_long(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "File name too long" in refused(capsys, str(tmp_path / ("a" * 300)))


@pytest.mark.parametrize(("code", "text"), [(errno.EROFS, "Read-only file system"),
                                            (errno.EACCES, "Permission denied")])
def test_mkdir_failing_for_any_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch, code: int, text: str) -> None:
    # A read-only mount, or EACCES that root never sees: os.access cannot foresee either, mkdir tells.
    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(code, text, str(self))

    monkeypatch.setattr(Path, "mkdir", mkdir)
    assert f"cannot create directory: {text}" in refused(capsys, str(tmp_path / "new"))


def test_a_directory_where_no_file_can_be_written(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def mkstemp(**kwargs: object) -> tuple[int, str]:
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(simulate.tempfile, "mkstemp", mkstemp)
    assert "cannot write in it: Disk quota exceeded" in refused(capsys, str(tmp_path / "a" / "b"))
    assert list(tmp_path.iterdir()) == []  # what the check made is gone


def test_the_check_leaves_no_trace_and_the_run_writes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    simulate.check_out_dir(target)
    assert list(tmp_path.iterdir()) == []
    rc, _, err = run_cli(capsys, "simulate", "--out", str(target), *GENERATE)
    assert (rc, err) == (0, "")
    assert (target / "nodes.yaml").is_file() and not list(target.glob(".wasmsched-probe-*"))


def test_a_write_failing_after_the_run_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def full(result: object, out_dir: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out_dir / "pods.yaml"))

    monkeypatch.setattr(simulate, "write_cluster_state", full)
    rc, out, err = run_cli(capsys, "simulate", "--out", str(tmp_path), *GENERATE)
    assert rc == 1 and "NAME" in out  # the results were printed
    assert err == f"error: {tmp_path / 'pods.yaml'}: No space left on device\n"
