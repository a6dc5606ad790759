"""The peer of the comparisons (bench.translation_peer): the TensorFlow tutorial."""

import types

import numpy as np
import pytest


def _pairs(sources, targets):
    return types.SimpleNamespace(sources=list(sources), targets=list(targets))


def _words(count):
    """`count` distinct ASCII words (letters only: the standardization drops
    digits)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = []
    for i in range(count):
        word = ""
        for _ in range(3):
            i, r = divmod(i, 26)
            word += letters[r]
        words.append(word)
    return words


def test_standardize_is_the_tutorials():
    import tensorflow as tf

    from bench.translation_peer import standardize

    out = standardize(tf.constant(["Ein Mann, der läuft.", "¿Qué? 42"])).numpy()
    assert [s.decode() for s in out] == [
        "[START] ein mann ,  der lauft . [END]",
        "[START] ¿ que ? [END]",
    ]
    with pytest.raises(ValueError, match="Received: letters='latin'"):
        standardize(tf.constant(["x"]), letters="latin")


def test_unicode_letters_keep_accents_and_drop_digits_as_the_tutorial():
    import tensorflow as tf

    from bench.translation_peer import standardize

    out = standardize(tf.constant(["Đã 3 Straße."]), letters="unicode")
    assert out.numpy()[0].decode() == "[START] đã  straße . [END]"


def test_each_batch_is_padded_to_its_longest_sentence():
    from bench.translation_peer import prepare_peer

    # sources of 3 and 5 words, targets of 3 and 5 words: one batch of two
    train = _pairs(
        ["ein kleiner hund", "zwei grosse hunde laufen schnell"],
        ["a small dog", "two big dogs run fast"],
    )
    peer = prepare_peer(train, units=4)
    (context, target_in), target_out = next(iter(peer.dataset))
    assert context.shape == (2, 5 + 2)  # [START] ... [END]
    assert target_in.shape == target_out.shape == (2, 5 + 1)
    vocabulary = peer.vectorizers[1].get_vocabulary()
    rows = {len(r[r > 0]): r for r in np.asarray(target_in)}
    assert vocabulary[rows[4][0]] == "[START]" and rows[4][-2:].tolist() == [0, 0]
    assert peer.tokens == (3 + 1) + (5 + 1)  # target_out: the words and [END]
    # no length cut: a 60-word source stays whole
    long = _pairs([" ".join(["hund"] * 60)], ["dog"])
    (context, _), _ = next(iter(prepare_peer(long, units=4).dataset))
    assert context.shape == (1, 62)
    # batches of one corpus have their own widths
    train = _pairs(["a", "b c d e f g h"] * 2, ["x", "y z"] * 2)
    peer = prepare_peer(train, units=4, batch_size=1)
    widths = sorted(int(c.shape[1]) for (c, _), _ in peer.dataset)
    assert widths == [3, 3, 9, 9]


def test_vocabularies_are_the_tutorials_5000():
    from bench.translation_peer import PEER_VOCABULARY, prepare_peer

    assert PEER_VOCABULARY == 5000
    words = _words(6000)
    train = _pairs([" ".join(words[i : i + 20]) for i in range(0, 6000, 20)], ["a b"])
    train.targets = train.targets * len(train.sources)
    peer = prepare_peer(train, units=4)
    assert peer.vectorizers[0].vocabulary_size() == 5000
    assert peer.layers["source_embedding"].input_dim == 5000
    small = peer.vectorizers[1].vocabulary_size()
    assert small < 5000 and peer.layers["output"].units == small


def test_initializers_optimizer_and_loss_are_the_tutorials():
    import keras

    from bench.translation_peer import peer_accuracy, peer_loss, prepare_peer

    train = _pairs(["ein hund", "zwei hunde"], ["a dog", "two dogs"])
    peer = prepare_peer(train, units=4)
    encoder = peer.layers["encoder"]
    for gru in (encoder.forward_layer, encoder.backward_layer, peer.layers["rnn"]):
        cell = gru.cell
        assert isinstance(cell.recurrent_initializer, keras.initializers.GlorotUniform)
        assert isinstance(cell.kernel_initializer, keras.initializers.GlorotUniform)
    assert encoder.merge_mode == "sum"
    assert peer.layers["attention"].num_heads == 1
    assert peer.layers["attention"].key_dim == 4
    assert peer.layers["source_embedding"].output_dim == 4  # embedding = units
    optimizer = peer.model.optimizer
    assert isinstance(optimizer, keras.optimizers.Adam)
    assert float(optimizer.learning_rate) == pytest.approx(1e-3)
    assert peer.model.loss is peer_loss
    # the tutorial's masked_acc: matches (a padding position predicted as 0
    # included) over the non-padding targets
    labels = np.array([[3, 4, 0, 0]])
    logits = np.zeros((1, 4, 6), "float32")
    logits[0, 0, 3] = logits[0, 1, 2] = logits[0, 2, 5] = 1.0
    assert float(peer_accuracy(labels, logits)) == pytest.approx(2 / 2)
    logits[0, 3, 1] = 1.0
    assert float(peer_accuracy(labels, logits)) == pytest.approx(1 / 2)


def test_peer_model_shapes_and_masked_loss():
    from bench.translation_peer import build_peer, peer_loss

    model, _ = build_peer(30, 40, units=8)
    rng = np.random.default_rng(0)
    for length in (7, 23):  # any batch width
        context = rng.integers(1, 30, (2, length + 1)).astype("int32")
        target_in = rng.integers(1, 40, (2, length)).astype("int32")
        logits = model([context, target_in])
        assert tuple(logits.shape) == (2, length, 40)
    labels = np.zeros((2, length), "int32")
    labels[:, :3] = 5
    # padding positions (label 0) do not count: the loss equals the mean over 6 tokens
    full = peer_loss(labels, logits)
    real = -np.log(
        np.exp(logits[:, :3, 5]) / np.exp(np.asarray(logits[:, :3])).sum(-1)
    ).mean()
    np.testing.assert_allclose(float(full), real, rtol=1e-5)


def test_fit_tutorial_is_the_tutorials_schedule_with_early_stopping(monkeypatch):
    import keras
    import tensorflow as tf

    from bench.translation_peer import TUTORIAL_FIT, fit_tutorial, prepare_peer

    assert TUTORIAL_FIT == dict(epochs=100, steps_per_epoch=100, validation_steps=20)
    train = _pairs(["ein hund", "zwei hunde"], ["a dog", "two dogs"])
    with pytest.raises(ValueError, match="validates"):
        fit_tutorial(prepare_peer(train, units=4))
    peer = prepare_peer(train, units=4, val=train)
    seen = {}
    monkeypatch.setattr(peer.model, "fit", lambda data, **kw: seen.update(kw, x=data))
    fit_tutorial(peer)
    assert seen["x"].cardinality() == tf.data.INFINITE_CARDINALITY  # .repeat()
    assert (seen["epochs"], seen["steps_per_epoch"], seen["validation_steps"]) == (
        100,
        100,
        20,
    )
    stops = [
        c for c in seen["callbacks"] if isinstance(c, keras.callbacks.EarlyStopping)
    ]
    assert len(stops) == 1 and stops[0].patience == 3
    assert stops[0].monitor == "val_loss" and not stops[0].restore_best_weights
    # and it does stop: a validation loss that never improves (learning rate 0)
    # ends training after 1 + 3 epochs
    peer = prepare_peer(train, units=4, val=train)
    peer.model.optimizer.learning_rate = 0.0
    history = fit_tutorial(peer, verbose=0, epochs=30, steps_per_epoch=1)
    assert len(history.history["val_loss"]) == 4


def test_order_must_name_the_peer_and_a_zoo_model_once_each():
    from bench.translation_peer import parse_args

    for order in ("zoo,zoo", "peer,zoo,zoo", "zoo,zoo-bf16", "peer", "peer,other"):
        with pytest.raises(SystemExit):
            parse_args(["--data", "x", "--order", order])
    args = parse_args(["--data", "x", "--order", "zoo-bf16,peer,zoo"])
    assert args.order == "zoo-bf16,peer,zoo"


def test_peer_greedy_is_the_teacher_forced_model_run_step_by_step():
    # Feeding the greedy output back as teacher-forced input must give the same
    # argmax at every step (the step loop and the training graph are one model).
    from bench.translation_peer import build_peer, peer_greedy

    model, layers = build_peer(30, 40, units=8)
    rng = np.random.default_rng(1)
    context = rng.integers(1, 30, (3, 25)).astype("int32")
    context[1, 12:] = 0  # padded source
    tokens = np.asarray(
        peer_greedy(layers, context, start_id=2, end_id=3, max_length=6)
    )
    assert tokens.shape[0] == 3 and 1 <= tokens.shape[1] <= 6
    target_in = np.zeros((3, tokens.shape[1]), "int32")
    target_in[:, 0] = 2
    target_in[:, 1:] = tokens[:, :-1]
    forced = np.asarray(model([context, target_in])).argmax(-1)
    for row in range(3):
        ended = np.flatnonzero(tokens[row] == 3)
        stop = ended[0] + 1 if len(ended) else tokens.shape[1]
        np.testing.assert_array_equal(tokens[row, :stop], forced[row, :stop])
        assert (tokens[row, stop:] == 0).all()


def test_zoo_precision_reads_the_runs_averaging_and_logits_dtype(tmp_path):
    import json

    from bench.translation_peer import zoo_precision

    (tmp_path / "run.json").write_text(
        json.dumps({"identity": {"training": {"ema": 0.999}}})
    )
    text = zoo_precision(str(tmp_path), {"training_logits_dtype": "bfloat16"})
    assert (
        text
        == "weight-averaged snapshots (ema 0.999), training logits product in bfloat16"
    )
    (tmp_path / "run.json").write_text(
        json.dumps({"identity": {"training": {"ema": 0}}})
    )
    text = zoo_precision(str(tmp_path), {"training_logits_dtype": "float32"})
    assert text.startswith("raw weights")
