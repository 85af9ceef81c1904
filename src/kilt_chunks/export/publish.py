"""Upload an export folder to the Hugging Face Hub as a dataset repository."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import HfApi

from kilt_chunks.export import PushError
from kilt_chunks.export.card import check_card
from kilt_chunks.export.folder import CARD_FILE, DATA_DIR, EXPORT_TABLES, FIGURES_DIR

__all__ = [
    "publisher_note",
    "REPLACED_PATTERNS",
    "UPLOAD_PATTERNS",
    "PushError",
    "push_export",
]


def _hub_errors() -> tuple[type[BaseException], ...]:
    """The exceptions of the Hub client for an unreachable or refusing Hub:
    its HTTP errors, offline mode, and the transport errors of whichever HTTP
    library this huggingface_hub version uses (its own retries, e.g. of the
    upload requests, have run by then)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    errors: list[type[BaseException]] = [HfHubHTTPError, OfflineModeIsEnabled]
    for module, name in (
        ("httpx2", "TransportError"),
        ("httpx", "TransportError"),
        ("requests", "RequestException"),
    ):
        try:
            errors.append(getattr(__import__(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


#: What of the export folder is uploaded: the card, the configs' Parquet files
#: and the figures (not the qrels, a staging folder or other files).
UPLOAD_PATTERNS = [CARD_FILE, f"{DATA_DIR}/**", f"{FIGURES_DIR}/**"]

#: Remote files replaced by each upload: the Parquet files and figures of an
#: earlier push (an export with another number of files would otherwise leave
#: old ``train-*-of-*`` files that the card's ``data_files`` pattern matches).
REPLACED_PATTERNS = [f"{DATA_DIR}/**", f"{FIGURES_DIR}/**"]


def publisher_note(export_dir: str | Path) -> str | None:
    """What the publisher of an export must check, printed by ``kilt-chunks
    push`` (not written into the card, which is the published page): the
    task configs' data keeps the licenses of the datasets KILT made its task
    files from. None when the folder has no task config."""
    root = Path(export_dir).expanduser() / DATA_DIR
    names = [
        table.config
        for table in EXPORT_TABLES
        if table.split_by_task and (root / table.config).is_dir()
    ]
    if not names:
        return None
    return (
        f"note: the configs {', '.join(names)} come from KILT's task files (MIT);"
        " the datasets they were made from (Natural Questions, HotpotQA, FEVER,"
        " ...) keep their own licenses and terms, listed in KILT's repository:"
        " check them before you publish these configs"
    )


def push_export(
    export_dir: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    token: str | None = None,
    api: HfApi | None = None,
) -> str:
    """Check an export folder's card, then upload the folder to the Hub.

    Creates the dataset repository if missing, then uploads ``README.md``,
    ``data/**`` and ``figures/**`` in one commit that also deletes the remote
    ``data/**`` and ``figures/**`` files of earlier pushes that this one does
    not replace.

    Args:
        export_dir: The folder a build exported (``var('export_dir')``).
        repo_id: ``user/name`` of the dataset repository.
        private: Create the repository private (an existing one is unchanged).
        token: Hub token; None uses ``HF_TOKEN`` or the saved login.
        api: The client (tests pass one); default ``HfApi(token=token)``.

    Returns:
        The URL of the commit.

    Raises:
        FileNotFoundError: If the folder has no card.
        ValueError: If the card fails :func:`kilt_chunks.export.card.check_card`.
        PushError: If the Hub cannot be reached or refuses (one line naming
            the folder, the repository and the Hub's reason).
    """
    folder = Path(export_dir).expanduser()
    card = folder / CARD_FILE
    if not card.is_file():
        raise FileNotFoundError(
            f"{card}: no dataset card; run `dbt build` with export_dir {export_dir!r}"
        )
    check_card(card)
    api = api or HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            repo_id=repo_id,
            repo_type="dataset",
            folder_path=folder,
            allow_patterns=UPLOAD_PATTERNS,
            delete_patterns=REPLACED_PATTERNS,
            commit_message="Upload the kilt-chunks export",
        )
    except _hub_errors() as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise PushError(
            f"push of {folder} to {repo_id} failed: the Hugging Face Hub "
            f"({api.endpoint}) cannot be reached or refused it: {reason}"
        ) from None
    return str(getattr(commit, "commit_url", commit))
