"""A full disk during an export is one line, and leaves nothing of the export."""

import os

import pytest
import tensorflow as tf
import tiny_model

from zoo.errors import DiskFullError
from zoo.export import export as export_lib


def test_a_full_disk_during_the_export_leaves_the_earlier_versions(
    tiny_export, tmp_path, monkeypatch
):
    base = tmp_path / "sm"
    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    kwargs = dict(signatures={"serving_default": module.serve}, base_dir=str(base))
    export_lib.export_model(module, "m", **kwargs)

    def full(*args, **kw):
        raise tf.errors.ResourceExhaustedError(
            None, None, "/x/variables/variables.data-00000-of-00001.tempstate; No "
            "space left on device"
        )  # fmt: skip

    monkeypatch.setattr(export_lib.tf.saved_model, "save", full)
    with pytest.raises(DiskFullError) as failed:
        export_lib.export_model(module, "m", **kwargs)
    message = str(failed.value)
    assert message.startswith(
        f"{base / 'm'}: the disk is full, the export was not written ("
    )
    assert message.endswith(
        "No space left on device); nothing of it is left and the earlier versions "
        "are untouched"
    )
    assert "\n" not in message
    assert sorted(os.listdir(base / "m")) == ["1"]
