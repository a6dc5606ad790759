"""The translation report: attention heat maps of test translations."""

import os


def heatmap_title(source, hypothesis, reference, width=90):
    """The three lines over a heat map: source, the model's translation, reference,
    each on one line and cut to `width` characters."""

    def cut(text):
        text = " ".join(str(text).split())
        return text if len(text) <= width else text[: width - 3] + "..."

    names = ("source", "translation", "reference")
    texts = (source, hypothesis, reference)
    return "\n".join(f"{n}: {cut(t)}" for n, t in zip(names, texts, strict=True))


def plot_translation_attention(outputs, sources, references, report_dir, log=print):
    """`report_dir/attention_<i>.png`: the attention of each of `outputs` (a
    translation signature's per-sentence outputs for `sources[i]`) over the source
    and output subwords, titled by `heatmap_title`; returns the paths."""
    from zoo.models.translation.translator import as_text
    from zoo.viz import attention_heatmap

    paths = []
    for i, out in enumerate(outputs):
        rows = [as_text(t) for t in out["target_tokens"] if t]
        cols = [as_text(t) for t in out["source_tokens"] if t]
        if not (rows and cols):
            continue
        path = os.path.join(report_dir, f"attention_{i}.png")
        weights = out["attention"][: len(rows), : len(cols)]
        hypothesis = as_text(out["translation"])
        title = heatmap_title(sources[i], hypothesis, references[i])
        attention_heatmap(weights, rows, cols, path, title)
        log(f"heat map: {path}")
        paths.append(path)
    return paths
