"""MemN2N: the end-to-end memory network for question answering (bAbI).

`MemN2N` is the paper's model: question embedding `B`, `K` memory hops over the
story (`zoo.layers.memory_network.MemoryNetwork`), and the answer
`a = softmax(W (u_K + o_K))` over the whole vocabulary, with `W^T = C^K` under
adjacent tying. There is no recurrent answer module.

The training pieces of the paper's protocol live here too: `LinearStart` (the
callback that restores the softmax once validation loss stops falling, or after a
fixed number of epochs as in the authors' code), `step_decay` (the learning-rate
schedule: halved every 25 epochs, or 15 in joint training) and
`LinearStartSchedule` (that schedule, held constant during linear start and
restarted when the softmax comes back).
"""

import math

import keras

from zoo.layers.memory_network import MemoryNetwork
from zoo.optimizers import summed_gradient


@keras.saving.register_keras_serializable(package="zoo")
class MemN2N(keras.Model):
    """End-to-end memory network (Sukhbaatar et al. 2015) for bAbI-style QA.

    Inputs are word ids (0 = padding): `story (B, memory_size, sentence_length)`,
    most recent sentence in slot 0, and `question (B, sentence_length)`. Outputs a
    dict: `probabilities (B, vocabulary_size)` (float32, the answer softmax) and
    `attention (B, hops, memory_size)` (float32, the memory attention of each hop;
    on empty slots it is the attention that went to no sentence with
    `empty_slots="nil"`, and zero with `"mask"`).

    Args:
        vocabulary_size: int, word ids incl. `[PAD]`=0 and `[UNK]`=1; answers are
            words of the same vocabulary.
        memory_size: int, memory slots (50 in the paper).
        sentence_length: int, words per sentence and per question.
        embedding_dim: int, `d` (20 per task, 50 jointly in the paper).
        hops: int, `K` (3).
        tying: `"adjacent"` or `"layerwise"`.
        position_encoding: bool, PE (else bag of words).
        temporal_encoding: bool, TE.
        linear_start: bool, start with linear attention (LS); switch it off with
            `LinearStart` or `model.memory.set_linear_start(False)`.
        empty_slots: `"nil"` (default: empty memory slots compete in the softmax
            with score 0 and contribute nothing, as in the authors' code) or
            `"mask"` (they get no attention); see `MemoryNetwork`.
        **kwargs: `keras.Model` arguments (`name`, ...).

    Example:

    >>> model = MemN2N(vocabulary_size=40, memory_size=50, sentence_length=11)
    >>> out = model({"story": keras.ops.ones((2, 50, 11), "int32"),
    ...              "question": keras.ops.ones((2, 11), "int32")})
    >>> out["probabilities"].shape, out["attention"].shape
    ((2, 40), (2, 3, 50))

    Reference:
        Sukhbaatar, Szlam, Weston, Fergus. End-To-End Memory Networks. NIPS 2015.

    Departures from the paper: random-noise (RN) empty memories are inserted by the
    input pipeline (`zoo.data.babi.make_dataset(noise_rate=...)`) and are treated
    like other empty slots, so RN acts through the shifted temporal positions (the
    authors' code skips temporal positions); position encoding takes `J` = `sentence_length` for every sentence
    and doubles the paper's weights, as the authors' code does (see
    `zoo.layers.memory_encoding.PositionEncoding`).
    """

    def __init__(
        self,
        vocabulary_size,
        memory_size=50,
        sentence_length=11,
        embedding_dim=20,
        hops=3,
        tying="adjacent",
        position_encoding=True,
        temporal_encoding=True,
        linear_start=False,
        empty_slots="nil",
        **kwargs,
    ):
        # === Layers ===
        memory = MemoryNetwork(
            vocabulary_size=vocabulary_size,
            embedding_dim=embedding_dim,
            memory_size=memory_size,
            hops=hops,
            tying=tying,
            position_encoding=position_encoding,
            temporal_encoding=temporal_encoding,
            linear_start=linear_start,
            empty_slots=empty_slots,
            output_mode="logits",
            name="memory_network",
        )
        softmax = keras.layers.Softmax(dtype="float32", name="probabilities")
        attention_out = keras.layers.Activation(
            "linear", dtype="float32", name="attention"
        )

        # === Functional Model ===
        story = keras.Input((memory_size, sentence_length), dtype="int32", name="story")
        question = keras.Input((sentence_length,), dtype="int32", name="question")
        logits, attention = memory([question, story], return_attention_scores=True)
        outputs = {
            "probabilities": softmax(logits),
            "attention": attention_out(attention),
        }
        super().__init__(
            inputs={"story": story, "question": question}, outputs=outputs, **kwargs
        )

        # === Config ===
        self.memory = memory
        self.vocabulary_size = vocabulary_size
        self.memory_size = memory_size
        self.sentence_length = sentence_length
        self.embedding_dim = embedding_dim
        self.hops = hops
        self.tying = tying
        self.position_encoding = position_encoding
        self.temporal_encoding = temporal_encoding
        self.linear_start = linear_start
        self.empty_slots = empty_slots

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "vocabulary_size": self.vocabulary_size,
            "memory_size": self.memory_size,
            "sentence_length": self.sentence_length,
            "embedding_dim": self.embedding_dim,
            "hops": self.hops,
            "tying": self.tying,
            "position_encoding": self.position_encoding,
            "temporal_encoding": self.temporal_encoding,
            "linear_start": self.linear_start,
            "empty_slots": self.empty_slots,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.setdefault("empty_slots", "mask")  # saved before the option existed
        return cls(**config)

    @staticmethod
    def targets(answer):
        """Training targets for `fit`: `{"probabilities": answer, "attention": 0}`.

        Only `probabilities` has a loss; `attention` gets a placeholder so the
        targets match the model's outputs (`fit` with dict outputs needs every key).
        """
        return {"probabilities": answer, "attention": keras.ops.zeros_like(answer)}


@keras.saving.register_keras_serializable(package="zoo")
class ClippedSGD(keras.optimizers.SGD):
    """SGD whose `clipnorm` bounds the norm of each weight's whole gradient.

    Keras clips an embedding's gradient, a `tf.IndexedSlices` with one slice per
    lookup, by the norm of the unsummed slices: a word looked up `n` times in a
    batch with similar gradients gets up to `sqrt(n)` times the step the clip
    allows. The paper's code clips the summed gradient of each weight matrix, which
    is what this optimizer does (the slices are summed first; MemN2N's vocabularies
    are small, so the dense gradient is cheap).
    """

    def _clip_gradients(self, grads):
        return super()._clip_gradients([summed_gradient(g) for g in grads])


def compile_memn2n(
    model, learning_rate=0.01, clipnorm=40.0, jit_compile="auto", **optimizer_kwargs
):
    """Compiles as in the paper: SGD, gradient norm clipped at 40, cross-entropy.

    The cross-entropy is summed over the batch (not averaged) and the clipping
    bounds each weight's summed gradient (`ClippedSGD`), as in the paper's
    implementation, so the learning rate (0.01, or 0.005 with linear start) and
    the clipping norm (40) mean what they mean there; the logged loss is
    therefore a per-batch sum. Only `probabilities` has a loss (`attention` is for
    reading); the metric is answer accuracy. `optimizer_kwargs` go to `ClippedSGD`
    (e.g. `zoo.training.averaging(cfg)`).
    """
    model.compile(
        optimizer=ClippedSGD(
            learning_rate=learning_rate, clipnorm=clipnorm, **optimizer_kwargs
        ),
        loss={
            "probabilities": keras.losses.SparseCategoricalCrossentropy(reduction="sum")
        },
        metrics={
            "probabilities": [keras.metrics.SparseCategoricalAccuracy("accuracy")]
        },
        jit_compile=jit_compile,
    )
    return model


def step_decay(learning_rate, every=25, stop=None):
    """The paper's schedule: `lr * 0.5 ** (epoch // every)`, constant after `stop`.

    Args:
        learning_rate: initial rate (0.01; 0.005 with linear start).
        every: epochs between halvings (25 per task, 15 jointly).
        stop: optional epoch after which the rate no longer halves (e.g. 100).

    Returns:
        A function `epoch -> rate` for `keras.callbacks.LearningRateScheduler`.
    """
    if every <= 0:
        raise ValueError(f"`every` must be positive. Received: every={every!r}")

    def schedule(epoch, lr=None):
        epoch = epoch if stop is None else min(epoch, stop)
        return float(learning_rate * 0.5 ** (epoch // every))

    return schedule


class LinearStart(keras.callbacks.Callback):
    """Linear start (LS): restores the attention softmax when `monitor` stalls.

    Training starts with linear attention (`MemoryNetwork(linear_start=True)`); at
    the end of the first epoch whose `monitor` (validation loss) did not improve on
    the best so far by more than `min_delta` (after `patience` such epochs), the
    callback switches the softmax back on (`layer.set_linear_start(False)`). The
    switch is a variable read by the compiled graph: nothing is rebuilt or
    recompiled.

    Args:
        layer: the `MemoryNetwork` (e.g. `model.memory`).
        monitor: the logged quantity (default `"val_loss"`).
        patience: epochs without improvement before the switch (1 = at the first).
        min_delta: the smallest change counted as an improvement.
        max_epochs: optional, switch at this epoch at the latest.
    """

    def __init__(
        self, layer, monitor="val_loss", patience=1, min_delta=0.0, max_epochs=None
    ):
        super().__init__()
        self.layer = layer
        self.monitor = monitor
        self.patience = patience
        self.min_delta = min_delta
        self.max_epochs = max_epochs
        self.best = math.inf
        self.wait = 0
        self.switched_at = None

    def on_epoch_end(self, epoch, logs=None):
        if not self.layer.linear_start_enabled:
            return
        value = (logs or {}).get(self.monitor)
        if value is None:
            return
        if value < self.best - self.min_delta:
            self.best, self.wait = value, 0
        else:
            self.wait += 1
        late = self.max_epochs is not None and epoch + 1 >= self.max_epochs
        if self.wait >= self.patience or late:
            self.layer.set_linear_start(False)
            self.switched_at = epoch + 1


class LinearStartSchedule(keras.callbacks.Callback):
    """The step schedule around linear start, as in the authors' code.

    While attention is linear the rate stays at `learning_rate`; from the first
    softmax epoch `s` on it is `learning_rate * 0.5 ** ((epoch - s) // every)`, so
    the paper's schedule (halve every `every` epochs) restarts when training
    "recommences" with the softmax. Without linear start (`linear` is None or never
    switched) it is plain `step_decay` from epoch 0.

    Args:
        learning_rate: the initial rate (0.005 with linear start in the paper).
        every: epochs between halvings after linear start.
        linear: the `LinearStart` callback (its `switched_at`), or None.
        layer: the `MemoryNetwork`, read for its current switch state (so a resumed
            run whose switch is already off uses `fallback_start`).
        fallback_start: first softmax epoch to assume when the switch is off but
            `linear.switched_at` is unknown (a run resumed after the switch).
    """

    def __init__(self, learning_rate, every, linear=None, layer=None, fallback_start=0):
        super().__init__()
        step_decay(learning_rate, every)  # validates `every`
        self.learning_rate = float(learning_rate)
        self.every = int(every)
        self.linear = linear
        self.layer = layer
        self.fallback_start = int(fallback_start)
        self.rates = []

    def rate(self, epoch):
        """The rate for 0-based `epoch`."""
        if self.layer is not None and self.layer.linear_start_enabled:
            return self.learning_rate
        start = 0
        if self.layer is not None:
            switched = self.linear.switched_at if self.linear is not None else None
            start = switched if switched is not None else self.fallback_start
        return step_decay(self.learning_rate, self.every)(max(epoch - start, 0))

    def on_epoch_begin(self, epoch, logs=None):
        rate = self.rate(epoch)
        self.model.optimizer.learning_rate.assign(rate)
        self.rates.append(rate)
