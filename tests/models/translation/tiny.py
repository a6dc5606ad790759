"""The arguments of the tiny translators the tests build.

Small sizes and the constructor's earlier defaults (Bahdanau, tanh readout, input
feeding, no dropout, untied, float32 logits): the tests that are about something
else than the defaults were written against those, and stay fast and exact.
"""

from zoo.models.translation.seq2seq_translator import SAVED_BEFORE_DEFAULTS

TINY = {**SAVED_BEFORE_DEFAULTS, "embedding_dim": 8, "encoder_units": 8}
TINY["decoder_units"] = 16
