"""The enforced dbt contracts of the exported tables, read from the models'
yml (``models/marts/**/*.yml``): the one declaration of their columns, which
the tests compare tables, Parquet files and digests with instead of a copy.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

import duckdb
import pyarrow as pa
import yaml

from kilt_chunks.export.folder import table_schema

#: The folder of the models' yml files.
MODELS = Path(__file__).resolve().parents[2] / "models"


class ContractColumn(NamedTuple):
    """One column of an enforced contract."""

    name: str
    #: DuckDB's spelling (upper case, as ``information_schema`` gives it).
    data_type: str
    #: The column has a ``not_null`` constraint.
    not_null: bool


@cache
def _contracts() -> dict[str, tuple[ContractColumn, ...]]:
    contracts = {}
    for path in sorted(MODELS.rglob("*.yml")):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            if not model.get("config", {}).get("contract", {}).get("enforced"):
                continue
            contracts[model["name"]] = tuple(
                ContractColumn(
                    column["name"],
                    column["data_type"].upper(),
                    any(
                        constraint.get("type") == "not_null"
                        for constraint in column.get("constraints", [])
                    ),
                )
                for column in model["columns"]
            )
    return contracts


def contract_columns(model: str) -> list[ContractColumn]:
    """The columns of ``model``'s enforced contract, in order.

    Raises:
        KeyError: If the model has no enforced contract.
    """
    return list(_contracts()[model])


def contract_names(model: str) -> list[str]:
    """The column names of ``model``'s enforced contract, in order."""
    return [column.name for column in contract_columns(model)]


def contract_schema(model: str) -> pa.Schema:
    """The Arrow schema the export gives ``model``: its contract made into a
    DuckDB table (as dbt does), read back by
    :func:`kilt_chunks.export.folder.table_schema`."""
    columns = ", ".join(
        f'"{c.name}" {c.data_type}{" NOT NULL" if c.not_null else ""}'
        for c in contract_columns(model)
    )
    with duckdb.connect() as con:
        con.execute(f"create table {model} ({columns})")
        return table_schema(con, model)
