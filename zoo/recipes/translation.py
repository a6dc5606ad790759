"""Attentional neural machine translation (Bahdanau / Luong), beam search, string export.

Task: sentence translation from parallel text. Papers: Bahdanau, Cho and Bengio 2015
("Neural Machine Translation by Jointly Learning to Align and Translate"); Luong,
Pham and Manning 2015 ("Effective Approaches to Attention-based Neural Machine
Translation"); GNMT length and coverage penalties (Wu et al. 2016) in beam search.
Model: `zoo.models.translation.Seq2SeqTranslator` (bidirectional GRU/LSTM encoder,
attention decoder), teacher forcing on length-bucketed batches, label-smoothed masked
cross-entropy, WordPiece vocabularies learned from the training data and applied in
the graph. Metric: test BLEU (sacrebleu, detokenized, cased), also lowercased and, on
real data, lowercased Moses-tokenized (the scoring of published Multi30k numbers).

Commands:

    python -m zoo.recipes.translation                                  # demo, < 1 min
    python -m zoo.recipes.translation --data ../shared/data/multi30k --source de --target en
    python -m zoo.recipes.translation --data ../shared/data/multi30k --attention luong \\
        --score general --window local-p

The attention variants of the survey: `--attention bahdanau|luong|none` (none: the
encoder-decoder without attention, a fixed mean context), `--attention-normalize`
(normalized Bahdanau), Luong's `--score dot|general|concat|location|cosine` and
`--window global|local-m|local-p` with `--window-size` (D = 10, sigma = D/2, input
feeding, as in the paper), soft or hard attention `--attention-probability
softmax|hardmax|gumbel` (hard attention trained straight-through).

`--data` is a folder of line-aligned files `{train,val|valid|dev,test}.{SRC,TGT}[.gz]`
(Multi30k or its root), a TSV file of pairs (`--source-column`; Anki's: English first)
or `SRC_FILE,TGT_FILE`; `--valid-data`, `--test-data` name other splits the same way;
missing splits are seeded 2% parts of the training data. `--max-words` filters
training pairs only (every test pair is scored); `--max-length` defaults to the
longest training text. With `--data` the epoch kept has the best validation BLEU of
greedy translations, the learning rate halves after an epoch without a better one,
and the weights are averaged (`--ema`, warmed up). The readout is
`LayerNorm(W [h; c; e])`, not the papers' `tanh` (`--readout`). Real data trains up to
22 epochs (stopping after 3 without a better validation BLEU) with dropout 0.4 (embeddings 0.2, attended encoder outputs 0.4), tied target
embeddings and, where the machine computes it fast, the logits product in bfloat16
(`--training-logits-dtype auto`; the choice is logged and in the export's manifest);
`--time-limit MIN` ends training earlier, keeping the best epoch so far.

Outputs: `runs/translation/`, `reports/translation/` (`metrics.json`,
`attention_<i>.png`) and `saved_models/translation/VERSION/` (`TranslationServing`):
`serving_default` (beam) and `translate_greedy` map `text` to `translation`, `score`,
`attention`, `source_tokens`, `target_tokens`; `preprocess` and `teacher_forced` give
the Keras model's inputs and logits. At most 256 texts a request; inputs cut to 2048
bytes and `--max-length` subwords. Beside it, `VERSION.keras` is the
`Seq2SeqTextTranslator` task (network, vocabularies, searches): after `import zoo`,
`keras.saving.load_model(path).translate(texts)` gives the export's greedy
translations (`beam_width=` its beam search); `.backbone` is the network.
"""

import dataclasses
import os
import pathlib
import statistics
import time
import types

from zoo.recipes import steps
from zoo.recipes.config import RecipeConfig, option

NAME = "translation"  # runs/, reports/ and saved_models/ folder names
METRIC = "test BLEU (sacrebleu, detokenized, cased)"
POS, NONNEG, RATE = "positive", "non_negative", "open_fraction"
ATTENTION, READOUTS = ("bahdanau", "luong", "none"), ("layer_norm", "tanh")


class _DecayDefault(float):
    """The default of `--decay-factor` with `--data`: 0.5, or 1 (no decay on a
    plateau) with `--schedule cosine`, which sets every step's rate. It parses as
    1.0, a value every schedule accepts; `Config.validate` resolves it."""

    def __repr__(self):
        return "0.5, or 1 with --schedule cosine"

    __str__ = __repr__


TRAINING = dict(
    epochs=22,
    batch_size=64,
    learning_rate=2e-3,
    decay_factor=_DecayDefault(1.0),
    ema=0.999,
)
# The demo's few hundred steps: a fixed, higher rate and no averaging.
DEMO_TRAINING = dict(epochs=6, learning_rate=5e-3, decay_factor=1, ema=0)


@dataclasses.dataclass
class Config(RecipeConfig):
    source: str = option("en", "source language code", demo="src")
    target: str = option("de", "target language code", demo="tgt")
    attention: str = option(
        "bahdanau", "decoder attention (none: a fixed mean context)", choices=ATTENTION
    )
    score: str = option(
        "general",
        "Luong score (location: from the decoder state only; cosine: content-based)",
        choices=("dot", "general", "concat", "location", "cosine"),
    )
    window: str = option(
        "global",
        "Luong window: global, local-m (monotonic, p_t = t) or local-p (predicted)",
        choices=("global", "local-m", "local-p"),
    )
    window_size: int = option(
        10, "half-width D of the local window (Luong et al.: 10)", check=POS
    )
    attention_probability: str = option(
        "softmax",
        "soft (softmax) or hard attention (hardmax: straight-through; gumbel: "
        "Gumbel-softmax in training)",
        choices=("softmax", "hardmax", "gumbel"),
    )
    attention_normalize: bool = option(
        False, "weight-normalised Bahdanau scoring vector (normalized Bahdanau)"
    )
    rnn: str = option("gru", "encoder and decoder cell", choices=("gru", "lstm"))
    embedding_dim: int = option(256, "embedding size", demo=32, check=POS)
    encoder_units: int = option(256, "encoder units per direction", demo=32, check=POS)
    encoder_layers: int = option(1, "bidirectional encoder layers", check=POS)
    decoder_units: int = option(256, "decoder units", demo=64, check=POS)
    dropout: float = option(
        0.4,
        "dropout of the readout, of deeper encoder layers' inputs and (unless "
        "--embedding-dropout is given) of the embeddings",
        demo=0.0,
        check=RATE,
    )
    embedding_dropout: float = option(
        0.2, "dropout of the embeddings (None: --dropout)", demo=None, check=RATE
    )
    context_dropout: float = option(
        0.4,
        "dropout of the encoder outputs the decoder attends to",
        demo=0.0,
        check=RATE,
    )
    training_logits_dtype: str = option(
        "auto",
        "precision of the logits product in training steps (auto: bfloat16 on GPUs "
        "and CPUs with fast bfloat16 products, else float32; validation, decoding "
        "and the export compute in float32)",
        demo="float32",
        choices=("auto", "float32", "bfloat16"),
    )
    tie_embeddings: bool = option(True, "output layer = target embeddings", demo=False)
    readout: str = option(
        "layer_norm", "decoder readout (tanh: the papers')", choices=READOUTS
    )
    label_smoothing: float = option(0.1, "label smoothing", check=RATE)
    vocab_size: int = option(8000, "subwords per language", demo=200, check=POS)
    lowercase: bool = option(False, "uncased vocabularies")
    valid_data: str = option(
        None, "validation pairs: TSV or SRC,TGT files", metavar="PATH"
    )
    test_data: str = option(None, "test pairs: TSV or SRC,TGT files", metavar="PATH")
    source_column: int = option(
        None,
        "TSV column of the source (default: Anki's, English first)",
        choices=(0, 1),
    )
    max_words: int = option(80, "training pairs over N words are skipped", check=POS)
    max_length: int = option(
        None,
        "subwords per source and output (default: the longest in training)",
        demo=24,
        check=POS,
    )
    beam_width: int = option(5, "beam width of serving_default", check=POS)
    alpha: float = option(0.6, "GNMT length penalty", check=NONNEG)
    beta: float = option(0.2, "GNMT coverage penalty", check=NONNEG)
    length_a: float = option(1.5, "outputs stop at ceil(a * |X| + b): a", check=POS)
    length_b: int = option(5, "outputs stop at ceil(a * |X| + b): b", check=NONNEG)
    select_on: str = option(
        "bleu",
        "what chooses the best epoch: validation BLEU of greedy translations or the "
        "validation loss (sets --monitor and --mode)",
        demo="loss",
        choices=("bleu", "loss"),
    )
    demo_size: int = option(2400, "pairs in the generated demo corpus", check=POS)
    report_samples: int = option(3, "attention heat maps", check=NONNEG)

    warmup_texts: str = option(
        None,
        "a UTF-8 file of source sentences, one per line: the export's warm-up "
        "requests and the example of REQUESTS.md (default: the first 4 test sources)",
        metavar="FILE",
    )

    def validate(self):
        from zoo.errors import ConfigError

        if self.warmup_texts is not None:  # a bad file is an error now
            steps.read_example_texts(self.warmup_texts)
        luong, units = self.attention == "luong", self.decoder_units
        if luong and self.tie_embeddings and self.embedding_dim != units:
            raise ConfigError(
                "--tie-embeddings with luong: --embedding-dim must be --decoder-units"
            )
        if (
            luong
            and self.score in ("dot", "cosine")
            and units != 2 * self.encoder_units
        ):
            raise ConfigError(
                f"--score {self.score} needs --decoder-units = 2 x --encoder-units"
            )
        if not luong and (self.score != "general" or self.window != "global"):
            raise ConfigError("--score and --window apply to --attention luong")
        if self.attention_normalize and self.attention != "bahdanau":
            raise ConfigError("--attention-normalize applies to --attention bahdanau")
        training = self.training
        if isinstance(training.decay_factor, _DecayDefault):  # not given
            training.decay_factor = 1.0 if training.schedule == "cosine" else 0.5
        if self.select_on == "bleu":
            training.monitor, training.mode = "val_bleu", "max"

    def data_paths(self):  # --data may be SRC,TGT: check each file
        specs = ("--data", self.data), ("--valid-data", self.valid_data)
        specs += (("--test-data", self.test_data),)
        paths = [(flag, p) for flag, v in specs if v for p in v.split(",")]
        if self.warmup_texts is not None:
            paths.append(("--warmup-texts", self.warmup_texts))
        return paths

    def search(self):  # the penalties and output limit of greedy and beam search
        return {k: getattr(self, k) for k in ("alpha", "beta", "length_a", "length_b")}


def heatmap_title(source, hypothesis, reference, width=90):
    """The three lines over a heat map: source, the model's translation, reference."""

    def cut(text):
        text = " ".join(str(text).split())
        return text if len(text) <= width else text[: width - 3] + "..."

    return "\n".join(
        f"{name}: {cut(text)}"
        for name, text in (
            ("source", source),
            ("translation", hypothesis),
            ("reference", reference),
        )
    )


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config, log=print):
    """The splits (seeded samples with `--max-*-samples`), the preprocessor whose
    vocabularies are learned from (or cached for) the training pairs, and the
    length-bucketed training and validation datasets."""
    from zoo.data import parallel
    from zoo.demo.parallel import demo_corpus
    from zoo.models.translation import TranslationPreprocessor as Preprocessor
    from zoo.models.translation import translation_dataset, vocabulary_cache_key
    from zoo.training import fingerprint

    c, seed = config, config.training.seed
    languages = (c.source, c.target)
    if c.demo:
        corpus = demo_corpus(c.demo_size, seed)
        parts = parallel.split_corpus(corpus, (0.05, 0.05), seed)
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
    train = splits["train"]
    vocab = dict(vocab_size=c.vocab_size, lowercase=c.lowercase)
    data = c.data if c.source_column is None else f"{c.data}#{c.source_column}"
    key = [data, *languages, *vocab.values(), c.max_train_samples, c.max_words]
    pre = Preprocessor.from_corpus(
        train,
        c.run_dir,
        languages,
        max_length=c.max_length,
        tag=vocabulary_cache_key(*key, seed),
        log=log,
        **vocab,
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
    """The fused Adam with the run's learning rate, schedule and weight averaging,
    each weight's gradient norm clipped to `CLIPNORM`."""
    from zoo.fastpath.fused_adam import FusedAdam
    from zoo.models.translation import CLIPNORM

    return run.optimizer(FusedAdam, clipnorm=CLIPNORM)


def build_model(config, data, optimizer, log=print):
    """The `Seq2SeqTranslator` of the options named like its arguments, its training
    view compiled with `optimizer` and the label-smoothed masked cross-entropy."""
    import inspect

    from zoo.fastpath.precision import resolve_dtype
    from zoo.models.translation import MaskedSparseCrossentropy, Seq2SeqTranslator

    c, pre = config, data.preprocessor
    kwargs = inspect.signature(Seq2SeqTranslator).parameters
    kwargs = {k: getattr(c, k) for k in kwargs if hasattr(c, k)}
    kwargs["window"] = None if c.window == "global" else c.window
    if c.attention == "luong" and c.score == "location":
        # one location weight per source position, up to the longest source
        kwargs["max_source_length"] = pre.max_length
    dtype, why = resolve_dtype(c.training_logits_dtype)
    log(f"training logits product: {dtype} ({why})")
    kwargs["training_logits_dtype"] = dtype
    sizes = (pre.source_vocab_size, pre.target_vocab_size)
    model = Seq2SeqTranslator(*sizes, name="seq2seq_translator", **kwargs)
    model.training_model().compile(
        optimizer=optimizer,
        loss=MaskedSparseCrossentropy(c.label_smoothing),
        jit_compile=True if c.xla else "auto",
    )
    return model


def train(config, model, data, run):
    """Fits the model (the epoch kept: best validation BLEU of greedy translations,
    or loss); returns the training's speed and size for `metrics.json`."""
    from zoo.models.translation import Translator, ValidationBleu, count_target_tokens
    from zoo.training import Throughput, fit_schedule_to_run

    trainer, c = model.training_model(), config
    tokens, batches = count_target_tokens(data.train)
    fit_schedule_to_run(trainer, batches * c.training.epochs)
    if c.training.ema:
        run.log(f"weight averaging: momentum min({c.training.ema}, (1+t)/(10+t))")
    callbacks = [Throughput(tokens, batches)]
    if c.select_on == "bleu":
        greedy = Translator(model, data.preprocessor, 1, **c.search())
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


def serving_module(config, model, data):
    """The export's signatures: `serving_default` (beam search), `translate_greedy`."""
    from zoo.models.translation import TranslationServing

    pre = data.preprocessor
    return TranslationServing(model, pre, config.beam_width, **config.search())


def evaluate(config, model, module, data, log=print):
    """Test BLEU of the serving `module`'s greedy and (with `--beam-width` > 1) beam
    search, and of each weight snapshot (`--snapshot-minutes`).

    Returns:
        `(metrics, outputs)`: `outputs` are the last search's per-pair outputs.
    """
    from zoo.models.translation import evaluate_translations, score_snapshots

    test, lang = data.splits["test"], None if config.demo else config.target
    searches = {"greedy": module.translate_greedy}
    if config.beam_width > 1:
        searches[f"beam{config.beam_width}"] = module.serve
    metrics = {"test_pairs": len(test)}
    for search, translate in searches.items():
        scores, outputs = evaluate_translations(
            translate, test.sources, test.targets, lang
        )
        del scores["hypotheses"]
        metrics[search] = scores
        numbers = [f"{k} {v:.2f}" for k, v in scores.items() if type(v) is float]
        log(f"{search}: {', '.join(numbers)} ({scores['bleu_signature']})")
    metrics["search"], metrics["bleu"] = search, metrics[search]["bleu"]
    if config.training.snapshot_minutes:
        folder = os.path.join(config.run_dir, "snapshots")
        metrics["snapshots"] = snapshots = score_snapshots(
            model.training_model(),
            module.translate_greedy,
            folder,
            test.sources,
            test.targets,
            lang,
        )
        for s in snapshots:
            log(f"{s['minutes']:6.2f} min: greedy BLEU {s['bleu']:.2f}")
    return metrics, outputs


def report(config, data, outputs, log=print):
    """Heat maps of the attention on the first `--report-samples` test pairs
    (`outputs`: `evaluate`'s): `report_dir/attention_<i>.png`."""
    from zoo.models.translation import as_text
    from zoo.viz import attention_heatmap

    test = data.splits["test"]
    for i, out in enumerate(outputs[: config.report_samples]):
        rows = [as_text(t) for t in out["target_tokens"] if t]
        cols = [as_text(t) for t in out["source_tokens"] if t]
        if rows and cols:
            path = os.path.join(config.report_dir, f"attention_{i}.png")
            weights = out["attention"][: len(rows), : len(cols)]
            hypothesis = as_text(out["translation"])
            title = heatmap_title(test.sources[i], hypothesis, test.targets[i])
            attention_heatmap(weights, rows, cols, path, title)
            log(f"heat map: {path}")


def export(config, module, data, metrics):
    """`saved_models/translation/VERSION/` (and `VERSION.keras`); returns the folder."""
    from zoo.models.translation import export_translator

    return export_translator(
        module,
        config.export_dir,
        NAME,
        warmup_texts=(
            data.splits["test"].sources[:4]
            if config.warmup_texts is None
            else steps.read_example_texts(config.warmup_texts)
        ),
        metadata={
            "recipe": NAME,
            "data": data.description,
            "languages": {"source": config.source, "target": config.target},
            "training_logits_dtype": metrics["training_logits_dtype"],
            "metrics": metrics,
        },
    )


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)
        run.log(data.description)
        with run.strategy.scope():
            model = build_model(config, data, make_optimizer(run), run.log)
        training = train(config, model, data, run)
        run.log("trained")
        module = serving_module(config, model, data)
        metrics, outputs = evaluate(config, model, module, data, run.log)
        metrics = {**training, **metrics}
        run.write_metrics(data.description, metrics)
        report(config, data, outputs, run.log)
        version = None if config.no_export else export(config, module, data, metrics)
    return run.result(NAME, METRIC, metrics["bleu"], version)


if __name__ == "__main__":
    main()
