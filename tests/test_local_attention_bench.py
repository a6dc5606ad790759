"""`python -m bench.local_attention`: every variant timed at every length, the JSON
and the table hold the measured medians, bad arguments are refused."""

import json

import pytest

from bench import local_attention as la


def test_lengths_and_repeats_are_checked(capsys):
    for argv in (["--lengths", "16,x"], ["--lengths", "0,16"], ["--repeats", "0"]):
        with pytest.raises(SystemExit) as e:
            la.main(argv)
        assert e.value.code == 2
    assert "--lengths" in capsys.readouterr().err


def test_json_and_table_hold_the_measured_medians(tmp_path, capsys):
    path, plot = tmp_path / "cost.json", tmp_path / "cost.png"
    results = la.main(
        ["--lengths", "16,40", "--repeats", "2", "--json", str(path)]
        + ["--plot", str(plot)]
    )
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["command"] == (
        "python -m bench.local_attention --lengths 16,40 --repeats 2"
    )
    assert written["half_width"] == la.HALF_WIDTH and written["machine"]
    for workload in ("step", "train"):
        assert set(results[workload]) == set(la.VARIANTS)
        for name, by_length in results[workload].items():
            assert sorted(by_length) == [16, 40]
            assert all(ms > 0 for ms in by_length.values())
            # JSON object keys are strings; the values are the returned medians
            assert written["ms"][workload][name] == {
                str(n): ms for n, ms in by_length.items()
            }
    out = capsys.readouterr().out
    cell = f"{results['train']['local-p masked'][40]:.2f}"
    assert "| 40 | " in out and cell in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
