"""The lesson's own sentences, which no training line may contain (checked after collapsing
whitespace). Used by build_corpus.py on every source and by everyday.py on every line it makes,
so that the lesson (../shared/seed/lesson-ko.txt) stays unseen text for the bundled model."""
import re

LESSON_SENTENCES = [
    "나는 어제 산 커피를 오늘 마셨다",
    "나는 커피를 마셨다",
    "나는 커피를 오늘 마셨다",
    "Which do you like better, coffee or tea?",
]
_SPACE = re.compile(r"\s+")
_NEEDLES = [_SPACE.sub(" ", s).strip() for s in LESSON_SENTENCES]


def contains_lesson(line):
    """True if `line`, whitespace collapsed, contains one of the lesson's sentences."""
    flat = _SPACE.sub(" ", line)
    return any(n in flat for n in _NEEDLES)
