"""`ServingModule.check_batch`: a documented maximum batch per request."""

import os

import numpy as np
import pytest
import tensorflow as tf
import tiny_model

from tests.export.export_testing import load_signature
from zoo.export import ServingModule, export_model, load_manifest
from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.export.verify import verify_export
from zoo.text.vocabulary import Vocabulary


class _TwoInputs(ServingModule):
    def __init__(self, **kwargs):
        super().__init__(model=None, **kwargs)
        self.calls = tf.Variable(0, dtype=tf.int64)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="story"),
            tf.TensorSpec([None], tf.string, name="question"),
        ]
    )
    def serve(self, story, question):
        story, question = self.check_batch(story, question)
        # Stands for the expensive steps: must not run on a refused request.
        self.calls.assign_add(tf.shape(story, out_type=tf.int64)[0])
        return {"joined": tf.strings.join([story, question], separator="|")}


def test_check_batch_refuses_before_the_work_and_names_the_limit():
    module = _TwoInputs(max_batch_size=3)
    out = module.serve(tf.constant(["a", "b", "c"]), tf.constant(["x", "y", "z"]))
    assert out["joined"].numpy().tolist() == [b"a|x", b"b|y", b"c|z"]
    assert int(module.calls.numpy()) == 3

    with pytest.raises(tf.errors.InvalidArgumentError) as over:
        module.serve(tf.constant(["a"] * 4), tf.constant(["x"] * 4))
    message = over.value.message
    assert "request batch of" in message
    assert "[4]" in message
    assert "rows exceeds max_batch_size=3; split the request" in message
    assert int(module.calls.numpy()) == 3  # the work after the check did not run

    with pytest.raises(tf.errors.InvalidArgumentError) as mismatch:
        module.serve(tf.constant(["a", "b"]), tf.constant(["x"]))
    message = mismatch.value.message
    assert "same batch size" in message
    assert "question has] [1] [rows, story has] [2]" in message
    assert int(module.calls.numpy()) == 3


def test_default_and_bad_limits():
    assert ServingModule(None).max_batch_size == DEFAULT_MAX_BATCH_SIZE == 256
    for bad in (0, -1, 2.5, True, "8"):
        with pytest.raises(ValueError, match="max_batch_size"):
            ServingModule(None, max_batch_size=bad)
    with pytest.raises(ValueError, match="at least one input"):
        ServingModule(None).check_batch()


def test_limit_recorded_in_manifest_and_enforced_by_the_export(tiny_export, tmp_path):
    manifest = load_manifest(tiny_export["version_dir"])
    assert manifest["limits"] == {"max_batch_size": DEFAULT_MAX_BATCH_SIZE}
    assert {k: v["max_batch_size"] for k, v in manifest["signatures"].items()} == {
        "preprocess": DEFAULT_MAX_BATCH_SIZE,
        "serving_default": DEFAULT_MAX_BATCH_SIZE,
    }

    vocab = os.path.join(tiny_export["work"], "vocab.txt")
    model = tiny_model.build_model(len(Vocabulary.load(vocab)))
    module = tiny_model.TinyServing(model, vocab, max_batch_size=3)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def unchecked(text):  # a signature that does not call check_batch
        return {"length": tf.strings.length(text)}

    version_dir = export_model(
        module,
        "limited",
        {
            "serving_default": module.serve,
            "preprocess": module.preprocess,
            "unchecked": unchecked,
        },
        base_dir=str(tmp_path),
        warmup={"serving_default": {"text": ["good", "bad"]}},
        metadata={"limits": {"max_words": 50}},
    )
    manifest = load_manifest(version_dir)
    assert manifest["limits"] == {"max_words": 50, "max_batch_size": None}
    assert manifest["signatures"]["serving_default"]["max_batch_size"] == 3
    assert manifest["signatures"]["preprocess"]["max_batch_size"] == 3
    assert manifest["signatures"]["unchecked"]["max_batch_size"] is None

    serve = load_signature(version_dir)
    assert serve(text=np.array(["good"] * 3, dtype=object))["label"].shape == (3,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size=3"):
        serve(text=np.array(["good"] * 4, dtype=object))

    # TF Serving's loader: the verifier replays the warm-up rows repeated to 4.
    report = verify_export(version_dir)
    assert report["batch_limit"] == {
        "preprocess": "not checked (no warm-up request)",
        "serving_default": "refuses 4 rows",
        "unchecked": "not enforced",
    }
    assert report["ok"], report["errors"]
