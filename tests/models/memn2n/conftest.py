"""A small vocabulary file of the generated bAbI demo (shared by the family's tests)."""

import pytest


@pytest.fixture(scope="session")
def demo_vocab_file(tmp_path_factory):
    from zoo.demo.babi import load_demo
    from zoo.models.memn2n import babi_arrays

    tasks = load_demo(num_stories=40, test_stories=10, seed=3)
    examples = [ex for t in tasks.values() for ex in t.train + t.valid + t.test]
    vocab, _ = babi_arrays.build_vocabulary(examples)
    path = tmp_path_factory.mktemp("memn2n_vocab") / "vocab.txt"
    vocab.save(path)
    return path
