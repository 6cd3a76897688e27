"""Type stubs for the native module (``toolmend._toolmend``)."""

from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

__version__: str

ToolsLike = Union["ToolSet", Sequence[Any]]

class ToolmendError(ValueError):
    """Base class of every toolmend error (a ValueError)."""

class ToolSpecError(ToolmendError):
    """A tool list or tool object toolmend cannot read."""

class SalvageError(ToolmendError):
    """A text that holds no JSON toolmend can read without guessing."""

    kind: str
    offset: int
    line: int
    column: int

class NoJsonError(SalvageError): ...
class JsonSyntaxError(SalvageError): ...
class NonFiniteError(SalvageError): ...
class TooLargeError(SalvageError): ...
class TooDeepError(SalvageError): ...

class ToolSet:
    """The tools of a request, compiled once (OpenAI, flat or Anthropic form, or SDK objects)."""

    def __init__(self, tools: Sequence[Any]) -> None: ...
    @staticmethod
    def from_openai(tools: Sequence[Any]) -> "ToolSet": ...
    @staticmethod
    def from_anthropic(tools: Sequence[Any]) -> "ToolSet": ...
    @property
    def names(self) -> List[str]: ...
    @property
    def rejected(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str) -> bool: ...

class Repair:
    """One repair: its kind and the JSON Pointer where it was made."""

    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    def to_dict(self) -> Dict[str, str]:
        """``{"kind": …, "path": …}``."""

Status = Literal["valid", "repaired", "recovered", "invalid", "suppressed", "unvalidated"]

class Call:
    """Everything toolmend decided about one call."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def origin(self) -> Literal["native", "content", "reasoning"]: ...
    @property
    def status(self) -> Status: ...
    @property
    def arguments(self) -> Optional[Dict[str, Any]]: ...
    @property
    def arguments_text(self) -> str: ...
    @property
    def repairs(self) -> List[Repair]: ...
    @property
    def notes(self) -> List[str]: ...
    @property
    def outcome(self) -> Optional[Literal["local-salvage", "re-prompt", "gave-up"]]: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def native_index(self) -> Optional[int]: ...
    @property
    def dispatchable(self) -> bool: ...
    def has(self, kind: str) -> bool: ...
    def to_dict(self) -> Dict[str, Any]:
        """Every attribute as plain Python values (``repairs`` as dicts, plus ``dispatchable``)."""

class Session:
    """A conversation's storm window and retry budget."""

    def __init__(
        self,
        *,
        window: Optional[int] = None,
        threshold: Optional[int] = None,
        max_reprompts: Optional[int] = None,
    ) -> None: ...
    def new_user_turn(self) -> None: ...

class TurnResult:
    """What ``Mender.run_turn`` made of one assistant message."""

    @property
    def content(self) -> Optional[str]: ...
    @property
    def reasoning(self) -> Optional[str]: ...
    @property
    def calls(self) -> List[Call]: ...
    @property
    def report(self) -> Dict[str, int]: ...
    def to_dict(self) -> Dict[str, Any]:
        """``content``, ``reasoning``, ``calls`` (each ``Call.to_dict()``) and ``report``."""

class Mender:
    """The repair pipeline over a set of tools; safe to share across threads."""

    def __init__(
        self,
        tools: ToolsLike,
        *,
        recover: Literal["off", "strip", "content", "all"] = ...,
        model: str = ...,
        include_values: bool = ...,
        max_salvage_bytes: int = ...,
        max_depth: int = ...,
        max_recovered_calls: int = ...,
        max_repair_rounds: int = ...,
        max_message_bytes: int = ...,
        max_call_key_matches: int = ...,
        max_call_errors: int = ...,
    ) -> None: ...
    def repair_call(self, name: str, arguments: str) -> Call: ...
    def repair_many(
        self, names: List[Optional[str]], arguments: List[Optional[str]]
    ) -> Tuple[
        List[str], List[Optional[str]], List[int], List[str], List[str], List[Optional[str]]
    ]: ...
    def run_turn(
        self,
        session: Session,
        message: Union[Mapping[str, Any], Any],
        *,
        finish_reason: Optional[str] = None,
        new_user_turn: bool = False,
    ) -> TurnResult: ...
    def stats(self) -> Dict[str, Any]: ...
    @property
    def tool_names(self) -> List[str]: ...

class RecoveredCall:
    """One call found in text."""

    @property
    def name(self) -> str: ...
    @property
    def written_name(self) -> Optional[str]: ...
    @property
    def family(self) -> str: ...
    @property
    def arguments(self) -> str: ...
    @property
    def arguments_unwrapped(self) -> bool: ...
    @property
    def span(self) -> Tuple[int, int]: ...
    @property
    def channel(self) -> Literal["content", "reasoning"]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class LostCall:
    """A call of a declared tool in a recovered block that could not be read (never recovered).

    A JSON call list or a Cohere action list is read entry by entry, so an entry whose
    arguments cannot be read loses only itself; it is listed here instead of being dropped.
    """

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def text(self) -> str:
        """What could not be read, as written: the call's arguments, or its whole list entry."""
    @property
    def position(self) -> int:
        """How many recovered calls come before it (for a stream: calls released so far)."""
    @property
    def span(self) -> Tuple[int, int]:
        """The ``(start, end)`` byte range of its block, shared with the block's calls."""
    @property
    def channel(self) -> Literal["content", "reasoning"]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Recovered:
    """Text with the markup of recovered calls removed, those calls, and the lost ones."""

    @property
    def text(self) -> str: ...
    @property
    def calls(self) -> List[RecoveredCall]: ...
    @property
    def lost(self) -> List[LostCall]:
        """Calls of the recovered blocks that could not be read, in text order."""
    def to_dict(self) -> Dict[str, Any]:
        """``text``, ``calls`` (each ``RecoveredCall.to_dict()``) and ``lost``."""

def recover(
    text: str,
    tools: ToolsLike,
    *,
    channel: Literal["content", "reasoning"] = "content",
    max_calls: Optional[int] = None,
) -> Recovered: ...

class StreamRecoverer:
    """Recovers calls from text that arrives in chunks."""

    def __init__(
        self,
        tools: ToolsLike,
        *,
        channel: Literal["content", "reasoning"] = "content",
        max_calls: Optional[int] = None,
    ) -> None: ...
    def feed(self, chunk: str) -> Recovered: ...
    def finish(self) -> Recovered: ...

def prepare_tools(
    tools: Sequence[Any],
    *,
    model: str = "",
    strip_hints: bool = ...,
    strip_anchors: bool = ...,
    flatten: bool = ...,
    flatten_leaves_over: int = ...,
    flatten_depth_over: int = ...,
    contract_hints: bool = ...,
    max_hint_bytes: int = ...,
) -> List[Dict[str, Any]]: ...
def salvage_values(
    text: str,
    *,
    truncation: Literal["close", "refuse"] = "close",
    max_bytes: Optional[int] = None,
    max_depth: Optional[int] = None,
    trim_layout: bool = True,
    lenient_scalars: bool = True,
    trim_cut_strings: bool = False,
    broken: bool = False,
) -> Tuple[List[Any], List[Tuple[str, int]], bool]: ...
def loads_strict(text: str) -> Any: ...
def loads_document(text: str, stream_stable: bool = False) -> Any: ...
def repair_document(text: str, stream_stable: bool = False) -> Any: ...
def repair_kinds() -> List[str]: ...
def run_turn_rows(rows: Mapping[str, Optional[List[Any]]], defaults: Mapping[str, Any]) -> Dict[str, Any]:
    """The engine of ``toolmend.arrow.run_turns``: turn rows as lists in, flat result columns out."""
    ...

class AuditTally:
    """The engine of ``toolmend.arrow.audit``: the library's audit tally, fed batch by batch."""

    def __init__(self, max_keys: int = 1000) -> None: ...
    def add_rows(self, rows: Mapping[str, Optional[List[Any]]], defaults: Mapping[str, Any]) -> None:
        """Runs the rows as ``run_turn_rows`` does and counts them."""
        ...
    def rows(self) -> List[Dict[str, Any]]:
        """The report: ``toolmend audit --format jsonl``'s rows."""
        ...

class ArrowArrayExport:
    """An Arrow array made by the native side, for ``pyarrow.array`` / ``pyarrow.record_batch``."""

    def __arrow_c_array__(self, requested_schema: Optional[Any] = None) -> Tuple[Any, Any]: ...
    def __len__(self) -> int: ...

def repair_call_columns(
    names: Any,
    arguments: Any,
    mender: Optional[Mender] = None,
    tools: Optional[Any] = None,
    mender_for: Optional[Any] = None,
) -> ArrowArrayExport:
    """The engine of ``toolmend.arrow.repair_calls``: Arrow text columns in, a struct array of
    ``status``, ``arguments_repaired``, ``repairs``, ``error`` out (Arrow C data interface)."""
    ...

def cached_mender(tools: Union[Mender, str, ToolsLike], **options: Any) -> Mender:
    """A ``Mender`` from the process-wide cache (the library's ``MenderCache``): compiled on the
    first call for these tools (JSON text, or anything ``Mender`` accepts) and ``Mender``'s
    keyword options, shared after; a ``Mender`` is returned as given. The engine of
    ``toolmend.arrow``'s tool sets."""
    ...

def run_turn_columns(columns: Mapping[str, Any], defaults: Mapping[str, Any]) -> ArrowArrayExport:
    """The engine of ``toolmend.arrow.run_turns``: Arrow text columns in, a struct array of
    ``error``, ``content``, ``reasoning``, ``calls``, ``report`` out (Arrow C data interface)."""
    ...
