from zoo.data import babi
from zoo.demo.babi import DEMO_TASK, generate_demo_lines, load_demo


def test_demo_lines_are_seeded_and_answered_by_their_supporting_fact():
    lines = generate_demo_lines(20, seed=5)
    assert lines == generate_demo_lines(20, seed=5)
    assert lines != generate_demo_lines(20, seed=6)
    examples = babi.parse_babi(lines)
    for ex in examples:
        (support,) = ex.supporting
        person = ex.question.split()[-1].rstrip("?")
        assert ex.story[support].startswith(person)
        assert ex.story[support].rstrip(".").endswith(ex.answer)
        later = ex.story[support + 1 :]  # the supporting fact is the person's last move
        assert not any(s.startswith(f"{person} ") for s in later)


def test_load_demo_splits_train_valid_and_test():
    tasks = load_demo(num_stories=30, test_stories=10, memory_size=8)
    (demo,) = tasks.values()
    assert (demo.task, demo.name, demo.missing) == (DEMO_TASK, "demo-where-is", None)
    train = babi.parse_babi(generate_demo_lines(30, seed=0), task=DEMO_TASK)
    assert len(demo.train) + len(demo.valid) == len(train)
    assert len(demo.valid) == round(len(train) * 0.1)
    test = babi.parse_babi(generate_demo_lines(10, seed=1), memory_size=8)
    assert [ex.question for ex in demo.test] == [ex.question for ex in test]
    assert demo.test[0].source == "<demo-test>:3"
    assert max(len(ex.story) for ex in demo.train + demo.valid + demo.test) <= 8
