"""The main job: train every recipe on its demo data, export, verify, deploy.

```
python -m zoo.recipes [--export-dir saved_models] [--recipes MODULE ...] [--timeout S]
                  [--debug]
```

Each recipe module's `main(argv)` runs in a child process on its built-in demo
corpus (no `--data`) with `--export-dir`, `--run-dir runs/<name>` and
`--report-dir reports/<name>`, and returns `{"model", "metric", "value", "export"}`.
Every export is then verified with `python -m zoo.export.verify` in a fresh process,
the deployment files are regenerated for everything under the export folder
(`python -m zoo.export.deploy`), and a summary table is printed. A recipe whose module
does not exist yet is reported as "not available". The exit status is 1 when a recipe
or a verification failed. TensorFlow's C++ log lines are kept off stderr here and in
the children (`zoo.tf_logging.quiet`) unless `--debug` is given or
`TF_CPP_MIN_LOG_LEVEL` is set to 0-2.
"""

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from zoo import cli

RECIPES = [f"zoo.recipes.{name}" for name in cli.RECIPES]

# The child: `import zoo` registers no models there (ZOO_LAZY_IMPORT=1), so the
# recipe quiets TensorFlow's C++ log lines before it imports TensorFlow
# (TF_CPP_MIN_LOG_LEVEL is inherited from this process).
_CHILD = """
import json
import sys
from importlib import import_module
result = import_module(sys.argv[1]).main(json.loads(sys.argv[2]))
with open(sys.argv[3], "w") as f:
    json.dump(result, f, default=str)
"""


def _last_error(stderr):
    """The last exception line of a traceback (or the last line of output)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b", line):
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def run_recipe(module, export_dir, timeout):
    """Runs `module.main(argv)` in a child process; returns a result row."""
    name = module.rsplit(".", 1)[-1]
    row = dict(recipe=name, model=name, metric="", value=None, export=None)
    row.update(status="ok", verification="-", seconds=0.0, error="")
    try:
        available = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        available = False
    if not available:
        row.update(status="not available")
        return row
    argv = ["--export-dir", export_dir, "--run-dir", os.path.join("runs", name)]
    argv += ["--report-dir", os.path.join("reports", name)]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        print(f"[recipes] {name}: training on demo data", flush=True)
        command = [sys.executable, "-c", _CHILD, module, json.dumps(argv), out]
        try:
            proc = subprocess.run(
                command, env=cli.train_environment(), timeout=timeout,
                stdout=sys.stdout, stderr=subprocess.PIPE, text=True
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            row.update(status="failed", error=f"timed out after {timeout} s")
            return row
        finally:
            row["seconds"] = round(time.perf_counter() - start, 1)
        if proc.returncode != 0 or not os.path.exists(out):
            sys.stderr.write(proc.stderr[-4000:])
            error = f"exit {proc.returncode}: {_last_error(proc.stderr)}"
            row.update(status="failed", error=error)
            return row
        with open(out) as f:
            result = json.load(f)
    if not isinstance(result, dict):
        row.update(status="failed", error=f"main() returned {type(result).__name__}")
        return row
    row.update({k: result.get(k, row[k]) for k in ("model", "metric", "value")})
    row["export"] = result.get("export")
    return row


def verify_row(row, timeout):
    """Verifies the row's export in a fresh process (`zoo.export.verify`)."""
    from zoo.export.verify import verify_in_fresh_process

    if row["status"] != "ok":
        return row
    if not row["export"]:
        row["verification"] = "no export"
        return row
    print(f"[recipes] {row['recipe']}: verifying {row['export']}", flush=True)
    report = verify_in_fresh_process(row["export"], timeout=timeout)
    row["verification"] = "ok" if report["ok"] else "FAILED"
    if not report["ok"]:
        row["error"] = "; ".join(report["errors"])[:500]
    return row


def format_table(rows):
    """The summary table: one line per recipe, columns padded."""
    lines = [
        ["model", "metric (demo data)", "export", "verification", "status", "time"]
    ]
    for r in rows:
        metric = r["metric"] or "-"
        if isinstance(r["value"], (int, float)):
            metric = f"{r['metric']} = {r['value']:.4f}"
        export, seconds = r["export"] or "-", f"{r['seconds']:.0f} s"
        lines.append(
            [r["model"], metric, export, r["verification"], r["status"], seconds]
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    out = [
        " | ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True))
        for line in lines
    ]
    out.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m zoo.recipes",
        description="Train every recipe on its demo data, export, verify, deploy.",
    )
    add = parser.add_argument
    add("--export-dir", default="saved_models")
    add("--recipes", nargs="+", default=RECIPES, metavar="MODULE",
        help="recipe modules to run (default: all)")  # fmt: skip
    add("--timeout", type=int, default=1800,
        help="seconds allowed to each recipe and each verification")  # fmt: skip
    add("--debug", action="store_true", help="show TensorFlow's C++ log lines (also "
        "shown when TF_CPP_MIN_LOG_LEVEL is set to 0-2)")  # fmt: skip
    args = parser.parse_args(argv)
    from zoo import tf_logging

    tf_logging.quiet(args.debug)  # before anything imports TensorFlow; children too
    os.makedirs(args.export_dir, exist_ok=True)
    rows = [
        verify_row(run_recipe(module, args.export_dir, args.timeout), args.timeout)
        for module in args.recipes
    ]

    from zoo.export.deploy import write_deployment

    deployment = write_deployment(args.export_dir)
    print(f"\n{format_table(rows)}\n")
    print(
        f"deployment files for {', '.join(deployment['models']) or 'no models'} "
        f"({deployment['image']}): {os.path.join(args.export_dir, 'serve.sh')}"
    )
    failed = [r for r in rows if "failed" in (r["status"], r["verification"].lower())]
    for r in failed:
        print(f"FAILED {r['recipe']}: {r['error']}", file=sys.stderr)
    missing = [r["recipe"] for r in rows if r["status"] == "not available"]
    if missing:
        print(f"not available yet: {', '.join(missing)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
