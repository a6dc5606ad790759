"""Labelled texts with integer labels: one type for documents and sentences alike."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class LabelledTexts:
    """Raw texts and their class ids.

    Attributes:
        texts: list of str.
        labels: int32 NumPy array, one class id per text.
    """

    texts: list
    labels: np.ndarray

    def __post_init__(self):
        self.texts = list(self.texts)
        self.labels = np.asarray(self.labels, dtype="int32")
        if len(self.texts) != len(self.labels):
            raise ValueError(
                "`texts` and `labels` must have the same length. Received: "
                f"len(texts)={len(self.texts)}, len(labels)={len(self.labels)}"
            )

    def __len__(self):
        return len(self.texts)

    def subset(self, indices):
        """The texts at `indices` (a sequence of ints), in that order."""
        indices = np.asarray(indices, dtype="int64")
        return LabelledTexts([self.texts[i] for i in indices], self.labels[indices])

    def sample(self, limit, seed):
        """A seeded sample of at most `limit` texts, in their original order
        (`self` when `limit` is None or not smaller than the size)."""
        if limit is None or len(self) <= limit:
            return self
        keep = np.random.default_rng(seed).permutation(len(self))[:limit]
        return self.subset(np.sort(keep))


@dataclasses.dataclass
class ClassificationData:
    """Train / validation / test `LabelledTexts` and the class names.

    Attributes:
        train, validation, test: `LabelledTexts`.
        label_names: tuple of str; class id i is `label_names[i]`.
        description: a short human-readable description of the data and split.
    """

    train: LabelledTexts
    validation: LabelledTexts
    test: LabelledTexts
    label_names: tuple
    description: str = ""

    def __post_init__(self):
        self.label_names = tuple(str(name) for name in self.label_names)

    @property
    def num_classes(self):
        return len(self.label_names)

    @classmethod
    def from_documents(cls, splits):
        """From `zoo.data.documents.DocumentSplits` (string labels)."""
        from zoo.data.documents import encode_labels

        parts = {
            part: LabelledTexts(
                getattr(splits, part).texts,
                encode_labels(getattr(splits, part), splits.label_names),
            )
            for part in ("train", "validation", "test")
        }
        return cls(
            **parts, label_names=splits.label_names, description=splits.description
        )

    @classmethod
    def from_sentences(cls, splits, description=""):
        """From `{"train", "validation", "test"}` -> `zoo.data.sentences.SentenceData`."""
        parts = {
            part: LabelledTexts(splits[part].texts, splits[part].labels)
            for part in ("train", "validation", "test")
        }
        return cls(
            **parts, label_names=splits["train"].label_names, description=description
        )

    def sample(self, max_train=None, max_eval=None, seed=0):
        """Seeded samples of at most `max_train` training texts and `max_eval`
        validation and test texts each (the others are kept); the description says
        what was sampled."""
        parts, notes = {}, []
        for part, limit in (
            ("train", max_train),
            ("validation", max_eval),
            ("test", max_eval),
        ):
            texts = getattr(self, part)
            parts[part] = texts.sample(limit, seed)
            if len(parts[part]) < len(texts):
                notes.append(f"{len(parts[part])} of {len(texts)} {part} texts sampled")
        description = (
            "; ".join([self.description, *notes]) if notes else self.description
        )
        return dataclasses.replace(self, **parts, description=description)

    def sizes(self):
        """`{"train": n, "validation": n, "test": n}`."""
        return {
            part: len(getattr(self, part)) for part in ("train", "validation", "test")
        }
