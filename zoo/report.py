"""HTML reports of attention: documents with highlighted sentences and words, and
tables of attention weights.

`attention_report_html` renders documents the way Figure 5 of Yang et al. 2016 does:
every sentence gets a red bar whose strength is its sentence weight, every word a blue
background whose strength is its word weight scaled by the square root of its sentence
weight (`sqrt(p_s) * p_w`, the paper's choice, so that words of unimportant sentences
fade out). The highest-weighted sentence and words of each document are listed above
it.
`attention_grid_html` draws attention matrices as tables, one cell per weight (blue,
its strength the weight over the example's largest), in sections side by side: a
self-attentive embedder's hops over the words of a sentence, a memory network's hops
over the sentences of a story, a translation's target words over its source words
for several attention variants.

The files are self-contained (inline CSS, no scripts, no network) and every text is
escaped.
"""

import math
import os
from html import escape

__all__ = [
    "attention_grid_html",
    "attention_report_html",
    "display_spacing",
]

# Tokens written against the word before them, and the word after them.
_CLOSING = set(".,!?;:%)]}\u00bb\u201d\u2019\u2026") | {"...", "n't", "'s", "'re"}
_OPENING = set("([{\u00ab\u201c\u2018$#")
_JOINING = set("'\u2019-/")


def display_spacing(words):
    """Whether a space goes before each token, to show tokens as they were written.

    The preprocessor splits punctuation off words (`japan ' s`, `0 . 1 %`); shown
    with a space between every token they read as a tokenizer's output. No space
    goes before closing punctuation, after opening punctuation, or on either side
    of an apostrophe, hyphen or slash between two word characters, nor around a
    point or comma between two digits.

    Returns:
        A list of bools, one per token (the first is always False).
    """
    spaces = []
    for i, word in enumerate(words):
        prev, before = words[i - 1] if i else "", words[i - 2] if i > 1 else ""
        nxt = words[i + 1] if i + 1 < len(words) else ""
        joined = (
            i == 0
            or word in _CLOSING
            or prev in _OPENING
            or (word in _JOINING and prev[-1:].isalnum() and nxt[:1].isalnum())
            or (prev in _JOINING and before[-1:].isalnum() and word[:1].isalnum())
            or (word in ".," and prev[-1:].isdigit() and nxt[:1].isdigit())
            or (prev in ".," and before[-1:].isdigit() and word[:1].isdigit())
        )
        spaces.append(not joined)
    return spaces


_COMMON_CSS = """
.sub { color: #555; white-space: pre-line; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; }
.ok { color: #1a7f37; } .bad { color: #c62828; }
"""
_CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; color: #222; }
.doc { border: 1px solid #ccc; border-radius: 6px; padding: 0.8em 1em; margin: 1.2em 0; }
.head { font-size: 0.9em; color: #555; margin-bottom: 0.5em; }
.sent { display: flex; align-items: baseline; margin: 0.15em 0; }
.bar { flex: 0 0 1.2em; height: 1.1em; margin-right: 0.6em; border-radius: 2px; }
.w { padding: 0 0.12em; border-radius: 2px; }
.top { font-size: 0.85em; color: #444; margin: 0.3em 0 0.6em 0; }
"""


def _doc_html(i, ex):
    # Padding ("" sentences and words) dropped: (sentence, words, sentence weight
    # p_s, word scores sqrt(p_s) * p_w) of each sentence left.
    kept = []
    for s, (sentence, word_list) in enumerate(
        zip(ex["sentences"], ex["words"], strict=True)
    ):
        ps = float(ex["sentence_attention"][s])
        weights = ex["word_attention"][s]
        pairs = [(w, float(weights[j])) for j, w in enumerate(word_list) if w]
        if sentence or pairs:
            scores = [math.sqrt(max(ps, 0.0)) * pw for _, pw in pairs]
            kept.append((sentence, [w for w, _ in pairs], ps, scores))
    head = []
    if "predicted" in ex:
        prob = ex.get("probability")
        prob_text = f" ({prob:.3f})" if prob is not None else ""
        head.append(f"predicted: <b>{escape(str(ex['predicted']))}</b>{prob_text}")
    if ex.get("true") is not None:
        cls = "ok" if str(ex["true"]) == str(ex.get("predicted")) else "bad"
        head.append(f'true: <b class="{cls}">{escape(str(ex["true"]))}</b>')
    out = [f'<div class="doc"><div class="head">document {i + 1} &middot; ']
    out.append(" &middot; ".join(head) + "</div>")
    if not kept:
        return "".join(out) + "<p><i>(no words after preprocessing)</i></p></div>"
    s_att = [ps for _, _, ps, _ in kept]
    best = max(range(len(kept)), key=lambda s: s_att[s])
    # The five words with the highest score.
    pairs = [(w, x) for _, ws, _, xs in kept for w, x in zip(ws, xs, strict=True)]
    top = sorted(pairs, key=lambda x: -x[1])[:5]
    tops = ", ".join(f"{escape(w)} ({score:.2f})" for w, score in top)
    out.append(
        f'<div class="top">highest-weighted sentence: {best + 1} '
        f"(weight {s_att[best]:.2f}); top words: {tops}</div>"
    )
    s_max = max(max(s_att), 1e-12)
    w_max = max([max(xs) for *_, xs in kept if xs] + [1e-12])
    for sentence, ws, ps, scores in kept:
        spans = [
            f'<span class="w" style="background: rgba(30, 100, 230, '
            f'{score / w_max:.3f})" title="{score:.3f}">{escape(word)}</span>'
            for word, score in zip(ws, scores, strict=True)
        ]
        spaced = zip(spans, display_spacing(ws), strict=True)
        text = "".join(" " * space + span for span, space in spaced) or escape(sentence)
        out.append(
            f'<div class="sent"><span class="bar" '
            f'style="background: rgba(220, 40, 40, {ps / s_max:.3f})" '
            f'title="sentence weight {ps:.3f}"></span><span>{text}</span></div>'
        )
    out.append("</div>")
    return "".join(out)


def attention_report_html(
    path, examples, title="Attention report", summary=None, subtitle=None
):
    """Writes an HTML page highlighting the sentence and word attention of documents.

    Args:
        path: output `.html` file; parent folders are created.
        examples: list of dicts with `"sentences"` (list of S str), `"words"` (S
            lists of str), `"sentence_attention"` (S floats), `"word_attention"` (S
            lists of floats), and optionally `"predicted"`, `"probability"`, `"true"`.
            Padding (empty strings) is skipped.
        title: page title (one line; the first 100 characters of its first line
            are used).
        subtitle: optional text under the heading (e.g. a description of the data,
            several lines).
        summary: optional preformatted text shown at the top (e.g. the metrics of
            `zoo.metrics.format_report`).

    Returns:
        `path`.
    """
    legend = (
        "Red bars: sentence attention. Blue background: word attention scaled by the "
        "square root of its sentence's attention (Yang et al. 2016, Fig. 5). Hover "
        "for the values."
    )
    docs = [_doc_html(i, ex) for i, ex in enumerate(examples)]
    title = str(title).strip() or "Attention report"
    return _write_page(path, title, _CSS, subtitle, legend, summary, docs)


def _write_page(path, title, css, subtitle, legend, summary, body):
    """Writes a page: the first line of `title` (at most 100 characters) as its
    title and heading, `subtitle`, `legend`, `summary` (a table as rows of cells,
    the header row first, or preformatted text) and the HTML strings of `body`."""
    title = escape(str(title).strip().splitlines()[0][:100])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title><style>{_COMMON_CSS}{css}</style></head><body>",
        f"<h1>{title}</h1>",
        f'<p class="sub">{escape(subtitle)}</p>' if subtitle else "",
        f"<p>{escape(legend)}</p>",
    ]
    if isinstance(summary, (list, tuple)) and summary:
        head, *rows = summary
        parts.append('<table class="summary"><thead><tr>')
        parts.extend(f"<th>{escape(str(cell))}</th>" for cell in head)
        parts.append("</tr></thead><tbody>")
        for row in rows:
            cells = "".join(f"<td>{escape(str(cell))}</td>" for cell in row)
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</tbody></table>")
    elif summary:
        parts.append(f"<pre>{escape(summary)}</pre>")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join([*parts, *body, "</body></html>"]))
    return path


_GRID_CSS = """
body { font-family: sans-serif; margin: 2em; color: #222; }
.sections { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.section { flex: 1 1 28em; min-width: 0; }
.ex { border: 1px solid #ccc; border-radius: 6px; padding: 0.6em 0.8em;
      margin: 0.8em 0; overflow-x: auto; }
.cap { font-size: 0.9em; color: #444; margin-bottom: 0.4em; white-space: pre-line; }
table.att { border-collapse: collapse; font-size: 0.85em; }
table.att th { font-weight: normal; color: #333; padding: 0.1em 0.3em; }
table.att thead th { writing-mode: vertical-rl; transform: rotate(180deg);
                     text-align: left; vertical-align: bottom; }
table.att tbody th { text-align: right; white-space: nowrap; }
table.att td { min-width: 1.3em; height: 1.3em; border: 1px solid #eee; }
table.summary { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
table.summary th, table.summary td { border: 1px solid #ccc; padding: 0.2em 0.5em;
                                     text-align: right; }
table.summary th:first-child, table.summary td:first-child { text-align: left; }
"""


def _grid_example_html(ex):
    rows, columns = list(ex["rows"]), list(ex["columns"])
    weights = [[float(w) for w in row] for row in ex["weights"]]
    if len(weights) != len(rows) or any(len(r) != len(columns) for r in weights):
        raise ValueError(
            f"`weights` must be {len(rows)} rows of {len(columns)} values (the row "
            f"and column labels). Received: {len(weights)} rows of lengths "
            f"{sorted({len(r) for r in weights})}"
        )
    top = max([w for row in weights for w in row if math.isfinite(w)] + [1e-12])
    caption = escape(str(ex.get("caption", "")))
    if ex.get("ok") is not None:
        mark = "ok" if ex["ok"] else "bad"
        caption += f' <b class="{mark}">{"right" if ex["ok"] else "wrong"}</b>'
    out = [f'<div class="ex"><div class="cap">{caption}</div>']
    if not rows or not columns:
        empty = ex.get(
            "empty", "no attention weights: nothing left after preprocessing"
        )
        return out[0] + f"<p><i>({escape(str(empty))})</i></p></div>"
    out.append('<table class="att"><thead><tr><th></th>')
    out.extend(f"<th>{escape(str(c))}</th>" for c in columns)
    out.append("</tr></thead><tbody>")
    for label, row in zip(rows, weights, strict=True):
        out.append(f"<tr><th>{escape(str(label))}</th>")
        for w in row:
            a = max(w, 0.0) / top if math.isfinite(w) else 0.0
            out.append(
                f'<td style="background: rgba(30, 100, 230, {a:.3f})" '
                f'title="{w:.3f}"></td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def attention_grid_html(
    path, sections, title="Attention", subtitle=None, summary=None, legend=None
):
    """Writes an HTML page of attention matrices, sections side by side.

    Args:
        path: output `.html` file; parent folders are created.
        sections: list of `{"heading": str, "examples": [example, ...]}`; an
            example is a dict with `"rows"` (R labels), `"columns"` (C labels),
            `"weights"` (R rows of C floats, e.g. a `(R, C)` array), and optionally
            `"caption"` (text, several lines allowed), `"ok"` (True/False: the
            prediction was right/wrong) and `"empty"` (what to say when there are
            no rows or columns). The sections' i-th examples should show the
            same input, so they can be compared across the row.
        title: page title (its first line, at most 100 characters).
        subtitle: optional text under the heading (e.g. the data).
        summary: optional text at the top, preformatted (e.g. a metrics table), or
            a table as rows of cells, the header row first.
        legend: optional sentence saying what rows, columns and colour are.

    Returns:
        `path`.
    """
    legend = legend or (
        "Each cell is one attention weight; the darker, the larger (relative to the "
        "largest weight of its table). Hover for the values."
    )
    body = ['<div class="sections">']
    for section in sections:
        body.append(f'<div class="section"><h2>{escape(str(section["heading"]))}</h2>')
        body.extend(_grid_example_html(ex) for ex in section["examples"])
        body.append("</div>")
    body.append("</div>")
    title = str(title).strip() or "Attention"
    return _write_page(path, title, _GRID_CSS, subtitle, legend, summary, body)
