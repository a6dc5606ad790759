"""Benchmark: MemN2N on bAbI, per-task test error next to the paper's numbers.

Protocol (Sukhbaatar et al. 2015, Table 1, "PE LS RN", joint training): one model
for all 20 tasks, 3 hops, d = 50, adjacent tying, position and temporal encoding,
linear start for 30 epochs then SGD lr 0.005 halved every 15 epochs for 60 epochs
(the authors' code), 10% random empty memories, empty slots as nil memories in the
softmax (`--empty-slots`), gradients clipped at norm 40, batch 32, memory 50, 10% of
train held out for validation; `--restarts N` keeps the run with the lowest training error (the paper
used 10). Runs on bAbI 1k and, with `--sizes 1k,10k`, on 10k (task 3 has no 10k
training file in the shared copy: it is reported as n/a and left out of the mean).

It prints, per size, a Markdown table: task, measured test error, the paper's error
(on the English bAbI 1k only, as the recipe's `metrics.json` names the data read; the
paper's 10k joint column is not reproduced here), the mean error, the failed-task
count (error > 5%) and the wall time, and writes them to `--out` (JSON; errors in
percent under `*_percent` keys, as in `metrics.json`).

Published (1k, PE LS RN, joint): mean 12.4%, 11 failed.

Commands:

    python -m bench.memn2n --quick            # < 5 min on a 2-core CPU: 1k, 8 epochs
    python -m bench.memn2n                    # 1k, full schedule (30 LS + 60 epochs)
    python -m bench.memn2n --sizes 1k,10k --restarts 3
"""

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "babi"


def cpu_name():
    try:
        out = subprocess.run(
            ["lscpu"], capture_output=True, text=True, check=True
        ).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return platform.processor() or "unknown"


def run_size(args, size):
    """Trains and evaluates one joint model on `size`; returns the measured dict.

    The recipe runs in its own process (`python -m zoo.recipes.memn2n_babi`), as a user
    runs it; its `metrics.json` is read back.
    """
    report_dir = os.path.join(args.work_dir, f"report-{size}")
    argv = [
        "--data", str(args.data),
        "--tasks", args.tasks,
        "--joint",
        "--size", size,
        "--hops", "3",
        "--restarts", str(args.restarts),
        "--decay-every", str(args.decay_every),
        "--run-dir", os.path.join(args.work_dir, f"run-{size}"),
        "--report-dir", report_dir,
        "--report-samples", "0",
        "--no-export",
        "--no-tensorboard",
        "--verbose", "2" if args.verbose else "0",
        "--seed", str(args.seed),
        "--ls-patience", str(args.ls_patience),
        "--empty-slots", args.empty_slots,
    ]  # fmt: skip
    if args.epochs is not None:
        argv += ["--epochs", str(args.epochs)]
    if args.ls_epochs is not None:
        argv += ["--ls-epochs", str(args.ls_epochs)]
    if args.quick:
        argv += ["--learning-rate", "0.01"]
    start = time.time()
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    subprocess.run(
        [sys.executable, "-m", "zoo.recipes.memn2n_babi", *argv],
        env={**os.environ, "PYTHONPATH": path},
        check=True,
    )
    seconds = time.time() - start
    with open(os.path.join(report_dir, "metrics.json")) as f:
        metrics = json.load(f)
    return {
        "size": size,
        "data": metrics["data"],
        "data_source": metrics["data_source"],
        "argv": argv,
        "seconds": round(seconds, 1),
        "test_error_percent": {
            int(k): v for k, v in metrics["test_error_percent"].items()
        },
        "mean_test_error_percent": metrics["mean_test_error_percent"],
        "failed_tasks": metrics["failed_tasks"],
        "unavailable": metrics["unavailable"],
        "task_names": {int(k): v for k, v in metrics["task_names"].items()},
        "runs": metrics["runs"],
    }


def format_table(result):
    from zoo.models.memn2n.babi_report import format_error_table, paper_errors

    errors = result["test_error_percent"]
    source = result["data_source"] or {}
    paper = paper_errors(source.get("language"), source.get("size"))
    if paper is not None:
        paper = {t: paper[t] for t in errors if t in paper}
    table = format_error_table(errors, paper, result["task_names"])
    return (
        f"{result['data']}, joint, PE LS RN, 3 hops: wall time "
        f"{result['seconds'] / 60:.1f} min\n\n{table}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.memn2n", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--data", default=str(DEFAULT_DATA), help="bAbI root (en/, en-10k/)"
    )
    parser.add_argument("--sizes", default="1k", help="comma list of 1k,10k")
    parser.add_argument("--tasks", default="1-20")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="8 epochs (LS until validation loss stalls, decay every 3), lr 0.01",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="default: the recipe's (30 LS + 60 = 90; quick: 8)",
    )
    parser.add_argument(
        "--decay-every", type=int, default=None, help="default 15 (quick: 3)"
    )
    parser.add_argument("--restarts", type=int, default=1)
    parser.add_argument("--ls-patience", type=int, default=1, help="see the recipe")
    parser.add_argument(
        "--ls-epochs", type=int, default=None, help="default: the recipe's (30)"
    )
    parser.add_argument(
        "--empty-slots", choices=("mask", "nil"), default="nil", help="see the recipe"
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--work-dir", default="runs/bench_memn2n")
    parser.add_argument("--out", default="reports/bench_memn2n.json")
    parser.add_argument("--verbose", action="store_true", help="one line per epoch")
    args = parser.parse_args(argv)
    if args.quick:
        args.epochs = args.epochs or 8
        args.ls_epochs = 0 if args.ls_epochs is None else args.ls_epochs
    args.decay_every = args.decay_every or (3 if args.quick else 15)
    if not pathlib.Path(args.data).is_dir():
        raise SystemExit(f"bAbI data not found: {args.data} (pass --data)")

    results = []
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        result = run_size(args, size)
        results.append(result)
        print("\n" + format_table(result) + "\n", flush=True)
    summary = {
        "command": "python -m bench.memn2n " + " ".join(argv or []),
        "machine": cpu_name(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "quick": args.quick,
        "results": results,
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
    print(f"machine: {summary['machine']} ({summary['cpus']} CPUs), {summary['date']}")
    print(f"written: {args.out}")
    return summary


if __name__ == "__main__":
    main()
