"""The mixed-precision check script runs and its checks can fail."""

import numpy as np

from bench import mixed_precision


def test_quick_run_passes_for_two_layers(capsys):
    status = mixed_precision.main(
        ["--quick", "--layers", "memory,luong_local_p", "--steps", "1", "--xla-only"]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "6/6 checks passed" in out


def test_attention_checks_catch_weight_on_masked_positions_and_bad_sums():
    att = np.array([[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]])
    mask = np.array([[True, True, False], [True, True, False]])
    sum_err, masked = mixed_precision.attention_checks(att, mask)
    assert masked == 0.6  # the second row puts weight on a masked key
    assert sum_err < 1e-12  # both rows sum to 1
    sum_err, _ = mixed_precision.attention_checks(att * 0.5, mask)
    assert abs(sum_err - 0.5) < 1e-12
    # local-p rows may sum to less than 1, never more
    sum_err, _ = mixed_precision.attention_checks(att * 0.5, mask, sums_to_one=False)
    assert sum_err == 0.0
    sum_err, _ = mixed_precision.attention_checks(att * 1.5, mask, sums_to_one=False)
    assert abs(sum_err - 0.5) < 1e-12
