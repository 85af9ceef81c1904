"""An exact, faster re-implementation of LlamaIndex's ``SentenceSplitter``.

:class:`FastSentenceSplitter` returns, for every input string, exactly the chunks
that ``llama_index.core.node_parser.SentenceSplitter(chunk_size=N,
chunk_overlap=0).split_text`` returns (pinned versions: llama-index-core 0.14.25,
nltk 3.10.4, tiktoken 0.14.0, rs-bpe 0.1.0). It is faster because it

* skips LlamaIndex's per-call callback / instrumentation machinery;
* replaces NLTK's general Punkt sentence tokenizer with a port specialised to the
  *untrained* ``PunktSentenceTokenizer()`` LlamaIndex uses (empty abbreviation,
  collocation, sentence-starter and orthographic tables), working on plain
  strings instead of ``PunktToken`` objects, but with NLTK's own compiled
  regular expressions, so the decisions are the same;
* counts tokens with rs-bpe (Rust bindings of GitHub's ``bpe-openai``), which
  gives tiktoken's exact ``cl100k_base`` counts about twice as fast per byte and
  with a far lower per-call cost, handling special tokens and lone surrogates
  as tiktoken does (see :func:`_make_counter`);
* counts less (stock encodes about 1.85 times the input, this about 1.1
  times): a text already known to be larger than the chunk size is not counted
  again when it is split further, counting stops once the chunk size is passed,
  the whole text is not counted when a cheap, provable lower bound on its token
  count already exceeds the chunk size, and a text whose UTF-8 length is at
  most the chunk size is not counted at all (a token covers at least one byte);
* derives each chunk's own token count (for the chunk spans) from the counts of
  its pieces instead of counting the chunk again (:class:`_ChunkTokenCounter`).

Scope and known differences:

* Only ``chunk_overlap=0`` (the only setting this project uses) is reproduced,
  with LlamaIndex's default separators and secondary chunking regex.
* The tokenizer is always tiktoken ``cl100k_base``, which is what LlamaIndex's
  ``get_tokenizer()`` gives unless a program installs its own with
  ``llama_index.core.set_global_tokenizer``; then stock follows that one.
* NLTK runs every Punkt regex under a wall-clock timeout
  (``nltk.redos.DEFAULT_TIMEOUT``, 5 s per call) and raises ``TimeoutError``
  beyond it; that needs pathological input many megabytes long, and this
  module has no such limit.
* tiktoken (and so stock) raises ``ValueError`` ("Max stack size exceeded for
  backtracking") on a run of about a million white-space characters followed
  by more text; this splitter splits such text (its chunks are what stock
  would give without that limit).
* There is no fallback to stock: apart from the failure above, no input class
  was found where the fast path differs (see
  ``tests/python/test_fast_splitter.py``).

The stock splitter stays available as :func:`split_text_stock` (selectable as
``"llama_index"`` through :func:`get_splitter`) for differential testing.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "SPLITTER_NAMES",
    "FastSentenceSplitter",
    "get_fast_splitter",
    "get_splitter",
    "split_text_stock",
]

#: Names accepted by :func:`get_splitter`.
SPLITTER_NAMES: tuple[str, ...] = ("fast", "llama_index")

# --- constants copied from llama_index/core/node_parser/text/sentence.py -------
_PARAGRAPH_SEP = "\n\n\n"  # DEFAULT_PARAGRAPH_SEP
_CHUNKING_RE = re.compile("[^,.;。？！]+[,.;。？！]?|[,.;。？！]")  # CHUNKING_REGEX
_WORD_SEP = " "  # SentenceSplitter.separator default

# --- tokenizer -----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
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
def _make_tiktoken_counter() -> Callable[[str], int]:
    """Return ``f(text) -> len(enc.encode(text, allowed_special="all"))`` (cached:
    the encoding is loaded on first use, about 40 MB).

    Source: ``tiktoken.core.Encoding.encode`` with ``allowed_special="all"``: the
    disallowed set is then empty (no special-token scan), the Rust ``CoreBPE.encode``
    is called with all special tokens allowed, and on ``UnicodeEncodeError`` (lone
    surrogates) the text is round-tripped through UTF-16 with ``"replace"`` first.
    This calls the same Rust method directly to skip the per-call Python set work.
    """
    enc = _encoding()
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
            return len(core_encode(_without_lone_surrogates(text), allowed_set))

    return count


@functools.lru_cache(maxsize=1)
def _rs_bpe_tokenizer() -> Any | None:
    """rs-bpe's ``cl100k_base`` tokenizer, or None if rs-bpe is not installed.

    Source: rs-bpe (Python bindings of GitHub's ``bpe`` / ``bpe-openai`` Rust
    crates), ``rs_bpe.bpe.openai.cl100k_base()``. It counts tokens about twice
    as fast as tiktoken per byte, with a per-call cost about 8 times lower, and
    gives tiktoken's ordinary (no special token) count; that identity is
    checked against tiktoken in ``tests/python/test_fast_splitter.py``. It
    rejects lone surrogates (``UnicodeEncodeError``) and does not know the
    special tokens; :func:`_make_counter` handles both as tiktoken does.
    """
    try:
        from rs_bpe.bpe import openai
    except ImportError:  # pragma: no cover - rs-bpe is a dependency
        return None
    return openai.cl100k_base()


#: The special tokens of cl100k_base (``Encoding.special_tokens_set``; a test
#: checks the list against tiktoken). None is a prefix of another.
_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
)
_SPECIAL_TOKEN_RE = re.compile("|".join(re.escape(t) for t in _SPECIAL_TOKENS))


def _without_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as tiktoken's
    ``Encoding.encode`` does on ``UnicodeEncodeError``."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _make_counter() -> Callable[[str], int]:
    """Return ``f(text) -> len(enc.encode(text, allowed_special="all"))``.

    The exact cl100k_base count of LlamaIndex's default tokenizer, computed
    with rs-bpe (:func:`_rs_bpe_tokenizer`) the way tiktoken computes it
    (``tiktoken.core.Encoding.encode`` and the Rust ``CoreBPE._encode_native``):
    lone surrogates are first replaced by U+FFFD; each special token counts
    one; the text between special tokens is counted on its own. Without
    rs-bpe, tiktoken counts (:func:`_make_tiktoken_counter`).

    One known difference: tiktoken's pre-tokenizer raises ``ValueError``
    ("Max stack size exceeded for backtracking") on a run of about a million
    white-space characters followed by more text; this counter counts it.
    """
    tokenizer = _rs_bpe_tokenizer()
    if tokenizer is None:  # pragma: no cover - rs-bpe is a dependency
        return _make_tiktoken_counter()
    rs_count = tokenizer.count
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
            return count_valid(_without_lone_surrogates(text))

    return count


def _make_limited_counter() -> Callable[[str, int], int]:
    """Return ``f(text, limit) -> count`` if the count is ``<= limit``, else -1.

    The count is :func:`_make_counter`'s; for text without special-token
    markers, rs-bpe's ``count_till_limit`` stops encoding once the limit is
    passed.
    """
    count = _make_counter()
    tokenizer = _rs_bpe_tokenizer()

    def limited_by_count(text: str, limit: int) -> int:
        n = count(text)
        return n if n <= limit else -1

    if tokenizer is None:  # pragma: no cover - rs-bpe is a dependency
        return limited_by_count
    rs_count_till_limit = tokenizer.count_till_limit

    def limited(text: str, limit: int) -> int:
        if "<|" in text:
            return limited_by_count(text, limit)
        try:
            n = rs_count_till_limit(text, limit)
        except UnicodeEncodeError:
            return limited_by_count(text, limit)
        return -1 if n is None else n

    return limited


def token_counter() -> Callable[[str], int]:
    """Public form of the exact cl100k_base token counter used by the splitter.

    Returns:
        ``f(text) -> int``, equal to ``len(get_tokenizer()(text))`` of LlamaIndex
        (tiktoken ``cl100k_base``, ``allowed_special="all"``) for every string.

    Source: ``tiktoken.core.Encoding.encode``; see ``_make_counter``.
    """
    return _make_counter()


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
# at which a distinct pre-token is provably present). See _token_lower_bound.
# Most frequent first, so that _token_lower_bound can stop early.
_BOUNDARY_PAIRS = (b"SL", b"LP", b"SN", b"NP", b"SP", b"LN", b"NL", b"PN")


def _token_lower_bound(text: str, limit: int) -> int:
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


def _bytes_at_most(text: str, limit: int) -> bool:
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


# --- Punkt (untrained) -----------------------------------------------------------


def _unwrap(pattern: Any) -> Any:
    """The compiled ``regex`` pattern inside NLTK's ``redos.TimedPattern``."""
    return getattr(pattern, "_rx", pattern)


class _UntrainedPunkt:
    """Exact ``span_tokenize`` of an untrained ``nltk PunktSentenceTokenizer()``.

    Source: ``nltk/tokenize/punkt.py`` (nltk 3.10.4): ``span_tokenize``,
    ``_slices_from_text``, ``_match_potential_end_contexts``,
    ``_get_last_whitespace_index``, ``text_contains_sentbreak``,
    ``_tokenize_words``, ``_first_pass_annotation``, ``_second_pass_annotation``,
    ``_ortho_heuristic`` and ``_realign_boundaries``, specialised to empty
    ``PunktParameters`` and using NLTK's own compiled regexes (``regex`` engine).
    """

    _ASCII_WS = " \t\n\r\x0b\x0c"  # string.whitespace
    _PUNCTUATION = frozenset(";:,.!?")  # PunktSentenceTokenizer.PUNCTUATION
    # PunktLanguageVars._re_non_word_chars (checked against NLTK by the tests).
    NON_WORD = frozenset(")\";}]*:@'({[\u2018\u2019\u201c\u201d\xab\xbb?!")
    # Optional zero-width group appended to NLTK's period-context regex. It
    # records, without changing the match, the commonest candidate: "." ending
    # a word of 2+ ASCII letters that starts after ASCII whitespace (or at 0),
    # followed by ASCII whitespace and then a printable ASCII character other
    # than ".". Such a candidate always ends a sentence (see _is_end), and its
    # context never overlaps a neighbour's, so it needs no further work.
    _SIMPLE = (
        r"(?P<fast_simple>(?<=(?<![^\x20\t\n\r\x0b\x0c])[A-Za-z]{2,}\.)"
        r"(?=[\x20\t\n\r\x0b\x0c]\s*[!-\-/-~]))?"
    )

    def __init__(self) -> None:
        import regex
        from nltk.tokenize.punkt import PunktLanguageVars, PunktToken

        lang = PunktLanguageVars()
        period_context = _unwrap(lang.period_context_re())
        self._period_context = regex.compile(
            period_context.pattern + self._SIMPLE, period_context.flags
        )
        groups = self._period_context.groupindex
        self._g_next = groups["next_tok"]
        self._g_simple = groups["fast_simple"]
        self._word_tokenize = _unwrap(lang._word_tokenizer_re()).findall
        self._realign = _unwrap(lang.re_boundary_realignment).match
        self._numeric_sub = _unwrap(PunktToken._RE_NUMERIC).sub
        self._initial_match = _unwrap(PunktToken._RE_INITIAL).match
        # First characters that can start a boundary-realignment match.
        self._realign_first = frozenset("\"')]}\u2018\u2019\u201c\u201d\xab\xbb")

    def _is_break(self, tok: str, nxt: str) -> bool:
        """Final ``sentbreak`` of token ``tok`` followed by token ``nxt``."""
        if tok == "?" or tok == "!":
            return True  # first pass marks them; second pass only looks at "."
        if tok[-1] != "." or tok.endswith(".."):
            return False  # not period-final, or ellipsis / ".." (no sentbreak)
        # First pass: period-final, no known abbreviations -> sentbreak.
        # Second pass: initials and numbers may be re-classified.
        initial = len(tok) == 2 and self._initial_match(tok) is not None
        if not initial:
            typ = self._numeric_sub("##number##", tok.lower())
            if len(typ) > 1 and typ[-1] == ".":
                typ = typ[:-1]
            if typ != "##number##":
                return True
        # _ortho_heuristic with empty orthographic context:
        if nxt in self._PUNCTUATION:
            return False  # "not a sentence starter"
        first = nxt[0]
        if first.islower():
            return False
        # "unknown": the special rule for initials followed by an upper-case word.
        return not (initial and first.isupper())

    def _contains_sentbreak(self, context: str) -> bool:
        """``PunktSentenceTokenizer.text_contains_sentbreak(context)``."""
        toks: list[str] = []
        for line in context.split("\n"):
            if line.strip():
                toks.extend(self._word_tokenize(line))
        is_break = self._is_break
        for i in range(len(toks) - 1):
            if is_break(toks[i], toks[i + 1]):
                return True
        return False

    def _is_end(self, text: str, match: Any, word_start: int) -> bool:
        """Whether the candidate ``match`` (whose preceding word starts at
        ``word_start``) ends a sentence: ``text_contains_sentbreak`` of its context
        ``text[word_start:match.end("after_tok")]``.

        Common shapes are decided without tokenizing the context, each exactly as
        the general path decides it. Let ``c`` be the first character of the
        next word. If ``c`` is printable ASCII, its line is not blank, so at least
        one token follows the end character; if moreover ``c`` is not ".", the
        multi-character token ``". . ."`` cannot start at the end character.

        * ``"?"``/``"!"`` is always a token of its own and a break in both passes.
        * ``"."`` with ``c`` printable ASCII and not ".": the token ending in "." is
          ``"."`` itself (empty word, or the word ends in a closing-punctuation
          character, which is either a token of its own or, being a word start,
          forms the token ``X.`` with it, e.g. ``'.`` or ``”.``), or ``word.`` for
          a word of 2+ ASCII letters/digits, not all digits. None of these is
          an initial or a number, so each stays a break.
        * ``"."`` after a one-character or all-digit word of ASCII letters/digits,
          with ``c`` an ASCII letter/digit: an all-digit word is a number, kept
          as a break unless ``c`` is lower case; a one-letter word is an initial,
          kept as a break only if ``c`` is neither lower nor upper case (a
          digit). When that leaves no break, the context has none only if the
          next word is one token (all ASCII letters/digits); otherwise a later
          token may still be a break, so the general path decides.
        """
        mstart = match.start()
        next_start = match.start(self._g_next)  # -1 if after_tok is punctuation
        if text[mstart] == ".":
            if next_start >= 0:
                c = text[next_start]
                if "!" <= c <= "~" and c != ".":
                    if mstart == word_start or text[mstart - 1] in self.NON_WORD:
                        return True
                    word = text[word_start:mstart]
                    if word.isascii() and word.isalnum():
                        if word.isdigit() or len(word) == 1:
                            if c.isalnum():
                                if c.isdigit() or (word.isdigit() and not c.islower()):
                                    return True
                                # Not a break; the answer is False only if the
                                # next word is a single token (so no later token
                                # of the context can be a break followed by one).
                                nxt = text[next_start : match.end(self._g_next)]
                                if nxt.isascii() and nxt.isalnum():
                                    return False
                        else:
                            return True
        elif next_start < 0 or "!" <= text[next_start] <= "~":
            return True
        return self._contains_sentbreak(text[word_start : match.end("after_tok")])

    def slices(self, text: str) -> list[tuple[int, int]]:
        """``list(span_tokenize(text))`` as ``(start, stop)`` character offsets."""
        # _match_potential_end_contexts + _slices_from_text. The context of a
        # candidate is previous word + end char + after_tok, one contiguous piece
        # of text. A previous candidate is dropped when the current one's word
        # reaches back over it (no ASCII whitespace in between).
        raw: list[tuple[int, int]] = []
        last_break = 0
        ws_chars = [c for c in self._ASCII_WS if c in text]
        rfind = text.rfind
        is_end = self._is_end
        g_next = self._g_next
        g_simple = self._g_simple
        prev_match = None
        prev_start = prev_stop = 0  # previous_slice
        for match in self._period_context.finditer(text):
            mstart = match.start()
            if match.start(g_simple) >= 0:
                # Its word starts after ASCII whitespace that lies after the
                # previous candidate (which is therefore not dropped), and ASCII
                # whitespace follows it (so the next one cannot drop it).
                if prev_match is not None and is_end(text, prev_match, prev_start):
                    mend = prev_match.end()
                    raw.append((last_break, mend))
                    next_start = prev_match.start(g_next)
                    last_break = next_start if next_start >= 0 else mend
                raw.append((last_break, mstart + 1))
                last_break = match.start(g_next)
                prev_match = None
                prev_start = prev_stop = mstart
                continue
            idx = -1
            for c in ws_chars:
                j = rfind(c, prev_stop, mstart)
                if j > idx:
                    idx = j
            # _get_last_whitespace_index is falsy for "none" and for index 0.
            word_start = idx + 1 if idx > prev_stop else prev_start
            if (
                prev_match is not None
                and prev_stop <= word_start
                and is_end(text, prev_match, prev_start)
            ):
                mend = prev_match.end()
                raw.append((last_break, mend))
                next_start = prev_match.start(g_next)
                last_break = next_start if next_start >= 0 else mend
            prev_match = match
            prev_start = word_start
            prev_stop = mstart
        if prev_match is not None and is_end(text, prev_match, prev_start):
            mend = prev_match.end()
            raw.append((last_break, mend))
            next_start = prev_match.start(g_next)
            last_break = next_start if next_start >= 0 else mend
        raw.append((last_break, len(text.rstrip())))

        # _realign_boundaries
        out: list[tuple[int, int]] = []
        realign = 0
        last = len(raw) - 1
        realign_first = self._realign_first
        for i, (start1, stop1) in enumerate(raw):
            start1 += realign
            if i == last:
                if start1 < stop1:
                    out.append((start1, stop1))
                break
            start2, stop2 = raw[i + 1]
            m = None
            if start2 < stop2 and text[start2] in realign_first:
                m = self._realign(text[start2:stop2])
            if m is not None:
                out.append((start1, start2 + len(m.group(0).rstrip())))
                realign = m.end()
            else:
                realign = 0
                if start1 < stop1:
                    out.append((start1, stop1))
        return out

    def sentences(self, text: str) -> list[str]:
        """LlamaIndex's ``split_by_sentence_tokenizer_internal(text, punkt)``: each
        sentence runs from its span start to the next span start (the last one to
        the end of ``text``)."""
        starts = [s for s, _ in self.slices(text)]
        if not starts:
            return []
        ends = starts[1:]
        ends.append(len(text))
        return [text[s:e] for s, e in zip(starts, ends, strict=True)]


# --- splitter --------------------------------------------------------------------


def _split_keep_sep(text: str, sep: str) -> list[str]:
    """Source: ``llama_index.core.node_parser.text.utils.split_text_keep_separator``."""
    parts = text.split(sep)
    result = [sep + s if i > 0 else s for i, s in enumerate(parts)]
    return [s for s in result if s]


class FastSentenceSplitter:
    """Byte-identical, faster ``SentenceSplitter(chunk_size, chunk_overlap=0)``.

    Source: ``llama_index/core/node_parser/text/sentence.py`` (``_split_text``,
    ``_split``, ``_get_splits_by_fns``, ``_merge``, ``_postprocess_chunks``) and
    ``.../text/utils.py`` (the split functions), with NLTK Punkt reproduced by
    :class:`_UntrainedPunkt` and token counts from tiktoken ``cl100k_base``.

    Args:
        chunk_size: Maximum chunk size in cl100k tokens (as in LlamaIndex, chunks
            can come out a few tokens larger, because pieces are counted
            separately). Must be > 0.

    Raises:
        ValueError: ``chunk_size`` is not a positive integer.
    """

    def __init__(self, chunk_size: int = 256) -> None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
            raise ValueError(f"chunk_size must be an int, got {chunk_size!r}")
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {chunk_size}")
        self.chunk_size = chunk_size
        self._count = _make_counter()
        self._count_upto = _make_limited_counter()
        self._punkt = _UntrainedPunkt()
        self._chunk_counter = _ChunkTokenCounter(self._count)

    def __reduce__(self) -> tuple[type[FastSentenceSplitter], tuple[int]]:
        """Pickle as the constructor call (the tokenizer hooks are rebuilt)."""
        return (FastSentenceSplitter, (self.chunk_size,))

    def split_text(self, text: str) -> list[str]:
        """Split ``text`` into chunks of at most about ``chunk_size`` tokens.

        Args:
            text: Any string.

        Returns:
            The chunk strings, stripped, in text order; ``[""]`` for ``""`` and
            ``[]`` for whitespace-only text (both as LlamaIndex does).

        Raises:
            ValueError: "Single token exceeded chunk size", when one indivisible
                piece has more than ``chunk_size`` tokens (as LlamaIndex raises).

        Source: ``SentenceSplitter.split_text`` / ``_split_text``.
        """
        if text == "":
            return [text]
        chunk_size = self.chunk_size
        if _bytes_at_most(text, chunk_size) or self._fit_size(text) >= 0:
            stripped = text.strip()
            return [stripped] if stripped else []
        out = []
        for pieces in self._merge(self._split(text)):
            stripped = "".join(piece for piece, _ in pieces).strip()
            if stripped:
                out.append(stripped)
        return out

    def split_text_with_token_counts(self, text: str) -> list[tuple[str, int]]:
        """:meth:`split_text`, with each chunk's exact token count.

        Args:
            text: Any string.

        Returns:
            ``(chunk, n)`` pairs: the chunks of :meth:`split_text` and, for each,
            ``n = len(get_tokenizer()(chunk))`` (tiktoken ``cl100k_base``, all
            special tokens allowed), the same number a direct count gives, but
            mostly derived from the counts the splitter already made of the
            chunk's pieces (see :class:`_ChunkTokenCounter`), so the chunk text
            is not encoded a second time.

        Raises:
            ValueError: As :meth:`split_text`.
        """
        if text == "":
            return [(text, 0)]
        chunk_size = self.chunk_size
        counter = self._chunk_counter
        if _bytes_at_most(text, chunk_size):
            stripped = text.strip()
            return [(stripped, counter.count(stripped))] if stripped else []
        n = self._fit_size(text)
        if n >= 0:
            stripped = text.strip()
            if not stripped:
                return []
            return [(stripped, counter.count_chunk([(text, n)], text))]
        out = []
        for pieces in self._merge(self._split(text)):
            joined = "".join([piece for piece, _ in pieces])
            stripped = joined.strip()
            if stripped:
                out.append((stripped, counter.count_chunk(pieces, joined)))
        return out

    # -- internals ----------------------------------------------------------------

    def _fit_size(self, text: str) -> int:
        """Exact token count of ``text`` if it is <= chunk_size, else -1."""
        chunk_size = self.chunk_size
        # The bound counts about one pre-token per 5 characters of English, so
        # it rarely passes chunk_size below ~5 characters per token of the
        # limit; this length test only decides whether trying it is worth the
        # time (the result is exact either way).
        if len(text) > 5 * chunk_size and _token_lower_bound(text, chunk_size) > (
            chunk_size
        ):
            return -1
        return self._count_upto(text, chunk_size)

    def _splits_by_fns(self, text: str) -> list[str]:
        """Source: ``SentenceSplitter._get_splits_by_fns`` (``is_sentence`` is not
        needed: with ``chunk_overlap=0`` ``_merge`` never reads it)."""
        if _PARAGRAPH_SEP in text:
            splits = _split_keep_sep(text, _PARAGRAPH_SEP)
            if len(splits) > 1:
                return splits
        splits = self._punkt.sentences(text)
        if len(splits) > 1:
            return splits
        splits = _CHUNKING_RE.findall(text)
        if len(splits) > 1:
            return splits
        splits = _split_keep_sep(text, _WORD_SEP)
        if len(splits) > 1:
            return splits
        return list(text)

    def _split(self, text: str) -> list[tuple[str, int]]:
        """Source: ``SentenceSplitter._split`` for a text already known to exceed
        chunk_size; returns ``(split text, token count)`` pairs."""
        splits = self._splits_by_fns(text)
        out: list[tuple[str, int]] = []
        single = len(splits) == 1
        for piece in splits:
            n = self._fit_size(piece)
            if n >= 0:
                out.append((piece, n))
            elif single:
                # Indivisible and oversized: _merge raises, as LlamaIndex does.
                out.append((piece, self._count(piece)))
            else:
                out.extend(self._split(piece))
        return out

    def _merge(self, splits: list[tuple[str, int]]) -> list[list[tuple[str, int]]]:
        """Source: ``SentenceSplitter._merge`` with ``chunk_overlap=0`` (greedy
        packing; ``is_sentence`` has no effect then). Returns each chunk as its
        ``(piece, token count)`` list; the caller joins and strips it and drops
        blank chunks (``_postprocess_chunks``)."""
        chunk_size = self.chunk_size
        chunks: list[list[tuple[str, int]]] = []
        cur: list[tuple[str, int]] = []
        cur_len = 0
        for split in splits:
            n = split[1]
            if n > chunk_size:
                raise ValueError("Single token exceeded chunk size")
            if cur and cur_len + n > chunk_size:
                chunks.append(cur)
                cur = []
                cur_len = 0
            cur.append(split)
            cur_len += n
        if cur:
            chunks.append(cur)
        return chunks


# A position ``a`` of a text is a *safe cut* when the character before it is an
# ASCII letter and the character at it is an ASCII non-letter (class below).
# The cl100k pre-tokenizer then always ends a pre-token at ``a``, and the text on
# either side pre-tokenizes as it does inside the whole (see _ChunkTokenCounter).
_ASCII_NON_LETTER = r"[\x00-\x40\x5b-\x60\x7b-\x7f]"
_FIRST_SAFE_CUT = re.compile(r"[A-Za-z](?=" + _ASCII_NON_LETTER + ")")
_LAST_SAFE_CUT = re.compile(r"(?s:.*)[A-Za-z](?=" + _ASCII_NON_LETTER + ")")
# Counts of short strings (words, sentence joints) are cached up to this length
# and this many entries.
_CACHED_LENGTH = 24
_CACHE_ENTRIES = 500_000


class _ChunkTokenCounter:
    r"""Exact token count of a chunk from the counts of the pieces it joins.

        A chunk is ``"".join(pieces).strip()``, and the splitter already counted
        every piece on its own. Counts do not simply add up, because pre-tokens
        change where pieces meet (``"end. "`` + ``"Next"``: ``" "`` is a pre-token of
        the first piece alone, ``" Next"`` one of the joined text). They add up
        across *safe cuts*: positions whose left character is an ASCII letter and
        whose right character is an ASCII non-letter.

        Why. tiktoken counts a text (no special token in it) as the sum, over the
        pre-tokens the cl100k regex ``'(?i:[sdmt]|ll|ve|re)|[^
    \p{L}\p{N}]?+\p{L}++|
        \p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[
    ]*+|\s++$|\s*[
    ]|\s+(?!\S)|\s``
        finds, of each pre-token's BPE length. The alternatives cover every
        character, so pre-tokens tile the text. The only ones that can hold a letter
        end with a letter and stop at the first non-letter (the contraction and the
        possessive letter run), so a pre-token ends at every safe cut. Matching at a
        pre-token start depends only on the text from there on (no look-behind, and
        ``$`` is the end of the text), so the part after a cut pre-tokenizes alone as
        inside the whole. The part before it does too: its last pre-token is a
        letter run ending at the cut, and no alternative looks past the end of a
        letter run. Hence ``count(x[:a] + x[a:]) == count(x[:a]) + count(x[a:])`` at
        every safe cut ``a``.

        So each piece's count splits into head (up to its first safe cut), middle
        and tail (from its last safe cut); the middle is exact as counted, and only
        the short windows from one piece's last cut to the next piece's first cut
        (and the chunk's stripped ends) are encoded, with a cache. Texts holding
        ``"<|"`` (special tokens, counted as such) or lone surrogates are counted
        directly.
    """

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        """Token count of ``text``; short texts come from a cache."""
        if len(text) > _CACHED_LENGTH:
            return self._count(text)
        n = self._cache.get(text)
        if n is None:
            if len(self._cache) >= _CACHE_ENTRIES:
                self._cache.clear()
            n = self._cache[text] = self._count(text)
        return n

    def count_chunk(self, pieces: list[tuple[str, int]], joined: str) -> int:
        """Token count of ``joined.strip()``, where ``joined = "".join(pieces)``.

        Args:
            pieces: ``(piece, count)`` pairs, each count that of the piece alone.
            joined: The pieces joined (the caller has it already).

        Returns:
            The exact cl100k_base token count of ``joined.strip()``.
        """
        if "<|" in joined or not _encodes_as_utf8(joined):
            return self._count(joined.strip())
        count = self.count
        start = len(joined) - len(joined.lstrip())
        end = len(joined.rstrip())
        if len(pieces) == 1 and start == 0 and end == len(joined):
            return pieces[0][1]
        first_cut = _FIRST_SAFE_CUT.search
        last_cut = _LAST_SAFE_CUT.match
        # Sum of the piece counts, corrected window by window: a window runs
        # from the previous piece's last cut (or the chunk's start) to the next
        # piece's first cut (or the chunk's end) and replaces the tail and head
        # fragments (and any cut-less pieces) it covers, as counted alone.
        total = 0
        window_start = start
        window_alone = 0  # counts, as counted alone, of what the window covers
        window_is_tail = False  # the window is exactly the last piece's tail
        offset = 0
        for piece, n in pieces:
            first = first_cut(piece)
            if first is None:
                total += n
                window_alone += n
                window_is_tail = False
            else:
                head_end = first.end()
                tail_start = last_cut(piece).end()
                total += n
                if window_start != 0 or offset != 0:
                    # (At the chunk's unstripped start the window is the head.)
                    total += count(joined[window_start : offset + head_end]) - (
                        window_alone + count(piece[:head_end])
                    )
                window_start = offset + tail_start
                window_alone = count(piece[tail_start:])
                window_is_tail = True
            offset += len(piece)
        if not (window_is_tail and end == offset):
            total += count(joined[window_start:end]) - window_alone
        return total


def _encodes_as_utf8(text: str) -> bool:
    """False if ``text`` holds a lone surrogate (tiktoken replaces those)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- selection -------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _stock_splitter(chunk_size: int) -> Any:
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0)


def split_text_stock(text: str, chunk_size: int = 256) -> list[str]:
    """Chunks of ``text`` from stock LlamaIndex (the reference for the fast path).

    Args:
        text: Any string.
        chunk_size: Chunk size in cl100k tokens (> 0).

    Returns:
        ``SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0).split_text(text)``
        from a cached splitter instance (one per chunk size).

    Raises:
        ValueError: As LlamaIndex raises it (e.g. an invalid ``chunk_size``, or
            "Single token exceeded chunk size").

    Source: ``llama_index.core.node_parser.SentenceSplitter`` (llama-index-core
    0.14.25) with its default tokenizer (``get_tokenizer()``) and NLTK Punkt.
    """
    return _stock_splitter(chunk_size).split_text(text)


@functools.lru_cache(maxsize=8)
def get_fast_splitter(chunk_size: int = 256) -> FastSentenceSplitter:
    """The process's one :class:`FastSentenceSplitter` for ``chunk_size`` (cached).

    Raises:
        ValueError: ``chunk_size`` is not a positive integer.
    """
    return FastSentenceSplitter(chunk_size)


def get_splitter(name: str, chunk_size: int = 256) -> Callable[[str], list[str]]:
    """Return the split function ``text -> list of chunk strings`` called ``name``.

    Args:
        name: ``"fast"`` (:class:`FastSentenceSplitter`) or ``"llama_index"``
            (:func:`split_text_stock`); both give identical output.
        chunk_size: Chunk size in cl100k tokens (> 0).

    Returns:
        A callable taking one string and returning its chunks.

    Raises:
        ValueError: ``name`` is not one of :data:`SPLITTER_NAMES`, or
            ``chunk_size`` is invalid.

    Source: LlamaIndex ``SentenceSplitter.split_text`` (both variants).
    """
    if name == "fast":
        return get_fast_splitter(chunk_size).split_text
    if name == "llama_index":
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
            raise ValueError(f"chunk_size must be an int, got {chunk_size!r}")
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {chunk_size}")
        return functools.partial(split_text_stock, chunk_size=chunk_size)
    allowed = ", ".join(repr(n) for n in SPLITTER_NAMES)
    raise ValueError(f"unknown splitter {name!r}; allowed names: {allowed}")
