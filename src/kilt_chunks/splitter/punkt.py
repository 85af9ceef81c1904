"""Sentence boundaries of an untrained NLTK ``PunktSentenceTokenizer()``, fast.

LlamaIndex's ``SentenceSplitter`` splits with ``nltk.tokenize.PunktSentenceTokenizer()``
built without training data, so its abbreviation, collocation, sentence-starter
and orthographic tables are empty. :class:`UntrainedPunkt` is NLTK's algorithm
specialised to those empty tables, working on plain strings instead of
``PunktToken`` objects but with NLTK's own compiled regular expressions, so it
decides every boundary as NLTK does (``tests/python/test_splitter_punkt.py``
compares them).
"""

from __future__ import annotations

from typing import Any

__all__ = ["UntrainedPunkt"]


def _unwrap(pattern: Any) -> Any:
    """The compiled ``regex`` pattern inside NLTK's ``redos.TimedPattern``."""
    return getattr(pattern, "_rx", pattern)


class UntrainedPunkt:
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
