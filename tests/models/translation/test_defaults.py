"""The task built with its defaults, as `Seq2SeqTextTranslator`'s docstring shows, is
the model, the searches and the training settings the recipe runs with `--data`."""

import inspect
import json
import pathlib

import pytest

from zoo.models.translation import (
    Seq2SeqTextTranslator,
    Seq2SeqTranslator,
    Seq2SeqTranslatorPreprocessor,
)
from zoo.models.translation.translator import Translator
from zoo.models.translation.validation_bleu import penalty_list

ROOT = pathlib.Path(__file__).parents[3]
SEARCH = ("beam_width", "beta", "length_a", "length_b")


@pytest.fixture(scope="module")
def recipe_with_data(tmp_path_factory):
    """`(config, data, task)`: the recipe's flags with `--data` (a folder of
    generated pairs), its data and the task it builds, compiles and fits."""
    import tensorflow as tf
    from zoo.recipes.translation import NAME, build_task, load_data, parse

    from zoo.demo.parallel import demo_corpus
    from zoo.training.steps import RecipeRun

    root = tmp_path_factory.mktemp("translation_defaults")
    corpus = demo_corpus(120, 0)
    for split, part in (("train", slice(0, 100)), ("val", slice(100, 110))):
        for lang, texts in (("en", corpus.sources), ("de", corpus.targets)):
            (root / f"{split}.{lang}").write_text("\n".join(texts[part]) + "\n")
    (root / "test.en").write_text("\n".join(corpus.sources[110:]) + "\n")
    (root / "test.de").write_text("\n".join(corpus.targets[110:]) + "\n")
    config = parse(["--data", str(root), "--run-dir", str(root / "run")])
    data = load_data(config, log=lambda line: None)
    run = RecipeRun(NAME, config, tf.distribute.get_strategy(), config.run_dir)
    task = build_task(config, data, run, log=lambda line: None)
    return config, data, task


@pytest.fixture(scope="module")
def task_with_defaults(recipe_with_data):
    """The task as its docstring builds it, on the recipe's training pairs."""
    train = recipe_with_data[1].splits["train"]
    pre = Seq2SeqTranslatorPreprocessor()
    pre.adapt(train.sources, train.targets)
    backbone = Seq2SeqTranslator(pre.source_vocab_size, pre.target_vocab_size)
    return Seq2SeqTextTranslator(backbone, pre)


def _without_name(config):
    return {k: v for k, v in config.items() if k != "name"}


def test_the_backbone_is_the_recipes_model(recipe_with_data, task_with_defaults):
    model, backbone = recipe_with_data[2].backbone, task_with_defaults.backbone
    assert _without_name(backbone.get_config()) == _without_name(model.get_config())
    # the measured configuration, spelled out
    config = backbone.get_config()
    assert (config["attention"], config["score"], config["window"]) == (
        "luong",
        "general",
        None,
    )
    assert (config["input_feeding"], config["readout"]) == (False, "layer_norm")
    assert (config["embedding_dim"], config["encoder_units"]) == (256, 256)
    assert (config["decoder_units"], config["tie_embeddings"]) == (256, True)
    assert (config["dropout"], config["embedding_dropout"]) == (0.4, 0.2)
    assert config["context_dropout"] == 0.4


def test_the_preprocessor_learns_what_the_recipe_learns(
    recipe_with_data, task_with_defaults
):
    recipe, pre = recipe_with_data[1].preprocessor, task_with_defaults.preprocessor
    # the data-dependent sizes: learned from the same pairs, so equal here
    assert (pre.source_vocab_size, pre.target_vocab_size) == (
        recipe.source_vocab_size,
        recipe.target_vocab_size,
    )
    assert (pre.max_length, pre.lowercase) == (recipe.max_length, recipe.lowercase)
    assert Seq2SeqTranslatorPreprocessor().max_length is None  # learned by adapt
    for name in pre.asset_names:
        ours, theirs = pre.asset_paths[name], recipe.asset_paths[name]
        assert pathlib.Path(ours).read_text() == pathlib.Path(theirs).read_text()


def test_the_searches_are_the_recipes(recipe_with_data, task_with_defaults):
    config, task = recipe_with_data[0], task_with_defaults
    assert {k: getattr(task, k) for k in SEARCH} == {
        k: getattr(config, k) for k in SEARCH
    }
    assert (task.beam_width, task.beta) == (5, 0.0)
    # the recipe chooses alpha on validation; the task's number is what that chose
    # on Multi30k de->en, one of the recipe's grid
    assert config.alpha == "auto" and task.alpha in penalty_list(config.alpha_grid)
    results = json.loads(
        (ROOT / "docs/results/translation_alpha_auto.json").read_text()
    )
    by_alpha = results["multi30k_de_en"]["validation_bleu_by_alpha"]
    assert float(max(by_alpha, key=by_alpha.get)) == task.alpha == 1.0
    # the lower-level search defaults to the task's
    parameters = inspect.signature(Translator).parameters
    for key in ("alpha", *SEARCH):
        assert parameters[key].default == getattr(task, key), key


def test_default_compile_is_the_recipes_training(recipe_with_data, task_with_defaults):
    config, trainer = recipe_with_data[0], recipe_with_data[2]  # the recipe's task
    task = task_with_defaults
    assert config.training.learning_rate == 2e-3
    assert type(task.optimizer).__name__ == type(trainer.optimizer).__name__
    assert type(task.optimizer).__name__ == "FusedAdam"
    for optimizer in (task.optimizer, trainer.optimizer):  # float32 variables
        assert float(optimizer.learning_rate) == pytest.approx(2e-3, rel=1e-6)
    assert task.optimizer.clipnorm == trainer.optimizer.clipnorm == 5.0
    assert task.loss.label_smoothing == trainer.loss.label_smoothing == 0.1


def test_auto_logits_precision_is_this_machines_and_saved_resolved():
    from zoo.fastpath.precision import resolve_dtype

    model = Seq2SeqTranslator(9, 9, embedding_dim=8, encoder_units=8, decoder_units=8)
    assert model.training_logits_dtype == resolve_dtype("auto")[0]
    assert model.get_config()["training_logits_dtype"] in ("float32", "bfloat16")
    assert model.decoder.training_logits_dtype == model.training_logits_dtype


def test_tied_luong_needs_equal_embedding_and_decoder_sizes():
    with pytest.raises(ValueError, match="embedding_dim=256, units=512"):
        Seq2SeqTranslator(9, 9, decoder_units=512)
    untied = Seq2SeqTranslator(9, 9, 8, 8, decoder_units=16, tie_embeddings=False)
    # untied: its own projection from the decoder's 16 units onto the 9 words
    projection = untied.decoder.output_projection
    assert [tuple(w.shape) for w in projection.weights] == [(16, 9), (9,)]
