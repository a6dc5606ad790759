"""Export folders are readable by the users the umask allows (TF Serving often runs as
another user: a container's non-root user, Kubernetes `runAsNonRoot`)."""

import os
import secrets
import shutil
import stat
import subprocess
import tempfile

import pytest
import tiny_model

from zoo.export import export as export_lib


def _export(tiny_export, base_dir, umask):
    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    old = os.umask(umask)
    try:
        return export_lib.export_model(
            module,
            name="m",
            signatures={"serving_default": module.serve},
            base_dir=str(base_dir),
            keras_model=model,
            warmup={"serving_default": {"text": ["good"]}},
        )
    finally:
        os.umask(old)


def _modes(root):
    """{relative path: permission bits} of every folder and file under `root`."""
    modes = {".": stat.S_IMODE(os.stat(root).st_mode)}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            modes[os.path.relpath(path, root)] = stat.S_IMODE(os.stat(path).st_mode)
    return modes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_modes_follow_the_umask_like_tf_saved_model_save(tiny_export, tmp_path, umask):
    version_dir = _export(tiny_export, tmp_path / "sm", umask)
    # The version folder itself: what TensorFlow's mkdir gives (0o755 less the umask),
    # not mkdtemp's 0o700.
    assert stat.S_IMODE(os.stat(version_dir).st_mode) == 0o755 & ~umask
    modes = _modes(version_dir)
    assert {"saved_model.pb", "variables", "assets.extra/manifest.json"} <= set(modes)
    for path, mode in modes.items():
        full = os.path.join(version_dir, path)
        if os.path.isdir(full):
            assert mode & 0o555 == 0o555 & ~umask, (path, oct(mode))
        else:
            assert mode & 0o444 == 0o444 & ~umask, (path, oct(mode))
    keras_mode = stat.S_IMODE(os.stat(version_dir + ".keras").st_mode)
    assert keras_mode & 0o444 == 0o444 & ~umask
    assert not [
        n
        for n in os.listdir(os.path.dirname(version_dir))
        if n.startswith(export_lib.STAGING_PREFIX)
    ]


def _as_user_command():
    if shutil.which("runuser"):
        return lambda user, argv: ["runuser", "-u", user, "--", *argv]
    if shutil.which("su"):
        return lambda user, argv: [
            "su",
            "-s",
            "/bin/sh",
            user,
            "-c",
            " ".join(f"'{a}'" for a in argv),
        ]
    return None


def test_another_user_reads_every_file_of_an_export(tiny_export):
    as_user = _as_user_command()
    if os.geteuid() != 0 or not shutil.which("useradd") or as_user is None:
        pytest.skip("needs root with useradd and runuser or su")
    root = tempfile.mkdtemp(prefix="zoo-export-perm-", dir="/tmp")
    user = "zoo" + secrets.token_hex(4)
    created = False
    try:
        os.chmod(root, 0o755)
        version_dir = _export(tiny_export, root, 0o022)
        model_dir = os.path.dirname(version_dir)
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", user],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            pytest.skip(f"useradd failed: {made.stderr.strip()}")
        created = True
        # Every file's checksum, read by root and by the other user.
        listing = ["find", model_dir, "-type", "f", "-exec", "cksum", "{}", "+"]
        mine = subprocess.run(listing, capture_output=True, text=True, check=True)
        theirs = subprocess.run(
            as_user(user, listing), capture_output=True, text=True, timeout=60
        )
        assert theirs.returncode == 0, theirs.stderr
        assert "Permission denied" not in theirs.stderr
        assert sorted(theirs.stdout.splitlines()) == sorted(mine.stdout.splitlines())
        assert os.path.join(version_dir, "saved_model.pb") in theirs.stdout
        assert version_dir + ".keras" in theirs.stdout
    finally:
        if created:
            subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
