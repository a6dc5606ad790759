"""Attentional neural machine translation (Bahdanau / Luong), beam search, string export.

Task: sentence translation from parallel text (Multi30k, Anki/Tatoeba TSV, or the
generated demo pair). Papers: Bahdanau, Cho and Bengio 2015 ("Neural Machine
Translation by Jointly Learning to Align and Translate"); Luong, Pham and Manning 2015
("Effective Approaches to Attention-based Neural Machine Translation"); beam search
with the GNMT length and coverage penalties of Wu et al. 2016.
Model: `zoo.models.translation.Seq2SeqTranslator` (bidirectional GRU/LSTM
encoder, `AttentionDecoder` with `--attention bahdanau|luong|none`), trained with
teacher forcing on length-bucketed batches (no compute on padding beyond a bucket),
masked cross-entropy with optional label smoothing. Subword (WordPiece) vocabularies
are learned from the training data with tensorflow-text and applied in the graph.
Metric: test BLEU with sacrebleu on detokenized, cased output (`13a`, with sacrebleu's
signature string), plus BLEU on lowercased text (`lowercase=True`, 13a-tokenized) and,
on real data, BLEU on lowercased, Moses-tokenized text (`zoo.metrics.moses_bleu`: the
scoring of the published Multi30k numbers).

Commands:

    python -m recipes.translation                                  # demo, < 1 min
    python -m recipes.translation --data ../shared/data/multi30k --source de --target en
    python -m recipes.translation --data ../shared/data/multi30k --source en \\
        --target de --attention luong --score general --window local-p
    python -m recipes.translation --data ../shared/data/anki_spa_eng/spa-eng/spa.txt \\
        --source es --target en

The best epoch (checkpoint `best.keras`, early stopping, and the weights evaluated and
exported, which early stopping restores when `--patience` > 0) is chosen on validation
BLEU of greedy translations with `--data` (`--select-on bleu`) and on the validation
loss for the demo (`--select-on loss`). With `--data` the learning rate also halves
after each epoch without a better validation score (`--decay-factor 0.5`
`--decay-patience 1`; `--decay-factor 1` turns it off; the demo keeps a fixed rate), and
the weights are averaged (`--ema 0.999`, `zoo.training`'s moving average over about
the last thousand steps, a fifth of the run for runs under 5,000 steps; the average is
what is validated, kept and exported; `--ema 0` turns it off; not in the demo, whose
few hundred steps are too few for it). `--schedule cosine` replaces the decay on a
plateau with cosine decay from `--learning-rate` to zero over the run; measured on
Multi30k en->de it lost to the fixed rate with averaging (BENCHMARKS.md), so it is not
the default.
`--embedding-dropout` and `--context-dropout` drop the embeddings and the encoder
outputs (the annotations the decoder attends to) at their own rates, apart from the
readout's `--dropout` (as nmtpy's `emb_dropout`, `ctx_dropout`, `out_dropout`); on
Multi30k en->de, 0.2 / 0.4 / 0.4 beat a single 0.4 (BENCHMARKS.md).

`--data` is a Multi30k folder (`{train,val,test_2016_flickr}.{src,tgt}.gz`, or the
Multi30k root) or an Anki TSV file (`english<TAB>other`; a fixed, seeded 2% / 2%
validation / test split).

Outputs: `runs/translation/` (vocabularies `vocab.<side>.<lang>.<tag>.txt`, checkpoints, logs),
`reports/translation/` (`metrics.json`, `attention_<i>.png`: rows = target subwords,
columns = source subwords) and `saved_models/translation/VERSION/` with

- `serving_default(text: string [None])`: beam search (`--beam-width`, `--alpha`,
  `--beta`, recorded in the manifest) -> `translation` string [None], `score` float
  [None] (GNMT score), `attention` float [None, T_target, T_source], `source_tokens`
  string [None, T_source], `target_tokens` string [None, T_target] ("" = padding);
- `translate_greedy(text)`: the same outputs from greedy decoding;
- `preprocess(text)` -> `source_ids`, `target_ids` int32: the Keras model's inputs
  (the decoder input is `[START]` plus the greedy translation);
- `teacher_forced(text)` -> `logits` [None, T_target, V]: the Keras model on those
  inputs, the output the verifier compares with the `.keras` file (beam search has no
  Keras counterpart; `step()` against `call()` is covered by the unit tests).

Limits: inputs are truncated to 2048 bytes and `--max-length` subwords; outputs stop at
`ceil(a * |X| + b)` subwords (`--length-a`, `--length-b`) and at `--max-length`.
"""

import argparse
import dataclasses
import json
import os
import time

import numpy as np

from zoo.data.parallel import demo_corpus, load_parallel, split_corpus
from zoo.fastpath.fused_adam import FusedAdam
from zoo.metrics import bleu_scores
from zoo.models.translation import (
    MaskedSparseCrossentropy,
    Seq2SeqTranslator,
    TranslationPreprocessor,
    TranslationServing,
    Translator,
    ValidationBleu,
    as_text,
    count_target_tokens,
    translate_corpus,
    translation_dataset,
    vocabulary_cache_key,
)
from zoo.training import (
    Throughput,
    TrainingConfig,
    add_output_args,
    add_training_args,
    averaging,
    fit,
    fit_average_to_run,
    fit_schedule_to_run,
    get_strategy,
    scheduled_learning_rate,
    set_seed,
)

EXPORT_NAME = "translation"


@dataclasses.dataclass
class Config:
    """Recipe options (see `parse_config` for the flags)."""

    data: str = None
    source: str = "en"
    target: str = "de"
    attention: str = "bahdanau"
    score: str = "general"
    window: str = None
    window_size: int = 10
    rnn: str = "gru"
    embedding_dim: int = 256
    encoder_units: int = 256
    encoder_layers: int = 1
    decoder_units: int = 256
    dropout: float = 0.2
    embedding_dropout: float = None  # None: `dropout`
    context_dropout: float = 0.0
    training_logits_dtype: str = "float32"
    tie_embeddings: bool = False
    label_smoothing: float = 0.1
    vocab_size: int = 8000
    lowercase: bool = False
    max_words: int = 80
    max_length: int = 64
    limit: int = None
    eval_limit: int = None
    beam_width: int = 5
    alpha: float = 0.6
    beta: float = 0.2
    length_a: float = 1.5
    length_b: int = 5
    heatmaps: int = 3
    select_on: str = "loss"
    export_dir: str = "saved_models"
    report_dir: str = "reports/translation"
    no_export: bool = False
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)

    @property
    def demo(self):
        return self.data is None


def parse_config(argv=None):
    """Flags -> `Config`; the demo (no `--data`) gets a small model and few epochs."""
    parser = argparse.ArgumentParser(
        prog="python -m recipes.translation", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", default=None, help="Multi30k folder or Anki TSV")
    parser.add_argument("--source", default=None, help="source language code")
    parser.add_argument("--target", default=None, help="target language code")
    parser.add_argument(
        "--attention", choices=["bahdanau", "luong", "none"], default="bahdanau"
    )
    parser.add_argument(
        "--score", choices=["dot", "general", "concat"], default="general"
    )
    parser.add_argument("--window", choices=["global", "local-p"], default="global")
    parser.add_argument("--window-size", type=int, default=10)
    parser.add_argument("--rnn", choices=["gru", "lstm"], default="gru")
    parser.add_argument("--embedding-dim", type=int, default=None)
    parser.add_argument("--encoder-units", type=int, default=None)
    parser.add_argument("--encoder-layers", type=int, default=1)
    parser.add_argument("--decoder-units", type=int, default=None)
    parser.add_argument(
        "--dropout",
        type=float,
        default=None,
        help="dropout of the readout, of deeper encoder layers' inputs and, unless "
        "--embedding-dropout is given, of the embeddings (0.2 with --data, 0 for the "
        "demo)",
    )
    parser.add_argument(
        "--embedding-dropout",
        type=float,
        default=None,
        help="dropout of the source and target embeddings (default: --dropout)",
    )
    parser.add_argument(
        "--context-dropout",
        type=float,
        default=0.0,
        help="dropout of the encoder outputs the decoder attends to",
    )
    parser.add_argument(
        "--training-logits-dtype",
        choices=["float32", "bfloat16"],
        default="float32",
        help="precision of the logits product in training steps (bfloat16: mixed "
        "precision, fast on CPUs with AMX; validation, decoding and the export "
        "compute in float32)",
    )
    parser.add_argument(
        "--tie-embeddings",
        action="store_true",
        help="the output layer reuses the target embeddings (Press & Wolf 2017)",
    )
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--vocab-size", type=int, default=None)
    parser.add_argument("--lowercase", action="store_true", help="uncased vocabulary")
    parser.add_argument("--max-words", type=int, default=80)
    parser.add_argument("--max-length", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="training pairs used")
    parser.add_argument("--eval-limit", type=int, default=None, help="test pairs used")
    parser.add_argument("--beam-width", type=int, default=5)
    parser.add_argument("--alpha", type=float, default=0.6, help="length penalty")
    parser.add_argument("--beta", type=float, default=0.2, help="coverage penalty")
    parser.add_argument("--length-a", type=float, default=1.5)
    parser.add_argument("--length-b", type=int, default=5)
    parser.add_argument("--heatmaps", type=int, default=3)
    parser.add_argument(
        "--select-on",
        choices=["bleu", "loss"],
        default=None,
        help="what chooses the best epoch (checkpoint, early stopping): cased BLEU "
        "of greedy translations of the validation split (the default with --data) "
        "or the validation loss (the default for the demo)",
    )
    add_output_args(parser, "translation")
    add_training_args(
        parser,
        epochs=None,
        batch_size=64,
        learning_rate=None,
        run_dir="runs/translation",
        decay_factor=None,  # 0.5 with --data, 1 (off) for the demo
        ema=None,  # 0.999 with --data, 0 (off) for the demo
        schedule="constant",
    )
    args = parser.parse_args(argv)
    demo = args.data is None
    if args.decay_factor is None:
        args.decay_factor = 1.0 if demo or args.schedule != "constant" else 0.5
    if args.ema is None:
        # the demo's few hundred steps are too few for a thousand-step average
        args.ema = 0.0 if demo else 0.999
    args.epochs = args.epochs or (6 if demo else 12)
    args.learning_rate = args.learning_rate or (5e-3 if demo else 2e-3)
    select_on = args.select_on or ("loss" if demo else "bleu")
    selection = {"monitor": "val_bleu", "mode": "max"} if select_on == "bleu" else {}
    training = TrainingConfig.from_args(args, **selection)
    size = 64 if demo else 256
    return Config(
        data=args.data,
        source=args.source or ("src" if demo else "en"),
        target=args.target or ("tgt" if demo else "de"),
        attention=args.attention,
        score=args.score,
        window=None if args.window == "global" else args.window,
        window_size=args.window_size,
        rnn=args.rnn,
        embedding_dim=args.embedding_dim or (32 if demo else size),
        encoder_units=args.encoder_units or (size // 2 if demo else size),
        encoder_layers=args.encoder_layers,
        decoder_units=args.decoder_units or size,
        dropout=args.dropout if args.dropout is not None else (0.0 if demo else 0.2),
        embedding_dropout=args.embedding_dropout,
        context_dropout=args.context_dropout,
        training_logits_dtype=args.training_logits_dtype,
        tie_embeddings=args.tie_embeddings,
        label_smoothing=args.label_smoothing,
        vocab_size=args.vocab_size or (200 if demo else 8000),
        lowercase=args.lowercase,
        max_words=args.max_words,
        max_length=args.max_length or (24 if demo else 64),
        limit=args.limit,
        eval_limit=args.eval_limit,
        beam_width=args.beam_width,
        alpha=args.alpha,
        beta=args.beta,
        length_a=args.length_a,
        length_b=args.length_b,
        heatmaps=args.heatmaps,
        select_on=select_on,
        export_dir=args.export_dir,
        report_dir=args.report_dir,
        no_export=args.no_export,
        training=training,
    )


# --- data -------------------------------------------------------------------------


def load_splits(config):
    """`{"train", "val", "test"}` corpora (the demo: 2,400 generated pairs)."""
    if config.demo:
        corpus = demo_corpus(2400, seed=config.training.seed)
        train, val, test = split_corpus(corpus, (0.05, 0.05), seed=config.training.seed)
        return {"train": train, "val": val, "test": test}
    splits = load_parallel(
        config.data,
        config.source,
        config.target,
        max_words=config.max_words,
        limit=config.limit,
        seed=config.training.seed,
    )
    for name, corpus in splits.items():
        print(f"[{name}] {corpus.report}")
    return splits


def build_preprocessor(config, splits):
    """Learns (or reuses, on a resumed run) one subword vocabulary per language."""
    tag = vocabulary_cache_key(
        config.data,
        config.source,
        config.target,
        config.vocab_size,
        config.lowercase,
        config.limit,
        config.max_words,
        config.training.seed,
    )
    return TranslationPreprocessor.from_corpus(
        splits["train"].sources,
        splits["train"].targets,
        config.training.run_dir,
        languages=(config.source, config.target),
        vocab_size=config.vocab_size,
        lowercase=config.lowercase,
        max_length=config.max_length,
        tag=tag,
    )


def build_datasets(config, splits=None):
    """Corpora, the preprocessor and tf.data datasets for training and validation."""
    splits = splits or load_splits(config)
    preprocessor = build_preprocessor(config, splits)
    batch_size, seed = config.training.batch_size, config.training.seed
    return {
        "splits": splits,
        "preprocessor": preprocessor,
        "train": translation_dataset(
            splits["train"], preprocessor, batch_size, shuffle=True, seed=seed
        ),
        "val": translation_dataset(splits["val"], preprocessor, batch_size),
    }


# --- model ------------------------------------------------------------------------


def build_model(config, source_vocab_size, target_vocab_size):
    """A `Seq2SeqTranslator` whose `training_model()` is compiled: Adam (fused
    kernel, each weight's gradient clipped at norm 5) on the label-smoothed masked
    cross-entropy."""
    model = Seq2SeqTranslator(
        source_vocab_size,
        target_vocab_size,
        embedding_dim=config.embedding_dim,
        encoder_units=config.encoder_units,
        encoder_layers=config.encoder_layers,
        decoder_units=config.decoder_units,
        rnn=config.rnn,
        attention=config.attention,
        score=config.score,
        window=config.window,
        window_size=config.window_size,
        dropout=config.dropout,
        embedding_dropout=config.embedding_dropout,
        context_dropout=config.context_dropout,
        training_logits_dtype=config.training_logits_dtype,
        tie_embeddings=config.tie_embeddings,
        name="seq2seq_translator",
    )
    model.training_model().compile(
        optimizer=FusedAdam(
            scheduled_learning_rate(config.training),
            clipnorm=5.0,
            **averaging(config.training),
        ),
        loss=MaskedSparseCrossentropy(config.label_smoothing),
    )
    return model


def train(config, model, data):
    """Fits with `zoo.training.fit`; returns `(history, train tokens/s)`.

    The tokens/s is the median over epochs; `history.tokens_per_second` keeps the
    per-epoch rates and `history.target_tokens` the real target tokens per epoch.
    With `config.select_on == "bleu"` each epoch also scores greedy translations of
    the validation split (`val_bleu`, the monitored quantity). With weight averaging
    its window is fitted to the run's length first (`fit_average_to_run`), and so
    is a cosine schedule (`fit_schedule_to_run`).
    """
    trainer = model.training_model()
    tokens, batches = count_target_tokens(data["train"])
    steps = batches * config.training.epochs
    momentum = fit_average_to_run(trainer, steps)
    fit_schedule_to_run(trainer, steps)
    if momentum is not None:
        print(f"weight averaging: momentum {momentum:g}")
    meter = Throughput(tokens)
    callbacks = [meter]
    if config.select_on == "bleu":
        translator = Translator(
            model,
            data["preprocessor"],
            beam_width=1,
            alpha=config.alpha,
            beta=config.beta,
            length_a=config.length_a,
            length_b=config.length_b,
        )
        val = data["splits"]["val"]
        callbacks.append(ValidationBleu(translator, val.sources, val.targets))
    history = fit(
        trainer, data["train"], data["val"], config.training, callbacks=callbacks
    )
    history.tokens_per_second, history.target_tokens = list(meter.rates), tokens
    rate = float(np.median(meter.rates)) if meter.rates else 0.0
    return history, rate


# --- decoding and evaluation ------------------------------------------------------


def evaluate(config, module, data):
    """BLEU on the test split for greedy and beam search; heat maps; decoding speed.

    Args:
        config: the `Config`.
        module: the serving module from `make_serving_module` (its traced functions
            are reused by the export).
        data: the output of `build_datasets`.
    """
    from zoo.viz import attention_heatmap

    test = data["splits"]["test"]
    if config.eval_limit:
        test = test.take(config.eval_limit)
    metrics = {"test_pairs": len(test)}
    samples = None
    searches = [("greedy", module.translate_greedy)]
    if config.beam_width > 1:
        searches.append((f"beam{config.beam_width}", module.serve))
    for name, translate_fn in searches:
        translate_corpus(translate_fn, test.sources[:2])  # trace outside the timing
        start = time.time()
        outputs = translate_corpus(translate_fn, test.sources)
        seconds = time.time() - start
        hypotheses = [as_text(o["translation"]) for o in outputs]
        scores = bleu_scores(
            hypotheses, test.targets, config.target if config.data else None
        )
        metrics[name] = {
            **scores,
            "sentences_per_second": len(test) / max(seconds, 1e-9),
            "examples": [
                {"source": s, "reference": r, "hypothesis": h}
                for s, r, h in list(
                    zip(test.sources, test.targets, hypotheses, strict=True)
                )[:3]
            ],
        }
        print(
            f"{name}: BLEU {scores['bleu']:.2f} ({scores['bleu_signature']}), "
            f"lowercased {scores['bleu_lowercase']:.2f}, "
            + (
                f"lowercased Moses-tokenized {scores['bleu_moses_lowercase']:.2f}, "
                if "bleu_moses_lowercase" in scores
                else ""
            )
            + f"{metrics[name]['sentences_per_second']:.1f} sentences/s"
        )
        samples = outputs
    os.makedirs(config.report_dir, exist_ok=True)
    paths = []
    for i, out in enumerate((samples or [])[: config.heatmaps]):
        rows = [as_text(t) for t in out["target_tokens"] if t]
        cols = [as_text(t) for t in out["source_tokens"] if t]
        if not rows or not cols:
            continue
        path = os.path.join(config.report_dir, f"attention_{i}.png")
        attention_heatmap(
            out["attention"][: len(rows), : len(cols)],
            rows,
            cols,
            path,
            title=as_text(out["translation"])[:80],
        )
        paths.append(path)
    metrics["heatmaps"] = paths
    with open(os.path.join(config.report_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2, ensure_ascii=False)
    return metrics


# --- export -----------------------------------------------------------------------


def make_serving_module(model, preprocessor, config):
    """The `TranslationServing` module whose functions become the signatures."""
    return TranslationServing(
        model,
        preprocessor,
        beam_width=config.beam_width,
        alpha=config.alpha,
        beta=config.beta,
        length_a=config.length_a,
        length_b=config.length_b,
    )


def export(config, module, data, metrics):
    """Writes `saved_models/translation/VERSION/` (+ `.keras`); returns the path."""
    from zoo.export import export_model

    model = module.model
    examples = list(data["splits"]["test"].sources[:4])
    return export_model(
        module,
        name=EXPORT_NAME,
        signatures=module.signatures(),
        base_dir=config.export_dir,
        keras_model=model,
        warmup={
            "serving_default": {"text": examples},
            "translate_greedy": {"text": examples},
            "teacher_forced": {"text": examples},
        },
        keras_check={
            "signature": "teacher_forced",
            "outputs": {"logits": "logits"},
            "atol": 1e-4,
        },
        metadata={
            "recipe": "translation",
            "data": config.data or "generated demo pair (zoo.data.parallel)",
            "languages": {"source": config.source, "target": config.target},
            "metrics": _headline_metrics(metrics),
            "decoding": {
                "serving_default": {
                    "search": "beam",
                    "beam_width": config.beam_width,
                    "length_penalty_alpha": config.alpha,
                    "coverage_penalty_beta": config.beta,
                    "max_length": f"ceil({config.length_a} * |X| + {config.length_b})",
                    "max_tokens": config.max_length,
                },
                "translate_greedy": {"search": "greedy"},
            },
            "keras_check_note": (
                "beam search and greedy search have no Keras counterpart; the "
                "verifier compares `teacher_forced` (the model on preprocess's "
                "source ids and greedy decoder input) with the .keras model"
            ),
            "model": {
                k: getattr(config, k)
                for k in (
                    "attention",
                    "score",
                    "window",
                    "rnn",
                    "embedding_dim",
                    "encoder_units",
                    "encoder_layers",
                    "decoder_units",
                )
            },
        },
    )


def _headline_metrics(metrics):
    out = {}
    for name, value in metrics.items():
        if isinstance(value, dict) and "bleu" in value:
            out[name] = {
                k: value[k]
                for k in (
                    "bleu",
                    "bleu_signature",
                    "bleu_lowercase",
                    "bleu_moses_lowercase",
                    "sentences_per_second",
                )
                if k in value
            }
    return out


def main(argv=None):
    config = parse_config(argv)
    set_seed(config.training.seed)
    start = time.time()
    data = build_datasets(config)
    strategy = get_strategy(config.training.distribute)
    with strategy.scope():
        model = build_model(
            config,
            data["preprocessor"].source_vocab_size,
            data["preprocessor"].target_vocab_size,
        )
    _, tokens_per_second = train(config, model, data)
    print(f"training: {tokens_per_second:.0f} target tokens/s")
    module = make_serving_module(model, data["preprocessor"], config)
    metrics = evaluate(config, module, data)
    metrics["train_tokens_per_second"] = tokens_per_second
    version_dir = None
    if not config.no_export:
        version_dir = export(config, module, data, metrics)
        print(f"exported {version_dir}")
    headline = metrics.get(f"beam{config.beam_width}", metrics.get("greedy"))
    print(f"done in {time.time() - start:.1f} s")
    return {
        "model": EXPORT_NAME,
        "metric": "test BLEU (sacrebleu, detokenized, cased)",
        "value": float(headline["bleu"]),
        "export": version_dir,
    }


if __name__ == "__main__":
    print(main())
