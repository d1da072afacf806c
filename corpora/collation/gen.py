"""Writes names.json: 500 session file names that tie on everything but their names, mixing scripts,
accents, case, digits, punctuation, emoji, ligatures and combining marks, for the listing's tie-break
by `localeCompare` (seed 23). Names are valid file names (no '/', no NUL) ending in `.jsonl`."""

import json
import random

rng = random.Random(23)
PIECES = [
    "a", "b", "z", "A", "Z", "e", "E", "o", "O", "s", "ss", "th", "ae", "oe",
    "å", "ä", "ö", "Å", "Ä", "Ö", "ü", "Ü", "ß", "ø", "æ", "Æ", "œ", "Œ", "é", "è", "ê", "É", "ç", "ñ", "Ñ",
    "e\u0301", "a\u0308", "o\u0308", "A\u030a", "n\u0303", "i\u0307", "\u0301",
    "ﬁ", "ﬂ", "ﬀ", "Ǆ", "ǅ", "ǆ", "Ĳ", "ĳ",
    "ж", "Ж", "я", "ё", "Ё", "е", "α", "Ω", "ω", "ά",
    "日本", "漢字", "中", "あ", "ア", "ｱ", "が", "か", "カ", "ー", "ぁ",
    "한", "ا", "ب", "ש", "א",
    "0", "1", "2", "9", "10", "07", "٣", "１", "½",
    "-", "_", " ", ".", ",", "(", ")", "[", "]", "+", "=", "!", "~", "'", "#", "@", "&", "%", "$",
    "😀", "🎉", "👍🏽", "🇸🇪", "❤️", "★",
]
names = set()
while len(names) < 500:
    k = rng.randint(1, 6)
    stem = "".join(rng.choice(PIECES) for _ in range(k))
    if rng.random() < 0.3:
        stem = f"2026-01-0{rng.randint(1, 9)}T10-00-00-000Z_{stem}"
    names.add(stem + ".jsonl")
with open("names.json", "w", encoding="utf-8") as f:
    json.dump(sorted(names), f, ensure_ascii=False, indent=0)
    f.write("\n")
