"""The LLM measures (issue 35) on a tiny random Llama-style chat model made
offline in a temporary folder: ``no_res_prob`` equals an independent
single-prompt loop written here as the released GiovanniTRA/UDCG
``compute_abstention_probability.py`` computes it; batched equals one at a
time; a killed run resumes computing only the missing pairs; UDCG equals the
released sample output; contexts and answers."""

from __future__ import annotations

import json
import math
from importlib.util import find_spec
from pathlib import Path

import pytest

from conftest import FIXTURES, HANDMADE_TASK, Build
from kilt_chunks.cli import main
from kilt_chunks.rag import answer, contexts, udcg, utility
from kilt_chunks.rag.tiny_model import make_tiny_chat_model

# Skipped without the rag extra; checked without importing torch, so that a
# test worker that runs none of these tests does not pay its import.
pytestmark = [
    pytest.mark.rag,
    pytest.mark.skipif(
        find_spec("torch") is None or find_spec("transformers") is None,
        reason="needs torch and transformers (pip install 'kilt-chunks[rag]')",
    ),
]

RELEASED = FIXTURES / "udcg_released"
RELEASED_MODEL = "meta-llama/Llama-3.2-3B-Instruct"

QUESTION_A = "Which moon has one of the highest albedos?"
QUESTION_B = "How is Earth's surface albedo estimated?"
ITEMS = [
    {
        "example_id": "a",
        "question": QUESTION_A,
        "passages": [
            {
                "doc_id": "p1",
                "text": "Enceladus is a moon of Saturn.",
                "is_relevant": True,
            },
            {
                "doc_id": "p2",
                "text": "Albedo is the fraction of sunlight reflected. " * 4,
            },
            {"doc_id": "p3", "title": "no text"},  # skipped, as released
            {"doc_id": "p4", "text": "Snow."},
        ],
    },
    {
        "example_id": "b",
        "question": QUESTION_B,
        "passages": [
            {"doc_id": "p5", "text": "Satellites such as MODIS estimate it. " * 2},
            {"doc_id": "p1", "text": "Enceladus is a moon of Saturn."},
            {"doc_id": "p6", "text": "x"},
        ],
    },
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(make_tiny_chat_model(tmp_path_factory.mktemp("tiny_llm")))


def released_loop(model_dir: str, pairs: list[tuple[str, str]]) -> list[float]:
    """One prompt at a time, written out as the released script does it (its
    system message typed again here, its tokenizer call with defaults)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        model_dir, padding_side="left", truncation_side="left"
    )
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32, device_map="cpu"
    )
    system = (
        "You are given a question and you must respond based on the provided"
        " documents. Respond directly without providing any premise or"
        " explanation. If none of the documents contain the answer, please"
        " respond with NO-RESPONSE. Do not try to respond based on your own"
        " knowledge."
    )
    probs = []
    for question, text in pairs:
        messages = [
            {"role": "system", "content": system},
            {
                "role": "user",
                "content": f"Document: {text}\nQuestion: {question}\nAnswer:",
            },
        ]
        prompt = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        inputs = tokenizer(prompt, return_tensors="pt", truncation=True)
        token = tokenizer.encode("NO-RESPONSE", add_special_tokens=False)[0]
        with torch.no_grad():
            logits = model(**inputs).logits[0, -1, :]
        probs.append(torch.softmax(logits, dim=-1)[token].item())
    return probs


def scores_of(items: list[dict], model: str) -> list[float | None]:
    """Each passage's score in order, None for one without."""
    return [
        p.get("models_info", {}).get(model, {}).get("no_res_prob")
        for item in items
        for p in item["passages"]
    ]


def present(items: list[dict], model: str) -> list[float]:
    """The scores of the passages that have one."""
    return [s for s in scores_of(items, model) if s is not None]


def test_equals_released_loop_and_batching(model_dir: str, tmp_path: Path) -> None:
    expected = released_loop(
        model_dir,
        [
            (it["question"], p["text"])
            for it in ITEMS
            for p in it["passages"]
            if "text" in p
        ],
    )
    # The random model is not uniform: the probabilities differ by pair.
    assert max(expected) / min(expected) > 1.05
    for batch_size in (1, 3, 8):
        out, report = utility.score_items(
            ITEMS,
            model_dir,
            cache_dir=tmp_path / f"cache{batch_size}",
            batch_size=batch_size,
            progress=False,
        )
        got = scores_of(out, model_dir)
        assert got[2] is None  # the passage without text has no score
        assert "models_info" not in out[0]["passages"][2]
        assert [g for g in got if g is not None] == pytest.approx(expected, rel=1e-4)
        # p1 appears under two questions: two pairs; 6 pairs, 1 without text.
        assert (report.pairs, report.computed, report.without_text) == (6, 6, 1)
    assert ITEMS[0]["passages"][0].get("models_info") is None  # input untouched


def test_prompt_ids_as_released(model_dir: str) -> None:
    tokenizer, _ = utility.load_model(model_dir, "cpu", "float32")
    prompt = utility.abstention_prompt(tokenizer, "Q?", "Some text.")
    ids = tokenizer(prompt, truncation=True)["input_ids"]
    bos = tokenizer.bos_token_id
    # The template writes BOS and the tokenizer call adds another, as with
    # Llama 3 in the released code.
    assert ids[:2] == [bos, bos] and ids[2] != bos
    assert prompt.endswith(
        "Answer:<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    assert (
        utility.no_response_token_id(tokenizer)
        == tokenizer.encode("NO-RESPONSE", add_special_tokens=False)[0]
    )


def test_left_padded_positions() -> None:
    ids, mask, positions = utility.left_padded([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert positions.tolist() == [[0, 1, 2], [0, 0, 0]]


def test_killed_run_resumes(model_dir: str, tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    full, _ = utility.score_items(
        ITEMS, model_dir, cache_dir=tmp_path / "other", batch_size=2, progress=False
    )
    real = utility.score_token_ids
    monkeypatch.setattr(utility, "FLUSH_PAIRS", 2)

    def killed_after_two_batches(*args, on_batch, **kwargs):
        calls = []

        def then_die(indices, probs):
            on_batch(indices, probs)
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt

        return real(*args, on_batch=then_die, **kwargs)

    monkeypatch.setattr(utility, "score_token_ids", killed_after_two_batches)
    with pytest.raises(KeyboardInterrupt):
        utility.score_items(
            ITEMS, model_dir, cache_dir=cache, batch_size=2, progress=False
        )
    assert len(utility.UtilityCache(cache).load()) == 4
    monkeypatch.setattr(utility, "score_token_ids", real)
    resumed, report = utility.score_items(
        ITEMS, model_dir, cache_dir=cache, batch_size=2, progress=False
    )
    assert (report.cached, report.computed) == (4, 2)
    assert present(resumed, model_dir) == pytest.approx(
        present(full, model_dir), rel=1e-5
    )
    # Another dtype is another key.
    _, report = utility.score_items(
        ITEMS[:1], model_dir, cache_dir=cache, dtype="bfloat16", progress=False
    )
    assert report.computed == 3


def test_cli_json_and_table(model_dir: str, tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(ITEMS), encoding="utf-8")
    out = tmp_path / "out.json"
    args = [
        "utility",
        str(source),
        "--model",
        model_dir,
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--out",
        str(out),
        "--sql-db",
        str(tmp_path / "u.duckdb"),
        "--no-progress",
    ]
    assert main(args) == 0
    assert "6 pairs: 0 from the cache, 6 computed" in capsys.readouterr().out
    assert main(args) == 0
    assert "6 pairs: 6 from the cache, 0 computed" in capsys.readouterr().out
    written = json.loads(out.read_text(encoding="utf-8"))
    import duckdb

    with duckdb.connect(str(tmp_path / "u.duckdb"), read_only=True) as con:
        rows = con.sql(
            "select example_id, doc_id, no_res_prob, utility from llm_utility"
            " order by example_id, passage_index"
        ).fetchall()
    assert [r[2] for r in rows] == present(written, model_dir)
    assert all(math.isclose(r[3], 1 - r[2]) for r in rows)
    # Bad input: one line naming the file.
    bad = tmp_path / "bad.json"
    bad.write_text('[{"passages": []}]', encoding="utf-8")
    assert main(["utility", str(bad), "--model", model_dir, "--out", str(out)]) == 1
    assert f"{bad}, item 0: expected an object" in capsys.readouterr().err
    missing = str(tmp_path / "no-model")
    fresh = ["--out", str(tmp_path / "o.json"), "--no-progress"]
    assert main(["utility", str(source), "--model", missing, *fresh]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"kilt-chunks: --model {missing}: not a model folder")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_ray_engine_equals_local(model_dir: str, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    # A local Ray of its own, shut down at the end.
    out, report = utility.score_items(
        ITEMS[:1],
        model_dir,
        cache_dir=tmp_path / "ray",
        engine="ray",
        batch_size=2,
        progress=False,
    )
    assert not ray.is_initialized()
    local, _ = utility.score_items(
        ITEMS[:1], model_dir, cache_dir=tmp_path / "local", progress=False
    )
    assert report.computed == 3
    assert present(out, model_dir) == pytest.approx(present(local, model_dir), rel=1e-5)


# ------------------------------------------------------------------ udcg


def test_udcg_equals_released_sample_output(tmp_path: Path) -> None:
    expected = json.loads((RELEASED / "dataset_with_udcg.json").read_text())
    out = tmp_path / "u.json"
    args = [
        "udcg",
        str(RELEASED / "dataset_with_scores.json"),
        "--model-id",
        RELEASED_MODEL,
        "--out",
        str(out),
        "--irrelevant-weight",
        "-0.333",
    ]
    assert main(args) == 0
    got = json.loads(out.read_text())
    assert got == expected  # the whole file, values to the last bit
    # The default weight is the released default, -1/3 (hand-worked).
    items = json.loads((RELEASED / "dataset_with_scores.json").read_text())
    first = items[0]["passages"]
    u = [1 - p["models_info"][RELEASED_MODEL]["no_res_prob"] for p in first]
    rel = [p["is_relevant"] for p in first]
    total = sum(x if r else -x / 3 for x, r in zip(u, rel, strict=True)) / len(u)
    assert udcg.udcg_score(first, RELEASED_MODEL) == pytest.approx(
        1 / (1 + math.exp(-total)), abs=1e-12
    )


def test_udcg_missing_scores_as_released() -> None:
    m = "m"
    passages = [
        {"is_relevant": True, "models_info": {m: {"no_res_prob": 0.1}}},
        {"is_relevant": False},  # no score: adds 0, counts in the divisor
        {"models_info": {m: {"no_res_prob": 0.2}}},  # no label: the same
        {"is_relevant": False, "models_info": {m: {"no_res_prob": 0.4}}},
    ]
    expected = 1 / (1 + math.exp(-(0.9 - 0.6 / 3) / 4))
    assert udcg.udcg_score(passages, m) == pytest.approx(expected, abs=1e-15)
    assert udcg.udcg_score([], m) == 0.0  # not sigmoid(0)
    labelled = [{"has_answer": True, "models_info": {m: {"no_res_prob": 0.5}}}]
    assert udcg.udcg_score(labelled, m, label_field="has_answer") == pytest.approx(
        1 / (1 + math.exp(-0.5))
    )


def test_fit_recovers_weights() -> None:
    m = "m"
    weights_rel, weights_irr, intercept = [0.5, 0.2], [-0.3, -0.1], 0.1
    items, accuracy = [], {}
    for q in range(12):
        passages = []
        for rank in range(2):
            prob = ((q * 7 + rank * 3) % 10) / 10
            passages.append(
                {
                    "is_relevant": (q + rank) % 3 == 0,
                    "models_info": {m: {"no_res_prob": prob}},
                }
            )
        x = udcg.position_features(passages, m, 2)
        acc = intercept + sum(
            w * f for w, f in zip([0.5, -0.3, 0.2, -0.1], x, strict=True)
        )
        items.append({"example_id": str(q), "passages": passages})
        accuracy[str(q)] = acc
    report = udcg.fit_report(udcg.add_udcg(items, m), m, accuracy, {}, k=2)
    assert report["weights_relevant"] == pytest.approx(weights_rel, abs=1e-9)
    assert report["weights_irrelevant"] == pytest.approx(weights_irr, abs=1e-9)
    assert report["intercept"] == pytest.approx(intercept, abs=1e-9)
    assert report["correlations"]["udcg_fitted_in_sample"]["pearson"] == pytest.approx(
        1.0
    )


def test_correlations_hand_worked() -> None:
    # Ranks 1,2,3,4 vs 1,3,2,4: Spearman 1 - 6*2/(4*15) = 0.8, Kendall (5-1)/6.
    result = udcg.correlations([1, 2, 3, 4], [1, 3, 2, 4])
    assert result["spearman"] == pytest.approx(0.8)
    assert result["kendall"] == pytest.approx(4 / 6)
    assert result["pearson"] == pytest.approx(0.8)
    assert udcg.correlations([1, 1, 1], [0, 1, 0])["pearson"] is None


# ------------------------------------------------------------------ contexts


def test_contexts_positions_and_orders() -> None:
    m = "m"
    probs = [0.9, 0.2, 0.5, 0.1, 0.7]
    item = {
        "example_id": "q",
        "question": "?",
        "answers": ["x"],
        "passages": [
            {
                "doc_id": f"d{r}",
                "rank": r,
                "text": f"t{r}",
                "is_relevant": r == 3,
                "has_answer": r == 4,
                "models_info": {m: {"no_res_prob": probs[r - 1]}},
            }
            for r in range(1, 6)
        ],
    }
    rows, missing = contexts.contexts_of_item(
        item, num_distractors=2, model_id=m, seed=1
    )
    by = {r["setting"]: [p["doc_id"] for p in r["passages"]] for r in rows}
    assert missing is None
    # Hard distractors: not relevant, no gold answer (d4 holds one): d1, d2.
    assert by["gold_at_0"] == ["d3", "d1", "d2"]
    assert by["gold_at_1"] == ["d1", "d3", "d2"]
    assert by["gold_at_2"] == ["d1", "d2", "d3"]
    assert by["retrieved"] == ["d1", "d2", "d3", "d4", "d5"]
    assert by["inverse"] == ["d5", "d4", "d3", "d2", "d1"]
    assert sorted(by["shuffled"]) == by["retrieved"]
    assert by["relevant_first"] == ["d3", "d1", "d2", "d4", "d5"]
    # Distracting effect 1 - p ascending: p 0.9, 0.7, 0.5, 0.2, 0.1.
    assert by["least_distracting_first"] == ["d1", "d5", "d3", "d2", "d4"]
    again, _ = contexts.contexts_of_item(item, num_distractors=2, model_id=m, seed=1)
    assert again == rows  # seeded
    other, _ = contexts.contexts_of_item(item, num_distractors=2, model_id=m, seed=2)
    assert [r["passages"] for r in other] != [r["passages"] for r in rows]
    by_effect, _ = contexts.contexts_of_item(
        item, num_distractors=2, model_id=m, distractors="effect", orders=[]
    )
    # Most distracting first among d1, d2, d5: 1-p = 0.1, 0.8, 0.3.
    assert [p["doc_id"] for p in by_effect[0]["passages"]] == ["d3", "d2", "d5"]
    _, missing = contexts.contexts_of_item(item, num_distractors=4, model_id=m)
    assert missing == "3 hard distractors, fewer than 4"


# ------------------------------------------------------------------ answer


def test_contained() -> None:
    assert answer.contained("It is The Enceladus moon.", ["enceladus"]) == 1.0
    assert answer.contained("Titan", ["Enceladus", "the"]) == 0.0  # "the" -> ""
    assert answer.contained("", ["x"]) == 0.0


def test_answers_batched_equal_single(model_dir: str) -> None:
    tokenizer, model = utility.load_model(model_dir, "cpu", "float32")
    rows = [
        {"question": q, "passages": [{"text": t} for t in texts]}
        for q, texts in [
            (QUESTION_A, ["Enceladus is a moon of Saturn."]),
            (QUESTION_B, ["a", "Satellites such as MODIS estimate it. " * 3]),
            ("Why?", ["Snow."]),
        ]
    ]
    one = [
        answer.generate_answers(
            tokenizer, model, [r], max_new_tokens=6, progress=False
        )[0]
        for r in rows
    ]
    batched = answer.generate_answers(
        tokenizer, model, rows, batch_size=3, max_new_tokens=6, progress=False
    )
    assert batched == one
    assert all(isinstance(a, str) for a in one)


# ------------------------------------------------------------------ the chain


@pytest.mark.dbt
def test_chain_on_the_sample(
    sample_task_build: Build, model_dir: str, tmp_path: Path, capsys
) -> None:
    """bm25 run -> utility -> udcg -> contexts -> answer -> eval on the sample
    built with the handmade task (the provenance tests' build)."""
    built = sample_task_build
    task = HANDMADE_TASK.stem
    db = str(built.db_path)
    run = tmp_path / "bm25.trec"
    assert (
        main(
            [
                "bm25",
                "--task",
                task,
                "--db",
                db,
                "--index",
                str(tmp_path / "ix"),
                "--run",
                str(run),
                "-k",
                "3",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    out = tmp_path / "utility.json"
    assert (
        main(
            [
                "utility",
                str(run),
                "--task",
                task,
                "--k",
                "2",
                "--db",
                db,
                "--model",
                model_dir,
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    items = json.loads(out.read_text())
    qrels = {
        (q, c)
        for q, c in built.query(
            f"select query_id, chunk_id from kilt_qrels_chunks where task = '{task}'"
            " and relevance > 0"
        )
    }
    passages = [(it["example_id"], p) for it in items for p in it["passages"]]
    assert len(items) == 11 and len(passages) == 22
    assert {(q, p["doc_id"]) for q, p in passages if p["is_relevant"]} == {
        (q, p["doc_id"]) for q, p in passages if (q, p["doc_id"]) in qrels
    }
    assert any(p["is_relevant"] for _, p in passages)
    texts = dict(built.query("select chunk_id, text from kilt_chunks"))
    assert all(p["text"] == texts[p["doc_id"]] for _, p in passages)
    expected = released_loop(
        model_dir, [(it["question"], p["text"]) for it in items for p in it["passages"]]
    )
    assert present(items, model_dir) == pytest.approx(expected, rel=1e-4)
    assert (
        main(
            [
                "contexts",
                str(out),
                "--out",
                str(tmp_path / "c.jsonl"),
                "--num-distractors",
                "1",
                "--model-id",
                model_dir,
            ]
        )
        == 0
    )
    answers = tmp_path / "answers.jsonl"
    assert (
        main(
            [
                "answer",
                str(tmp_path / "c.jsonl"),
                "--model",
                model_dir,
                "--max-new-tokens",
                "3",
                "--out",
                str(answers),
                "--no-progress",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    assert {r["setting"] for r in rows} >= {
        "retrieved",
        "inverse",
        "gold_at_0",
        "gold_at_1",
    }
    capsys.readouterr()
    kilt_run = tmp_path / "answers.jsonl.kilt" / "retrieved.jsonl"
    assert main(["eval", str(kilt_run), "--task", task, "--db", db]) == 0
    assert "downstream: KILT's eval_downstream.py" in capsys.readouterr().out
    udcg_out = tmp_path / "udcg.json"
    assert (
        main(
            [
                "udcg",
                str(out),
                "--model-id",
                model_dir,
                "--out",
                str(udcg_out),
                "--accuracy",
                str(answers),
                "--accuracy-measure",
                "f1",
                "--k",
                "2",
            ]
        )
        == 0
    )
    fit = json.loads(Path(f"{udcg_out}.fit.json").read_text())
    assert fit["num_queries"] == 11 and len(fit["weights_relevant"]) == 2


def test_bad_inputs_are_one_line(tmp_path: Path, capsys) -> None:
    rows = tmp_path / "contexts.jsonl"
    rows.write_text(
        '{"context_id": "q/retrieved", "query_id": "q"}\n', encoding="utf-8"
    )
    assert (
        main(["answer", str(rows), "--model", "m", "--out", str(tmp_path / "a")]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith(f"kilt-chunks: {rows}, line 1: not a context row")
    scored = tmp_path / "u.json"
    scored.write_text(json.dumps(ITEMS), encoding="utf-8")
    accuracy = tmp_path / "acc.jsonl"
    accuracy.write_text('{"query_id": "a", "setting": "retrieved"}\n', encoding="utf-8")
    args = ["udcg", str(scored), "--model-id", "m", "--out", str(tmp_path / "o.json")]
    assert main([*args, "--accuracy", str(accuracy)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"kilt-chunks: {accuracy}, line 1: expected `query_id`")
    # An order that needs scores the input lacks names the passage.
    out = str(tmp_path / "c.jsonl")
    assert main(["contexts", str(scored), "--out", out, "--model-id", "m"]) == 1
    assert "passage 'p1': no no_res_prob for 'm'" in capsys.readouterr().err
