"""The flags of `zoo.recipes.translation`: its `Config` and training defaults.

A flag that sets an argument of `Seq2SeqTranslator`, `Seq2SeqTranslatorPreprocessor`
or `Seq2SeqTextTranslator` (its searches, its `default_compile`) takes its default
from there (`default_of`): with `--data` the recipe trains the model those
constructors build. The demo's small sizes are the options' `demo=` values.
"""

import dataclasses

from zoo.models.translation import (
    Seq2SeqTextTranslator,
    Seq2SeqTranslator,
    Seq2SeqTranslatorPreprocessor,
)
from zoo.training import steps
from zoo.training.flags import RecipeConfig, default_of, option

POS, NONNEG, RATE = "positive", "non_negative", "open_fraction"
ATTENTION, READOUTS = ("bahdanau", "luong", "none"), ("layer_norm", "tanh")


def number_or_auto(text):
    """A float, or the word `auto`."""
    return "auto" if text == "auto" else float(text)


def non_negative_or_auto(value):
    if value != "auto" and not value >= 0:
        raise ValueError("must be >= 0 or auto")


def penalty_list(text):
    """The floats of `text`, a comma-separated list of finite numbers >= 0
    (`ValueError` naming the first bad part otherwise)."""
    values = []
    for part in text.split(","):
        try:
            values.append(float(part))
        except ValueError:
            raise ValueError(f"not a number: {part.strip()!r}") from None
    if not all(0 <= v < float("inf") for v in values):
        raise ValueError("every value must be a finite number >= 0")
    return values


def model(argument):
    """The default of `Seq2SeqTranslator`'s `argument`."""
    return default_of(Seq2SeqTranslator, argument)


def task(argument):
    """The default of `Seq2SeqTextTranslator`'s `argument`."""
    return default_of(Seq2SeqTextTranslator, argument)


def compiled(argument):
    """The default of `Seq2SeqTextTranslator.default_compile`'s `argument`."""
    return default_of(Seq2SeqTextTranslator.default_compile, argument)


# With --data; --decay-factor None: 0.5, or 1 (no decay on a plateau) with a
# schedule that sets every step's rate (`Config.validate`).
TRAINING = dict(
    epochs=22,
    batch_size=64,
    learning_rate=compiled("learning_rate"),
    decay_factor=None,
    ema=0.999,
)
# The demo's few hundred steps: a fixed, higher rate and no averaging.
DEMO_TRAINING = dict(epochs=6, learning_rate=5e-3, decay_factor=1, ema=0)


@dataclasses.dataclass
class Config(RecipeConfig):
    # How `validate` sets a training default of None (shown in --help).
    DERIVED = {"decay_factor": "0.5, or 1 with --schedule cosine or time"}

    source: str = option("en", "source language code", demo="src")
    target: str = option("de", "target language code", demo="tgt")
    attention: str = option(
        model("attention"),
        "decoder attention (none: a fixed mean context)",
        demo="bahdanau",
        choices=ATTENTION,
    )
    score: str = option(
        model("score"),
        "Luong score (location: from the decoder state only; cosine: content-based)",
        choices=("dot", "general", "concat", "location", "cosine"),
    )
    window: str = option(
        model("window") or "global",
        "Luong window: global, local-m (monotonic, p_t = t) or local-p (predicted)",
        choices=("global", "local-m", "local-p"),
    )
    window_size: int = option(
        model("window_size"),
        "half-width D of the local window (Luong et al.: 10)",
        check=POS,
    )
    attention_probability: str = option(
        model("attention_probability"),
        "soft (softmax) or hard attention (hardmax: straight-through; gumbel: "
        "Gumbel-softmax in training)",
        choices=("softmax", "hardmax", "gumbel"),
    )
    attention_normalize: bool = option(
        model("attention_normalize"),
        "weight-normalised Bahdanau scoring vector (normalized Bahdanau)",
    )
    input_feeding: bool = option(
        model("input_feeding"),
        "Luong: feed the attentional state into the next decoder step (the paper's "
        "input feeding; without, the decoder RNN reads the target words only)",
        negatable=True,
    )
    rnn: str = option(model("rnn"), "encoder and decoder cell", choices=("gru", "lstm"))
    embedding_dim: int = option(
        model("embedding_dim"), "embedding size", demo=32, check=POS
    )
    encoder_units: int = option(
        model("encoder_units"), "encoder units per direction", demo=32, check=POS
    )
    encoder_layers: int = option(
        model("encoder_layers"), "bidirectional encoder layers", check=POS
    )
    decoder_units: int = option(
        model("decoder_units"), "decoder units", demo=64, check=POS
    )
    dropout: float = option(
        model("dropout"),
        "dropout of the readout, of deeper encoder layers' inputs and (unless "
        "--embedding-dropout is given) of the embeddings",
        demo=0.0,
        check=RATE,
    )
    embedding_dropout: float = option(
        model("embedding_dropout"),
        "dropout of the embeddings (None: --dropout)",
        demo=None,
        check=RATE,
    )
    context_dropout: float = option(
        model("context_dropout"),
        "dropout of the encoder outputs the decoder attends to",
        demo=0.0,
        check=RATE,
    )
    training_logits_dtype: str = option(
        model("training_logits_dtype"),
        "precision of the logits product in training steps (auto: bfloat16 on GPUs "
        "and CPUs with fast bfloat16 products, else float32; validation, decoding "
        "and the export compute in float32)",
        demo="float32",
        choices=("auto", "float32", "bfloat16"),
    )
    tie_embeddings: bool = option(
        model("tie_embeddings"), "output layer = target embeddings", demo=False
    )
    readout: str = option(
        model("readout"), "decoder readout (tanh: the papers')", choices=READOUTS
    )
    label_smoothing: float = option(
        compiled("label_smoothing"), "label smoothing", check=RATE
    )
    vocab_size: int = option(
        default_of(Seq2SeqTranslatorPreprocessor.adapt, "vocab_size"),
        "subwords per language",
        demo=200,
        check=POS,
    )
    lowercase: bool = option(
        default_of(Seq2SeqTranslatorPreprocessor, "lowercase"), "uncased vocabularies"
    )
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
        default_of(Seq2SeqTranslatorPreprocessor, "max_length"),
        "subwords per source and output (default: the longest in training)",
        demo=24,
        check=POS,
    )
    beam_width: int = option(
        task("beam_width"), "beam width of the beam search the export serves", check=POS
    )
    alpha: float = option(
        "auto",
        "GNMT length penalty of the beam search (auto: the one of --alpha-grid with "
        "the best validation BLEU, chosen after training; Seq2SeqTextTranslator's "
        f"default, {task('alpha')}, is what it chose on Multi30k de->en)",
        demo=0.6,
        type=number_or_auto,
        check=non_negative_or_auto,
    )
    alpha_grid: str = option(
        "0.6,1.0,1.3,1.6,2.0",
        "the length penalties --alpha auto tries (comma-separated)",
        check=penalty_list,
        metavar="A,B,...",
    )
    beta: float = option(task("beta"), "GNMT coverage penalty", demo=0.2, check=NONNEG)
    length_a: float = option(
        task("length_a"), "outputs stop at ceil(a * |X| + b): a", check=POS
    )
    length_b: int = option(
        task("length_b"), "outputs stop at ceil(a * |X| + b): b", check=NONNEG
    )
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
        if self.input_feeding and not luong:
            raise ConfigError("--input-feeding applies to --attention luong")
        training = self.training
        if training.decay_factor is None:  # --data: 0.5, or 1 with a schedule
            training.decay_factor = 1.0 if training.schedule != "constant" else 0.5
        if self.select_on == "bleu":
            training.monitor, training.mode = "val_bleu", "max"

    def data_paths(self):  # --data may be SRC,TGT: check each file
        specs = ("--data", self.data), ("--valid-data", self.valid_data)
        specs += (("--test-data", self.test_data),)
        paths = [(flag, p) for flag, v in specs if v for p in v.split(",")]
        if self.warmup_texts is not None:
            paths.append(("--warmup-texts", self.warmup_texts))
        return paths

    def alphas(self):
        """The length penalties of `--alpha-grid`, as floats."""
        return penalty_list(self.alpha_grid)

    def search(self, **overrides):
        """The penalties and output limit of greedy and beam search (`alpha` is
        `"auto"` until the recipe chooses it)."""
        keys = ("alpha", "beta", "length_a", "length_b")
        return {**{k: getattr(self, k) for k in keys}, **overrides}
