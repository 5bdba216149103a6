#!/usr/bin/env python3
"""attnlab's own everyday sentences in Korean and English, built from templates and word lists
written for this project (no external text).

    python3 corpus/everyday.py [KO_CHARS [EN_CHARS]]   # prints the lines, Korean first

The lines exercise what the lesson (../shared/seed/lesson-ko.txt) shows attention doing, in
structure rather than by repetition: every line is made once, from combinations drawn with a
fixed seed (random.Random), so the output is deterministic and spread over the vocabulary.

- vocabulary: 124 nouns in categories (drinks, food, reading, shows, music, clothes, things,
  animals), each with the verbs that fit it (you drink juice, read a novel, wear a coat, ride a
  bicycle), plus tools and materials, 29 places, vehicles and 13 family/neighbour roles (188
  common nouns in all), 20 names, 33 adjectives and 78 verbs; a small conjugator builds the
  Korean forms (past, present, future, past/present/future adnominal, -고, -아서/어서, polite,
  -ㄹ래요) including ㄹ-, ㄷ-, ㅂ- and 르-irregular verbs;
- particles chosen by batchim: 을/를, 은/는, 이/가, 와/과, 으로/로 (ㄹ-final nouns take 로);
- time words with matching tense (어제 … 먹었다, 매일 … 먹는다, 내일 … 먹을 것이다);
- subject–object–verb sentences with places, vehicles ("버스로"), instruments ("연필로") and
  companions ("지영과 함께");
- relative clauses: "어제 산 빵을 오늘 먹었다", "민재가 어제 산 빵을 …" (이/가 inside the clause);
- pronouns that refer back across sentences of one line: 그는/그녀는/그것을, he/she/it/them;
- choice questions: "A와 B 중에서 무엇을 더 좋아해요?", "A 또는 B, 무엇을 마실래요?", with answers;
- for induction heads: lines of 2–4 sentences in which a name and a multi-word phrase recur
  ("민수는 시장에서 파란 우산을 샀다. 비가 와서 민수는 파란 우산을 썼다."), and lines that recite
  a random list or number twice ("지영의 장보기 목록: 사과, 우유, 연필, 버스. 가게에서 다시
  읽었다: 사과, 우유, 연필, 버스." / "…번호는 4827이다. … 4827을 다시 말했다."), where the
  second recital can be predicted only by copying the first;
- English counterparts of the same structures.

It never produces the lesson's sentences (lesson.contains_lesson), nor a first-person
"나는 … 커피를 … 마셨다" line, nor "Which do you like better" about coffee and tea.
Lines are at most 200 characters long.
"""
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lesson import contains_lesson  # noqa: E402

SEED = 20261201
MAX_LEN = 200

# ---------------------------------------------------------------- Korean morphology

_BASE = 0xAC00
J_N, J_L, J_SS = 4, 8, 20  # final consonants ㄴ, ㄹ, ㅆ


def _jong(word):
    c = ord(word[-1])
    return (c - _BASE) % 28 if _BASE <= c <= 0xD7A3 else 0


def has_batchim(word):
    return _jong(word) != 0


def _set_jong(word, j):
    c = ord(word[-1])
    return word[:-1] + chr(c - (c - _BASE) % 28 + j)


def eul(w):  # object particle 을/를
    return w + ("을" if has_batchim(w) else "를")


def eun(w):  # topic particle 은/는
    return w + ("은" if has_batchim(w) else "는")


def i_ga(w):  # subject particle 이/가
    return w + ("이" if has_batchim(w) else "가")


def wa(w):  # 와/과
    return w + ("과" if has_batchim(w) else "와")


def euro(w):  # 으로/로: 로 after a vowel or ㄹ
    return w + ("으로" if has_batchim(w) and _jong(w) != J_L else "로")


class Verb:
    """A Korean verb given by its dictionary form and its 아/어 infinitive (마시다, 마셔),
    with `irr` "d" (듣다→들어) or "b" (굽다→구워) for the ㄷ/ㅂ irregulars, and English
    (base, past, 3rd singular), where "{o}" marks the object (appended when absent)."""

    def __init__(self, dic, inf, en, irr=None):
        self.dic, self.inf, self.irr = dic, inf, irr
        self.stem = dic[:-1]
        base, past, s3 = en
        self.en = tuple(x if "{o}" in x else x + " {o}" for x in (base, past, s3))

    # --- Korean forms
    def _vowel_stem(self):
        """The stem before a vowel-initial ending (은/을): 들, 구 (+우), else the stem."""
        if self.irr == "d":
            return _set_jong(self.stem, J_L)
        return self.stem

    @property
    def past(self):  # 마셨다
        return _set_jong(self.inf, J_SS) + "다"

    @property
    def past_polite(self):  # 마셨어요
        return _set_jong(self.inf, J_SS) + "어요"

    @property
    def present(self):  # 마신다, 만든다, 먹는다
        j = _jong(self.stem)
        if self.irr or (j and j != J_L):
            return self.stem + "는다"
        s = _set_jong(self.stem, 0) if j == J_L else self.stem
        return _set_jong(s, J_N) + "다"

    @property
    def adn_past(self):  # 마신, 만든, 먹은, 들은, 구운
        j = _jong(self.stem)
        if self.irr == "b":
            return _set_jong(self.stem, 0) + "운"
        if self.irr == "d":
            return self._vowel_stem() + "은"
        if j == J_L:
            return _set_jong(_set_jong(self.stem, 0), J_N)
        if j:
            return self.stem + "은"
        return _set_jong(self.stem, J_N)

    @property
    def adn_pres(self):  # 마시는, 만드는, 먹는
        s = _set_jong(self.stem, 0) if _jong(self.stem) == J_L and not self.irr else self.stem
        return s + "는"

    @property
    def adn_fut(self):  # 마실, 만들, 먹을, 들을, 구울
        j = _jong(self.stem)
        if self.irr == "b":
            return _set_jong(self.stem, 0) + "울"
        if self.irr == "d":
            return self._vowel_stem() + "을"
        if j == J_L:
            return self.stem
        if j:
            return self.stem + "을"
        return _set_jong(self.stem, J_L)

    @property
    def future(self):  # 마실 것이다
        return self.adn_fut + " 것이다"

    @property
    def rae(self):  # 마실래요 (would you …?)
        return self.adn_fut + "래요"

    @property
    def go(self):  # 마시고
        return self.stem + "고"

    @property
    def seo(self):  # 마셔서
        return self.inf + "서"

    @property
    def want(self):  # 마시고 싶다
        return self.stem + "고 싶다"

    @property
    def polite(self):  # 마셔요
        return self.inf + "요"

    # --- English forms
    def en_base(self, o):
        return self.en[0].format(o=o)

    def en_past(self, o):
        return self.en[1].format(o=o)

    def en_s3(self, o):
        return self.en[2].format(o=o)


V = {k: Verb(*a) for k, a in {
    "drink": ("마시다", "마셔", ("drink", "drank", "drinks")),
    "eat": ("먹다", "먹어", ("eat", "ate", "eats")),
    "buy": ("사다", "사", ("buy", "bought", "buys")),
    "order": ("주문하다", "주문해", ("order", "ordered", "orders")),
    "make": ("만들다", "만들어", ("make", "made", "makes")),
    "like": ("좋아하다", "좋아해", ("like", "liked", "likes")),
    "choose": ("고르다", "골라", ("choose", "chose", "chooses")),
    "bake": ("굽다", "구워", ("bake", "baked", "bakes"), "b"),
    "share": ("나누다", "나눠", ("share", "shared", "shares")),
    "wash": ("씻다", "씻어", ("wash", "washed", "washes")),
    "read": ("읽다", "읽어", ("read", "read", "reads")),
    "borrow": ("빌리다", "빌려", ("borrow", "borrowed", "borrows")),
    "write": ("쓰다", "써", ("write", "wrote", "writes")),
    "find": ("찾다", "찾아", ("find", "found", "finds")),
    "return": ("돌려주다", "돌려줘", ("return", "returned", "returns")),
    "watch": ("보다", "봐", ("watch", "watched", "watches")),
    "see": ("보다", "봐", ("see", "saw", "sees")),
    "recommend": ("추천하다", "추천해", ("recommend", "recommended", "recommends")),
    "listen": ("듣다", "들어", ("listen to", "listened to", "listens to"), "d"),
    "sing": ("부르다", "불러", ("sing", "sang", "sings")),
    "wear": ("입다", "입어", ("wear", "wore", "wears")),
    "wear_shoes": ("신다", "신어", ("wear", "wore", "wears")),
    "carry": ("메다", "메", ("carry", "carried", "carries")),
    "wear_ring": ("끼다", "껴", ("wear", "wore", "wears")),
    "wear_watch": ("차다", "차", ("wear", "wore", "wears")),
    "wear_hat": ("쓰다", "써", ("wear", "wore", "wears")),
    "use_umbrella": ("쓰다", "써", ("use", "used", "uses")),
    "wrap_scarf": ("두르다", "둘러", ("wear", "wore", "wears")),
    "lose": ("잃어버리다", "잃어버려", ("lose", "lost", "loses")),
    "fix": ("고치다", "고쳐", ("fix", "fixed", "fixes")),
    "draw": ("그리다", "그려", ("draw", "drew", "draws")),
    "move": ("옮기다", "옮겨", ("move", "moved", "moves")),
    "wrap": ("포장하다", "포장해", ("wrap", "wrapped", "wraps")),
    "wipe": ("닦다", "닦아", ("clean", "cleaned", "cleans")),
    "raise": ("기르다", "길러", ("look after", "looked after", "looks after")),
    "care": ("돌보다", "돌봐", ("take care of", "took care of", "takes care of")),
    "pet": ("만지다", "만져", ("pet", "petted", "pets")),
    "ride": ("타다", "타", ("ride", "rode", "rides")),
    "take": ("타다", "타", ("take", "took", "takes")),
    "wait": ("기다리다", "기다려", ("wait for", "waited for", "waits for")),
    "meet": ("만나다", "만나", ("meet", "met", "meets")),
    "clean": ("청소하다", "청소해", ("clean", "cleaned", "cleans")),
    "learn": ("배우다", "배워", ("learn", "learned", "learns")),
    "sell": ("팔다", "팔아", ("sell", "sold", "sells")),
    "receive": ("받다", "받아", ("receive", "received", "receives")),
    "send": ("보내다", "보내", ("send", "sent", "sends")),
    "prepare": ("준비하다", "준비해", ("prepare", "prepared", "prepares")),
    "throw": ("버리다", "버려", ("throw {o} away", "threw {o} away", "throws {o} away")),
    "lend": ("빌려주다", "빌려줘", ("lend", "lent", "lends")),
    "heat": ("데우다", "데워", ("heat {o} up", "heated {o} up", "heats {o} up")),
    "boil": ("끓이다", "끓여", ("boil", "boiled", "boils")),
    "bring": ("가져오다", "가져와", ("bring", "brought", "brings")),
    "pack": ("챙기다", "챙겨", ("pack", "packed", "packs")),
    "play_piano": ("치다", "쳐", ("play", "played", "plays")),
    "practice": ("연습하다", "연습해", ("practice", "practiced", "practices")),
    "book": ("예매하다", "예매해", ("book tickets for", "booked tickets for", "books tickets for")),
    "hang": ("걸다", "걸어", ("hang {o} on the wall", "hung {o} on the wall", "hangs {o} on the wall")),
    "open": ("열다", "열어", ("open", "opened", "opens")),
    "kick": ("차다", "차", ("kick", "kicked", "kicks")),
    "break": ("깨뜨리다", "깨뜨려", ("break", "broke", "breaks")),
    "turn_on": ("켜다", "켜", ("turn {o} on", "turned {o} on", "turns {o} on")),
    "use": ("쓰다", "써", ("use", "used", "uses")),
    "cut": ("자르다", "잘라", ("cut", "cut", "cuts")),
    "take_photo": ("찍다", "찍어", ("take", "took", "takes")),
    "do": ("하다", "해", ("do", "did", "does")),
    "water": ("물을 주다", "물을 줘", ("water", "watered", "waters")),
    "give": ("주다", "줘", ("give", "gave", "gives")),
    "show": ("보여 주다", "보여 줘", ("show", "showed", "shows")),
    "put_vase": ("꽂다", "꽂아", ("put {o} in a vase", "put {o} in a vase", "puts {o} in a vase")),
    "carry_hand": ("들다", "들어", ("carry", "carried", "carries")),
}.items()}

# intransitive verbs: (verb, English base, past, 3sg) via Verb with no object
VI = {k: Verb(*a) for k, a in {
    "go": ("가다", "가", ("go{o}", "went{o}", "goes{o}")),
    "come": ("오다", "와", ("come{o}", "came{o}", "comes{o}")),
    "laugh": ("웃다", "웃어", ("laugh{o}", "laughed{o}", "laughs{o}")),
    "rest": ("쉬다", "쉬어", ("rest{o}", "rested{o}", "rests{o}")),
    "sleep": ("자다", "자", ("sleep{o}", "slept{o}", "sleeps{o}")),
    "walk": ("걷다", "걸어", ("walk{o}", "walked{o}", "walks{o}"), "d"),
    "work": ("일하다", "일해", ("work{o}", "worked{o}", "works{o}")),
    "study": ("공부하다", "공부해", ("study{o}", "studied{o}", "studies{o}")),
    "play": ("놀다", "놀아", ("play{o}", "played{o}", "plays{o}")),
    "swim": ("수영하다", "수영해", ("swim{o}", "swam{o}", "swims{o}")),
    "stroll": ("산책하다", "산책해", ("take a walk{o}", "took a walk{o}", "takes a walk{o}")),
    "run": ("달리다", "달려", ("run{o}", "ran{o}", "runs{o}")),
    "cook": ("요리하다", "요리해", ("cook{o}", "cooked{o}", "cooks{o}")),
    "sing_i": ("노래하다", "노래해", ("sing{o}", "sang{o}", "sings{o}")),
    "wait": ("기다리다", "기다려", ("wait{o}", "waited{o}", "waits{o}")),
}.items()}


class Noun:
    """ko, en; num: "c" countable, "m" mass, "p" plural in English; cat; use: verbs that take
    it as object and make sense (first = the usual one); get: verbs by which one comes to have
    it (for "어제 산 …"); shops: places where it is bought; adjs: fitting adjective keys."""

    def __init__(self, ko, en, num, cat, use, get, shops, adjs, ctx=None):
        self.ko, self.en, self.num, self.cat = ko, en, num, cat
        self.use, self.get, self.shops, self.adjs = use, get, shops, adjs
        self.ctx = ctx  # reasons for the usual use: [(Korean clause, English clause with {p})]


# adjective key → (Korean adnominal, English, Korean predicate past, English predicate)
ADJ = {
    "warm": ("따뜻한", "warm", "따뜻했다", "warm"), "cold": ("차가운", "cold", "차가웠다", "cold"),
    "hot": ("뜨거운", "hot", "뜨거웠다", "hot"), "sweet": ("달콤한", "sweet", "달콤했다", "sweet"),
    "tasty": ("맛있는", "delicious", "맛있었다", "delicious"), "spicy": ("매운", "spicy", "매웠다", "spicy"),
    "fresh": ("신선한", "fresh", "신선했다", "fresh"), "small": ("작은", "small", "작았다", "small"),
    "big": ("큰", "big", "컸다", "big"), "new": ("새", "new", None, None),
    "old": ("오래된", "old", None, None), "pretty": ("예쁜", "pretty", "예뻤다", "pretty"),
    "thick": ("두꺼운", "thick", "두꺼웠다", "thick"), "thin": ("얇은", "thin", "얇았다", "thin"),
    "fun": ("재미있는", "interesting", "재미있었다", "interesting"), "sad": ("슬픈", "sad", "슬펐다", "sad"),
    "long": ("긴", "long", "길었다", "long"), "short": ("짧은", "short", "짧았다", "short"),
    "scary": ("무서운", "scary", "무서웠다", "scary"), "quiet": ("조용한", "quiet", "조용했다", "quiet"),
    "exciting": ("신나는", "exciting", "신났다", "exciting"), "heavy": ("무거운", "heavy", "무거웠다", "heavy"),
    "light": ("가벼운", "light", "가벼웠다", "light"), "cute": ("귀여운", "cute", "귀여웠다", "cute"),
    "cheap": ("싼", "cheap", "쌌다", "cheap"), "pricey": ("비싼", "expensive", "비쌌다", "expensive"),
    "blue": ("파란", "blue", None, None), "red": ("빨간", "red", None, None),
    "yellow": ("노란", "yellow", None, None), "white": ("하얀", "white", None, None),
    "black": ("검은", "black", None, None), "green": ("초록색", "green", None, None),
    "gray": ("회색", "gray", None, None),
}
ANTONYM = {"cheap": "pricey", "pricey": "cheap", "big": "small", "small": "big", "hot": "cold", "cold": "hot",
           "warm": "cold", "thick": "thin", "thin": "thick", "long": "short", "short": "long", "heavy": "light",
           "light": "heavy", "new": "old", "old": "new"}
COLORS = ["blue", "red", "yellow", "white", "black", "green", "gray"]

_D = ["drink", "buy", "order", "like", "receive"]
_SHOP_D = ["카페", "편의점", "가게", "시장"]
_CTX_D = [("목이 말라서", "Because {p} was thirsty"), ("아침을 먹고", "After breakfast"),
          ("점심을 먹은 뒤에", "After lunch"), ("잠들기 전에", "Before going to bed")]
_CTX_F = [("배가 고파서", "Because {p} was hungry"), ("저녁에", "In the evening"),
          ("점심시간에", "At lunchtime"), ("소풍을 가서", "On the picnic")]
_CTX_R = [("주말에", "On the weekend"), ("잠들기 전에", "Before going to sleep"),
          ("기차 안에서", "On the train"), ("비 오는 오후에", "On a rainy afternoon")]
_CTX_W = [("저녁에", "In the evening"), ("주말에", "On the weekend"), ("밤늦게", "Late at night")]
_CTX_M = [("운전하면서", "While driving"), ("저녁에", "In the evening"), ("청소하면서", "While cleaning")]
_RAIN = [("비가 와서", "Because it was raining"), ("오후에 비가 내려서", "When it rained in the afternoon")]
_COLD = [("날씨가 추워서", "Because it was cold"), ("바람이 불어서", "Because it was windy")]
_SUN = [("햇볕이 뜨거워서", "Because the sun was hot"), ("산에 가려고", "To go to the mountain")]
_OUT = [("친구를 만나려고", "To meet a friend"), ("외출하려고", "Before going out"),
        ("학교에 가려고", "To go to school")]
_WALK = [("산책을 가려고", "To go for a walk"), ("공원에 가려고", "To go to the park")]


def _nouns():
    n = []
    a = n.append
    # drinks
    for ko, en, extra in [("커피", "coffee", ["make", "heat"]), ("차", "tea", ["make"]),
                          ("우유", "milk", ["heat"]), ("물", "water", ["boil"]), ("주스", "juice", ["make"]),
                          ("녹차", "green tea", ["make"]), ("콜라", "cola", []), ("코코아", "cocoa", ["make", "heat"]),
                          ("보리차", "barley tea", ["make", "boil"]), ("두유", "soy milk", ["heat"]),
                          ("레모네이드", "lemonade", ["make"]), ("식혜", "sweet rice drink", ["make"]),
                          ("홍차", "black tea", ["make"]), ("사과 주스", "apple juice", [])]:
        a(Noun(ko, en, "m", "drink", ["drink"] + extra + ["share"], ["buy", "order", "receive"] + (["make"] if "make" in extra else []),
               _SHOP_D, ["warm", "cold", "hot", "sweet"] if ko not in ("콜라", "물") else ["cold"], _CTX_D))
    # food
    for ko, en, num, extra, shops, adjs in [
            ("사과", "apple", "c", ["wash", "cut"], ["시장", "가게"], ["fresh", "big", "small", "red", "sweet"]),
            ("빵", "bread", "m", ["bake", "cut"], ["빵집", "편의점"], ["warm", "tasty", "fresh"]),
            ("밥", "rice", "m", ["heat"], [], ["warm", "tasty"]),
            ("김치", "kimchi", "m", [], ["시장"], ["spicy", "tasty"]),
            ("라면", "ramen", "m", ["boil"], ["편의점", "가게"], ["spicy", "hot"]),
            ("케이크", "cake", "c", ["bake", "cut"], ["빵집"], ["sweet", "big", "small", "tasty"]),
            ("샌드위치", "sandwich", "c", ["prepare"], ["편의점", "카페"], ["tasty", "big"]),
            ("귤", "tangerine", "c", [], ["시장", "가게"], ["sweet", "small", "fresh"]),
            ("떡볶이", "tteokbokki", "m", [], ["시장", "식당"], ["spicy", "hot", "tasty"]),
            ("김밥", "gimbap", "m", ["prepare"], ["편의점", "식당"], ["tasty"]),
            ("국수", "noodle soup", "m", ["boil"], ["식당"], ["hot", "warm", "tasty"]),
            ("비빔밥", "bibimbap", "m", [], ["식당"], ["spicy", "tasty"]),
            ("딸기", "strawberry", "c", ["wash"], ["시장", "가게"], ["fresh", "red", "sweet", "big"]),
            ("바나나", "banana", "c", [], ["시장", "편의점"], ["yellow", "sweet"]),
            ("수박", "watermelon", "c", ["cut"], ["시장"], ["big", "sweet", "cold"]),
            ("만두", "dumplings", "p", ["boil", "heat"], ["시장", "식당"], ["hot", "tasty"]),
            ("쿠키", "cookies", "p", ["bake"], ["빵집", "카페"], ["sweet", "small"]),
            ("피자", "pizza", "m", ["heat", "cut"], ["식당"], ["hot", "big", "tasty"]),
            ("샐러드", "salad", "m", ["prepare"], ["카페", "식당"], ["fresh"]),
            ("된장찌개", "soybean paste stew", "m", ["boil", "heat"], ["식당"], ["hot", "tasty"]),
            ("계란", "egg", "c", ["boil"], ["시장", "편의점"], ["fresh", "big"]),
            ("떡", "rice cake", "c", [], ["시장"], ["sweet", "tasty", "white"]),
            ("고구마", "sweet potato", "c", ["bake", "wash"], ["시장"], ["sweet", "hot", "big"]),
            ("감자", "potato", "c", ["bake", "wash", "boil"], ["시장"], ["big", "small"]),
            ("토마토", "tomato", "c", ["wash", "cut"], ["시장"], ["red", "fresh"]),
            ("복숭아", "peach", "c", ["wash"], ["시장"], ["sweet", "fresh", "big"]),
            ("도시락", "lunch box", "c", ["prepare", "heat"], ["편의점"], ["small", "tasty"]),
            ("옥수수", "corn", "m", ["boil"], ["시장"], ["sweet", "hot", "yellow"]),
            ("두부", "tofu", "m", ["cut"], ["시장", "가게"], ["fresh", "white", "warm"]),
            ("참외", "Korean melon", "c", ["wash", "cut"], ["시장"], ["yellow", "sweet", "fresh"]),
            ("호떡", "sweet pancake", "c", ["heat"], ["시장"], ["hot", "sweet", "small"]),
            ("땅콩", "peanuts", "p", [], ["시장", "가게"], ["small", "fresh"]),
    ]:
        a(Noun(ko, en, num, "food", ["eat"] + extra + ["share"], ["buy", "receive"] + (["make"] if ko in ("빵", "케이크", "샌드위치", "김밥", "떡볶이", "쿠키", "피자", "샐러드", "도시락", "떡", "만두", "김치", "된장찌개") else []) + (["order"] if "식당" in shops else []),
               shops or ["시장"], adjs, _CTX_F))
    # reading and writing
    for ko, en, get, extra, adjs in [
            ("책", "book", ["buy", "borrow", "receive"], ["return", "recommend", "lend"], ["thick", "thin", "old", "new", "fun"]),
            ("신문", "newspaper", ["buy"], ["throw"], ["old", "new"]),
            ("편지", "letter", ["receive", "write"], ["send"], ["long", "short"]),
            ("소설", "novel", ["buy", "borrow"], ["return", "recommend", "lend"], ["long", "short", "fun", "sad", "thick"]),
            ("잡지", "magazine", ["buy", "borrow"], ["lend"], ["new", "thin"]),
            ("시집", "book of poems", ["buy", "borrow", "receive"], ["lend", "recommend"], ["thin", "old", "small"]),
            ("만화책", "comic book", ["buy", "borrow"], ["lend", "return"], ["fun", "new", "thick"]),
            ("동화책", "picture book", ["buy", "borrow", "receive"], ["return"], ["fun", "thin", "old"]),
            ("교과서", "textbook", ["buy", "borrow"], ["lend", "lose"], ["thick", "heavy", "new"]),
            ("일기", "diary", ["write"], [], ["long", "short", "old"]),
            ("요리책", "cookbook", ["buy", "borrow", "receive"], ["lend", "recommend"], ["thick", "new"]),
            ("엽서", "postcard", ["receive", "write", "buy"], ["send"], ["pretty", "small"]),
    ]:
        a(Noun(ko, en, "c", "read", ["read"] + extra + ["find"], get, ["서점", "편의점"] if ko in ("신문", "잡지") else ["서점"],
               adjs, _CTX_R))
    # shows
    for ko, en, num, adjs in [("영화", "movie", "c", ["fun", "sad", "scary", "long", "new"]),
                              ("드라마", "drama", "c", ["fun", "sad", "long"]), ("예능 프로그램", "variety show", "c", ["fun", "long", "new"]),
                              ("연극", "play", "c", ["fun", "sad", "short"]), ("축구 경기", "soccer match", "c", ["exciting", "long"]),
                              ("공연", "concert", "c", ["exciting", "long", "fun"]),
                              ("다큐멘터리", "documentary", "c", ["fun", "long", "quiet"]),
                              ("만화 영화", "cartoon", "c", ["fun", "short", "new"]), ("뮤지컬", "musical", "c", ["exciting", "long", "fun"])]:
        shops = ["영화관", "집"] if ko in ("영화", "만화 영화") else ["집"] if ko in ("예능 프로그램", "드라마", "다큐멘터리", "축구 경기") \
            else ["극장"]
        a(Noun(ko, en, num, "watch", ["watch", "like", "recommend"], ["book"] if "집" not in shops or ko == "영화" else [],
               shops, adjs, _CTX_W))
    # music
    for ko, en, num, use, adjs in [("노래", "song", "c", ["listen", "sing", "like"], ["sad", "quiet", "exciting", "new", "old"]),
                                   ("음악", "music", "m", ["listen", "like"], ["quiet", "exciting", "sad"]),
                                   ("자장가", "lullaby", "c", ["sing", "listen", "learn"], ["quiet", "old"]),
                                   ("강의", "lecture", "c", ["listen", "recommend"], ["long", "short", "fun"]),
                                   ("음반", "album", "c", ["listen", "buy", "lend"], ["new", "old"]),
                                   ("동요", "children's song", "c", ["sing", "listen", "learn"], ["short", "old"]),
                                   ("피아노 곡", "piano piece", "c", ["play_piano", "practice", "listen"], ["short", "long", "quiet"])]:
        a(Noun(ko, en, num, "music", use, ["buy", "receive"] if ko == "음반" else [], ["음반 가게"] if ko == "음반" else [],
               adjs, _CTX_M))
    # clothes and things one wears
    for ko, en, num, wear, ctx, extra in [
            ("모자", "hat", "c", "wear_hat", _SUN, ["lose"]), ("우산", "umbrella", "c", "use_umbrella", _RAIN, ["lose", "lend", "borrow"]),
            ("안경", "glasses", "p", "wear_hat", [("글씨가 작아서", "Because the letters were small")], ["lose", "wipe"]),
            ("가방", "bag", "c", "carry", _OUT, ["lose", "pack"]), ("신발", "shoes", "p", "wear_shoes", _WALK, ["wipe"]),
            ("운동화", "sneakers", "p", "wear_shoes", _WALK + [("달리기를 하려고", "To go running")], ["wash"]),
            ("코트", "coat", "c", "wear", _COLD, ["lose"]), ("셔츠", "shirt", "c", "wear", _OUT, ["wash"]),
            ("치마", "skirt", "c", "wear", _OUT, []), ("바지", "trousers", "p", "wear", _OUT, ["wash"]),
            ("목도리", "scarf", "c", "wrap_scarf", _COLD, ["lose"]), ("장갑", "gloves", "p", "wear_ring", _COLD, ["lose"]),
            ("시계", "watch", "c", "wear_watch", _OUT, ["lose", "fix"]), ("양말", "socks", "p", "wear_shoes", _WALK + _COLD, ["wash"]),
            ("스웨터", "sweater", "c", "wear", _COLD, ["wash"]), ("잠옷", "pajamas", "p", "wear", [("잠을 자려고", "To go to bed")], ["wash"]),
            ("반지", "ring", "c", "wear_ring", _OUT, ["lose"]),
    ]:
        adjs = COLORS + ["new", "old", "pretty", "small", "big"] + (["warm"] if ctx is _COLD else [])
        if ko in ("반지", "시계", "안경"):
            adjs = ["new", "old", "pretty", "small", "pricey", "cheap"]
        a(Noun(ko, en, num, "wear", [wear] + extra + ["find"], ["buy", "receive", "choose"] + (["borrow"] if "borrow" in extra else []),
               ["백화점", "시장", "가게"], adjs, ctx))
    # things
    for ko, en, num, use, get, shops, adjs, ctx in [
            ("자전거", "bicycle", "c", ["ride", "fix", "wipe", "lend", "borrow"], ["buy", "receive", "borrow"], ["가게"], COLORS + ["new", "old", "light"],
             [("주말에", "On the weekend"), ("학교에 가려고", "To go to school"), ("날씨가 좋아서", "Because the weather was nice")]),
            ("컴퓨터", "computer", "c", ["use", "fix", "turn_on", "move"], ["buy", "receive"], ["가게", "백화점"], ["new", "old", "heavy"], None),
            ("휴대폰", "phone", "c", ["use", "fix", "lose", "find"], ["buy", "receive"], ["가게", "백화점"], ["new", "old", "black", "white"], None),
            ("연필", "pencil", "c", ["use", "lend", "lose", "find"], ["buy", "receive", "borrow"], ["문구점"], ["yellow", "long", "short", "new"], None),
            ("공책", "notebook", "c", ["use", "lend", "lose", "find"], ["buy", "receive"], ["문구점"], COLORS + ["thin", "new"], None),
            ("열쇠", "key", "c", ["lose", "find"], ["receive"], [], ["small", "old"], None),
            ("사진기", "camera", "c", ["use", "fix", "lend", "lose"], ["buy", "receive", "borrow"], ["가게", "백화점"], ["new", "old", "small", "heavy"], None),
            ("그림", "painting", "c", ["hang", "see", "show"], ["buy", "receive", "draw"], ["시장"], ["pretty", "big", "small", "old"],
             [("거실이 허전해서", "Because the living room looked empty")]),
            ("꽃", "flowers", "p", ["put_vase", "water", "show"], ["buy", "receive"], ["꽃집"], ["red", "yellow", "white", "pretty"],
             [("저녁에", "In the evening"), ("집에 돌아와서", "After coming home")]),
            ("화분", "flowerpot", "c", ["water", "move"], ["buy", "receive"], ["꽃집"], ["small", "big", "heavy"], None),
            ("선물", "present", "c", ["wrap", "open", "send", "give"], ["buy", "receive", "prepare"], ["백화점"], ["small", "big", "pretty"], None),
            ("상자", "box", "c", ["open", "move", "carry_hand"], ["receive"], ["우체국"], ["heavy", "light", "big", "small"], None),
            ("의자", "chair", "c", ["move", "fix", "wipe"], ["buy"], ["가구점"], ["old", "new", "heavy", "small"], None),
            ("책상", "desk", "c", ["move", "wipe", "clean"], ["buy"], ["가구점"], ["old", "new", "big", "heavy"], None),
            ("인형", "doll", "c", ["give", "show", "wash"], ["buy", "receive"], ["가게", "백화점"], ["cute", "small", "old", "pretty"], None),
            ("공", "ball", "c", ["kick", "find", "throw"], ["buy", "receive"], ["가게"], ["red", "yellow", "small", "big", "new"],
             [("점심시간에", "At lunchtime"), ("놀이터에서", "At the playground")]),
            ("컵", "cup", "c", ["wash", "break", "wipe"], ["buy", "receive"], ["시장", "가게"], COLORS + ["small", "big", "pretty"], None),
            ("접시", "plate", "c", ["wash", "break", "wipe"], ["buy", "receive"], ["시장", "백화점"], ["white", "big", "small", "pretty"], None),
            ("램프", "lamp", "c", ["turn_on", "move", "fix"], ["buy", "receive"], ["가구점"], ["small", "old", "new", "yellow"],
             [("방이 어두워서", "Because the room was dark"), ("밤에", "At night")]),
            ("담요", "blanket", "c", ["wash", "pack", "lend"], ["buy", "receive", "borrow"], ["시장", "백화점"], COLORS + ["warm", "thick", "thin", "old"],
             [("날씨가 추워서", "Because it was cold"), ("밤에", "At night")]),
            ("베개", "pillow", "c", ["wash", "move", "pack"], ["buy", "receive"], ["가구점", "백화점"], ["white", "new", "small", "big"], None),
            ("달력", "calendar", "c", ["hang", "see"], ["buy", "receive"], ["문구점"], ["new", "small", "big"], None),
            ("사진첩", "photo album", "c", ["see", "show", "find"], ["buy", "receive"], ["문구점"], ["old", "thick", "small"], None),
            ("거울", "mirror", "c", ["wipe", "hang", "move"], ["buy"], ["가구점"], ["big", "small", "old", "pretty"], None),
    ]:
        a(Noun(ko, en, num, "thing", use, get, shops or ["가게"], adjs, ctx))
    # animals
    for ko, en in [("고양이", "cat"), ("강아지", "puppy"), ("새", "bird"), ("다람쥐", "squirrel"), ("토끼", "rabbit"),
                   ("거북이", "turtle"), ("햄스터", "hamster"), ("오리", "duck"), ("병아리", "chick")]:
        a(Noun(ko, en, "c", "animal", ["see", "care", "raise", "pet", "find"], ["receive"], [], ["small", "cute", "white", "black", "big"], None))
    return n


NOUNS = _nouns()
BY_CAT = {}
for _n in NOUNS:
    BY_CAT.setdefault(_n.cat, []).append(_n)
CONSUMABLE = BY_CAT["drink"] + BY_CAT["food"]
KEEPABLE = BY_CAT["wear"] + BY_CAT["thing"] + BY_CAT["read"]

# tools and materials for 으로/로: (tool ko, en, [(object ko, object en, verb key)])
TOOLS = [
    ("연필", "a pencil", [("편지", "a letter", "write"), ("일기", "a diary entry", "write"), ("그림", "a picture", "draw")]),
    ("볼펜", "a pen", [("편지", "a letter", "write"), ("엽서", "a postcard", "write"), ("이름", "her name" , "write")]),
    ("사진기", "a camera", [("사진", "a photo", "take_photo"), ("꽃 사진", "a photo of the flowers", "take_photo")]),
    ("휴대폰", "a phone", [("사진", "a photo", "take_photo"), ("영화", "a movie", "watch"), ("음악", "music", "listen")]),
    ("컴퓨터", "a computer", [("숙제", "homework", "do"), ("편지", "a letter", "write"), ("영화", "a movie", "watch")]),
    ("칼", "a knife", [("사과", "the apple", "cut"), ("빵", "the bread", "cut"), ("수박", "the watermelon", "cut")]),
    ("가위", "scissors", [("종이", "the paper", "cut"), ("끈", "the string", "cut")]),
    ("젓가락", "chopsticks", [("국수", "noodle soup", "eat"), ("김밥", "gimbap", "eat"), ("떡볶이", "tteokbokki", "eat")]),
    ("숟가락", "a spoon", [("밥", "rice", "eat"), ("된장찌개", "soybean paste stew", "eat"), ("수박", "watermelon", "eat")]),
    ("붓", "a brush", [("그림", "a picture", "draw"), ("글씨", "letters", "write")]),
    ("밀가루", "flour", [("빵", "bread", "make"), ("쿠키", "cookies", "make"), ("만두", "dumplings", "make")]),
    ("쌀", "rice grains", [("떡", "rice cakes", "make"), ("식혜", "a sweet rice drink", "make")]),
    ("사과", "apples", [("주스", "juice", "make"), ("잼", "jam", "make")]),
    ("딸기", "strawberries", [("잼", "jam", "make"), ("주스", "juice", "make")]),
    ("우유", "milk", [("코코아", "cocoa", "make"), ("케이크", "a cake", "make")]),
]

# places: ko, English "at", English "to", things to do there: (noun category or None, verb key) or intransitive key
PLACES = {
    "시장": ("at the market", "to the market", [("food", "buy"), ("wear", "buy")]),
    "가게": ("at the shop", "to the shop", [("thing", "buy"), ("drink", "buy")]),
    "편의점": ("at the convenience store", "to the convenience store", [("drink", "buy"), ("food", "buy")]),
    "카페": ("at the cafe", "to the cafe", [("drink", "drink"), ("drink", "order")]),
    "도서관": ("at the library", "to the library", [("read", "read"), ("read", "borrow"), (None, "study")]),
    "학교": ("at school", "to school", [(None, "study"), ("music", "learn"), ("food", "eat")]),
    "공원": ("in the park", "to the park", [(None, "walk"), (None, "stroll"), ("animal", "see"), (None, "run")]),
    "식당": ("at the restaurant", "to the restaurant", [("food", "eat"), ("food", "order")]),
    "빵집": ("at the bakery", "to the bakery", [("food", "buy")]),
    "서점": ("at the bookstore", "to the bookstore", [("read", "buy")]),
    "영화관": ("at the cinema", "to the cinema", [("watch", "watch")]),
    "극장": ("at the theater", "to the theater", [("watch", "watch")]),
    "병원": ("at the hospital", "to the hospital", [(None, "wait")]),
    "역": ("at the station", "to the station", [(None, "wait"), ("read", "read")]),
    "바닷가": ("at the beach", "to the beach", [(None, "walk"), (None, "swim"), (None, "play")]),
    "집": ("at home", "home", [(None, "rest"), (None, "cook"), (None, "sleep"), ("watch", "watch")]),
    "회사": ("at the office", "to the office", [(None, "work")]),
    "박물관": ("at the museum", "to the museum", [("thing", "see")]),
    "백화점": ("at the department store", "to the department store", [("wear", "buy"), ("thing", "buy")]),
    "정류장": ("at the bus stop", "to the bus stop", [(None, "wait")]),
    "수영장": ("at the swimming pool", "to the swimming pool", [(None, "swim")]),
    "우체국": ("at the post office", "to the post office", [("read", "send")]),
    "놀이터": ("at the playground", "to the playground", [(None, "play")]),
    "꽃집": ("at the flower shop", "to the flower shop", [("thing", "buy")]),
    "문구점": ("at the stationery store", "to the stationery store", [("thing", "buy")]),
    "가구점": ("at the furniture store", "to the furniture store", [("thing", "buy")]),
    "음반 가게": ("at the record shop", "to the record shop", [("music", "buy")]),
    "산": ("on the mountain", "to the mountain", [(None, "walk")]),
    "할머니 댁": ("at grandmother's house", "to grandmother's house", [("food", "eat"), (None, "rest")]),
}
VEHICLES = [("버스", "by bus"), ("지하철", "by subway"), ("기차", "by train"), ("택시", "by taxi"),
            ("자전거", "by bicycle"), ("배", "by boat"), ("비행기", "by plane")]

# people: ko, en, gender ("m"/"f")
NAMES = [("민수", "Minsu", "m"), ("지영", "Jiyoung", "f"), ("서연", "Seoyeon", "f"), ("하준", "Hajun", "m"),
         ("지호", "Jiho", "m"), ("수아", "Sua", "f"), ("도윤", "Doyun", "m"), ("예린", "Yerin", "f"),
         ("현우", "Hyunwoo", "m"), ("은지", "Eunji", "f"), ("준서", "Junseo", "m"), ("하은", "Haeun", "f"),
         ("태오", "Taeo", "m"), ("소율", "Soyul", "f"), ("민재", "Minjae", "m"), ("유진", "Yujin", "f"),
         ("시우", "Siwoo", "m"), ("다은", "Daeun", "f"), ("재민", "Jaemin", "m"), ("혜원", "Hyewon", "f")]
ROLES = [("형", "my older brother", "m"), ("누나", "my older sister", "f"), ("엄마", "my mother", "f"),
         ("아빠", "my father", "m"), ("할머니", "my grandmother", "f"), ("할아버지", "my grandfather", "m"),
         ("삼촌", "my uncle", "m"), ("이모", "my aunt", "f"), ("남동생", "my younger brother", "m"),
         ("여동생", "my younger sister", "f"), ("선생님", "the teacher", "f"), ("이웃 아저씨", "the man next door", "m"),
         ("옆집 할머니", "the old woman next door", "f")]
PEOPLE = NAMES + ROLES

PAST = [("어제", "yesterday"), ("그저께", "the day before yesterday"), ("지난주에", "last week"),
        ("지난 주말에", "last weekend"), ("어젯밤에", "last night"), ("며칠 전에", "a few days ago")]
NOW = [("오늘", "today"), ("오늘 아침에", "this morning"), ("오늘 점심에", "at lunch today"),
       ("오늘 저녁에", "this evening")]
FUTURE = [("내일", "tomorrow"), ("모레", "the day after tomorrow"), ("다음 주에", "next week"),
          ("이번 주말에", "this weekend"), ("내일 아침에", "tomorrow morning"), ("나중에", "later")]
HABIT = [("매일", "every day"), ("매일 아침", "every morning"), ("주말마다", "every weekend"),
         ("저녁마다", "every evening"), ("요즘", "these days"), ("가끔", "sometimes")]

# ---------------------------------------------------------------- English helpers


def cap(s):
    return s[0].upper() + s[1:]


def article(words, num):
    if num == "m":
        return "some " + words
    if num == "p":
        return "some " + words
    return ("an " if words[0] in "aeiou" else "a ") + words


def plural(words):
    """Generic English plural of a countable noun phrase (apples, boxes, strawberries)."""
    if " of " in words:
        head, _, tail = words.partition(" of ")
        return plural(head) + " of " + tail
    head, _, last = words.rpartition(" ")
    if re.search(r"(s|x|ch|sh)$", last) or last in ("tomato", "potato"):
        last += "es"
    elif re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return (head + " " if head else "") + last


def generic(n):
    """"apples", "milk", "cookies": a noun in a general statement."""
    return plural(n.en) if n.num == "c" else n.en


def bare(e, num):
    """"a book", "milk", "cookies": an object without "the"."""
    return (("an " if e[0] in "aeiou" else "a ") + e) if num == "c" else e


def it(n):
    return "them" if n.num == "p" else "it"


def it_subj(n):
    return "they" if n.num == "p" else "it"


def was(n):
    return "were" if n.num == "p" else "was"


def he(g):
    return "he" if g == "m" else "she"


def him(g):
    return "him" if g == "m" else "her"


def his(g):
    return "his" if g == "m" else "her"


def ko_he(g):
    return "그는" if g == "m" else "그녀는"


def ko_him(g):
    return "그에게" if g == "m" else "그녀에게"


class Gen:
    def __init__(self, seed=SEED):
        self.r = random.Random(seed)

    def pick(self, xs):
        return self.r.choice(xs)

    def chance(self, p):
        return self.r.random() < p

    def person(self, names_only=False):
        return self.pick(NAMES if names_only or self.chance(0.6) else PEOPLE)

    def two_people(self, mixed=False):
        while True:
            a, b = self.person(), self.person()
            if a[0] != b[0] and (not mixed or a[2] != b[2]):
                return a, b

    def np(self, n, adj_p=0.5, adj=None):
        """(Korean phrase, English phrase without article)"""
        if adj is None and n.adjs and self.chance(adj_p):
            adj = self.pick(n.adjs)
        if adj:
            k, e = ADJ[adj][0], ADJ[adj][1]
            return f"{k} {n.ko}", f"{e} {n.en}"
        return n.ko, n.en

    # ------------------------------------------------------------ templates
    def t_relative(self):
        """어제 산 빵을 오늘 먹었다: a relative clause and two time words."""
        n = self.pick(CONSUMABLE + BY_CAT["read"] + BY_CAT["watch"] + BY_CAT["wear"])
        if not n.get:
            return None
        g = V[self.pick(n.get)]
        u = V[n.use[0]]
        first = self.chance(0.25)
        (pk, pe, pg) = ("나", "I", None) if first else self.person()
        (tk, te), (nk, ne) = self.pick(PAST), self.pick(NOW)
        adj = self.pick(n.adjs) if n.adjs and self.chance(0.35) else None
        k, e = self.np(n, 0, adj)
        top = "나는" if first else eun(pk)
        if self.chance(0.3):
            # someone else's act in the relative clause, its subject marked with 이/가
            qk, qe, qg = self.person()
            if qk == pk:
                return None
            ko = f"{nk} {top} {i_ga(qk)} {tk} {g.adn_past} {eul(k)} {u.past}."
            subj = "I" if first else pe
            en = f"{cap(ne)}, {subj} {u.en_past('the ' + e)} that {qe} {g.en_past('').strip()} {te}."
            return ko, en
        if self.chance(0.5):
            ko = f"{top} {tk} {g.adn_past} {eul(k)} {nk} {u.past}."
        else:
            ko = f"{nk} {top} {tk} {g.adn_past} {eul(k)} {u.past}."
        who = "I" if first else he(pg)
        subj = "I" if first else pe
        en = f"{cap(ne)}, {subj} {u.en_past('the ' + e)} that {who} {g.en_past('').strip()} {te}."
        if self.chance(0.35):  # a second sentence that names it again
            k2 = "그것은" if n.num != "p" else eun(k)
            p = self._pred(n, adj)
            if p:
                ko += f" {k2} 아주 {p[0]}"
                en += f" {cap(it_subj(n)) if n.num != 'p' else 'The ' + e} {was(n)} very {p[1]}."
        return ko, en

    def _pred(self, n, not_adj=None):
        opts = [a for a in n.adjs if ADJ[a][2] and a != not_adj]
        extra = {"drink": ["tasty"], "food": ["tasty"], "read": ["fun"], "watch": ["fun"], "wear": ["pretty", "light"],
                 "thing": ["pricey", "cheap"], "animal": ["cute"], "music": ["fun"]}.get(n.cat, [])
        opts = [a for a in opts + extra if a != not_adj and a != ANTONYM.get(not_adj)]
        if not opts:
            return None
        a = ADJ[self.pick(opts)]
        return a[2] + ".", a[3]

    def t_recur(self):
        """민수는 파란 우산을 샀다. 비가 와서 민수는 파란 우산을 썼다. — a name and a phrase recur."""
        n = self.pick(KEEPABLE + CONSUMABLE)
        if not n.ctx or not n.get:
            return None
        pk, pe, pg = self.person()
        adj = self.pick([a for a in n.adjs] or [None])
        k, e = self.np(n, adj=adj)
        g = V[self.pick([x for x in n.get if x not in ("write", "draw", "book")] or ["buy"])]
        u = V[n.use[0]]
        tk, te = self.pick(PAST)
        ck, ce = self.pick(n.ctx)
        shop = self.pick(n.shops) if g.dic in ("사다", "고르다") and n.shops else None
        if g.dic == "빌리다" and n.cat == "read":
            shop = "도서관"
        at_k = f"{shop}에서 " if shop else ""
        at_e = f" {PLACES[shop][0]}" if shop and shop in PLACES else ""
        if g.dic in ("받다", "빌리다") and not shop:
            qk, qe, qg = self.person()
            if qk == pk:
                return None
            at_k, at_e = f"{qk}에게서 ", f" from {qe}"
        ko = [f"{eun(pk)} {tk} {at_k}{eul(k)} {g.past}."]
        en = [f"{cap(pe)} {g.en_past(article(e, n.num))}{at_e} {te}."]
        ko.append(f"{ck} {eun(pk)} {eul(k)} {u.past}.")
        en.append(f"{ce.format(p=he(pg))}, {pe} {u.en_past('the ' + e)}.")
        r = self.r.random()
        if r < 0.3:
            qk, qe, qg = self.person()
            if qk != pk:
                ko.append(f"{qk}도 {eul(k)} {V['like'].past}.")
                en.append(f"{cap(qe)} liked the {e} too.")
        elif r < 0.55:
            fk, fe = self.pick(FUTURE)
            ko.append(f"{eun(pk)} {fk}도 {eul(k)} {u.future}.")
            en.append(f"{cap(pe)} will {u.en_base('the ' + e)} {fe} too.")
        elif r < 0.75:
            p = self._pred(n, adj)
            if p:
                ko.append(f"{eun(k)} 아주 {p[0]}")
                en.append(f"The {e} {was(n)} very {p[1]}.")
        return " ".join(ko), " ".join(en)

    def t_pronoun(self):
        """…을 샀다. 그리고 그녀는 그것을 …: pronouns that point back."""
        n = self.pick(KEEPABLE + CONSUMABLE + BY_CAT["animal"])
        pk, pe, pg = self.person()
        tk, te = self.pick(PAST)
        adj = self.pick(n.adjs) if n.adjs and self.chance(0.4) else None
        k, e = self.np(n, 0, adj)
        if n.cat == "animal":
            place = self.pick(["공원", "놀이터", "바닷가", "산"])
            ko = f"{eun(pk)} {tk} {place}에서 {eul(k)} 보았다."
            en = f"{cap(pe)} saw {article(e, n.num)} {PLACES[place][0]} {te}."
            v = V[self.pick(["care", "pet", "raise"])]
            ko += f" {ko_he(pg)} 그 {eul(n.ko)} {v.past}."
            en += f" {cap(he(pg))} {v.en_past(it(n))}."
            return ko, en
        g = V["buy"] if "buy" in n.get else V[self.pick(n.get)]
        shop = self.pick(n.shops) if g.dic == "사다" and n.shops else None
        at_k = f"{shop}에서 " if shop else ""
        at_e = f" {PLACES[shop][0]}" if shop in PLACES else ""
        ko = f"{eun(pk)} {tk} {at_k}{eul(k)} {g.past}."
        en = f"{cap(pe)} {g.en_past(article(e, n.num))}{at_e} {te}."
        r = self.r.random()
        if r < 0.4:
            u = V[self.pick([x for x in n.use[:3] if x not in ("bake", "make", "prepare", "draw", "write", "find")] or n.use[:1])]
            ko += f" 그리고 {ko_he(pg)} 그것을 {u.past}."
            en += f" Then {he(pg)} {u.en_past(it(n))}."
        elif r < 0.7:
            qk, qe, qg = self.person()
            if qk == pk:
                return None
            ko += f" {ko_he(pg)} 그것을 {qk}에게 주었다. {eun(qk)} 그것을 받고 기뻐했다."
            en += f" {cap(he(pg))} gave {it(n)} to {qe}. {cap(qe)} was happy to get {it(n)}."
        else:
            p = self._pred(n, adj)
            if not p:
                return None
            ko += f" 그것은 아주 {p[0]}" if n.num != "p" else f" {eun(n.ko)} 아주 {p[0]}"
            en += f" {'It was' if n.num != 'p' else 'They were'} very {p[1]}."
            if self.chance(0.5):
                u = V[n.use[0]]
                fk, fe = self.pick(FUTURE)
                ko += f" {ko_he(pg)} {fk} 그것을 {u.future}."
                en += f" {cap(he(pg))} will {u.en_base(it(n))} {fe}."
        return ko, en

    def t_two_pronouns(self):
        """민수는 지영을 만났다. 그는 그녀에게 책을 주었다. 그녀는 그것을 읽었다."""
        (ak, ae, ag), (bk, be, bg) = self.two_people(mixed=True)
        n = self.pick(KEEPABLE + CONSUMABLE)
        tk, te = self.pick(PAST)
        place = self.pick(["카페", "공원", "학교", "도서관", "역", "식당"])
        k, e = self.np(n, 0.4)
        u = V[n.use[0]]
        ko = (f"{eun(ak)} {tk} {place}에서 {eul(bk)} 만났다. {ko_he(ag)} {ko_him(bg)} {eul(k)} 주었다. "
              f"{ko_he(bg)} 그것을 {u.past}.")
        en = (f"{cap(ae)} met {be} {PLACES[place][0]} {te}. {cap(he(ag))} gave {him(bg)} {article(e, n.num)}. "
              f"{cap(he(bg))} {u.en_past(it(n))}.")
        if self.chance(0.4):
            ko += f" 그리고 {ko_he(bg)} {ko_him(ag)} 고맙다고 말했다."
            en += f" Then {he(bg)} thanked {him(ag)}."
        return ko, en

    def t_question(self):
        """A와 B 중에서 무엇을 더 좋아해요? / A 또는 B, 무엇을 마실래요? and answers."""
        cat = self.pick(["drink", "drink", "food", "food", "read", "watch", "music", "wear"])
        a, b = self.r.sample(BY_CAT[cat], 2)
        if {a.ko, b.ko} == {"커피", "차"}:
            return None  # the lesson's own question
        u = V[{"drink": "drink", "food": "eat", "read": "read", "watch": "watch", "music": "listen",
               "wear": "buy"}[cat]]
        r = self.r.random()
        ae, be = generic(a), generic(b)
        if r < 0.3:
            ko = f"{wa(a.ko)} {b.ko} 중에서 무엇을 더 좋아해요?"
            en = f"Which do you like better, {ae} or {be}?"
            if self.chance(0.6):
                c = self.pick([a, b])
                ko += f" 저는 {eul(c.ko)} 더 좋아해요."
                en += f" I like {generic(c)} better."
        elif r < 0.5:
            ko = f"{a.ko} 또는 {b.ko}, 무엇을 {u.rae}?"
            en = f"{cap(bare(a.en, a.num))} or {bare(b.en, b.num)}, which would you like to {u.en_base('').strip()}?"
            if self.chance(0.6):
                c = self.pick([a, b])
                ko += f" {eul(c.ko)} {u.rae.replace('래요', '게요')}."
                en += f" I will {u.en_base(bare(c.en, c.num))}."
        elif r < 0.7:
            pk, pe, pg = self.person()
            c = self.pick([a, b])
            ko = f"{eun(pk)} {wa(a.ko)} {b.ko} 중에서 {eul(c.ko)} 골랐다. 그리고 {eun(pk)} {eul(c.ko)} {u.past}."
            d = b if c is a else a
            the = lambda x: ("the " + x.en) if x.num == "c" else x.en
            en = f"{cap(pe)} chose {the(c)} over {the(d)}. Then {pe} {u.en_past(the(c))}."
        elif r < 0.85:
            ko = f"오늘은 {eul(a.ko)} {u.past_polite}? 아니면 {eul(b.ko)} {u.past_polite}?"
            en = f"Did you {u.en_base(bare(a.en, a.num))} today, or did you {u.en_base(bare(b.en, b.num))}?"
        else:
            pk, pe, pg = self.person()
            ko = f"{eun(pk)} {a.ko}보다 {eul(b.ko)} 더 좋아한다. 그래서 {eun(pk)} {HABIT[0][0]} {eul(b.ko)} {u.present}."
            en = f"{cap(pe)} likes {be} more than {ae}. So {pe} {u.en_s3(bare(b.en, b.num))} every day."
        return ko, en

    def t_tenses(self):
        """매일 … 마신다. 어제도 … 마셨다. 내일도 … 마실 것이다. — one phrase, three tenses."""
        n = self.pick(CONSUMABLE + BY_CAT["read"] + BY_CAT["music"])
        u = V[n.use[0]]
        first = self.chance(0.3)
        pk, pe, pg = ("나", "I", None) if first else self.person()
        top = "나는" if first else eun(pk)
        hk, he_ = self.pick(HABIT)
        k, e = self.np(n, 0.3)
        obj = bare(e, n.num)
        gen_obj = plural(e) if n.num == "c" else e
        present = u.en_base(gen_obj) if first else u.en_s3(gen_obj)
        ko = [f"{top} {hk} {eul(k)} {u.present}."]
        en = [f"{'I' if first else cap(pe)} {present} {he_}."]
        r = self.r.random()
        if r < 0.5:
            tk, te = self.pick(PAST)
            fk, fe = self.pick(FUTURE)
            ko.append(f"{tk}도 {eul(k)} {u.past}.")
            en.append(f"{cap(te)}, {'I' if first else he(pg)} {u.en_past(obj)} too.")
            ko.append(f"{fk}도 {eul(k)} {u.future}.")
            en.append(f"{cap(fe)}, {'I' if first else he(pg)} will {u.en_base(obj)} again.")
        else:
            m = self.pick([x for x in BY_CAT[n.cat] if x is not n])
            tk, te = self.pick(PAST)
            fk, fe = self.pick(FUTURE)
            ko.append(f"하지만 {tk}{'는' if not has_batchim(tk) else '은'} {eul(m.ko)} {V[m.use[0]].past}.")
            en.append(f"But {te}, {'I' if first else he(pg)} {V[m.use[0]].en_past(bare(m.en, m.num))}.")
            ko.append(f"{fk}{'는' if not has_batchim(fk) else '은'} 다시 {eul(k)} {u.future}.")
            en.append(f"{cap(fe)}, {'I' if first else he(pg)} will {u.en_base(obj)} again.")
        return " ".join(ko), " ".join(en)

    def t_place(self):
        """버스로 도서관에 갔다. 도서관에서 … — places, vehicles, companions."""
        place = self.pick(list(PLACES))
        at_e, to_e, acts = PLACES[place]
        cat, vk = self.pick(acts)
        pk, pe, pg = self.person()
        tk, te = self.pick(PAST)
        with_q = self.chance(0.4)
        if with_q:
            qk, qe, qg = self.person()
            if qk == pk:
                return None
        far = place in ("바닷가", "할머니 댁", "산")
        veh = self.pick(VEHICLES if far else VEHICLES[:5]) if self.chance(0.5) else None
        go_k = f"{euro(veh[0])} " if veh else ""
        go_e = f" {veh[1]}" if veh else ""
        to_k = "집에" if place == "집" else f"{place}에"
        if with_q:
            ko = f"{eun(pk)} {tk} {wa(qk)} 함께 {go_k}{to_k} 갔다."
            en = f"{cap(pe)} went {to_e} with {qe}{go_e} {te}."
            subj_k, subj_e = "두 사람은", "they"
        else:
            ko = f"{eun(pk)} {tk} {go_k}{to_k} 갔다."
            en = f"{cap(pe)} went {to_e}{go_e} {te}."
            subj_k, subj_e = eun(pk), pe
        if cat is None:
            v = VI[vk]
            ko += f" {place}에서 {subj_k} {v.past}." if place != "집" else f" 집에서 {subj_k} {v.past}."
            en += f" {cap(at_e)}, {subj_e if with_q else pe} {v.en_past('')}."
        else:
            cands = [n for n in BY_CAT[cat] if place in n.shops] if vk == "buy" or cat == "watch" else \
                [n for n in BY_CAT[cat] if vk in n.use or vk in n.get]
            if not cands:
                return None
            n = self.pick(cands)
            adj = self.pick(n.adjs) if n.adjs and self.chance(0.5) else None
            k, e = self.np(n, 0, adj)
            v = V[vk]
            ko += f" {place}에서 {subj_k} {eul(k)} {v.past}."
            en += f" {cap(at_e)}, {subj_e if with_q else pe} {v.en_past(article(e, n.num))}."
            p = self._pred(n, adj)
            if p and self.chance(0.4):
                ko += f" {eun(k)} 아주 {p[0]}"
                en += f" The {e} {was(n)} very {p[1]}."
        return ko, en

    def t_tool(self):
        """연필로 편지를 썼다 / 사과로 주스를 만들었다 — 으로/로 by batchim."""
        tool, tool_e, objs = self.pick(TOOLS)
        ok, oe, vk = self.pick(objs)
        v = V[vk]
        pk, pe, pg = self.person()
        tk, te = self.pick(PAST + NOW)
        ko = f"{eun(pk)} {tk} {euro(tool)} {eul(ok)} {v.past}."
        oe2 = oe.replace("her name", his(pg) + " name")
        prep = "on" if tool in ("휴대폰", "컴퓨터") else "with"
        en = f"{cap(pe)} {v.en_past(oe2)} {prep} {tool_e} {te}." if vk != "make" else f"{cap(pe)} made {oe2} from {tool_e} {te}."
        if self.chance(0.5):
            qk, qe, qg = self.person()
            if qk != pk:
                ko += f" {qk}도 {euro(tool)} {eul(ok)} {v.want.replace('싶다', '싶어 했다')}."
                en += f" {cap(qe)} wanted to {v.en_base(oe2.replace(his(pg), his(qg)))} {prep} {tool_e} too." if vk != "make" else \
                    f" {cap(qe)} wanted to make {oe2} from {tool_e} too."
        return ko, en

    def t_story(self):
        """3–4 sentences: a name and an adjective phrase recur; a pronoun refers back."""
        n = self.pick(KEEPABLE + CONSUMABLE)
        (ak, ae, ag), (bk, be, bg) = self.two_people()
        adj = self.pick(n.adjs) if n.adjs else None
        k, e = self.np(n, adj=adj)
        tk, te = self.pick(PAST)
        g = V["buy"] if "buy" in n.get else (V[n.get[0]] if n.get else V["receive"])
        shop = self.pick(n.shops) if g.dic == "사다" and n.shops else None
        at_k = f"{shop}에서 " if shop else ""
        at_e = f" {PLACES[shop][0]}" if shop in PLACES else ""
        ko = [f"{eun(ak)} {tk} {at_k}{eul(k)} {g.past}."]
        en = [f"{cap(ae)} {g.en_past(article(e, n.num))}{at_e} {te}."]
        p = self._pred(n, adj)
        if p and self.chance(0.6):
            ko.append(f"{eun(k)} 아주 {p[0]}")
            en.append(f"The {e} {was(n)} very {p[1]}.")
        ko.append(f"{ko_he(ag)} {bk}에게 {eul(k)} 보여 주었다.")
        en.append(f"{cap(he(ag))} showed the {e} to {be}.")
        r = self.r.random()
        if r < 0.3:
            ko.append(f"{bk}도 {eul(k)} 좋아했다.")
            en.append(f"{cap(be)} liked the {e} too.")
        elif r < 0.5:
            ko.append(f"{bk}도 {i_ga(k)} 마음에 들었다.")
            en.append(f"{cap(be)} was pleased with the {e} too.")
        else:
            one = " 하나" if n.num == "c" else ""
            ko.append(f"그래서 {eun(ak)} {bk}에게도 {eul(k)}{one} {'사 주었다.' if g.dic == '사다' else '주었다.'}")
            en.append(f"So {ae} {'bought' if g.dic == '사다' else 'gave'} {be} {article(e, n.num) if n.num == 'c' else 'some ' + e} too.")
        return " ".join(ko), " ".join(en)

    def t_animal(self):
        """공원에서 하얀 고양이를 보았다. 하얀 고양이는 … 자고 있었다."""
        n = self.pick(BY_CAT["animal"])
        pk, pe, pg = self.person()
        place = self.pick(["공원", "놀이터", "바닷가", "산", "할머니 댁"])
        adj = self.pick(n.adjs)
        k, e = self.np(n, adj=adj)
        where = self.pick([("나무 아래에서", "under a tree"), ("의자 위에서", "on a bench"), ("풀밭에서", "in the grass"),
                           ("상자 안에서", "in a box")])
        act = self.pick([("자고 있었다", "was sleeping"), ("놀고 있었다", "was playing"), ("쉬고 있었다", "was resting")])
        v = V[self.pick(["pet", "care", "see"])]
        if self.chance(0.5):
            ko = f"{eun(pk)} {place}에서 {eul(k)} 보았다. {eun(k)} {where[0]} {act[0]}. {eun(pk)} {eul(k)} 조심스럽게 {v.past}."
            en = (f"{cap(pe)} saw {article(e, 'c')} {PLACES[place][0]}. The {e} {act[1]} {where[1]}. "
                  f"{cap(pe)} carefully {v.en_past('the ' + e)}.")
        else:  # new information with 이/가, then the same phrase as object and topic
            ko = (f"{place}에 {i_ga(k)} 있었다. {eun(pk)} {eul(k)} 보았다. {eun(k)} {where[0]} {act[0]}. "
                  f"{eun(pk)} {eul(k)} 조심스럽게 {v.past}.")
            en = (f"There was {article(e, 'c')} {PLACES[place][0]}. {cap(pe)} saw the {e}. The {e} {act[1]} {where[1]}. "
                  f"{cap(pe)} carefully {v.en_past('the ' + e)}.")
        if v.dic == "보다":
            ko = ko.replace("조심스럽게 보았다", "한참 동안 보았다").replace("조심스럽게 봤다", "한참 동안 봤다")
            en = en.replace(f"carefully saw the {e}", f"watched the {e} for a long time")
        return ko, en

    def t_day(self):
        """아침에 공원에서 걸었다. 그 후에 그는 집에서 쉬었다. — intransitive verbs, pronoun."""
        pk, pe, pg = self.person()
        steps = self.r.sample([("아침에", "In the morning"), ("오후에", "In the afternoon"), ("저녁에", "In the evening")], 2)
        steps.sort(key=lambda s: ["아침에", "오후에", "저녁에"].index(s[0]))
        tk, te = self.pick([("어제", "yesterday"), ("그저께", "the day before yesterday"), ("지난 토요일", "last Saturday"),
                            ("지난 일요일", "last Sunday")])
        used = set()
        out_k, out_e = [], []
        for i, (sk, se) in enumerate(steps):
            place = self.pick([p for p, (_, _, acts) in PLACES.items() if any(c is None for c, _ in acts) and p not in used])
            used.add(place)
            vk = self.pick([v for c, v in PLACES[place][2] if c is None])
            v = VI[vk]
            at = "집에서" if place == "집" else f"{place}에서"
            who_k = eun(pk) if i == 0 else ko_he(pg)
            who_e = pe if i == 0 else he(pg)
            lead_k = f"{tk} {sk}" if i == 0 else sk
            out_k.append(f"{who_k} {lead_k} {at} {v.past}." if i == 0 else f"{lead_k} {who_k} {at} {v.past}.")
            out_e.append(f"{cap(te)}, {who_e} {v.en_past('')} {PLACES[place][0]} {se.lower()}." if i == 0
                         else f"{se}, {who_e} {v.en_past('')} {PLACES[place][0]}.")
        return " ".join(out_k), " ".join(out_e)

    def t_future(self):
        """내일 … 을 살 것이다. 그리고 … 에게 줄 것이다 — future with matching time."""
        n = self.pick(KEEPABLE + CONSUMABLE)
        first = self.chance(0.3)
        pk, pe, pg = ("우리", "we", None) if first else self.person()
        top = "우리는" if first else eun(pk)
        fk, fe = self.pick(FUTURE)
        k, e = self.np(n, 0.5)
        g = V["buy"] if "buy" in n.get else V[self.pick(n.get)] if n.get else V["find"]
        ko = f"{top} {fk} {eul(k)} {g.future}."
        en = f"{cap(pe)} will {g.en_base(article(e, n.num))} {fe}."
        qk, qe, qg = self.person()
        if qk != pk and self.chance(0.6):
            ko += f" 그리고 그것을 {qk}에게 줄 것이다."
            en += f" Then {'we' if first else he(pg)} will give {it(n)} to {qe}."
        else:
            u = V[n.use[0]]
            ko += f" 그리고 {fk.replace('에', '')} 저녁에 그것을 {u.future}." if fk in ("내일", "모레") else f" 그리고 그것을 {u.future}."
            en += f" Then {'we' if first else he(pg)} will {u.en_base(it(n))}."
        return ko, en

    def _items(self, lo=4, hi=7):
        """lo..hi distinct nouns in a random order: what follows one item in a list cannot be
        guessed from the words alone, only copied from an earlier recital of the same list."""
        return self.r.sample(NOUNS, self.r.randint(lo, hi))

    def t_recall_list(self):
        """지영의 목록: 사과, 우유, 연필. … 다시 읽었다: 사과, 우유, 연필. — a list recited twice
        (induction: the second recital is predictable only by copying the first)."""
        pk, pe, pg = self.person()
        items = self._items()
        ko_l, en_l = ", ".join(n.ko for n in items), ", ".join(n.en for n in items)
        kind = self.pick([("장보기 목록", "shopping list"), ("준비물", "list of things to bring"),
                          ("메모", "note"), ("선물 목록", "gift list"), ("여행 가방 목록", "packing list")])
        k0, e0 = kind
        ko1, en1 = self.pick([
            (f"{pk}의 {k0}: {ko_l}.", f"{cap(pe)}'s {e0}: {en_l}."),
            (f"{eun(pk)} {k0}에 {ko_l}{'을' if has_batchim(items[-1].ko) else '를'} 적었다.",
             f"{cap(pe)} wrote {en_l} on the {e0}."),
        ])
        ko2, en2 = self.pick([
            (f"가게에서 다시 읽었다: {ko_l}.", f"At the shop {he(pg)} read it again: {en_l}."),
            (f"{self.pick(NOW)[0]} {eun(pk)} 다시 확인했다: {ko_l}.", f"Later {he(pg)} checked it again: {en_l}."),
            (f"{eun(self.person()[0])} 그 목록을 소리 내어 읽었다. {ko_l}.", f"Someone read the list aloud: {en_l}."),
        ])
        return f"{ko1} {ko2}", f"{en1} {en2}"

    @staticmethod
    def _num_batchim(digits):
        """Whether a number read aloud ends in a consonant: 영 일 삼 육 칠 팔 do, 이 사 오 구 not."""
        return digits[-1] in "013678"

    def t_recall_code(self):
        """민수의 사물함 번호는 4827이다. … 4827을 눌렀다. — digits recited twice."""
        pk, pe, pg = self.person()
        digits = "".join(self.pick("0123456789") for _ in range(self.r.randint(4, 8)))
        if self.chance(0.4):
            digits = f"{digits[:3]}-{digits[3:]}"
        what = self.pick([("사물함 번호", "locker code"), ("전화번호", "phone number"), ("방 번호", "room number"),
                          ("비밀번호", "password"), ("주문 번호", "order number"), ("버스 번호", "bus number")])
        b = self._num_batchim(digits)
        obj, cop, quote = ("을", "이다", "이라고") if b else ("를", "다", "라고")
        ko1, en1 = f"{pk}의 {what[0]}는 {digits}{cop}.", f"{cap(pe)}'s {what[1]} is {digits}."
        ko2, en2 = self.pick([
            (f"{eun(pk)} 잊지 않으려고 {digits}{obj} 두 번 적었다: {digits}.",
             f"So as not to forget it, {he(pg)} wrote {digits} twice: {digits}."),
            (f"다음 날 {eun(pk)} {digits}{obj} 다시 말했다.", f"The next day {he(pg)} said {digits} again."),
            (f"{eun(self.person()[0])} 수첩에 {digits}{quote} 적어 두었다.", f"A friend wrote down {digits} in a notebook."),
        ])
        return f"{ko1} {ko2}", f"{en1} {en2}"

    TEMPLATES = [("t_relative", 4), ("t_recur", 5), ("t_pronoun", 3), ("t_two_pronouns", 2), ("t_question", 3),
                 ("t_tenses", 2), ("t_place", 3), ("t_tool", 1), ("t_story", 3), ("t_animal", 1), ("t_day", 1),
                 ("t_future", 2), ("t_recall_list", 4), ("t_recall_code", 2)]


_LESSONISH = re.compile(r"나는 .*커피를 .*마셨다|coffee or tea|tea or coffee", re.I)


def allowed(line):
    return len(line) <= MAX_LEN and not contains_lesson(line) and not _LESSONISH.search(line)


def generate(ko_chars, en_chars, seed=SEED, recall_weight=1):
    """Korean and English lines, each made once, until about ko_chars / en_chars characters
    (the last line may pass the budget). Deterministic for a given seed. `recall_weight`
    multiplies the draw weight of the recital templates (t_recall_*)."""
    gen = Gen(seed)
    names = [t for t, w in Gen.TEMPLATES
             for _ in range(w * (recall_weight if t.startswith("t_recall") else 1))]
    ko, en, seen = [], [], set()
    kc = ec = 0
    tries = 0
    limit = 200 * (ko_chars + en_chars) // 60 + 10000
    while (kc < ko_chars or ec < en_chars) and tries < limit:
        tries += 1
        out = getattr(gen, gen.pick(names))()
        if not out:
            continue
        k, e = (re.sub(r"\s+", " ", x).strip() for x in out)
        if kc < ko_chars and k not in seen and allowed(k):
            seen.add(k)
            ko.append(k)
            kc += len(k)
        if ec < en_chars and e not in seen and allowed(e):
            seen.add(e)
            en.append(e)
            ec += len(e)
    return ko, en


if __name__ == "__main__":
    kc = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    ec = int(sys.argv[2]) if len(sys.argv) > 2 else kc
    k, e = generate(kc, ec)
    print("\n".join(k + e))
