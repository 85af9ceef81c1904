"""The prompts of the LLM measures (``kilt-chunks utility`` and ``answer``).

The abstention prompt restates the one of the released UDCG code,
GiovanniTRA/UDCG ``src/compute_abstention_probability.py``
(``format_abstention_prompt``; MIT licence, (c) 2025 its authors; paper:
Trappolini, Cuconasu, Filice, Maarek, Silvestri, "Redefining Retrieval
Evaluation in the Era of LLMs", arXiv 2510.21440), word for word, so that
``no_res_prob`` equals what that code computes. It is restated, not copied
code: the strings must be identical for the numbers to match.

The answer prompt (``kilt-chunks answer``) is the same system message with
every passage of a context as its own ``Document: ...`` line, in order.

A change to any text here changes the numbers, so it must bump
:data:`PROMPT_VERSION`, which keys the utility cache.
"""

from __future__ import annotations

__all__ = [
    "NO_RESPONSE",
    "PROMPT_VERSION",
    "SYSTEM_MESSAGE",
    "abstention_messages",
    "answer_messages",
]

from collections.abc import Sequence

#: Part of the utility cache key: bump when a prompt text changes.
PROMPT_VERSION = "udcg-abstention-v1"

#: The system message of the released ``format_abstention_prompt``.
SYSTEM_MESSAGE = (
    "You are given a question and you must respond based on the provided documents. "
    "Respond directly without providing any premise or explanation. "
    "If none of the documents contain the answer, please respond with NO-RESPONSE. "
    "Do not try to respond based on your own knowledge."
)

#: The abstention answer; the probability of its first token is ``no_res_prob``.
NO_RESPONSE = "NO-RESPONSE"


def abstention_messages(question: str, passage_text: str) -> list[dict[str, str]]:
    """The chat messages of one (question, passage) pair, as the released
    ``format_abstention_prompt`` builds them: a system message and
    ``Document: <text>\\nQuestion: <question>\\nAnswer:`` as the user."""
    user = f"Document: {passage_text}\nQuestion: {question}\nAnswer:"
    return [
        {"role": "system", "content": SYSTEM_MESSAGE},
        {"role": "user", "content": user},
    ]


def answer_messages(
    question: str, passage_texts: Sequence[str]
) -> list[dict[str, str]]:
    """The chat messages of a question with several passages (``kilt-chunks
    answer``): one ``Document: <text>`` line per passage in the given order,
    then ``Question: ...`` and ``Answer:``, under the same system message."""
    documents = "".join(f"Document: {text}\n" for text in passage_texts)
    user = f"{documents}Question: {question}\nAnswer:"
    return [
        {"role": "system", "content": SYSTEM_MESSAGE},
        {"role": "user", "content": user},
    ]
