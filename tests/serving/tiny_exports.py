"""Small exports for the serving and command-line tests.

- `export_classifier(base_dir, work_dir)`: the tiny text classifier of the export
  tests (one `text` input; `label`, `probabilities`; a `preprocess` signature with
  the single output `token_ids`).
- `export_reader(base_dir)`: a two-input export shaped like MemN2N's signature:
  `story` (lines separated by "\\n") and `question` in; `answer` (the story line with
  the most attention) and `attention` (float, one weight per story line, 0 past a
  story's last line) out. No training: the weights follow line and question lengths.
"""

import tensorflow as tf

from tests.export import tiny_model
from zoo.export import ServingModule, export_model

STORY = "Mary moved to the bathroom.\nJohn went to the hallway."
QUESTION = "Where is Mary?"


class TinyReaderServing(ServingModule):
    def __init__(self, **kwargs):
        super().__init__(model=None, **kwargs)
        self.scale = tf.Variable(0.1)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="story"),
            tf.TensorSpec([None], tf.string, name="question"),
        ]
    )
    def serve(self, story, question):
        story, question = self.check_batch(story, question)
        lines = tf.strings.split(story, "\n")  # (B, (S))
        lengths = tf.cast(tf.strings.length(lines), tf.float32).to_tensor()  # (B, S)
        mask = tf.sequence_mask(lines.row_lengths(), maxlen=tf.shape(lengths)[1])
        asked = tf.cast(tf.strings.length(question), tf.float32)[:, None]  # (B, 1)
        scores = self.scale * lengths + 0.01 * asked
        scores = tf.where(mask, scores, tf.fill(tf.shape(scores), -1e9))
        attention = tf.where(mask, tf.nn.softmax(scores), tf.zeros_like(scores))
        best = tf.argmax(attention, axis=-1)
        answer = tf.gather(lines.to_tensor(), best, batch_dims=1)
        return {"answer": answer, "attention": attention}


def export_classifier(base_dir, work_dir):
    version_dir, _ = tiny_model.train_and_export(
        str(base_dir), str(work_dir), epochs=15
    )
    return version_dir


def export_reader(base_dir, max_batch_size=8):
    module = TinyReaderServing(max_batch_size=max_batch_size)
    return export_model(
        module,
        name="reader",
        signatures={"serving_default": module.serve},
        base_dir=str(base_dir),
        warmup={"serving_default": {"story": [STORY], "question": [QUESTION]}},
    )
