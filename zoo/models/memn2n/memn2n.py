"""`MemN2N`: the end-to-end memory network for question answering (bAbI).

The paper's model: question embedding `B`, `K` memory hops over the story
(`zoo.layers.memory_network.MemoryNetwork`), and the answer
`a = softmax(W (u_K + o_K))` over the whole vocabulary, with `W^T = C^K` under
adjacent tying. There is no recurrent answer module.
"""

import keras

from zoo.layers.memory_network import MemoryNetwork

_ARGUMENTS = (
    "vocabulary_size memory_size sentence_length embedding_dim hops tying "
    "position_encoding temporal_encoding linear_start empty_slots"
).split()


@keras.saving.register_keras_serializable(package="zoo")
class MemN2N(keras.Model):
    """End-to-end memory network (Sukhbaatar et al. 2015) for bAbI-style QA.

    Inputs are word ids (0 = padding): `story (B, memory_size, sentence_length)`,
    most recent sentence in slot 0, and `question (B, sentence_length)`. Outputs a
    dict, as every model of the zoo: `probabilities (B, vocabulary_size)` (float32,
    the answer softmax) and `attention (B, hops, memory_size)` (float32, the memory
    attention of each hop; on empty slots it is the attention that went to no
    sentence with `empty_slots="nil"`, and zero with `"mask"`). It is trained as
    the backbone of `MemN2NQuestionAnswerer`, whose single output is the
    probabilities.

    The defaults are the configuration the bAbI recipe trains with `--data` (the
    paper's joint model: d = 50, 3 hops, adjacent tying, PE, TE, linear start, nil
    empty slots); `vocabulary_size` and `sentence_length` come from the data.

    Args:
        vocabulary_size: int, word ids incl. `[PAD]`=0 and `[UNK]`=1; answers are
            words of the same vocabulary.
        memory_size: int, memory slots (50 in the paper).
        sentence_length: int, words per sentence and per question.
        embedding_dim: int, `d` (50 jointly, 20 per task in the paper).
        hops: int, `K` (3).
        tying: `"adjacent"` or `"layerwise"`.
        position_encoding: bool, PE (else bag of words).
        temporal_encoding: bool, TE.
        linear_start: bool, start with linear attention (LS); switch it off with
            `zoo.models.memn2n.linear_start.LinearStart` (`MemN2NQuestionAnswerer.fit`
            adds one when none is given) or `model.memory.set_linear_start(False)`.
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
    input pipeline (`babi_arrays.make_dataset(noise_rate=...)`) and are treated
    like other empty slots, so RN acts through the shifted temporal positions (the
    authors' code skips temporal positions); position encoding takes
    `J` = `sentence_length` for every sentence and doubles the paper's weights, as
    the authors' code does (see `zoo.layers.memory_encoding.PositionEncoding`).
    """

    def __init__(
        self,
        vocabulary_size,
        memory_size=50,
        sentence_length=11,
        embedding_dim=50,
        hops=3,
        tying="adjacent",
        position_encoding=True,
        temporal_encoding=True,
        linear_start=True,
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
        config = {key: getattr(self, key) for key in _ARGUMENTS}
        return {"name": self.name, "trainable": self.trainable, **config}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        # A config without the entry describes a model trained with masked slots.
        config.setdefault("empty_slots", "mask")
        return cls(**config)
