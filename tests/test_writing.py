"""np2torch-fix writes only the fix: a symbolic link stays a link (its target is fixed), hard links stay one inode,
the owner stays, and a file that changed on disk since it was read is left alone."""

from __future__ import annotations

import os

import pytest

from np2torch_lint import commands
from np2torch_lint.cli import fix_main
from np2torch_lint.writing import TEMPORARY_PREFIX

BROKEN = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
FIXED = "import torch\nw = torch.ones(2, requires_grad=True)\nw.detach().numpy()\n"
INLINE = ["--fix-style", "inline", "--no-cache"]

needs_links = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX links")


@needs_links
def test_a_symbolic_link_stays_a_link_and_its_target_is_fixed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "model.py"
    target.write_text(BROKEN)
    project = tmp_path / "project"
    project.mkdir()
    link = project / "model.py"
    link.symlink_to(os.path.relpath(target, project))
    assert fix_main([*INLINE, str(link)]) == 1
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(target, project)
    assert target.read_text() == FIXED
    assert not [p for p in (*shared.iterdir(), *project.iterdir()) if p.name.startswith(TEMPORARY_PREFIX)]


@needs_links
def test_hard_links_keep_one_inode_and_every_name_sees_the_fix(tmp_path):
    first = tmp_path / "a.py"
    first.write_text(BROKEN)
    second = tmp_path / "vendored" / "a.py"
    second.parent.mkdir()
    os.link(first, second)
    inode = first.stat().st_ino
    assert fix_main([*INLINE, str(first)]) == 1
    assert first.stat().st_ino == second.stat().st_ino == inode and first.stat().st_nlink == 2
    assert first.read_text() == second.read_text() == FIXED


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a file to another user needs root")


@needs_root
@pytest.mark.parametrize("may_chown", [True, False], ids=["as-root", "as-another-user"])
def test_a_file_of_another_user_keeps_its_owner_and_group(tmp_path, monkeypatch, may_chown):
    path = tmp_path / "theirs.py"
    path.write_text(BROKEN)
    os.chown(path, 4321, 4322)
    path.chmod(0o664)
    inode = path.stat().st_ino
    if not may_chown:  # what a user who is not root meets with another user's group-writable file

        def refused(*args: object) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "chown", refused)
    assert fix_main([*INLINE, str(path)]) == 1
    assert path.read_text() == FIXED
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4322) and path.stat().st_mode & 0o777 == 0o664
    if not may_chown:  # written in place: the only way to keep the owner
        assert path.stat().st_ino == inode
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMPORARY_PREFIX)]


def _edited_after_reading(monkeypatch, path, added: str) -> None:
    """An editor saves ``path`` after the fixer read it and before it writes (while the fixes are worked out)."""
    fix_files = commands.fix_files

    def fix_then_edit(*args, **kwargs):
        results = fix_files(*args, **kwargs)
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(added)
        return results

    monkeypatch.setattr(commands, "fix_files", fix_then_edit)


@pytest.mark.parametrize("hard_linked", [False, True], ids=["renamed", "in-place"])
def test_a_file_changed_on_disk_since_it_was_read_is_not_overwritten(tmp_path, monkeypatch, capsys, hard_linked):
    path = tmp_path / "edited.py"
    path.write_text(BROKEN)
    if hard_linked:
        os.link(path, tmp_path / "other.py")
    _edited_after_reading(monkeypatch, path, "print('saved by the editor')\n")
    assert fix_main([*INLINE, str(path)]) == 2
    assert path.read_text() == BROKEN + "print('saved by the editor')\n"
    err = capsys.readouterr().err
    assert f"{path}: changed on disk since it was read, left unchanged: run again" in err
    assert err.strip().endswith("fixed 0 findings in 0 files, 1 left")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMPORARY_PREFIX)]


def test_the_other_files_of_the_run_are_still_written_when_one_changed_on_disk(tmp_path, monkeypatch, capsys):
    edited, untouched = tmp_path / "edited.py", tmp_path / "untouched.py"
    edited.write_text(BROKEN)
    untouched.write_text(BROKEN)
    _edited_after_reading(monkeypatch, edited, "# saved\n")
    assert fix_main([*INLINE, str(tmp_path)]) == 2
    assert edited.read_text() == BROKEN + "# saved\n" and untouched.read_text() == FIXED
    assert capsys.readouterr().err.strip().endswith("fixed 1 finding in 1 file, 1 left")
