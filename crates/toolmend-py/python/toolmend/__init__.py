"""toolmend: repairs the tool calls LLMs get nearly right.

The tool-call engine (``ToolSet``, ``Mender``, ``Session``, ``recover``, ``StreamRecoverer``,
``prepare_tools``), helpers for the ``openai`` and ``anthropic`` SDKs' responses
(``repair_chat_completion``, ``repair_chat_stream``, ``repair_anthropic_message``), and
json_repair-compatible functions (``repair_json``, ``loads``, ``load``, ``from_file``), so that
``import toolmend as json_repair`` works in existing code.

Valid input is never touched, a call that cannot be saved comes back ``invalid`` with a retry
message for the model instead of a guess, and the json_repair functions return ``""`` where
toolmend refuses to guess (see ``toolmend.jsonrepair``).
"""

from ._toolmend import (
    Call,
    JsonSyntaxError,
    LostCall,
    Mender,
    NoJsonError,
    NonFiniteError,
    Recovered,
    RecoveredCall,
    Repair,
    SalvageError,
    Session,
    StreamRecoverer,
    TooDeepError,
    TooLargeError,
    ToolmendError,
    ToolSet,
    ToolSpecError,
    TurnResult,
    __version__,
    prepare_tools,
    recover,
    repair_kinds,
)
from .jsonrepair import from_file, load, loads, repair_json, salvage_json
from .sdk import repair_anthropic_message, repair_chat_completion, repair_chat_stream

__all__ = [
    "Call",
    "JsonSyntaxError",
    "LostCall",
    "Mender",
    "NoJsonError",
    "NonFiniteError",
    "Recovered",
    "RecoveredCall",
    "Repair",
    "SalvageError",
    "Session",
    "StreamRecoverer",
    "TooDeepError",
    "TooLargeError",
    "ToolSet",
    "ToolSpecError",
    "ToolmendError",
    "TurnResult",
    "__version__",
    "from_file",
    "load",
    "loads",
    "prepare_tools",
    "recover",
    "repair_anthropic_message",
    "repair_chat_completion",
    "repair_chat_stream",
    "repair_json",
    "repair_kinds",
    "salvage_json",
]
