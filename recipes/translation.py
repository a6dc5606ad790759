"""Attentional neural machine translation (Bahdanau / Luong), beam search, string export.

Task: sentence translation from parallel text. Papers: Bahdanau, Cho and Bengio 2015;
Luong, Pham and Manning 2015; GNMT length and coverage penalties (Wu et al. 2016).
Model: `zoo.models.translation.Seq2SeqTextTranslator`, the task fit, evaluated and
exported as one object; the flags take their defaults from its constructors and
`default_compile`, so the task built with its defaults is the one trained with `--data`
(the demo: a small Bahdanau model). With `--data`, `--alpha auto` chooses the beam's
length penalty on validation. Metric: test BLEU (sacrebleu, detokenized, cased).
Details: docs/recipes.md#translation.

    python -m zoo.recipes.translation                                  # demo, < 1 min
    python -m zoo.recipes.translation --data ../shared/data/multi30k --source de --target en
"""

import dataclasses
import functools
import inspect
import os
import pathlib
import statistics
import time
import types

from zoo import training
from zoo.errors import ConfigError
from zoo.fastpath.precision import resolve_dtype
from zoo.models import translation
from zoo.models.translation import translation_dataset, validation_bleu
from zoo.models.translation.seq2seq_translator_preprocessor import vocabulary_cache_key
from zoo.models.translation.translation_report import plot_translation_attention
from zoo.models.translation.translator import evaluate_searches, score_snapshots
from zoo.models.translation.validation_bleu import ValidationBleu
from zoo.training import steps
from zoo.training.flags import RecipeConfig, default_of, option

NAME, METRIC = "translation", "test BLEU (sacrebleu, detokenized, cased)"
net = functools.partial(default_of, translation.Seq2SeqTranslator)
pre = functools.partial(default_of, translation.Seq2SeqTranslatorPreprocessor)
task = functools.partial(default_of, translation.Seq2SeqTextTranslator)
compiled = functools.partial(default_of, task.args[0].default_compile)
POS, NONNEG, RATE = "positive", "non_negative", "open_fraction"
# With --data.
TRAINING = dict(epochs=22, batch_size=64, learning_rate=compiled("learning_rate"),
                decay_factor=0.5, ema=0.999, patience=6)  # fmt: skip
# The demo's few hundred steps: a fixed, higher rate and no averaging.
DEMO_TRAINING = dict(epochs=6, learning_rate=5e-3, decay_factor=1, ema=0, patience=3)


@dataclasses.dataclass
class Config(RecipeConfig):
    """The recipe's options (the command-line flags)."""

    # fmt: off
    source: str = option("en", "source language code", demo="src")
    target: str = option("de", "target language code", demo="tgt")
    attention: str = option(net("attention"), "decoder attention (none: a fixed mean "
        "context)", demo="bahdanau", choices=("bahdanau", "luong", "none"))
    score: str = option(net("score"), "Luong score (location: from the decoder state "
        "only; cosine: content-based)",
        choices=("dot", "general", "concat", "location", "cosine"))
    window: str = option(net("window") or "global", "Luong window: global, local-m "
        "(monotonic, p_t = t) or local-p (predicted)",
        choices=("global", "local-m", "local-p"))
    window_size: int = option(net("window_size"), "half-width D of the local window "
        "(Luong et al.: 10)", check=POS)
    attention_probability: str = option(net("attention_probability"), "soft (softmax) "
        "or hard attention (hardmax: straight-through; gumbel: Gumbel-softmax in "
        "training)", choices=("softmax", "hardmax", "gumbel"))
    attention_normalize: bool = option(net("attention_normalize"),
        "weight-normalised Bahdanau scoring vector (normalized Bahdanau)")
    input_feeding: bool = option(net("input_feeding"), "Luong: feed the attentional "
        "state into the next decoder step (the paper's input feeding; without, the "
        "decoder RNN reads the target words only)", negatable=True)
    rnn: str = option(net("rnn"), "encoder and decoder cell", choices=("gru", "lstm"))
    embedding_dim: int = option(net("embedding_dim"), "embedding size", demo=32,
        check=POS)
    encoder_units: int = option(net("encoder_units"), "encoder units per direction",
        demo=32, check=POS)
    encoder_layers: int = option(net("encoder_layers"), "bidirectional encoder layers",
        check=POS)
    decoder_units: int = option(net("decoder_units"), "decoder units", demo=64,
        check=POS)
    dropout: float = option(net("dropout"), "dropout of the readout, of deeper encoder "
        "layers' inputs and (unless --embedding-dropout is given) of the embeddings",
        demo=0.0, check=RATE)
    embedding_dropout: float = option(net("embedding_dropout"), "dropout of the "
        "embeddings (None: --dropout)", demo=None, check=RATE)
    context_dropout: float = option(net("context_dropout"), "dropout of the encoder "
        "outputs the decoder attends to", demo=0.0, check=RATE)
    training_logits_dtype: str = option(net("training_logits_dtype"), "precision of "
        "the logits product in training steps (auto: bfloat16 on GPUs and CPUs with "
        "fast bfloat16 products, else float32; validation, decoding and the export "
        "compute in float32)", demo="float32", choices=("auto", "float32", "bfloat16"))
    tie_embeddings: bool = option(net("tie_embeddings"), "output layer = target "
        "embeddings", demo=False)
    readout: str = option(net("readout"), "decoder readout (tanh: the papers')",
        choices=("layer_norm", "tanh"))
    label_smoothing: float = option(compiled("label_smoothing"), "label smoothing",
        check=RATE)
    vocab_size: int = option(default_of(translation.Seq2SeqTranslatorPreprocessor.adapt,
        "vocab_size"), "subwords per language", demo=200, check=POS)
    lowercase: bool = option(pre("lowercase"), "uncased vocabularies")
    valid_data: str = option(None, "validation pairs: TSV or SRC,TGT files",
        metavar="PATH")
    test_data: str = option(None, "test pairs: TSV or SRC,TGT files", metavar="PATH")
    source_column: int = option(None, "TSV column of the source (default: Anki's, "
        "English first)", choices=(0, 1))
    max_words: int = option(80, "training pairs over N words are skipped", check=POS)
    max_length: int = option(pre("max_length"), "subwords per source and output "
        "(default: the longest in training)", demo=24, check=POS)
    beam_width: int = option(task("beam_width"), "beam width of the beam search the "
        "export serves", check=POS)
    alpha: float = option("auto", "GNMT length penalty of the beam search (auto: the "
        "one of --alpha-grid with the best validation BLEU, chosen after training; "
        f"Seq2SeqTextTranslator's default, {task('alpha')}, is what it chose on "
        "Multi30k de->en)", demo=0.6, type=validation_bleu.number_or_auto,
        check=validation_bleu.non_negative_or_auto)
    alpha_grid: str = option("0.6,1.0,1.3,1.6,2.0", "the length penalties --alpha "
        "auto tries (comma-separated)", check=validation_bleu.penalty_list,
        metavar="A,B,...")
    beta: float = option(task("beta"), "GNMT coverage penalty", demo=0.2, check=NONNEG)
    length_a: float = option(task("length_a"), "outputs stop at ceil(a * |X| + b): a",
        check=POS)
    length_b: int = option(task("length_b"), "outputs stop at ceil(a * |X| + b): b",
        check=NONNEG)
    select_on: str = option("bleu", "what chooses the best epoch: validation BLEU of "
        "greedy translations or the validation loss (sets --monitor and --mode)",
        demo="loss", choices=("bleu", "loss"))
    demo_size: int = option(2400, "pairs in the generated demo corpus", check=POS)
    report_samples: int = option(3, "attention heat maps", check=NONNEG)
    warmup_texts: str = option(None, "a UTF-8 file of source sentences, one per line: "
        "the export's warm-up requests and the example of REQUESTS.md (default: the "
        "first 4 test sources)", metavar="FILE")

    def validate(self):
        if self.warmup_texts is not None:  # a bad file is an error now
            steps.read_example_texts(self.warmup_texts)
        luong, units, score = self.attention == "luong", self.decoder_units, self.score
        for wrong, message in [
            (luong and self.tie_embeddings and self.embedding_dim != units,
             "--tie-embeddings with luong: --embedding-dim must be --decoder-units"),
            (luong and score in ("dot", "cosine") and units != 2 * self.encoder_units,
             f"--score {score} needs --decoder-units = 2 x --encoder-units"),
            (not luong and (score != "general" or self.window != "global"),
             "--score and --window apply to --attention luong"),
            (self.attention_normalize and self.attention != "bahdanau",
             "--attention-normalize applies to --attention bahdanau"),
            (self.input_feeding and not luong,
             "--input-feeding applies to --attention luong"),
        ]:
            if wrong:
                raise ConfigError(message)
        if self.select_on == "bleu":
            self.training.monitor, self.training.mode = "val_bleu", "max"

    def data_paths(self):  # --data may be SRC,TGT: check each file
        specs = [("--data", self.data), ("--valid-data", self.valid_data),
                 ("--test-data", self.test_data)]
        paths = [(flag, path) for flag, v in specs if v for path in v.split(",")]
        return paths + [("--warmup-texts", self.warmup_texts)] * bool(self.warmup_texts)


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log=print):
    """The splits (seeded samples with `--max-*-samples`), the preprocessor with the
    vocabularies of (or cached for) the training pairs, the batched datasets."""
    c, seed, languages = config, config.training.seed, (config.source, config.target)
    splits = translation_dataset.load_translation_splits(
        c.data, languages, seed, c.valid_data, c.test_data, c.source_column,
        c.max_words, c.demo_size, (c.max_train_samples, c.max_eval_samples), log,
    )  # fmt: skip
    train, vocab = splits["train"], dict(vocab_size=c.vocab_size, lowercase=c.lowercase)
    data = c.data if c.source_column is None else f"{c.data}#{c.source_column}"
    key = [data, *languages, *vocab.values(), c.max_train_samples, c.max_words, seed]
    preprocessor = translation.Seq2SeqTranslatorPreprocessor.from_corpus(
        train, c.run_dir, languages, max_length=c.max_length, log=log,
        tag=vocabulary_cache_key(*key), **vocab,
    )  # fmt: skip
    files = map(pathlib.Path, preprocessor.asset_paths.values())
    batches = functools.partial(translation_dataset.translation_dataset, seed=seed)
    batch = c.training.batch_size
    return types.SimpleNamespace(
        description=c.data or "generated demo pair (zoo.demo.parallel)",
        splits=splits,
        preprocessor=preprocessor,
        train=batches(train, preprocessor, batch, shuffle=True),
        validation=batches(splits["val"], preprocessor, batch),
        fingerprint=training.fingerprint(train.sources, train.targets, *files),
    )


def build_task(config, data, run, log=print):
    """The `Seq2SeqTextTranslator` of the flags and the data's vocabularies, compiled
    by its `default_compile` with the run's rate, averaging and XLA."""
    c, preprocessor = config, data.preprocessor
    kwargs = inspect.signature(translation.Seq2SeqTranslator).parameters
    kwargs = {k: getattr(c, k) for k in kwargs if hasattr(c, k)}
    kwargs["window"] = None if c.window == "global" else c.window
    kwargs["name"] = "seq2seq_translator"
    if c.attention == "luong" and c.score == "location":  # a weight per position
        kwargs["max_source_length"] = preprocessor.max_length
    kwargs["training_logits_dtype"], why = resolve_dtype(c.training_logits_dtype)
    log(f"training logits product: {kwargs['training_logits_dtype']} ({why})")
    search = {k: getattr(c, k) for k in ("beam_width", "beta", "length_a", "length_b")}
    search["alpha"] = task("alpha") if c.alpha == "auto" else c.alpha  # auto: later
    with run.strategy.scope():
        sizes = (preprocessor.source_vocab_size, preprocessor.target_vocab_size)
        backbone = translation.Seq2SeqTranslator(*sizes, **kwargs)
        translator = translation.Seq2SeqTextTranslator(
            backbone, preprocessor, compile=False, **search
        )
        translator.default_compile(
            c.training.learning_rate,
            label_smoothing=c.label_smoothing, jit_compile=True if c.xla else "auto",
            **training.averaging(c.training),
        )  # fmt: skip
    return translator


def main(argv=None):
    c = config = parse(argv)  # --help and bad flags end here
    with steps.recipe_run(NAME, config) as run:
        # Data: the splits, the vocabularies, the length-bucketed batches.
        data = load_data(config, run.log)
        run.log(data.description)
        val, test = data.splits["val"], data.splits["test"]
        translator = build_task(config, data, run, run.log)

        # Fit the task, keeping the epoch of the best validation BLEU (or loss).
        tokens, batches = translation_dataset.count_target_tokens(data.train)
        if c.training.ema:
            run.log(f"weight averaging: momentum min({c.training.ema}, (1+t)/(10+t))")
        callbacks = [training.Throughput(tokens, batches)]
        if c.select_on == "bleu":  # BLEU of the validation split's greedy translations
            greedy = translator.translator(beam_width=1)
            callbacks.append(ValidationBleu(greedy, val.sources, val.targets, run.log))
        start = time.perf_counter()
        run.fit(translator, data.train, data.validation, callbacks, data.fingerprint)
        rate, rates = statistics.median(callbacks[0].rates or [0.0]), callbacks[0].rates
        run.log(f"training: {rate:.0f} target tokens/s")
        metrics = dict(
            train_tokens_per_second=rate, train_tokens_per_second_by_epoch=rates,
            train_target_tokens=tokens, train_seconds=time.perf_counter() - start,
            train_pairs=len(data.splits["train"]),
            training_logits_dtype=translator.backbone.training_logits_dtype,
        )  # fmt: skip
        run.log("trained")
        if c.alpha == "auto":  # the beam's length penalty of the best validation BLEU
            grid = validation_bleu.penalty_list(c.alpha_grid)
            scores = translator.choose_alpha(val.sources, val.targets, grid, run.log)
            metrics.update(alpha=translator.alpha, alpha_validation_bleu=scores)

        # Evaluate: the test BLEU of the export's greedy and beam search.
        module = translator.serving_module().signatures()  # the task's searches
        searches = {"greedy": module["translate_greedy"]}
        if c.beam_width > 1:
            searches[f"beam{c.beam_width}"] = module["serving_default"]
        lang = None if c.demo else c.target
        scores, outputs = evaluate_searches(
            searches, test.sources, test.targets, lang, run.log
        )
        metrics.update(test_pairs=len(test), **scores)
        if c.training.snapshot_minutes:  # the test BLEU of each weight snapshot
            metrics["snapshots"] = score_snapshots(
                translator, module["translate_greedy"],
                os.path.join(c.run_dir, "snapshots"), test.sources, test.targets,
                lang, run.log,
            )  # fmt: skip

        # Report: metrics.json and the attention heat maps.
        run.write_metrics(data.description, metrics)
        plot_translation_attention(
            outputs[: c.report_samples], test.sources, test.targets, c.report_dir,
            run.log,
        )  # fmt: skip

        # Export: the SavedModel of the task's searches, and the task as .keras.
        version = None
        if not c.no_export:
            warmup = c.warmup_texts  # checked by Config.validate
            sources = steps.read_example_texts(warmup) if warmup else test.sources[:4]
            metadata = {"recipe": NAME, "data": data.description, "metrics": metrics}
            metadata["languages"] = {"source": c.source, "target": c.target}
            metadata["training_logits_dtype"] = metrics["training_logits_dtype"]
            version = translator.export(c.export_dir, NAME, sources, metadata)
    return run.result(NAME, METRIC, metrics["bleu"], version)


if __name__ == "__main__":
    main()
