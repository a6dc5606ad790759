"""The attention survey on one bench: every attention variant of the translation
recipe, and no attention, trained with the same budget and compared by BLEU, by
source length, by speed, by how peaked their attention is, and by heat map.

Each variant is `python -m zoo.recipes.translation` with the recipe's defaults for
`--data`, the variant's flags (`VARIANTS`) and `--time-limit MIN` (the same minutes of
training for all; the recipe keeps the weights of the best validation BLEU seen within
them: every choice is made on validation). Its export (`VERSION.keras`, the
`Seq2SeqTextTranslator` task on raw text) then translates the test set greedily, once;
from that one decoding the bench reports

- test BLEU (lowercased 13a, cased 13a, lowercased Moses-tokenized: `bench.
  translation_time.score`) and BLEU by source length in words (1-10, 11-15, 16-20,
  21+, Bahdanau et al.'s Figure 2);
- training target subwords per second (the recipe's `train_tokens_per_second`) and
  decoding sentences per second (this decoding, batches of 64 of similar length);
- the mean entropy of the attention weights (nats, over every target subword of every
  test sentence) and the same divided by log(source length), 1 for uniform weights, 0
  for weights on one source subword ("none" has no weights: n/a).

It writes `OUT/variants.json` (every number, the commands and the machine),
`OUT/variants.md` (the table) and `OUT/attention.html`: the first `--examples` test
sentences' attention for every variant side by side (`zoo.report.attention_grid_html`),
the table above them.

Commands:

    python -m bench.attention_variants --data ../shared/data/multi30k \\
        --source de --target en --minutes 10
    python -m bench.attention_variants --data ../shared/data/talks_en_vi \\
        --source en --target vi --minutes 10 --variants none,bahdanau,luong-general
    python -m bench.attention_variants --quick     # the demo pair, 1 minute each

A variant whose run folder already holds an export is not trained again (delete the
folder to retrain it); `--rescore` only decodes and scores the existing exports.
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

from bench.translation import ATTENTIONS as VARIANTS

# The dot and cosine scores compare the decoder state with the encoder outputs, so
# both need one width: with `--data` the recipe's decoder has 256 units and its
# bidirectional encoder 2 x 256, so these variants run 2 x 128 encoder units (the
# demo's 2 x 32 already match its 64 decoder units).
REAL_DATA_FLAGS = {
    "luong-dot": ["--encoder-units", "128"],
    "luong-cosine": ["--encoder-units", "128"],
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.attention_variants",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", help="a parallel corpus the recipe reads")
    parser.add_argument("--source", default="de")
    parser.add_argument("--target", default="en")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"comma-separated, of: {', '.join(VARIANTS)}",
    )
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="training minutes per variant"
    )
    parser.add_argument("--examples", type=int, default=4, help="sentences drawn")
    parser.add_argument("--out", default="reports/attention_variants")
    parser.add_argument(
        "--extra", default="", help='more recipe flags, e.g. --extra="--epochs 3"'
    )
    parser.add_argument(
        "--rescore", action="store_true", help="score the existing exports only"
    )
    parser.add_argument(
        "--quick", action="store_true", help="the demo pair, 1 minute per variant"
    )
    args = parser.parse_args(argv)
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"--variants: unknown {unknown}; known: {', '.join(VARIANTS)}")
    if not args.minutes > 0:
        parser.error(f"--minutes must be > 0. Received: {args.minutes}")
    if args.quick:
        args.data, args.minutes = None, min(args.minutes, 1.0)
        args.source, args.target = "src", "tgt"  # the demo pair's names
    return args


def recipe_command(args, variant):
    """The recipe's command line for `variant`."""
    import shlex

    folder = os.path.join(args.out, variant)
    command = [
        sys.executable, "-m", "zoo.recipes.translation",
        "--run-dir", os.path.join(folder, "run"),
        "--report-dir", os.path.join(folder, "report"),
        "--export-dir", os.path.join(folder, "export"),
        "--time-limit", str(args.minutes),
        "--report-samples", "0",
        *VARIANTS[variant],
    ]  # fmt: skip
    if args.data:
        command += ["--data", args.data, "--source", args.source]
        command += ["--target", args.target, *REAL_DATA_FLAGS.get(variant, [])]
    return command + shlex.split(args.extra)


def test_pairs(args):
    """The test split the recipe scored (its seeded split for the demo pair)."""
    from bench.translation import load_splits

    return load_splits(args, args.source, args.target)["test"]


def attention_entropy(rows):
    """`(mean entropy in nats, mean entropy / log(source length))` over every target
    subword of `rows` (`Seq2SeqTextTranslator.translate(..., return_attention=True)`
    results); rows of zero weight (padding) are left out; None without weights."""
    total = normalized = count = 0
    for row in rows:
        n_source = len([t for t in row["source_tokens"] if t])
        for weights in row["attention"]:
            mass = float(sum(weights))
            if mass <= 0:
                continue
            p = [w / mass for w in weights if w > 0]
            h = -sum(q * math.log(q) for q in p)
            total += h
            normalized += h / math.log(n_source) if n_source > 1 else 0.0
            count += 1
    if not count:
        return None, None
    return total / count, normalized / count


def evaluate_variant(args, variant, test):
    """Decodes the test set with the variant's export; returns its numbers and the
    attention of the first `--examples` sentences."""
    import keras

    import zoo  # noqa: F401  (registers the saved classes)
    from bench.translation import bucket_bleu, latest_export
    from bench.translation_time import score

    folder = os.path.join(args.out, variant)
    version = latest_export(os.path.join(folder))
    task = keras.saving.load_model(version + ".keras", compile=False)
    start = time.perf_counter()
    rows = task.translate(test.sources, return_attention=True)
    seconds = time.perf_counter() - start
    hypotheses = [r["translation"] for r in rows]
    with open(os.path.join(folder, "report", "metrics.json"), encoding="utf-8") as f:
        trained = json.load(f)
    entropy, normalized = (None, None)
    if variant != "none":
        entropy, normalized = attention_entropy(rows)
    result = {
        "variant": variant,
        "flags": VARIANTS[variant],
        **score(hypotheses, test.targets, args.target if args.data else "en"),
        "by_length": bucket_bleu(test.sources, hypotheses, test.targets),
        "train_tokens_per_second": trained.get("train_tokens_per_second"),
        "train_seconds": trained.get("train_seconds"),
        "decode_sentences_per_second": len(test.sources) / seconds,
        "attention_entropy": entropy,
        "attention_entropy_normalized": normalized,
        "test_pairs": len(test.sources),
        "export": version,
    }
    return result, rows[: args.examples], hypotheses


def _cell(value, digits=2):
    return "n/a" if value is None else f"{value:.{digits}f}"


def table_rows(results):
    """The variants table as rows of cells, the header first (one row per variant)."""
    buckets = list(results[0]["by_length"]) if results else []
    head = ["variant", "BLEU (lc 13a)", "BLEU (cased)"]
    head += [f"BLEU {b} words" for b in buckets]
    head += ["train subwords/s", "decode sent/s", "entropy (nats)", "entropy / log n"]
    rows = [head]
    for r in results:
        cells = [r["variant"], _cell(r["bleu_lowercase"]), _cell(r["bleu"])]
        for b in buckets:
            part = r["by_length"][b]
            cells.append("n/a" if part is None else f"{part['bleu']:.2f} ({part['n']})")
        cells += [
            _cell(r["train_tokens_per_second"], 0),
            _cell(r["decode_sentences_per_second"], 1),
            _cell(r["attention_entropy"], 3),
            _cell(r["attention_entropy_normalized"], 3),
        ]
        rows.append(cells)
    return rows


def markdown(rows):
    """`table_rows`' rows as a markdown table."""
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


def grid_sections(variants, examples, references):
    """`attention_grid_html` sections: per variant, its attention over the same test
    sentences (rows: the target subwords it wrote; columns: the source subwords)."""
    sections = []
    for variant, rows in zip(variants, examples, strict=True):
        drawn = []
        for i, row in enumerate(rows):
            source = [t for t in row["source_tokens"] if t]
            target = [t for t in row["target_tokens"] if t]
            weights = [list(map(float, w[: len(source)])) for w in row["attention"]]
            drawn.append(
                {
                    "rows": target if variant != "none" else [],
                    "columns": source if variant != "none" else [],
                    "weights": weights[: len(target)] if variant != "none" else [],
                    "caption": f"test sentence {i + 1}\ntranslation: "
                    f"{row['translation']}\nreference: {references[i]}",
                    "empty": "no attention: the decoder reads a fixed mean context",
                }
            )
        sections.append({"heading": variant, "examples": drawn})
    return sections


def main(argv=None):
    args = parse_args(argv)
    from zoo.report import attention_grid_html

    os.makedirs(args.out, exist_ok=True)
    test = test_pairs(args)
    results, examples, commands = [], [], {}
    for variant in args.variants:
        command = recipe_command(args, variant)
        commands[variant] = " ".join(command[1:])
        export_dir = os.path.join(args.out, variant, "export")
        if not args.rescore and not os.path.isdir(export_dir):
            print(f"[bench] training {variant}: {commands[variant]}", flush=True)
            subprocess.run(command, check=True)
        result, drawn, hypotheses = evaluate_variant(args, variant, test)
        with open(
            os.path.join(args.out, variant, f"hypotheses.{args.target}.txt"),
            "w",
            encoding="utf-8",
        ) as f:
            f.writelines(h.replace("\n", " ") + "\n" for h in hypotheses)
        results.append(result)
        examples.append(drawn)
        print(json.dumps(result, ensure_ascii=False, default=float), flush=True)
    rows = table_rows(results)
    table = markdown(rows)
    data = args.data or "the generated demo pair"
    extra = f", recipe flags {args.extra}" if args.extra.strip() else ""
    note = (
        f"{data}, {args.source}->{args.target}: at most {args.minutes:g} minutes of "
        f"training per variant{extra} (the recipe's --data defaults otherwise), the "
        "best validation BLEU kept, greedy decoding of the test set."
    )
    with open(os.path.join(args.out, "variants.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "command": "python -m bench.attention_variants "
                + " ".join(argv if argv is not None else sys.argv[1:]),
                "note": note,
                "machine": f"{platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} cores",
                "date": time.strftime("%Y-%m-%d"),
                "recipe_commands": commands,
                "results": results,
            },
            f,
            indent=2,
            ensure_ascii=False,
            default=float,  # NumPy scalars
        )
    with open(os.path.join(args.out, "variants.md"), "w", encoding="utf-8") as f:
        f.write(note + "\n\n" + table + "\n")
    page = attention_grid_html(
        os.path.join(args.out, "attention.html"),
        grid_sections(args.variants, examples, test.targets),
        title=f"Attention variants: {os.path.basename(os.path.normpath(data))} "
        f"{args.source}->{args.target}",
        subtitle=note,
        summary=rows,
        legend="Rows: the target subwords each variant wrote; columns: the source "
        "subwords; the darker a cell, the more weight that target subword gave that "
        "source subword (no attention: no table).",
    )
    print(table)
    print(f"[bench] {page}")
    return results


if __name__ == "__main__":
    main()
