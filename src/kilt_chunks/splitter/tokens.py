"""Exact cl100k_base token counts: the numbers LlamaIndex's ``SentenceSplitter``
budgets its chunks with.

LlamaIndex counts with ``get_tokenizer()``: tiktoken's ``cl100k_base`` with
``allowed_special="all"`` (:func:`tiktoken_counter`, the reference). The
splitter counts the same numbers with rs-bpe (Rust bindings of GitHub's
``bpe-openai``), about twice as fast per byte and with a far lower per-call
cost (:class:`TokenCounter`), and skips counting where a cheap bound already
decides (:func:`token_lower_bound`, :func:`bytes_at_most`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "SPECIAL_TOKENS",
    "TokenCounter",
    "bytes_at_most",
    "count_tokens",
    "encodes_as_utf8",
    "get_token_counter",
    "tiktoken_counter",
    "tiktoken_encoding",
    "token_lower_bound",
    "without_lone_surrogates",
]


@functools.lru_cache(maxsize=1)
def tiktoken_encoding() -> Any:
    """The tiktoken encoding LlamaIndex's ``get_tokenizer()`` builds by default.

    Source: ``llama_index.core.utils.get_tokenizer``: ``tiktoken.encoding_for_model(
    "gpt-3.5-turbo")`` (``cl100k_base``), loaded with ``TIKTOKEN_CACHE_DIR`` pointing
    at LlamaIndex's bundled ``_static/tiktoken_cache`` unless already set (no
    network needed), and the variable restored afterwards. The folder is found
    without importing llama-index-core (slow to import).
    """
    import importlib.util

    import tiktoken

    # Found, not imported: importing llama_index.core takes over a second,
    # which every spawned chunking worker would pay.
    spec = importlib.util.find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llama-index-core is not installed")
    should_revert = "TIKTOKEN_CACHE_DIR" not in os.environ
    if should_revert:
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(
            list(spec.submodule_search_locations)[0], "_static", "tiktoken_cache"
        )
    try:
        return tiktoken.encoding_for_model("gpt-3.5-turbo")
    finally:
        if should_revert:
            del os.environ["TIKTOKEN_CACHE_DIR"]


@functools.lru_cache(maxsize=1)
def tiktoken_counter() -> Callable[[str], int]:
    """Return the reference counter ``f(text) -> len(enc.encode(text,
    allowed_special="all"))`` (cached: the encoding is loaded on first use,
    about 40 MB). Tests check :class:`TokenCounter` against it.

    Source: ``tiktoken.core.Encoding.encode`` with ``allowed_special="all"``: the
    disallowed set is then empty (no special-token scan), the Rust ``CoreBPE.encode``
    is called with all special tokens allowed, and on ``UnicodeEncodeError`` (lone
    surrogates) the text is round-tripped through UTF-16 with ``"replace"`` first.
    This calls the same Rust method directly to skip the per-call Python set work.
    """
    enc = tiktoken_encoding()
    core = getattr(enc, "_core_bpe", None)
    if core is None or not hasattr(core, "encode"):  # pragma: no cover - defensive

        def count_public(text: str) -> int:
            return len(enc.encode(text, allowed_special="all"))

        return count_public

    core_encode = core.encode
    allowed_set = set(enc.special_tokens_set)

    def count(text: str) -> int:
        try:
            return len(core_encode(text, allowed_set))
        except UnicodeEncodeError:
            return len(core_encode(without_lone_surrogates(text), allowed_set))

    return count


@functools.lru_cache(maxsize=1)
def _rs_bpe_tokenizer() -> Any:
    """rs-bpe's ``cl100k_base`` tokenizer (rs-bpe is a dependency).

    Source: rs-bpe (Python bindings of GitHub's ``bpe`` / ``bpe-openai`` Rust
    crates), ``rs_bpe.bpe.openai.cl100k_base()``. It counts tokens about twice
    as fast as tiktoken per byte, with a per-call cost about 8 times lower, and
    gives tiktoken's ordinary (no special token) count; that identity is
    checked against tiktoken in ``tests/python/test_splitter_tokens.py``. It
    rejects lone surrogates (``UnicodeEncodeError``) and does not know the
    special tokens; :class:`TokenCounter` handles both as tiktoken does.
    """
    from rs_bpe.bpe import openai

    return openai.cl100k_base()


#: The special tokens of cl100k_base (``Encoding.special_tokens_set``; a test
#: checks the list against tiktoken). None is a prefix of another.
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
)
_SPECIAL_TOKEN_RE = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))


def without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as tiktoken's
    ``Encoding.encode`` does on ``UnicodeEncodeError``."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class TokenCounter:
    """The exact cl100k_base count of LlamaIndex's default tokenizer, by rs-bpe.

    Attributes:
        count: ``f(text) -> int``, equal to ``len(get_tokenizer()(text))`` of
            LlamaIndex (tiktoken ``cl100k_base``, ``allowed_special="all"``)
            for every string.
        count_upto: ``f(text, limit) -> int``: the count if it is at most
            ``limit``, else -1; for text without special-token markers,
            rs-bpe's ``count_till_limit`` stops encoding once ``limit`` is
            passed.

    Both are plain functions (closures), not methods, so that the splitter's
    hot loop calls them without an attribute lookup.

    Source: tiktoken's ``Encoding.encode`` and the Rust
    ``CoreBPE._encode_native``, computed with rs-bpe (:func:`_rs_bpe_tokenizer`)
    the same way: lone surrogates are first replaced by U+FFFD; each special
    token counts one; the text between special tokens is counted on its own.
    One known difference: tiktoken's pre-tokenizer raises ``ValueError`` ("Max
    stack size exceeded for backtracking") on a run of about a million
    white-space characters followed by more text; this counter counts it.
    """

    count: Callable[[str], int]
    count_upto: Callable[[str, int], int]

    def __init__(self) -> None:
        tokenizer = _rs_bpe_tokenizer()
        rs_count = tokenizer.count
        rs_count_till_limit = tokenizer.count_till_limit
        special_tokens = _SPECIAL_TOKEN_RE.finditer

        def count_valid(text: str) -> int:
            if "<|" not in text:
                return rs_count(text)
            total = 0
            start = 0
            for match in special_tokens(text):
                total += rs_count(text[start : match.start()]) + 1
                start = match.end()
            return total + rs_count(text[start:])

        def count(text: str) -> int:
            try:
                return count_valid(text)
            except UnicodeEncodeError:
                return count_valid(without_lone_surrogates(text))

        def limited_by_count(text: str, limit: int) -> int:
            n = count(text)
            return n if n <= limit else -1

        def count_upto(text: str, limit: int) -> int:
            if "<|" in text:
                return limited_by_count(text, limit)
            try:
                n = rs_count_till_limit(text, limit)
            except UnicodeEncodeError:
                return limited_by_count(text, limit)
            return -1 if n is None else n

        self.count = count
        self.count_upto = count_upto


@functools.lru_cache(maxsize=1)
def get_token_counter() -> TokenCounter:
    """The process's one :class:`TokenCounter` (cached; rs-bpe's tables are
    built on first use)."""
    return TokenCounter()


def count_tokens(text: str) -> int:
    """Exact cl100k_base token count of ``text``, as LlamaIndex's default
    tokenizer counts it (``len(get_tokenizer()(text))``); see
    :class:`TokenCounter`."""
    return get_token_counter().count(text)


# Byte classes for the token lower bound: cl100k pre-tokenizer classes of ASCII
# bytes. L = letter (\p{L}), N = digit (\p{N}), S = whitespace (\s, Unicode
# White_Space), P = any other ASCII byte, U = a byte of a non-ASCII character
# (class unknown, never counted).
_CLASS_TABLE = bytes(
    ord(
        "L"
        if chr(b).isascii() and chr(b).isalpha()
        else "N"
        if 0x30 <= b <= 0x39
        else "S"
        if chr(b) in " \t\n\x0b\x0c\r"
        else "P"
        if b < 0x80
        else "U"
    )
    for b in range(256)
)
# Adjacent class pairs at which a cl100k pre-token provably starts (or, for S+x,
# at which a distinct pre-token is provably present). See token_lower_bound.
# Most frequent first, so that token_lower_bound can stop early.
_BOUNDARY_PAIRS = (b"SL", b"LP", b"SN", b"NP", b"SP", b"LN", b"NL", b"PN")


def token_lower_bound(text: str, limit: int) -> int:
    r"""A cheap number that is provably <= the cl100k token count of ``text``.

    Counting stops as soon as the bound exceeds ``limit`` (the result is then
    still a valid lower bound, just not the best this method gives). Returns 0
    when no bound is attempted (special-token markers ``<|`` present, or text that
    is not valid UTF-8, e.g. lone surrogates).

    Why it is a bound. Without ``<|`` no special token can occur, so tiktoken
    splits the text into pre-tokens with the cl100k regex
    ``'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
    ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`` and every
    pre-token becomes at least one token. By the shape of those alternatives,
    no pre-token contains two adjacent characters of classes LN, LP, NL, NP or
    PN (L letter, N digit, P other non-whitespace), and none contains
    non-whitespace, then whitespace, then non-whitespace (whitespace occurs in a
    non-whitespace pre-token only as its first character or, newlines, at its
    end). Map each adjacent pair counted here (SL SN SP LN LP NL NP PN; S is
    ASCII whitespace) to the pre-token containing its second character: by the
    two facts above no two pairs share a pre-token, and the pre-token holding
    position 0 is yet another one when position 0 is not whitespace. Only
    ASCII bytes are classified; bytes of other characters are class U and are
    never counted, so the bound holds for any text.
    """
    if "<|" in text:
        return 0
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return 0
    cls = raw.translate(_CLASS_TABLE)
    total = 1 if cls[:1] in (b"L", b"N", b"P") else 0
    for pair in _BOUNDARY_PAIRS:
        total += cls.count(pair)
        if total > limit:
            break
    return total


def bytes_at_most(text: str, limit: int) -> bool:
    """True if ``text`` is at most ``limit`` UTF-8 bytes (so at most ``limit``
    tokens: every cl100k token, special ones included, covers at least one byte).
    Surrogates are counted in their ``surrogatepass`` form: 3 bytes for a lone one,
    which tiktoken replaces by the 3-byte U+FFFD, and 6 bytes for a pair, which it
    joins into one 4-byte character, so the count is never too small."""
    n = len(text)
    if n > limit:
        return False
    if 4 * n <= limit or text.isascii():
        return True
    return len(text.encode("utf-8", "surrogatepass")) <= limit


def encodes_as_utf8(text: str) -> bool:
    """False if ``text`` holds a lone surrogate (tiktoken replaces those)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class FunctionTokenCounter:
    """Exact counts ``len(encode(text))`` of any tokenizer callable: the
    generic path of the fast splitter (no bound, no rs-bpe).

    Attributes:
        count: ``f(text) -> int``.
        count_upto: ``f(text, limit) -> int``: the count if it is at most
            ``limit``, else -1 (the whole text is encoded).
        bytes_bound: True when every token covers at least one UTF-8 byte
            (tiktoken encodings), so a text of at most ``limit`` bytes needs
            no count; False for other tokenizers (a normalizer may expand
            text).
    """

    count: Callable[[str], int]
    count_upto: Callable[[str, int], int]

    def __init__(self, encode: Callable[[str], Any], *, bytes_bound: bool) -> None:
        def count(text: str) -> int:
            return len(encode(text))

        def count_upto(text: str, limit: int) -> int:
            n = len(encode(text))
            return n if n <= limit else -1

        self.count = count
        self.count_upto = count_upto
        self.bytes_bound = bytes_bound
