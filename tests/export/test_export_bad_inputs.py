import numpy as np
import pytest

from tests.export.export_testing import (
    BAD_TEXT_INPUTS,
    check_bad_text_inputs,
    run_in_fresh_process,
)


def test_bad_inputs_cases_are_the_documented_ones():
    assert set(BAD_TEXT_INPUTS) == {
        "empty",
        "whitespace",
        "one_megabyte",
        "invalid_utf8",
        "batch_of_zero",
        "mixed_lengths",
    }
    assert len(BAD_TEXT_INPUTS["one_megabyte"][0]) == 1 << 20
    assert BAD_TEXT_INPUTS["batch_of_zero"] == []


def test_every_bad_input_against_reloaded_export(tiny_export):
    results = check_bad_text_inputs(tiny_export["version_dir"])
    assert results["batch_of_zero"]["probabilities"].shape == (0, 2)
    assert results["batch_of_zero"]["label"].shape == (0,)
    for case in ("empty", "whitespace", "invalid_utf8", "one_megabyte"):
        probabilities = results[case]["probabilities"]
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    # Empty and whitespace-only texts are the same (start token only) input.
    np.testing.assert_allclose(
        results["empty"]["probabilities"], results["whitespace"]["probabilities"]
    )
    assert results["mixed_lengths"]["label"].shape == (2,)


def _manifest_summary(version_dir, key):
    import json
    import os
    import sys

    with open(os.path.join(version_dir, "assets.extra", "manifest.json")) as f:
        manifest = json.load(f)
    return {"value": manifest[key], "tensorflow_imported": "tensorflow" in sys.modules}


def test_run_in_fresh_process(tiny_export):
    # `import zoo` registers every model (TensorFlow); ZOO_LAZY_IMPORT=1 is the
    # documented switch for a process that imports what it uses itself.
    result = run_in_fresh_process(
        _manifest_summary,
        tiny_export["version_dir"],
        key="name",
        env={"ZOO_LAZY_IMPORT": "1"},
    )
    assert result == {"value": "tiny", "tensorflow_imported": False}
    with pytest.raises(RuntimeError, match="KeyError"):
        run_in_fresh_process(_manifest_summary, tiny_export["version_dir"], key="nope")
