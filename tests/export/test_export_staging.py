"""What a killed export leaves (`NAME/.tmp-export-*`) is removed by the next export:
folders whose writer's pid is gone on this host, or older than a day; a running
export's folder stays."""

import os
import subprocess
import sys
import time

import tiny_model

from zoo.export import export as export_lib


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftovers(model_dir):
    """Staging folders and side files of every kind; returns `{label: name}`."""
    host, dead, alive = export_lib._host_tag(), _dead_pid(), os.getpid()
    day_ago = time.time() - 2 * 24 * 3600
    names = {
        "old_format_fresh": ".tmp-export-0123456789ab",
        "old_format_stale": ".tmp-export-aaaaaaaaaaaa",
        "old_format_stale_keras": ".tmp-export-aaaaaaaaaaaa.keras",
        "dead_writer": f".tmp-export-{host}-{dead}-bbbbbbbbbbbb",
        "dead_writer_keras": f".tmp-export-{host}-{dead}-bbbbbbbbbbbb.keras",
        "live_writer": f".tmp-export-{host}-{alive}-cccccccccccc",
        "other_host_fresh": f".tmp-export-00000000-{dead}-dddddddddddd",
        "other_host_stale": f".tmp-export-00000000-{dead}-eeeeeeeeeeee",
    }
    os.makedirs(model_dir)
    for label, name in names.items():
        path = os.path.join(model_dir, name)
        if name.endswith(".keras"):
            with open(path, "w") as f:
                f.write("partial")
        else:
            os.makedirs(os.path.join(path, "variables"))
        if "stale" in label:
            os.utime(path, (day_ago, day_ago))
    os.makedirs(os.path.join(model_dir, "1"))
    return names


KEPT = ("old_format_fresh", "live_writer", "other_host_fresh")


def test_remove_stale_staging(tmp_path):
    model_dir = tmp_path / "m"
    names = _leftovers(model_dir)
    removed = export_lib.remove_stale_staging(model_dir)
    expected = sorted(str(model_dir / n) for k, n in names.items() if k not in KEPT)
    assert sorted(removed) == expected
    assert sorted(os.listdir(model_dir)) == sorted(["1", *(names[k] for k in KEPT)])
    assert export_lib.remove_stale_staging(tmp_path / "absent") == []


def test_the_next_export_removes_them_and_names_its_own(
    tiny_export, tmp_path, monkeypatch
):
    base = tmp_path / "sm"
    names = _leftovers(base / "m")
    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    seen = []
    make = export_lib._make_staging_dir

    def spy(model_dir):
        seen.append(make(model_dir))
        return seen[-1]

    monkeypatch.setattr(export_lib, "_make_staging_dir", spy)
    version_dir = export_lib.export_model(
        module, "m", {"serving_default": module.serve}, base_dir=str(base)
    )
    assert os.path.basename(version_dir) == "2"
    assert sorted(os.listdir(base / "m")) == sorted(
        ["1", "2", *(names[k] for k in KEPT)]
    )
    staged = os.path.basename(seen[0])
    assert staged.startswith(f".tmp-export-{export_lib._host_tag()}-{os.getpid()}-")
    assert export_lib._STAGING_RE.match(staged)
