"""bench.translation's choice of decoding settings on the validation split."""

import dataclasses
import types

import pytest

from bench import translation as bench


@dataclasses.dataclass
class _Config:
    beam_width: int = 5
    alpha: float = 0.6
    beta: float = 0.2


def _fake_recipe(val_bleu, decoded):
    """A recipe whose BLEU depends on the decoding setting only (`val_bleu`)."""

    class Module:
        def __init__(self, config):
            self.config = config

        def _fn(self, texts):
            decoded.append((self.config, tuple(texts)))
            key = (self.config.beam_width, self.config.alpha, self.config.beta)
            return [{"translation": str(val_bleu[key])} for _ in texts]

        serve = translate_greedy = _fn

    return types.SimpleNamespace(
        make_serving_module=lambda model, preprocessor, config: Module(config),
        translate_corpus=lambda fn, texts: fn(texts),
        as_text=lambda value: value,
        bleu_scores=lambda hyps, refs: {"bleu": float(hyps[0])},
    )


def test_tune_decoding_takes_the_best_validation_setting():
    args = bench.parse_args(
        ["--tune-beams", "1,5", "--tune-alphas", "0.6,1.0", "--tune-betas", "0"]
    )
    assert args.tune_grid == [
        (1, 0.6, 0.0),
        (1, 1.0, 0.0),
        (5, 0.6, 0.0),
        (5, 1.0, 0.0),
    ]
    val_bleu = {(1, 0.6, 0.0): 30.0, (1, 1.0, 0.0): 30.0, (5, 0.6, 0.0): 31.5}
    val_bleu[(5, 1.0, 0.0)] = 32.25
    decoded = []
    val = types.SimpleNamespace(sources=["ein satz", "noch einer"], targets=["a", "b"])
    chosen = bench.tune_decoding(
        args,
        _fake_recipe(val_bleu, decoded),
        None,
        {"preprocessor": None},
        _Config(),
        val,
    )
    assert chosen == (5, 1.0, 0.0)
    # every setting decoded the validation sources, nothing else
    assert [(c.beam_width, c.alpha, c.beta) for c, _ in decoded] == args.tune_grid
    assert {texts for _, texts in decoded} == {("ein satz", "noch einer")}


def test_tune_ties_keep_the_earlier_setting():
    args = bench.parse_args(["--tune-beams", "5,10", "--tune-alphas", "0.6"])
    val_bleu = {(w, 0.6, b): 30.0 for w in (5, 10) for b in (0.0, 0.2)}
    val = types.SimpleNamespace(sources=["x"], targets=["y"])
    chosen = bench.tune_decoding(
        args, _fake_recipe(val_bleu, []), None, {"preprocessor": None}, _Config(), val
    )
    assert chosen == (5, 0.6, 0.0)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--tune-beams", "5,x"], "invalid literal"),
        (["--tune-beams", "0"], "must be >= 1"),
        (["--tune-alphas", "-1"], "'-1'"),
    ],
)
def test_tune_grid_bad_values(flags, message, capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(flags)
    assert message in capsys.readouterr().err


def test_raw_weights_needs_decode_only(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--raw-weights", "--directions", "de-en"])
    assert "--raw-weights scores a saved checkpoint" in capsys.readouterr().err
