"""Evaluate a run on a KILT task: KILT's own page-level and downstream
measures, query for query, and chunk-level measures.

Page level equals KILT's retrieval scorer (facebookresearch/KILT,
``kilt/eval_retrieval.py``; Petroni et al., NAACL 2021, section 4.3) with its
default rank key ``wikipedia_id``, written here from its definitions (no code
copied); the rules, each with the KILT function it follows:

1. **Evidence sets** (``get_rank``): one per gold output that has a
   ``provenance`` key, in output order, the set of its entries' ids; equal
   sets count once (the first). The order matters: :func:`kilt_rank`.
2. **An output with** ``"provenance": []`` is an (empty) evidence set
   (``get_rank``): it is never complete, so it lowers recall@k.
   ``skip_empty_sets=True`` drops it instead (a reading of our own, named so
   in the table).
3. **The prediction's provenance** (``filter_answers``): the one output of a
   prediction that has ``provenance``. KILT refuses a file where a
   prediction has none or several; here such a query scores 0 (none) or uses
   the first (several), and the table counts them.
4. **Ids are stripped** (``_get_ids_list``, ``get_rank``, ``validate_input``):
   ``str(x).strip()`` for page ids and query ids; a JSON number or ``null``
   is its ``str()`` (``303``, ``None``).
5. **An entry without** ``wikipedia_id``: skipped in a prediction and in the
   gold lists of R-precision (``_get_ids_list``); in a gold evidence set of
   ``get_rank`` it is the id ``""`` (the set can then never be completed).
6. **Every gold query counts** (``compute``, ``validate_input``): the mean
   is over the gold queries. KILT refuses a file with a gold query missing
   from the predictions, or a duplicate id; here a missing query scores 0 and
   a duplicate prediction keeps its first line, both counted in the table.
7. (Build side) provenance entries without ``wikipedia_id`` are counted
   once, as rejected, in ``kilt_provenance_summary``.
8. **Page qrels** (``--qrels <task>.pages.qrels``) hold no evidence sets:
   their page scores are labelled "not KILT's"; ``<task>.queries.jsonl``
   (its ``output_page_ids``) or the task file give KILT's.

Measures per query (``kilt/eval_retrieval.py``): **R-precision**
(``rprecision``, ``_computeRprec``: per gold output, of the first R distinct
predicted pages, the share in that output's page list of R pages; the best
output counts; 0 without any), **precision@k** (``_precision_at_k``: complete
evidence sets in the first k ranks of :func:`kilt_rank`, over k),
**recall@k** (``_recall_at_k``: over the number of distinct evidence sets),
**success_rate@k** (``_success_rate_at_k``: 1 if any set is complete in the
first k ranks), all 0 when the query has no evidence set;
**answer_in_context@k** (``_answer_in_context_at_k``: 1 if a normalised gold
answer is inside the normalised ``text`` of one of the first k provenance
entries of the prediction, as given: entries without ``wikipedia_id``
included, an entry without ``text`` holding nothing; for a chunk run, the
text of the first k chunks), **answer_and_ent_in_context@k**
(``_answer_and_ent_in_context_at_k``: one of those texts holds both a gold
answer and a gold provenance title), **entity_in_context@k**
(``_ent_in_context_at_k``: one holds a gold title), all from the texts the
prediction carries, as KILT reads them (not the knowledge source's pages),
and **entity_in_input** (``_entity_in_input``: a normalised gold provenance
title inside the normalised input). KILT reports recall@k and
success_rate@k only for k > 1; they are computed here for every k.

Downstream (``kilt/eval_downstream.py``, ``_calculate_metrics``), when the
run carries answers: the answer is ``str(answer).strip()``; an empty answer
scores 0; **accuracy** (the answer is one of the stripped gold answers),
**em**, **f1** (SQuAD's token F1; the best gold answer counts), **rougel**
(ROUGE-L F of the ``rouge`` package, as KILT computes it), each the max over
the gold answers after KILT's ``normalize_answer`` (lower case, punctuation
and the articles a/an/the removed, white space collapsed; ROUGE-L reads the
answers as given); and **KILT-AC, KILT-EM, KILT-F1, KILT-RL**: the same
points, counted only where the query's R-precision is 1.

A chunk run (TREC, chunk ids) becomes a page ranking by each page's first
chunk. Chunk level (graded qrels of the build) uses `ir_measures
<https://ir-measur.es>`_ (MacAvaney et al., ECIR 2022): nDCG@10 and
recall@k from its ``pytrec_eval`` provider (trec_eval's C code), MRR@10
(``RR@10``) from its own implementation (pytrec_eval has no cut-off for the
reciprocal rank). Two means are given for each, named apart: over every gold
query (a query without a relevant chunk scores 0; the project's choice) and
over the queries with a relevant chunk (trec_eval's convention). Ties in
score keep the run's order (the rank column); trec_eval breaks them by
document id instead.

The package follows the stages of a scoring, one module each, with retrieval
kept apart from downstream as KILT keeps ``eval_retrieval.py`` and
``eval_downstream.py`` apart:

- :mod:`~kilt_chunks.evaluation.ids`: ids as KILT compares them and as TREC
  files hold them, chunk ids to pages, :class:`EvaluationError`;
- :mod:`~kilt_chunks.evaluation.gold`: evidence sets, R-precision lists and
  the gold readers (task file, qrels, build database);
- :mod:`~kilt_chunks.evaluation.runs`: the run readers (TREC, KILT
  predictions) and the chunk texts of a build;
- :mod:`~kilt_chunks.evaluation.retrieval`: KILT's retrieval measures;
- :mod:`~kilt_chunks.evaluation.downstream`: KILT's downstream measures;
- :mod:`~kilt_chunks.evaluation.scoring`: :func:`evaluate`, every measure
  of every query and their means (chunk level by ir_measures);
- :mod:`~kilt_chunks.evaluation.report`: :func:`format_table`.

Every name is importable from ``kilt_chunks.evaluation`` itself.
"""

from __future__ import annotations

from kilt_chunks.evaluation.downstream import (
    HEADLINE_BY_FAMILY,
    downstream_scores,
    normalize_answer,
)
from kilt_chunks.evaluation.gold import (
    Gold,
    GoldQuery,
    OutputPageIds,
    evidence_sets,
    gold_from_database,
    gold_from_kilt_file,
    gold_from_qrels,
    gold_query_from_kilt,
    r_precision_lists,
    read_qrels,
    tasks_in_database,
)
from kilt_chunks.evaluation.ids import (
    CHUNK_ID_PATTERN,
    EvaluationError,
    dedupe,
    is_chunk_id,
    kilt_str,
    page_of_chunk,
    pages_of_chunk_ranking,
    trec_id,
    untrec_id,
)
from kilt_chunks.evaluation.report import format_table
from kilt_chunks.evaluation.retrieval import (
    answer_and_entity_in_context,
    answer_in_context,
    context_hits,
    entity_in_context,
    entity_in_input,
    kilt_r_precision,
    kilt_rank,
    kilt_recall_at_k,
)
from kilt_chunks.evaluation.runs import (
    Prediction,
    Run,
    chunk_texts_from_database,
    read_run,
)
from kilt_chunks.evaluation.scoring import DEFAULT_KS, evaluate

__all__ = [
    "CHUNK_ID_PATTERN",
    "DEFAULT_KS",
    "HEADLINE_BY_FAMILY",
    "EvaluationError",
    "Gold",
    "GoldQuery",
    "OutputPageIds",
    "Prediction",
    "Run",
    "answer_and_entity_in_context",
    "answer_in_context",
    "chunk_texts_from_database",
    "context_hits",
    "dedupe",
    "downstream_scores",
    "entity_in_context",
    "entity_in_input",
    "evaluate",
    "evidence_sets",
    "format_table",
    "gold_from_database",
    "gold_from_kilt_file",
    "gold_from_qrels",
    "gold_query_from_kilt",
    "is_chunk_id",
    "kilt_r_precision",
    "kilt_rank",
    "kilt_recall_at_k",
    "kilt_str",
    "normalize_answer",
    "page_of_chunk",
    "pages_of_chunk_ranking",
    "r_precision_lists",
    "read_qrels",
    "read_run",
    "tasks_in_database",
    "trec_id",
    "untrec_id",
]
