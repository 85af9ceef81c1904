"""The dataset card (``README.md``) of an export, made and checked with
``huggingface_hub``'s card classes and ``datasets``' metadata classes.

The YAML front matter declares one config per exported table (``configs`` with
``data_files``; the first is the default), each config's features and sizes
(``dataset_info``; a task config has a split per kind of task file, KILT's
dev files ``validation``), the license of the input's Wikipedia text
(:func:`license_of`) and the language; the body describes every column, shows
the corpus statistics and figures, the audit counts, the build settings and
the citations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import datasets
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from kilt_chunks.defaults import DEFAULT_TOKENIZER
from kilt_chunks.export.figures import FIGURES, figure_captions
from kilt_chunks.export.folder import DATA_DIR, ExportedConfig

__all__ = [
    "KILT_SOURCE_DATASET",
    "LICENSE",
    "LICENSES",
    "LICENSE_SINCE_2023",
    "PRETTY_NAME",
    "card_data",
    "check_card",
    "dataset_card",
    "describe_source",
    "format_statistic",
    "license_of",
    "published_build_info",
]

#: License of KILT's pages (Wikipedia of 2019-08-01), as the Hub names it.
LICENSE = "cc-by-sa-3.0"

#: Wikipedia's text license from its dumps of June 2023 on (the Terms of Use
#: of 2023-06-07 moved the text from CC BY-SA 3.0 to 4.0).
LICENSE_SINCE_2023 = "cc-by-sa-4.0"

#: The first dump date (``YYYYMMDD``, from the dump's file name) whose text is
#: under :data:`LICENSE_SINCE_2023`.
LICENSE_CHANGE_DATE = "20230601"

#: The licenses a card may carry.
LICENSES = (LICENSE, LICENSE_SINCE_2023)


def license_of(kind: str, dump_date: str | None = None) -> str:
    """The license of an input's Wikipedia text, as the Hub names it.

    Args:
        kind: :func:`describe_source`'s ``kind``: ``"kilt"`` (KILT's pages,
            the 2019-08-01 snapshot), ``"dump"`` (``from-dump`` pages) or
            ``"pages"`` (other KILT-format pages).
        dump_date: The dump's date, ``YYYYMMDD`` as in Wikimedia's file
            names (``manifest.json``'s ``dump_date``); None when unknown.

    Returns:
        :data:`LICENSE` (CC BY-SA 3.0) for KILT's pages, a dump before June
        2023 and other pages (whose date is unknown: KILT-format files are
        KILT's or made from its 2019 snapshot); :data:`LICENSE_SINCE_2023`
        (CC BY-SA 4.0) for a dump of June 2023 or later, or a dump whose
        file name gives no date (every dump Wikimedia serves now is
        later).
    """
    if kind != "dump":
        return LICENSE
    if dump_date and dump_date < LICENSE_CHANGE_DATE:
        return LICENSE
    return LICENSE_SINCE_2023


PRETTY_NAME = "KILT Wikipedia in section-aware chunks"

#: The Hub dataset of KILT's knowledge source (2019-08-01 Wikipedia).
KILT_SOURCE_DATASET = "facebook/kilt_wikipedia"


def _file_name(path: str) -> str:
    """The last part of a path (a folder's own name), or an ``hf://`` name."""
    if "://" in path:
        return path
    return Path(path.rstrip("/\\")).name


def published_build_info(info: Mapping[str, str]) -> dict[str, str]:
    """The build info as the export publishes it (card and Parquet metadata):
    no path of the machine that built it.

    Args:
        info: The row of ``kilt_build_info`` (absolute ``kilt_path`` and
            ``export_dir``; a ``tokenizer`` naming a ``tokenizer.json`` file
            by its absolute path).

    Returns:
        The same keys but ``export_dir`` (the export folder itself); the
        input and a tokenizer file by their file names (``hf://`` names kept).
    """
    published = {key: value for key, value in info.items() if key != "export_dir"}
    if "kilt_path" in published:
        published["kilt_path"] = _file_name(published["kilt_path"])
    tokenizer = published.get("tokenizer", "")
    if tokenizer.startswith("tokenizers file "):
        path, _, rest = tokenizer.removeprefix("tokenizers file ").partition(" ")
        published["tokenizer"] = f"tokenizers file {_file_name(path)} {rest}".strip()
    return published


def describe_source(kilt_path: str) -> dict[str, Any]:
    """What the pages of a build came from, for the card.

    Args:
        kilt_path: The input as the build recorded it (absolute path or
            ``hf://`` name).

    Returns:
        ``name`` (the input's file name), ``kind`` (``"kilt"``: KILT's
        knowledge source, by its file name ``kilt_knowledgesource*`` or the
        ``hf://facebook/kilt_wikipedia`` name; ``"dump"``: pages written by
        ``kilt-chunks from-dump``, found by the ``manifest.json`` beside
        them; else ``"pages"``), ``sentence`` (the card's words for it),
        ``source_datasets`` (the Hub datasets it comes from: KILT's only for
        KILT's own pages), ``language`` (the wiki's, from a dump's
        siteinfo; else ``"en"``) and ``license`` (:func:`license_of`; a
        dump's date from its ``manifest.json``).
    """
    name = _file_name(kilt_path)
    if kilt_path.startswith(f"hf://{KILT_SOURCE_DATASET}") or name.startswith(
        "kilt_knowledgesource"
    ):
        return {
            "name": name,
            "kind": "kilt",
            "sentence": (
                f"KILT's knowledge source (`{name}`: the Wikipedia snapshot of "
                f"2019-08-01, also the Hub dataset `{KILT_SOURCE_DATASET}`)"
            ),
            "source_datasets": [KILT_SOURCE_DATASET],
            "language": "en",
            "license": license_of("kilt"),
        }
    manifest = _dump_manifest(kilt_path)
    if manifest is not None:
        siteinfo = manifest.get("siteinfo") or {}
        wiki = manifest.get("wiki") or siteinfo.get("dbname") or "a wiki"
        date = manifest.get("dump_date") or "an unknown date"
        return {
            "name": name,
            "kind": "dump",
            "sentence": (
                f"KILT-format pages built by `kilt-chunks from-dump` from the "
                f"MediaWiki dump of {wiki} of {date}"
            ),
            "source_datasets": [],
            "language": siteinfo.get("lang") or "en",
            "license": license_of("dump", manifest.get("dump_date")),
        }
    return {
        "name": name,
        "kind": "pages",
        "sentence": f"KILT-format pages from `{name}`",
        "source_datasets": [],
        "language": "en",
        "license": license_of("pages"),
    }


def _dump_manifest(kilt_path: str) -> dict[str, Any] | None:
    """The ``manifest.json`` of a ``from-dump`` output holding ``kilt_path``."""
    import json

    if "://" in kilt_path:
        return None
    path = Path(kilt_path)
    for folder in (path, path.parent, path.parent.parent):
        manifest = folder / "manifest.json"
        if manifest.is_file():
            try:
                found = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return found if isinstance(found, dict) else None
    return None


_TEMPLATE = "dataset_card.md"


def _by_config(
    exported: Sequence[ExportedConfig],
) -> dict[str, list[ExportedConfig]]:
    """The splits written of each config, configs in card order."""
    grouped: dict[str, list[ExportedConfig]] = {}
    for config in exported:
        grouped.setdefault(config.table.config, []).append(config)
    return grouped


def _data_files(config: str, splits: Sequence[str]) -> list[dict[str, str]]:
    return [
        {"split": split, "path": f"{DATA_DIR}/{config}/{split}-*.parquet"}
        for split in splits
    ]


def card_data(
    exported: Sequence[ExportedConfig], source: Mapping[str, Any] | None = None
) -> DatasetCardData:
    """The card's YAML metadata.

    Args:
        exported: The configs written, in card order (the first is default).
        source: :func:`describe_source` of the input (its ``language`` and
            ``source_datasets``); None: KILT's knowledge source.

    Returns:
        Card data with ``license``, ``language``, ``pretty_name``,
        ``task_categories``, ``tags``, ``size_categories``,
        ``source_datasets``, ``configs`` (``data_files`` per config) and
        ``dataset_info`` (features from each config's Arrow schema; rows and
        bytes of its one split).
    """
    chunks = max((config.num_rows for config in exported), default=0)
    source = source or describe_source(f"hf://{KILT_SOURCE_DATASET}")
    grouped = _by_config(exported)
    data = DatasetCardData(
        license=source.get("license", LICENSE),
        language=[source["language"]],
        pretty_name=PRETTY_NAME,
        task_categories=["text-retrieval"],
        tags=["wikipedia", "kilt", "rag", "chunking"],
        size_categories=[_size_category(chunks)],
        source_datasets=list(source["source_datasets"]) or None,
    )
    MetadataConfigs(
        {
            name: {
                "data_files": _data_files(name, [c.split for c in splits]),
                **({"default": True} if index == 0 else {}),
            }
            for index, (name, splits) in enumerate(grouped.items())
        }
    ).to_dataset_card_data(data)
    DatasetInfosDict(
        {
            name: DatasetInfo(
                description=splits[0].table.description,
                features=datasets.Features.from_arrow_schema(splits[0].schema),
                splits=SplitDict(
                    {
                        c.split: SplitInfo(
                            name=c.split,
                            num_bytes=c.uncompressed_bytes,
                            num_examples=c.num_rows,
                        )
                        for c in splits
                    }
                ),
                download_size=sum(c.num_bytes for c in splits),
                dataset_size=sum(c.uncompressed_bytes for c in splits),
            )
            for name, splits in grouped.items()
        }
    ).to_dataset_card_data(data)
    return data


def _size_category(rows: int) -> str:
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
    ]
    return next((name for bound, name in bounds if rows < bound), "100M<n<1B")


def format_statistic(statistic: str, value: float | None) -> str:
    """A statistic's value as shown: shares as percentages (``5.63%``), whole
    numbers with thousands separators, others with one decimal; "" for NULL."""
    if value is None:
        return ""
    if statistic.startswith("share"):
        return f"{value:.2%}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


def dataset_card(
    exported: Sequence[ExportedConfig],
    build_info: Mapping[str, str],
    audit: Mapping[str, Any],
    stats: Sequence[Mapping[str, Any]],
    figure_paths: Sequence[str],
    descriptions: Mapping[str, Mapping[str, str]] | None = None,
) -> DatasetCard:
    """Render the dataset card.

    Args:
        exported: The configs written (first = default).
        build_info: The row of ``kilt_build_info`` (as recorded: the card
            shows :func:`published_build_info` of it, and describes its
            input with :func:`describe_source`).
        audit: The row of ``kilt_load_audit`` (counts).
        stats: Rows of ``kilt_corpus_stats`` (``statistic``, ``value``,
            ``description``), in order.
        figure_paths: Figure files relative to the export folder
            (``figures/<name>.png``), in :data:`kilt_chunks.export.figures.FIGURES`
            order.
        descriptions: Each exported model's column descriptions, by model
            and column (the dbt docs persisted as DuckDB column comments:
            :func:`kilt_chunks.export.folder.column_descriptions`); a column
            without one shows none.

    Returns:
        The card: YAML front matter of :func:`card_data`, then the text.
    """
    descriptions = descriptions or {}
    configs = [
        {
            "name": name,
            "model": splits[0].table.model,
            "description": splits[0].table.description,
            "splits": [c.split for c in splits],
            "num_rows": sum(c.num_rows for c in splits),
            "num_files": sum(len(c.files) for c in splits),
            "num_bytes": sum(c.num_bytes for c in splits),
            "fields": [
                {
                    "name": f.name,
                    "type": str(f.type),
                    "nullable": f.nullable,
                    "description": " ".join(
                        descriptions.get(splits[0].table.model, {})
                        .get(f.name, "")
                        .split()
                    ).replace("|", "\\|"),
                }
                for f in splits[0].schema
            ],
        }
        for name, splits in _by_config(exported).items()
    ]
    captions = {
        f"figures/{name}.png": caption
        for name, caption in figure_captions(
            build_info.get("tokenizer", DEFAULT_TOKENIZER)
        ).items()
    }
    template = (
        files("kilt_chunks")
        .joinpath("templates")
        .joinpath(_TEMPLATE)
        .read_text("utf-8")
    )
    source = describe_source(build_info.get("kilt_path", ""))
    stat = {row["statistic"]: row["value"] for row in stats}
    return DatasetCard.from_template(
        card_data(exported, source),
        template_str=template,
        configs=configs,
        source=source,
        card_license=source["license"],
        tool_version=build_info.get("kilt_chunks_version", ""),
        limits={
            "max_tokens": stat.get("tokens_per_chunk_max"),
            "over_chunk_size": stat.get("chunks_over_chunk_size"),
            "under_32": stat.get("chunks_under_32_tokens"),
            "share_under_32": format_statistic(
                "share_under_32_tokens", stat.get("share_under_32_tokens")
            ),
        },
        task_configs=[
            config["name"]
            for config in configs
            if config["name"] in ("queries", "qrels_pages", "qrels_chunks")
        ],
        build_info=published_build_info(build_info),
        audit=dict(audit),
        stats=[
            {**row, "formatted": format_statistic(row["statistic"], row["value"])}
            for row in stats
        ],
        figures=[
            {"path": path, "caption": captions.get(path, path)} for path in figure_paths
        ],
    )


def check_card(path: Path) -> DatasetCard:
    """Read a card back and check what the Hub and ``datasets`` need of it.

    Offline: the card is parsed by ``DatasetCard.load`` (YAML front matter into
    ``DatasetCardData``); its ``configs`` and ``dataset_info`` are read back
    with ``datasets``' own classes; every config's ``data_files`` pattern must
    match at least one file beside the card, and every image the card embeds
    must exist.

    Args:
        path: The card, ``<export_dir>/README.md``.

    Returns:
        The parsed card.

    Raises:
        ValueError: If the license is not one of :data:`LICENSES`, there are no configs,
            a config has no ``dataset_info`` or no file, or a figure is missing.
    """
    card = DatasetCard.load(path)
    data = card.data
    if data.license not in LICENSES:
        raise ValueError(
            f"{path}: license {data.license!r}, expected one of {', '.join(LICENSES)}"
        )
    configs = MetadataConfigs.from_dataset_card_data(data)
    infos = DatasetInfosDict.from_dataset_card_data(data)
    if not configs:
        raise ValueError(f"{path}: no configs in the card")
    root = path.parent
    for name, config in configs.items():
        if name not in infos or infos[name].features is None:
            raise ValueError(f"{path}: config {name!r} has no dataset_info features")
        for data_files in config["data_files"]:
            if not sorted(root.glob(data_files["path"])):
                raise ValueError(
                    f"{path}: config {name!r}: no file matches {data_files['path']!r}"
                )
    for name in FIGURES:
        figure = f"figures/{name}.png"
        if f"]({figure})" in card.text and not (root / figure).is_file():
            raise ValueError(f"{path}: the card shows {figure}, which is missing")
    return card
