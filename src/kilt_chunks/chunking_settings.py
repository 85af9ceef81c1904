"""The settings that determine the chunks, as one frozen, typed value.

:class:`ChunkingSettings` declares each setting that changes the chunks once:
its type, its default, its check and its one-line description (pydantic
``Field(default=..., description=...)``, in the spirit of LlamaIndex's own
node parsers). The value is built once at the edge, where a build starts
(:meth:`ChunkingSettings.for_build`: the dbt variables and the settings the
database recorded), passed whole to the chunking workers and
:func:`kilt_chunks.splitter.get_splitter`, and *iterated*, never listed, for

* the variable checks (:data:`kilt_chunks.settings.KNOWN_VARIABLES`,
  :func:`kilt_chunks.settings.settings_problems`),
* the resume fingerprint (:func:`kilt_chunks.build.checkpoint.sections_fingerprint`),
* the recorded settings (``kilt_build_settings``: the post-hook
  ``record_chunking_settings`` stores what the chunking ran with),
* ``kilt_build_info`` (:func:`kilt_chunks.build.build_info.build_info`), and with it
  the card and ``kilt-chunks summary``.

A new chunking setting is then its dbt variable (``dbt_project.yml``), its
field here, its line in the model config of ``int_sections_chunked``
(``python_models/intermediate/_intermediate_python__models.yml``), the code
that uses it (the splitter) and its row in ``docs/settings.md``;
``tests/python/test_chunking_settings.py`` fails when one of the stores above
does not follow the fields.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from kilt_chunks.checks import Check, int_at_least, one_of

__all__ = [
    "DEFAULT_CHUNKING",
    "SPLITTER_CHOICES",
    "ChunkingSettings",
    "ChunkingSettingsError",
    "Shown",
]

#: The splitter names (``kilt_chunks.splitter.SPLITTER_NAMES``; not imported
#: here, so that the settings check costs dbt no splitter import).
SPLITTER_CHOICES = ("fast", "llama_index")


class ChunkingSettingsError(ValueError):
    """Chunking settings that are not allowed; one line per problem."""


@dataclass(frozen=True)
class Shown:
    """Field metadata: how a field's value is written as text in
    ``kilt_build_info`` and the resume fingerprint (default ``str``)."""

    text: Callable[[Any], str]


def _checked(check: Check) -> BeforeValidator:
    """A pydantic validator running ``check`` on the raw value (before any
    coercion: ``"256"`` is not a chunk size), its problem as the error."""

    def validate(value: Any) -> Any:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return BeforeValidator(validate)


def _tokenizer_problem(value: Any) -> str | None:
    """The tokenizer check: a tiktoken encoding in the local cache or a
    ``tokenizer.json`` that loads (a relative path against the dbt project
    folder). Loaded here, so a broken file stops the build before anything
    is read."""
    from kilt_chunks.settings import tokenizer_setting
    from kilt_chunks.splitter.options import tokenizer_problem

    return tokenizer_problem(
        tokenizer_setting(value) if isinstance(value, str) else value
    )


def _resolved_tokenizer(value: str) -> str:
    from kilt_chunks.settings import tokenizer_setting

    return tokenizer_setting(value)


def _described_tokenizer(value: str) -> str:
    from kilt_chunks.splitter.options import describe_tokenizer

    return describe_tokenizer(value)


class ChunkingSettings(BaseModel):
    """Every setting that determines the chunks (frozen; validated when built).

    Each field's type carries its check (a :mod:`kilt_chunks.checks`
    function) and, where its text is not ``str(value)``, a :class:`Shown`.
    Building one with a value that is not allowed raises
    :class:`pydantic.ValidationError` (a ``ValueError``);
    :meth:`checked` raises :class:`ChunkingSettingsError` with one line per
    problem instead.

    Source: pydantic ``BaseModel`` with ``Field`` and ``Annotated``
    validators (https://docs.pydantic.dev/latest/concepts/validators/).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    splitter: Annotated[str, _checked(one_of(SPLITTER_CHOICES))] = Field(
        default="fast",
        description='"fast" (exact re-implementation of SentenceSplitter) or '
        '"llama_index" (stock); both give the same chunks',
    )
    chunk_size: Annotated[int, _checked(int_at_least(1))] = Field(
        default=256,
        description="most tokens per chunk, counted by the tokenizer (SPEC: 256)",
    )
    chunk_overlap: Annotated[int, _checked(int_at_least(0))] = Field(
        default=0,
        description="tokens shared by consecutive chunks of a section, "
        "SentenceSplitter's chunk_overlap, below chunk_size (SPEC: 0)",
    )
    tokenizer: Annotated[
        str,
        _checked(_tokenizer_problem),
        AfterValidator(_resolved_tokenizer),
        Shown(_described_tokenizer),
    ] = Field(
        default="cl100k_base",
        description="what counts tokens: a tiktoken encoding in the local cache "
        "(cl100k_base, LlamaIndex's default) or a tokenizer.json path",
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap = {self.chunk_overlap!r}: must be below chunk_size "
                f"({self.chunk_size}): consecutive chunks share at most "
                "chunk_overlap tokens"
            )
        return self

    # -- built at the edge -------------------------------------------------

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The settings' names, in declaration order."""
        return tuple(cls.model_fields)

    @classmethod
    def problems(cls, values: Mapping[str, Any]) -> list[str]:
        """What is wrong with the chunking settings among ``values`` (other
        keys ignored; a missing setting takes its default), one line each,
        e.g. ``chunk_size = 0: must be a whole number of at least 1``; the
        check across fields (overlap below size) only when each is fine."""
        try:
            cls.model_validate({n: values[n] for n in cls.names() if n in values})
        except ValidationError as exc:
            return [_problem_line(error) for error in exc.errors()]
        return []

    @classmethod
    def checked(cls, values: Mapping[str, Any]) -> ChunkingSettings:
        """The settings of ``values`` (other keys ignored; missing ones take
        their defaults).

        Raises:
            ChunkingSettingsError: One line per problem (:meth:`problems`).
        """
        problems = cls.problems(values)
        if problems:
            raise ChunkingSettingsError("; ".join(problems))
        return cls.model_validate({n: values[n] for n in cls.names() if n in values})

    @classmethod
    def field_problem(cls, name: str, value: Any) -> str | None:
        """The check of field ``name`` alone (the variable checks)."""
        try:
            _field_adapter(cls, name).validate_python(value)
        except ValidationError as exc:
            return _message(exc.errors()[0])
        return None

    @classmethod
    def normalized(cls, name: str, value: Any) -> Any:
        """``value`` as field ``name`` stores it (a relative tokenizer.json
        path resolved), or unchanged when it is not allowed or not a
        chunking setting."""
        if name not in cls.model_fields:
            return value
        try:
            return _field_adapter(cls, name).validate_python(value)
        except ValidationError:
            return value

    @classmethod
    def for_build(
        cls,
        variables: Mapping[str, Any],
        recorded: Mapping[str, Any],
        given: Collection[str],
    ) -> tuple[ChunkingSettings, list[str]]:
        """The settings a build chunks with: a remembered setting is
        remembered whole.

        Args:
            variables: Each setting's dbt variable as in effect (given with
                ``--vars`` or the project's default).
            recorded: The settings the database's chunks were last built with
                (:func:`kilt_chunks.build.records.recorded_settings`; empty for a
                new database).
            given: Names of the variables given on the command line.

        Returns:
            ``(settings, notes)``: a setting given with ``--vars`` takes that
            value; one not given takes its recorded value when there is one,
            else the project's. ``notes`` has one line per recorded value
            used that differs from the project's, so the build says so.

        Raises:
            ChunkingSettingsError: If a value is not allowed.
        """
        values: dict[str, Any] = {}
        notes = []
        for name in cls.names():
            value = variables.get(name, cls.model_fields[name].default)
            if name not in given and name in recorded:
                if recorded[name] != cls.normalized(name, value):
                    notes.append(
                        f"{name} = {recorded[name]!r}, as the database's chunks were "
                        f"built (not the project's {value!r}): give --vars "
                        f"'{{{name}: ...}}' to change it"
                    )
                value = recorded[name]
            values[name] = value
        return cls.checked(values), notes

    # -- iterated by every store -------------------------------------------

    def described(self) -> dict[str, str]:
        """Each setting as text, by name, in declaration order (the
        ``kilt_build_info`` columns; a tokenizer as
        :func:`~kilt_chunks.splitter.options.describe_tokenizer` gives it)."""
        shown = {}
        for name, field in type(self).model_fields.items():
            show = next((m.text for m in field.metadata if isinstance(m, Shown)), str)
            shown[name] = show(getattr(self, name))
        return shown

    def fingerprint(self) -> str:
        """One text naming every setting (the resume fingerprint's part)."""
        return ":".join(f"{name}={text}" for name, text in self.described().items())


#: The default settings (the SPEC corpus's).
DEFAULT_CHUNKING = ChunkingSettings()


@cache
def _field_adapter(cls: type[ChunkingSettings], name: str) -> TypeAdapter[Any]:
    field = cls.model_fields[name]
    return TypeAdapter(Annotated[(field.annotation, *field.metadata)])


def _message(error: Any) -> str:
    """A pydantic error's text: the check's own words when a check raised."""
    context = error.get("ctx") or {}
    return str(context["error"]) if "error" in context else str(error["msg"])


def _problem_line(error: Any) -> str:
    """One pydantic error as ``name = value: problem`` (a check across fields
    gives its whole line)."""
    if not error["loc"]:
        return _message(error)
    return f"{error['loc'][0]} = {error['input']!r}: {_message(error)}"
