"""The model's tokenizer in Python (core/semantic/wordpiece.py) against Hugging Face ``tokenizers``.

The vectors in a user's cache were made from ``tokenizers``' ids, and a query's vector
must meet them: the Python tokenizer must give the same ids for every text. These
tests ask ``tokenizers`` (a test dependency only) about every code point, then about
random texts mixing the characters that differ (accents, marks, CJK, punctuation,
whitespace, controls, the special tokens) and about real transcript text.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.semantic import embedder
from core.semantic.wordpiece import WordPiece, words

tokenizers = pytest.importorskip("tokenizers")

MODEL = embedder.SHIPPED_DIR
TEXT = (MODEL / embedder.TOKENIZER_FILE).read_text()


def _reference() -> object:
    tok = tokenizers.Tokenizer.from_str(TEXT)
    tok.enable_truncation(max_length=embedder.MAX_TOKENS)
    tok.no_padding()
    return tok


REFERENCE = _reference()
OURS = WordPiece.from_json(TEXT, max_tokens=embedder.MAX_TOKENS)
NORMALIZER = tokenizers.normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
PRE = tokenizers.pre_tokenizers.BertPreTokenizer()


def _their_words(text: str) -> list[str]:
    return [w for w, _ in PRE.pre_tokenize_str(NORMALIZER.normalize_str(text))]


def test_every_code_point_alone_and_between_letters_splits_as_tokenizers_does() -> None:
    differ = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        text = f"a{ch}b {ch}"
        if words(text) != _their_words(text):
            differ.append(f"U+{cp:04X} {unicodedata.name(ch, '?')}: {words(text)} != {_their_words(text)}")
    assert not differ, f"{len(differ)} code points differ, e.g. {differ[:5]}"


MIXED = (
    "abcXYZ019 _-./:;!?()[]{}'\"`~@#$%^&*+=|\\<>\t\n\r\x00\x0b\x0c\x1f\x7f\x85\xa0"
    "éÉèüßøæœİıſΣσςΟΔΟΣ→—–…«»“”‘’ñÑçÇ"
    "\u0301\u0308\u0327\u200b\u200d\ufeff\u2028\u3000\ufffd\ue000"
    "中文字漢字日本語カタカナひらがな한국어"
    "😀🚀✅🥲🫠👍🏽"
    "ٱلعربية עברית देवनागरी ไทย"
)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=MIXED, max_size=120) | st.text(max_size=60))
@example("[CLS] hello [SEP] world [MASK]x[UNK][PAD]")
@example("ΟΔΟΣ ΟΔΟΣ. Σ")
@example("Ünïcödé façade — naïve café 😀")
@example("a" * 101 + " b")
@example("getCachedProjectData(config.yaml) -> HTTP 404: not_found\tsee src/cache/invalidate.rs:42")
def test_random_texts_give_tokenizers_ids(text: str) -> None:
    assert OURS.encode(text) == REFERENCE.encode(text).ids


def test_long_texts_are_cut_like_tokenizers_cuts_them() -> None:
    text = " ".join(f"word{i} x-{i}" for i in range(400)) + " [SEP] tail"
    ids = OURS.encode(text)
    assert ids == REFERENCE.encode(text).ids
    assert len(ids) == embedder.MAX_TOKENS


def test_real_transcript_text_gives_tokenizers_ids(tmp_path: Path) -> None:
    from core.fixtures.demo import write_demo_corpus

    home = tmp_path
    write_demo_corpus(home)
    texts = [line for f in sorted(home.rglob("*.json*")) for line in f.read_text(errors="replace").splitlines()]
    shared = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
    if shared.is_dir():  # the real transcripts, when the checkout has them beside it
        for f in sorted(shared.rglob("*.jsonl"))[:40]:
            texts += f.read_text(errors="replace").splitlines()[:200]
    assert len(texts) > 50
    for text in texts:
        for piece in (text[:400], text[-400:]):
            assert OURS.encode(piece) == REFERENCE.encode(piece).ids, piece


def test_a_file_that_is_not_bert_wordpiece_is_refused() -> None:
    for bad in ("", "{}", '{"model": {"type": "BPE", "vocab": {}}, "normalizer": {}, "pre_tokenizer": {}}', "[1, 2]"):
        with pytest.raises(ValueError):
            WordPiece.from_json(bad, max_tokens=128)


def test_a_text_of_ever_new_characters_keeps_the_character_memo_bounded(monkeypatch) -> None:
    from core.semantic import wordpiece

    monkeypatch.setattr(wordpiece, "CHAR_MEMO", 300)
    text = "".join(chr(cp) for cp in range(0x4E00, 0x4E00 + 1000)) + " é Ünïcödé, façade!"
    assert OURS.encode(text) == REFERENCE.encode(text).ids
    assert len(wordpiece._CHARS) <= 300
    assert OURS.encode("Ünïcödé, façade!") == REFERENCE.encode("Ünïcödé, façade!").ids
