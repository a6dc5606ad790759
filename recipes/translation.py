"""Attentional neural machine translation (Bahdanau / Luong), beam search, string export.

Task: sentence translation from parallel text. Papers: Bahdanau, Cho and Bengio 2015;
Luong, Pham and Manning 2015; GNMT length and coverage penalties (Wu et al. 2016).
Model: `zoo.models.translation.Seq2SeqTranslator`. Metric: test BLEU (sacrebleu,
detokenized, cased). Details, data layouts and outputs: docs/recipes.md#translation.

    python -m zoo.recipes.translation                                  # demo, < 1 min
    python -m zoo.recipes.translation --data ../shared/data/multi30k --source de --target en
    python -m zoo.recipes.translation --data ../shared/data/multi30k --attention luong \\
        --score general --window local-p

`--data`: a folder of `{train,val|valid|dev,test}.{SRC,TGT}[.gz]`, a TSV of pairs or
`SRC_FILE,TGT_FILE` (`--valid-data`, `--test-data` alike); missing splits are seeded
2% parts of the training data. With `--data`, the model, its searches and its training
settings are the constructor defaults of `Seq2SeqTranslator`, `Seq2SeqTextTranslator`
and its preprocessor (the flags take their defaults from them); the demo trains a
small Bahdanau model. With `--data`, `--decay-factor` None is 0.5, or 1 with
`--schedule cosine` or `time` (a cosine from `--learning-rate` to zero over
`--time-limit`); `--alpha auto` (with `--data`) chooses the beam's length penalty on
the validation split after training. Exports `saved_models/translation/VERSION/`
(`serving_default`: beam search, `translate_greedy`) and the `Seq2SeqTextTranslator`
as `VERSION.keras`.
"""

import os
import pathlib
import statistics
import time
import types

from zoo.recipes.translation_config import DEMO_TRAINING, TRAINING, Config

from zoo.training import steps
from zoo.training.flags import default_of

NAME, METRIC = "translation", "test BLEU (sacrebleu, detokenized, cased)"
parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log=print):
    """The splits (seeded samples with `--max-*-samples`), the preprocessor with the
    vocabularies of (or cached for) the training pairs, the batched datasets."""
    from zoo.data import parallel
    from zoo.demo.parallel import demo_corpus
    from zoo.models.translation import (
        TranslationPreprocessor,
        translation_dataset,
        vocabulary_cache_key,
    )
    from zoo.training import fingerprint

    c, seed, languages = config, config.training.seed, (config.source, config.target)
    if c.demo:
        parts = parallel.split_corpus(
            demo_corpus(c.demo_size, seed), (0.05, 0.05), seed
        )
        splits = dict(zip(("train", "val", "test"), parts, strict=True))
    else:
        path, files = parallel.file_specs(c.data, c.valid_data, c.test_data)
        kw = dict(seed=seed, files=files, source_column=c.source_column)
        splits = parallel.load_parallel(path, *languages, c.max_words, **kw)
    for split, corpus in splits.items():
        limit = c.max_train_samples if split == "train" else c.max_eval_samples
        indices = steps.sample_indices(len(corpus), limit, seed)
        splits[split] = corpus if indices is None else corpus.subset(indices)
        log(f"[{split}] {len(splits[split])} pairs; {corpus.report}")
    train, vocab = splits["train"], dict(vocab_size=c.vocab_size, lowercase=c.lowercase)
    data = c.data if c.source_column is None else f"{c.data}#{c.source_column}"
    key = [data, *languages, *vocab.values(), c.max_train_samples, c.max_words, seed]
    tag = vocabulary_cache_key(*key)
    pre = TranslationPreprocessor.from_corpus(
        train, c.run_dir, languages, max_length=c.max_length, tag=tag, log=log, **vocab
    )
    vocabularies = map(pathlib.Path, (pre.source_vocabulary, pre.target_vocabulary))
    batch = c.training.batch_size
    return types.SimpleNamespace(
        description=c.data or "generated demo pair (zoo.demo.parallel)",
        splits=splits,
        preprocessor=pre,
        train=translation_dataset(train, pre, batch, shuffle=True, seed=seed),
        validation=translation_dataset(splits["val"], pre, batch),
        fingerprint=fingerprint(train.sources, train.targets, *vocabularies),
    )


def make_optimizer(run):
    """The fused Adam of the run's rate, schedule and averaging, clipped as
    `Seq2SeqTextTranslator.default_compile` clips."""
    from zoo.fastpath.fused_adam import FusedAdam
    from zoo.models.translation import Seq2SeqTextTranslator

    clipnorm = default_of(Seq2SeqTextTranslator.default_compile, "clipnorm")
    return run.optimizer(FusedAdam, clipnorm=clipnorm)


def build_model(config, data, optimizer, log=print):
    """The `Seq2SeqTranslator` of the flags named like its arguments, its training
    view compiled with `optimizer` and the label-smoothed masked cross-entropy."""
    import inspect

    from zoo.fastpath.precision import resolve_dtype
    from zoo.models.translation import MaskedSparseCrossentropy, Seq2SeqTranslator

    c, pre = config, data.preprocessor
    kwargs = inspect.signature(Seq2SeqTranslator).parameters
    kwargs = {k: getattr(c, k) for k in kwargs if hasattr(c, k)}
    kwargs["window"] = None if c.window == "global" else c.window
    if c.attention == "luong" and c.score == "location":  # a weight per position
        kwargs["max_source_length"] = pre.max_length
    kwargs["training_logits_dtype"], why = resolve_dtype(c.training_logits_dtype)
    log(f"training logits product: {kwargs['training_logits_dtype']} ({why})")
    sizes = (pre.source_vocab_size, pre.target_vocab_size)
    model = Seq2SeqTranslator(*sizes, name="seq2seq_translator", **kwargs)
    loss, jit = MaskedSparseCrossentropy(c.label_smoothing), True if c.xla else "auto"
    model.training_model().compile(optimizer=optimizer, loss=loss, jit_compile=jit)
    return model


def train(config, model, data, run):
    """Fits the model, keeping the epoch of the best validation BLEU of greedy
    translations (or loss); returns the training's speed and size."""
    from zoo.models.translation import Translator, ValidationBleu, count_target_tokens
    from zoo.training import Throughput, fit_schedule_to_run

    trainer, c = model.training_model(), config
    tokens, batches = count_target_tokens(data.train)
    fit_schedule_to_run(trainer, batches * c.training.epochs)
    if c.training.ema:
        run.log(f"weight averaging: momentum min({c.training.ema}, (1+t)/(10+t))")
    callbacks = [Throughput(tokens, batches)]
    if c.select_on == "bleu":
        # the length penalty changes no greedy translation (only its score)
        greedy = Translator(model, data.preprocessor, 1, **c.search(alpha=1.0))
        val = data.splits["val"]
        callbacks.append(ValidationBleu(greedy, val.sources, val.targets, run.log))
    start = time.perf_counter()
    run.fit(trainer, data.train, data.validation, callbacks, data.fingerprint)
    rates = callbacks[0].rates
    rate = statistics.median(rates) if rates else 0.0
    run.log(f"training: {rate:.0f} target tokens/s")
    return {
        "train_tokens_per_second": rate,
        "train_tokens_per_second_by_epoch": rates,
        "train_target_tokens": tokens,
        "train_seconds": time.perf_counter() - start,
        "train_pairs": len(data.splits["train"]),
        "training_logits_dtype": model.training_logits_dtype,
    }


def choose_alpha(config, model, data, log=print):
    """With `--alpha auto`, sets `config.alpha` to the penalty of `--alpha-grid` of
    the best validation BLEU (`choose_length_penalty`); returns `{"alpha",
    "alpha_validation_bleu"}` for the metrics (empty otherwise)."""
    from zoo.models.translation import choose_length_penalty

    if config.alpha != "auto":
        return {}
    c, val = config, data.splits["val"]
    c.alpha, scores = choose_length_penalty(
        model, data.preprocessor, c.beam_width, c.alphas(), val.sources,
        val.targets, log, **c.search(),
    )  # fmt: skip
    why = "best validation BLEU of the grid" if scores else "greedy: no search"
    log(f"length penalty: alpha {c.alpha} ({why})")
    return {"alpha": c.alpha, "alpha_validation_bleu": scores}


def evaluate(config, model, module, data, log=print):
    """`(metrics, outputs)`: test BLEU of the serving `module`'s greedy and beam
    search and of each weight snapshot; the last search's per-pair outputs."""
    from zoo.models.translation import evaluate_searches, score_snapshots

    test, lang = data.splits["test"], None if config.demo else config.target
    searches = {"greedy": module.translate_greedy}
    if config.beam_width > 1:
        searches[f"beam{config.beam_width}"] = module.serve
    metrics, outputs = evaluate_searches(
        searches, test.sources, test.targets, lang, log
    )
    if config.training.snapshot_minutes:
        folder = os.path.join(config.run_dir, "snapshots")
        greedy, trainer = module.translate_greedy, model.training_model()
        metrics["snapshots"] = score_snapshots(
            trainer, greedy, folder, test.sources, test.targets, lang, log
        )
    return {"test_pairs": len(test), **metrics}, outputs


def export(config, module, data, metrics):
    """`saved_models/translation/VERSION/` (and `VERSION.keras`); returns the folder."""
    from zoo.models.translation import export_translator

    c, sources = config, data.splits["test"].sources[:4]
    if c.warmup_texts is not None:
        sources = steps.read_example_texts(c.warmup_texts)
    metadata = {"recipe": NAME, "data": data.description}
    metadata["languages"] = {"source": c.source, "target": c.target}
    metadata["training_logits_dtype"] = metrics["training_logits_dtype"]
    metadata["metrics"] = metrics
    return export_translator(module, c.export_dir, NAME, sources, metadata)


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)  # --help and bad flags end here
    from zoo.models.translation import TranslationServing, plot_translation_attention

    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)
        run.log(data.description)
        with run.strategy.scope():
            model = build_model(config, data, make_optimizer(run), run.log)
        training = train(config, model, data, run)
        run.log("trained")
        training.update(choose_alpha(config, model, data, run.log))
        module = TranslationServing(
            model, data.preprocessor, config.beam_width, **config.search()
        )
        metrics, outputs = evaluate(config, model, module, data, run.log)
        metrics = {**training, **metrics}
        run.write_metrics(data.description, metrics)
        test, samples = data.splits["test"], config.report_samples
        plot_translation_attention(
            outputs[:samples], test.sources, test.targets, config.report_dir, run.log
        )
        version = None if config.no_export else export(config, module, data, metrics)
    return run.result(NAME, METRIC, metrics["bleu"], version)


if __name__ == "__main__":
    main()
