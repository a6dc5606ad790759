"""Tiny generated corpora in the layouts users bring, for the recipes' own-data tests.

Nothing here is real data: a few dozen seeded examples per corpus, learnable from a
handful of key words, written in every format the readers accept:

- labelled texts (documents of a few sentences, or single sentences) in English,
  German or Vietnamese, three topic classes: `labelled_texts`, written by
  `write_table` (CSV, TSV, JSON lines; header or not; columns in any order; `.gz`;
  byte-order mark) and `write_class_folders` (`<class>/<n>.txt`, with or without
  `train/` and `test/` above);
- English -> Vietnamese sentence pairs: `sentence_pairs`, written as line-aligned
  split files (`write_line_aligned`) or a TSV (`write_pair_tsv`);
- bAbI task 1 stories: `babi_lines`, written by `write_babi`.
"""

import csv
import gzip
import io
import json
import os
import random

BOM = "\ufeff"

# Three topics per language: a document's class is decided by its key sentences;
# the filler sentences are shared by every class.
TOPICS = {
    "en": {
        "food": [
            "the soup tasted of garlic",
            "we baked fresh bread",
            "the chef cooked a spicy curry",
            "the cake was sweet and soft",
        ],
        "sport": [
            "the team won the match",
            "the striker scored a late goal",
            "the runner finished the race first",
            "the coach praised the players",
        ],
        "weather": [
            "heavy rain fell all night",
            "the sun was shining over the hills",
            "a cold wind blew from the north",
            "snow covered the roads",
        ],
    },
    "de": {
        "küche": [
            "Die Suppe schmeckte nach Knoblauch",
            "Wir backten frisches Brot",
            "Der Koch bereitete ein scharfes Gericht zu",
            "Der Kuchen war süß und weich",
        ],
        "sport": [
            "Die Mannschaft gewann das Spiel",
            "Der Stürmer schoss ein spätes Tor",
            "Die Läuferin war als Erste im Ziel",
            "Der Trainer lobte die Spieler",
        ],
        "wetter": [
            "Die ganze Nacht fiel starker Regen",
            "Die Sonne schien über den Hügeln",
            "Ein kalter Wind wehte aus Nordosten",
            "Schnee bedeckte die Straßen",
        ],
    },
    "vi": {
        "thể thao": [
            "Đội bóng đã thắng trận đấu",
            "Tiền đạo ghi bàn ở phút cuối",
            "Vận động viên về đích đầu tiên",
            "Huấn luyện viên khen các cầu thủ",
        ],
        "thời tiết": [
            "Trời mưa to suốt đêm",
            "Mặt trời chiếu sáng trên đồi",
            "Gió lạnh thổi từ phía bắc",
            "Tuyết phủ kín các con đường",
        ],
        "ẩm thực": [
            "Món súp có vị tỏi",
            "Chúng tôi nướng bánh mì mới",
            "Đầu bếp nấu món cà ri cay",
            "Bánh ngọt rất mềm và thơm",
        ],
    },
}
FILLERS = {
    "en": [
        "it was a tuesday",
        "people talked about it for days",
        "the newspaper wrote a short note, then a longer one",
        'my neighbour said "what a day"',
    ],
    "de": [
        "Es war ein Dienstag",
        "Die Leute sprachen tagelang darüber",
        "Die Zeitung schrieb eine kurze Notiz, dann eine längere",
        "Mein Nachbar sagte: „Was für ein Tag“",
    ],
    "vi": [
        "Hôm đó là thứ ba",
        "Mọi người bàn tán nhiều ngày",
        "Tờ báo viết một ghi chú ngắn, rồi một bài dài hơn",
        "Hàng xóm kể cho tôi câu chuyện",
    ],
}


def classes(language="en"):
    """The class names of `labelled_texts(language=...)`, sorted."""
    return sorted(TOPICS[language])


def labelled_texts(n=36, language="en", seed=0, sentences=(2, 4)):
    """`n` seeded `(text, label)` pairs, the classes in turn (balanced).

    Args:
        n: number of texts.
        language: `"en"`, `"de"` or `"vi"`.
        seed: the same seed gives the same texts.
        sentences: `(fewest, most)` sentences per text; `(1, 1)` gives one-sentence
            texts (a key sentence, sometimes with a filler clause).
    """
    rng = random.Random(seed)
    names = classes(language)
    out = []
    for i in range(n):
        label = names[i % len(names)]
        count = rng.randint(*sentences)
        if count == 1:
            text = rng.choice(TOPICS[language][label])
            if rng.random() < 0.5:
                filler = rng.choice(FILLERS[language])
                text += ", " + filler[0].lower() + filler[1:]
            out.append((text[0].upper() + text[1:] + ".", label))
            continue
        parts = [rng.choice(FILLERS[language]) for _ in range(count - 1)]
        parts.insert(rng.randint(0, len(parts)), rng.choice(TOPICS[language][label]))
        text = " ".join(p[0].upper() + p[1:] + rng.choice(".!.") for p in parts)
        out.append((text, label))
    return out


def _write_text(path, text, gz=False, bom=False):
    """Writes `text` as UTF-8 (with a byte-order mark, gzip-compressed if asked)."""
    data = ((BOM if bom else "") + text).encode("utf-8")
    if gz:
        data = gzip.compress(data)
    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return os.fspath(path)


def write_table(
    path,
    rows,
    format,
    columns=None,
    header=True,
    gz=False,
    bom=False,
    extra_column=None,
):
    """Writes `(text, label)` rows as CSV, TSV or JSON lines.

    Args:
        path: the file written.
        rows: `(text, label)` pairs.
        format: `"csv"` (RFC 4180 quoting), `"tsv"` (no quoting) or `"jsonl"`.
        columns: `{"text": name, "label": name}`, the header names (JSON keys); the
            dict's order is the column order. Default: `text`, then `label`.
        header: write a header row (CSV/TSV).
        gz: gzip-compress the file.
        bom: start the file with a UTF-8 byte-order mark.
        extra_column: `(name, prefix)` of an id column written first (values
            `prefix0`, `prefix1`, ...), so that the text is not the first column.

    Returns:
        The path, as a str.
    """
    columns = dict(columns or {"text": "text", "label": "label"})
    names = list(columns.values())
    records = []
    for i, (text, label) in enumerate(rows):
        value = {"text": text, "label": label}
        record = [value[key] for key in columns]
        if extra_column:
            record.insert(0, f"{extra_column[1]}{i}")
        records.append(record)
    if extra_column:
        names.insert(0, extra_column[0])
    out = io.StringIO()
    if format == "jsonl":
        for record in records:
            fields = dict(zip(names, record, strict=True))
            out.write(json.dumps(fields, ensure_ascii=False) + "\n")
    elif format == "tsv":  # tab-separated, no quoting (texts hold no tabs)
        lines = ([names] if header else []) + records
        out.write("".join("\t".join(fields) + "\n" for fields in lines))
    else:  # texts hold commas and quotes: quoted
        writer = csv.writer(out, lineterminator="\n")
        if header:
            writer.writerow(names)
        writer.writerows(records)
    return _write_text(path, out.getvalue(), gz=gz, bom=bom)


def write_label_tsv(path, rows):
    """Writes `label<TAB>text` lines (no header): the sentence reader's own TSV."""
    return _write_text(path, "".join(f"{label}\t{text}\n" for text, label in rows))


def write_class_folders(root, rows, split=None):
    """Writes one folder per class, one `.txt` per text: `root[/split]/<class>/i.txt`.

    Returns:
        The folder holding the class folders.
    """
    folder = os.path.join(root, split) if split else os.fspath(root)
    for i, (text, label) in enumerate(rows):
        _write_text(os.path.join(folder, label, f"{i:03d}.txt"), text + "\n")
    return folder


def split_sizes(n_train, n_valid, n_test):
    """`{"train": a, "validation": b, "test": c}`, as the recipes log them."""
    return {"train": n_train, "validation": n_valid, "test": n_test}


# --- Parallel text ---------------------------------------------------------------------

_NOUNS = {
    "dog": "con chó",
    "cat": "con mèo",
    "bird": "con chim",
    "man": "người đàn ông",
    "woman": "người phụ nữ",
    "child": "đứa trẻ",
    "fish": "con cá",
}
_ADJECTIVES = {"big": "to", "small": "nhỏ", "old": "già", "happy": "vui vẻ"}
_VERBS = {
    "sees": "nhìn thấy",
    "likes": "thích",
    "follows": "đi theo",
    "finds": "tìm thấy",
}


def _phrase(rng):
    noun = rng.choice(sorted(_NOUNS))
    if rng.random() < 0.5:
        adjective = rng.choice(sorted(_ADJECTIVES))
        return f"the {adjective} {noun}", f"{_NOUNS[noun]} {_ADJECTIVES[adjective]}"
    return f"the {noun}", _NOUNS[noun]


def sentence_pairs(n, seed=0, clauses=1):
    """`n` seeded (English, Vietnamese) sentence pairs; `clauses` joined by "and"."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        en, vi = [], []
        for _ in range(clauses):
            (s_en, s_vi), (o_en, o_vi) = _phrase(rng), _phrase(rng)
            verb = rng.choice(sorted(_VERBS))
            en.append(f"{s_en} {verb} {o_en}")
            vi.append(f"{s_vi} {_VERBS[verb]} {o_vi}")
        pairs.append((" and ".join(en) + " .", " và ".join(vi) + " ."))
    return pairs


def write_line_aligned(folder, splits, source="en", target="vi", gz=False):
    """Writes `{split}.{source}` / `{split}.{target}` (`.gz`) for each split.

    Args:
        folder: the folder written into.
        splits: `{file stem: [(source, target), ...]}`, e.g. `{"train": ..,
            "dev": .., "test": ..}`.
    """
    suffix = ".gz" if gz else ""
    for stem, pairs in splits.items():
        for lang, side in ((source, 0), (target, 1)):
            text = "".join(p[side] + "\n" for p in pairs)
            _write_text(os.path.join(folder, f"{stem}.{lang}{suffix}"), text, gz=gz)
    return os.fspath(folder)


def write_pair_tsv(path, pairs, english_first=True):
    """Writes `english<TAB>vietnamese` lines (or the other way round)."""
    lines = [(en, vi) if english_first else (vi, en) for en, vi in pairs]
    return _write_text(path, "".join(f"{a}\t{b}\n" for a, b in lines))


# --- bAbI --------------------------------------------------------------------------------

_PEOPLE = ("Mary", "John", "Sandra", "Daniel")
_PLACES = ("kitchen", "garden", "office", "hallway", "bathroom")
_MOVES = ("moved to", "went to", "journeyed to", "travelled to")


def babi_lines(stories, seed=0, questions=2):
    """bAbI task 1 ("single supporting fact") lines: `stories` stories, each with
    `questions` questions after two statements each; returns `(lines, n_questions)`."""
    rng = random.Random(seed)
    lines, asked = [], 0
    for _ in range(stories):
        number, where = 0, {}
        for _ in range(questions):
            for _ in range(2):
                number += 1
                person, place = rng.choice(_PEOPLE), rng.choice(_PLACES)
                where[person] = (place, number)
                lines.append(f"{number} {person} {rng.choice(_MOVES)} the {place}.")
            number += 1
            person = rng.choice(sorted(where))
            place, fact = where[person]
            lines.append(f"{number} Where is {person}? \t{place}\t{fact}")
            asked += 1
    return lines, asked


def write_babi(folder, train_stories=40, test_stories=10, seed=0, name="single"):
    """Writes `qa1_{name}_train.txt` / `qa1_{name}_test.txt`; returns
    `(folder, train questions, test questions)`."""
    counts = []
    for split, stories, offset in (
        ("train", train_stories, 0),
        ("test", test_stories, 1),
    ):
        lines, asked = babi_lines(stories, seed + offset)
        path = os.path.join(folder, f"qa1_{name}_{split}.txt")
        _write_text(path, "\n".join(lines) + "\n")
        counts.append(asked)
    return os.fspath(folder), counts[0], counts[1]
