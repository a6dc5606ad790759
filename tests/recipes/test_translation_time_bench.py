"""The time-to-quality benchmark (bench.translation_time) on a tiny corpus."""

import json

import pytest


def test_bad_budgets_are_argparse_errors(capsys):
    from bench.translation_time import parse_args

    for argv, message in (
        (["--minutes", "0"], "--minutes must be > 0"),
        (["--every", "-1"], "--every must be > 0"),
        (["--minutes", "1", "--every", "2"], "--every (2.0) must not exceed"),
    ):
        with pytest.raises(SystemExit):
            parse_args(["--data", "x", *argv])
        assert message in capsys.readouterr().err


def test_table_lines_up_the_minutes_of_both_systems():
    from bench.translation_time import table

    results = {
        "peer": {"points": [{"minutes": 1.0, "bleu_lowercase": 3.0},
                            {"minutes": 2.0, "bleu_lowercase": 5.5}]},
        "zoo": {"points": [{"minutes": 1.0, "bleu_lowercase": 7.25}],
                "end": {"minutes": 1.4, "search": "beam5", "bleu_lowercase": 9.0}},
    }  # fmt: skip
    assert table(results, 1.0).splitlines()[2:] == [
        "| 1 | 3.00 | 7.25 |",
        "| 2 | 5.50 |  |",
        "| 1.4 (zoo's end, beam5) |  | 9.00 |",
    ]
    results["peer"]["precision"] = "raw weights, float32"
    results["zoo"]["precision"] = "weight-averaged snapshots, logits in bfloat16"
    assert table(results, 1.0).splitlines()[-3:] == [
        "",
        "peer: raw weights, float32",
        "zoo: weight-averaged snapshots, logits in bfloat16",
    ]


def test_peer_standardization_can_keep_every_letter():
    import tensorflow as tf

    from bench.translation_peer import standardize

    out = standardize(tf.constant(["Mädchen läuft, Tiếng Việt!"]), letters="unicode")
    assert out.numpy()[0].decode() == "[START] mädchen läuft ,  tiếng việt ! [END]"


class _Clock:
    """A clock for `zoo.training.callbacks`: it advances when told to."""

    def __init__(self):
        self.now = 1000.0

    def perf_counter(self):
        return self.now


def _splits(n_train=20, n_test=3):
    import types

    from zoo.demo.parallel import demo_corpus

    corpus = demo_corpus(n_train + n_test, seed=0)

    def part(a, b):
        return types.SimpleNamespace(
            sources=corpus.sources[a:b], targets=corpus.targets[a:b]
        )

    return {
        "train": part(0, n_train),
        "val": part(0, 4),
        "test": part(n_train, n_train + n_test),
    }


def test_the_clock_is_paused_while_snapshots_are_written(tmp_path, monkeypatch):
    # Each training step takes 1 s, writing a file 1000 s; snapshots every 10 s
    # of training and a limit of 30 s: the snapshots are taken at steps 10, 20
    # and 30 and training stops at step 30. Were the writing counted, the first
    # snapshot would put the clock past every mark and the limit at step 10.
    import keras

    import bench.translation_peer as peer_module
    import bench.translation_time as bench
    import zoo.io
    import zoo.training.callbacks as callbacks

    clock = _Clock()
    # the snapshots are scored elsewhere (the test of one scoring function)
    monkeypatch.setattr(
        bench, "peer_translator", lambda peer, lang: (lambda path: None, list)
    )
    monkeypatch.setattr(callbacks, "time", clock)

    class Step(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            clock.now += 1.0

    fit = peer_module.fit_tutorial
    monkeypatch.setattr(
        peer_module,
        "fit_tutorial",
        lambda peer, callbacks=(), **kw: fit(peer, [Step(), *callbacks], **kw),
    )
    write = zoo.io.atomic_write

    def slow_write(*a, **kw):
        clock.now += 1000.0
        return write(*a, **kw)

    monkeypatch.setattr(zoo.io, "atomic_write", slow_write)
    every = 10 / 60
    args = bench.parse_args(["--data", "x", "--minutes", "0.5", "--every", str(every),
                             "--units", "4", "--run-dir", str(tmp_path)])  # fmt: skip
    result = bench.run_peer(args, _splits())
    assert [p["step"] for p in result["points"]] == [10, 20, 30]
    assert [p["minutes"] for p in result["points"]] == pytest.approx(
        [every, 2 * every, 3 * every], abs=1e-4
    )
    assert result["stopped"]["steps"] == 30
    assert result["stopped"]["minutes"] == pytest.approx(0.5, abs=1 / 60)
    assert not any(p.get("end") for p in result["points"])


def test_a_peer_that_stops_early_keeps_its_last_weights(tmp_path, monkeypatch):
    import keras

    import zoo.training.callbacks as callbacks
    from bench.translation_time import peer_clock

    clock = _Clock()
    monkeypatch.setattr(callbacks, "time", clock)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    snapshots = peer_clock(str(tmp_path), every=10 / 60, minutes=1.0)
    snapshots.set_model(model)
    snapshots.on_train_begin()
    for step in range(15):  # early stopping after 15 s of a 60 s budget
        clock.now += 1.0
        snapshots.on_train_batch_end(step)
    snapshots.on_train_end()
    listed = json.loads((tmp_path / "snapshots.json").read_text())
    assert [(s["step"], s.get("end", False)) for s in listed] == [
        (10, False),
        (15, True),
    ]
    assert listed[1]["minutes"] == pytest.approx(15 / 60, abs=1e-4)


def _snapshot_listing(folder, marks):
    folder.mkdir(parents=True)
    listing = [
        {"minutes": m, "epoch": 1, "step": 10 * (i + 1), "file": f"s{i}.npz"}
        for i, m in enumerate(marks)
    ]
    (folder / "snapshots.json").write_text(json.dumps(listing))


def _translator(test, loaded):
    """Outputs the references after snapshot `s0`, the references shuffled (one
    place on) after any other."""
    by_source = dict(zip(test.sources, test.targets, strict=True))

    def translate(sources):
        out = [by_source[s] for s in sources]
        return out if loaded[-1].endswith("s0.npz") else out[1:] + out[:1]

    return translate


def test_both_systems_are_scored_by_one_function_on_the_same_references(
    tmp_path, monkeypatch
):

    import bench.translation_peer as peer_module
    import bench.translation_time as bench

    splits = _splits(n_train=4, n_test=8)
    test = splits["test"]
    _snapshot_listing(tmp_path / "peer" / "snapshots", [1.0, 2.0])
    _snapshot_listing(tmp_path / "zoo" / "snapshots", [1.0, 2.0])
    (tmp_path / "zoo" / "reports").mkdir()
    recorded = {  # the recipe's own numbers: kept beside, never the table's
        "snapshots": [{"minutes": 1.0, "bleu_lowercase": 55.0}],
        "beam5": {"bleu_lowercase": 66.0},
        "train_seconds": 150.0,
        "train_tokens_per_second_by_epoch": [10.0],
        "train_target_tokens": 100,
        "train_pairs": 10,
    }
    (tmp_path / "zoo" / "reports" / "metrics.json").write_text(json.dumps(recorded))
    peer_loaded, zoo_loaded = [], []
    monkeypatch.setattr(peer_module, "prepare_peer", lambda *a, **kw: None)
    monkeypatch.setattr(
        bench,
        "peer_translator",
        lambda peer, lang: (peer_loaded.append, _translator(test, peer_loaded)),
    )
    monkeypatch.setattr(
        bench,
        "zoo_translator",
        lambda run_dir: (
            zoo_loaded.append,
            _translator(test, zoo_loaded),
            lambda sources: list(test.targets),
            {"beam_width": 5, "length_penalty_alpha": 1.6},
        ),
    )
    args = bench.parse_args(["--data", "x", "--target", "en",
                             "--run-dir", str(tmp_path)])  # fmt: skip
    peer = bench.run_peer(args, splits, train=False)
    zoo = bench.run_zoo(args, splits, train=False)
    assert len(peer_loaded) == len(zoo_loaded) == 2
    for key in ("bleu_lowercase", "bleu", "bleu_moses_lowercase"):
        assert [p[key] for p in peer["points"]] == [p[key] for p in zoo["points"]]
        assert peer["points"][0][key] == pytest.approx(100.0)
        assert 0 < peer["points"][1][key] < 90
    assert zoo["end"]["bleu_lowercase"] == pytest.approx(100.0)
    assert zoo["end"]["recipe_bleu_lowercase"] == 66.0
    assert (zoo["end"]["search"], zoo["end"]["alpha"]) == ("beam5", 1.6)
    assert [p["recipe_bleu_lowercase"] for p in zoo["points"]] == [55.0, None]
    shuffled = test.targets[1:] + test.targets[:1]
    assert bench.score(shuffled, test.targets, "en") == {
        k: peer["points"][1][k] for k in bench.score(shuffled, test.targets, "en")
    }


@pytest.mark.slow
def test_both_systems_train_snapshot_and_score(tmp_path):
    from bench.translation_time import main
    from zoo.demo.parallel import demo_corpus

    corpus = demo_corpus(600, seed=0)
    data = tmp_path / "pairs.tsv"
    data.write_text(
        "".join(
            f"{t}\t{s}\n" for s, t in zip(corpus.sources, corpus.targets, strict=True)
        ),
        encoding="utf-8",
    )
    tiny = (
        "--epochs 1000 --patience 0 --embedding-dim 8 --encoder-units 8 "
        "--decoder-units 8 "
        "--vocab-size 60 --beam-width 2 --select-on loss --no-tensorboard"
    )
    argv = ["--data", str(data), "--source", "xx", "--target", "en",
            "--minutes", "0.2", "--every", "0.1", "--units", "8",
            "--zoo-flags", tiny, "--run-dir", str(tmp_path / "run"),
            "--out", str(tmp_path / "out")]  # fmt: skip
    results = main(argv)
    zoo, peer = results["zoo"], results["peer"]
    # snapshots in training order (a first step that traces the graph may span
    # several marks); the peer's last is at the limit or, when it stopped early,
    # its weights at the stop
    for name in ("peer", "zoo"):
        steps = [p["step"] for p in results[name]["points"]]
        assert steps and steps == sorted(steps) and steps[-1] > 1
    last = peer["points"][-1]
    assert last.get("end") or last["minutes"] == pytest.approx(0.2)
    assert last["step"] == peer["stopped"]["steps"]
    # decoded and scored here, the zoo's snapshots and end point give the numbers
    # its recipe recorded for them
    for p in zoo["points"]:
        assert p["bleu_lowercase"] == pytest.approx(p["recipe_bleu_lowercase"])
    assert zoo["end"]["search"] == "beam2"
    # the recipe's defaults with --data chose the beam's length penalty on validation
    recorded = json.loads(
        (tmp_path / "run" / "zoo" / "reports" / "metrics.json").read_text()
    )
    assert sorted(recorded["alpha_validation_bleu"]) == [
        "0.6",
        "1.0",
        "1.3",
        "1.6",
        "2.0",
    ]
    assert zoo["end"]["alpha"] == recorded["alpha"]
    assert zoo["end"]["bleu_lowercase"] == pytest.approx(
        zoo["end"]["recipe_bleu_lowercase"]
    )
    assert peer["speed"]["padding"] == "each batch to its longest sentence"
    assert peer["precision"].startswith("raw weights")
    assert "training logits product in" in zoo["precision"]
    saved = json.loads((tmp_path / "out" / "xx-en.json").read_text())
    assert saved["table"].startswith("| minutes | peer | zoo |")
    assert saved["table"].splitlines()[-2:] == [
        f"peer: {peer['precision']}",
        f"zoo: {zoo['precision']}",
    ]
    # --rescore: the same snapshots scored again, no training; speeds carried over
    again = main([*argv, "--rescore"])
    for name in ("peer", "zoo"):
        assert [p["minutes"] for p in again[name]["points"]] == [
            p["minutes"] for p in results[name]["points"]
        ]
        assert again[name]["speed"] == results[name]["speed"]
        assert [p["bleu_lowercase"] for p in again[name]["points"]] == pytest.approx(
            [p["bleu_lowercase"] for p in results[name]["points"]]
        )


def test_peer_words_are_detokenized_before_scoring():
    from bench.translation_time import detokenize

    spaced = ["¿ qué hora es ? no lo sé .", "ein mann , der „ hallo “ sagt ."]
    assert detokenize(spaced[:1], "es") == ["¿qué hora es? no lo sé."]
    assert detokenize(spaced[1:], "de") == ["ein mann, der „hallo“ sagt."]


def test_one_system_at_a_time_makes_one_table(tmp_path, monkeypatch):
    import bench.translation_time as bench
    import zoo.data.parallel as parallel

    monkeypatch.setattr(parallel, "load_parallel", lambda *a, **kw: _splits())

    def fake(name, bleu):
        def run(args, splits, train=True):
            point = {"minutes": 2.0, "bleu_lowercase": bleu}
            result = {"points": [point], "precision": f"{name} weights"}
            if name == "zoo":
                result["end"] = {"minutes": 2.0, "search": "beam5",
                                 "bleu_lowercase": bleu + 1}  # fmt: skip
            return result

        return run

    monkeypatch.setattr(bench, "run_peer", fake("peer", 4.0))
    monkeypatch.setattr(bench, "run_zoo", fake("zoo", 6.0))
    argv = ["--data", "x", "--source", "de", "--target", "en", "--minutes", "2",
            "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out")]  # fmt: skip
    bench.main([*argv, "--order", "peer"])
    saved = json.loads((tmp_path / "out" / "de-en.json").read_text())
    assert list(saved["results"]) == ["peer"]
    peer_trained = saved["results"]["peer"]["trained"]
    monkeypatch.setattr(bench, "run_peer", fake("peer", 99.0))  # must not run
    results = bench.main([*argv, "--order", "zoo"])
    assert list(results) == ["peer", "zoo"]
    assert results["peer"]["points"] == [{"minutes": 2.0, "bleu_lowercase": 4.0}]
    assert results["peer"]["trained"] == peer_trained
    saved = json.loads((tmp_path / "out" / "de-en.json").read_text())
    assert saved["table"].splitlines()[2:4] == [
        "| 2 | 4.00 | 6.00 |",
        "| 2.0 (zoo's end, beam5) |  | 7.00 |",
    ]

    def must_not_train(*a, **kw):
        raise AssertionError("refused only after training")

    monkeypatch.setattr(bench, "run_zoo", must_not_train)
    with pytest.raises(SystemExit, match="other --minutes"):
        bench.main([*argv[:-6], "--minutes", "4", *argv[-4:], "--order", "zoo"])
