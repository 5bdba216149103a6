#!/usr/bin/env python3
"""attnlab's own everyday sentences in Korean and English, built from templates and word
lists written for this project (no external text). They cover the lesson's patterns:
subject–object–verb, time words, relative clauses like "어제 산 커피", pronouns that refer
back, and questions such as "Which do you like better, coffee or tea?".

    python3 corpus/everyday.py        # prints the sentences, Korean first
"""
import itertools


def has_batchim(word):
    c = ord(word[-1])
    return 0xAC00 <= c <= 0xD7A3 and (c - 0xAC00) % 28 != 0


def eul(w):  # object particle 을/를
    return w + ("을" if has_batchim(w) else "를")


def eun(w):  # topic particle 은/는
    return w + ("은" if has_batchim(w) else "는")


def i_ga(w):  # subject particle 이/가
    return w + ("이" if has_batchim(w) else "가")


def wa(w):  # 와/과
    return w + ("과" if has_batchim(w) else "와")


# (Korean noun, English noun, kind)
THINGS = [
    ("커피", "coffee", "drink"), ("차", "tea", "drink"), ("우유", "milk", "drink"), ("물", "water", "drink"),
    ("주스", "juice", "drink"), ("녹차", "green tea", "drink"), ("콜라", "cola", "drink"),
    ("사과", "apple", "food"), ("빵", "bread", "food"), ("밥", "rice", "food"), ("김치", "kimchi", "food"),
    ("라면", "ramen", "food"), ("케이크", "cake", "food"), ("샌드위치", "sandwich", "food"), ("귤", "tangerine", "food"),
    ("책", "book", "read"), ("신문", "newspaper", "read"), ("편지", "letter", "read"), ("소설", "novel", "read"),
    ("영화", "movie", "watch"), ("드라마", "drama", "watch"), ("뉴스", "news", "watch"),
]
# kind → (Korean past, Korean present, Korean future, question stem, English past, English base)
VERBS = {
    "drink": ("마셨다", "마신다", "마실 것이다", "마셨어요", "drank", "drink"),
    "food": ("먹었다", "먹는다", "먹을 것이다", "먹었어요", "ate", "eat"),
    "read": ("읽었다", "읽는다", "읽을 것이다", "읽었어요", "read", "read"),
    "watch": ("봤다", "본다", "볼 것이다", "봤어요", "watched", "watch"),
}
# (Korean subject, English subject, English pronoun for later reference)
PEOPLE = [
    ("나", "I", "I"), ("너", "you", "you"), ("그", "he", "he"), ("그녀", "she", "she"), ("우리", "we", "we"),
    ("민수", "Minsu", "he"), ("지영", "Jiyoung", "she"), ("친구", "my friend", "she"), ("동생", "my brother", "he"),
    ("엄마", "my mother", "she"), ("아빠", "my father", "he"), ("선생님", "the teacher", "she"),
]
PAST_TIMES = [("어제", "yesterday"), ("지난주에", "last week"), ("그저께", "the day before yesterday"),
              ("어젯밤에", "last night"), ("주말에", "on the weekend")]
NOW_TIMES = [("오늘", "today"), ("아침에", "in the morning"), ("저녁에", "in the evening"), ("점심에", "at lunch")]
FUTURE_TIMES = [("내일", "tomorrow"), ("다음 주에", "next week"), ("이따가", "later")]
PLACES = [("시장에서", "at the market"), ("가게에서", "at the shop"), ("편의점에서", "at the convenience store"),
          ("카페에서", "at the cafe")]


def subj(ko):
    return {"나": "나는", "너": "너는", "우리": "우리는"}.get(ko, eun(ko))


def sentences(limit=1600):
    ko, en = [], []
    # the lesson's own sentences first
    ko.append("나는 어제 산 커피를 오늘 마셨다")
    en.append("Which do you like better, coffee or tea?")
    for (pk, pe, pron), (tk, te), (nk, ne), (ok, oe, kind) in itertools.product(PEOPLE, PAST_TIMES, NOW_TIMES, THINGS):
        if kind == "watch":
            continue  # one does not buy the news
        past, _, _, _, epast, _ = VERBS[kind]
        # relative clause + two time words: 나는 어제 산 커피를 오늘 마셨다
        ko.append(f"{subj(pk)} {tk} 산 {eul(ok)} {nk} {past}")
        subject = pe[0].upper() + pe[1:]
        en.append(f"{subject} {epast} the {oe} {pron} bought {te} {ne}.")
    for (pk, pe, pron), (ok, oe, kind), (tk, te), (xk, xe) in itertools.product(PEOPLE[5:], THINGS, PAST_TIMES, PLACES):
        if kind == "watch":
            continue
        past, _, _, _, epast, _ = VERBS[kind]
        # a pronoun that refers back to the subject and the object
        ko.append(f"{eun(pk)} {tk} {xk} {eul(ok)} 샀다. 그리고 {'그녀는' if pron == 'she' else '그는'} 그것을 {past}.")
        article = "an" if oe[0] in "aeiou" else "a"
        en.append(f"{pe[0].upper() + pe[1:]} bought {article} {oe} {xe} {te}. Then {pron} {epast} it.")
    for (ak, ae, akind), (bk, be, bkind) in itertools.permutations(THINGS, 2):
        if akind != bkind:
            continue
        _, _, _, q, _, ebase = VERBS[akind]
        # questions
        ko.append(f"{wa(ak)} {bk} 중에서 무엇을 더 좋아해요?")
        en.append(f"Which do you like better, {ae} or {be}?")
        ko.append(f"{eun(ak)} 좋아하지만 {eun(bk)} 별로 좋아하지 않아요.")
        en.append(f"I like {ae}, but I do not really like {be}.")
        ko.append(f"오늘은 {eul(ak)} {q}? 아니면 {eul(bk)} {q}?")
        en.append(f"Did you {ebase} {ae} today, or did you {ebase} {be}?")
    for (pk, pe, _), (tk, te), (ok, oe, kind) in itertools.product(PEOPLE, FUTURE_TIMES, THINGS):
        _, present, future, _, _, ebase = VERBS[kind]
        ko.append(f"{subj(pk)} {tk} {eul(ok)} {future}")
        ko.append(f"{i_ga(pk) if pk not in ('나', '너', '우리') else {'나': '내가', '너': '네가', '우리': '우리가'}[pk]} 매일 {eul(ok)} {present}.")
        en.append(f"{pe[0].upper() + pe[1:]} will {ebase} {'some' if kind in ('drink', 'food') else 'the'} {oe} {te}.")
    # de-duplicate, then keep an even spread of at most `limit` per language
    def spread(xs):
        seen, out = set(), []
        for x in xs:
            if x not in seen:
                seen.add(x)
                out.append(x)
        if len(out) <= limit:
            return out
        step = len(out) / limit
        return [out[0]] + [out[int(i * step)] for i in range(1, limit)]
    return spread(ko), spread(en)


if __name__ == "__main__":
    k, e = sentences()
    print("\n".join(k + e))
