"""The model layer on litellm: streaming calls with records, and the CodeAct action turn.

Importing this package is cheap; litellm itself is imported when the first `LLM` is made.
"""

from tui_agent.llm.actions import (
    ACTION_FORMAT,
    Action,
    ActionName,
    ActionParseError,
    ParsedAction,
    clean_code,
    parse_action,
)
from tui_agent.llm.client import LLM, Message, Reply, ReplyStream, RetryPolicy, ToolCallRequest
from tui_agent.llm.context import context_limit, count_tokens
from tui_agent.llm.cost import call_cost, price_known
from tui_agent.llm.errors import (
    ApiKeyRejected,
    ContextTooLong,
    LLMError,
    LLMRequestError,
    MissingApiKey,
    ProviderUnavailable,
    ToolsUnsupported,
    UnknownModel,
)
from tui_agent.llm.incremental import FieldComplete, FieldDelta, IncrementalFields
from tui_agent.llm.reply_forms import (
    FENCED_FORM,
    JSON_FORM,
    ReplyForm,
    ReplyFormChoice,
    ReplyFormName,
    repair_message,
    reply_form,
)
from tui_agent.llm.turn import (
    ActionOutcome,
    ActionStreamItem,
    Attempt,
    InvalidReply,
    echoed,
    next_action,
    stream_action,
)

__all__ = [
    "ACTION_FORMAT",
    "FENCED_FORM",
    "JSON_FORM",
    "LLM",
    "Action",
    "ActionName",
    "ActionOutcome",
    "ActionParseError",
    "ActionStreamItem",
    "ApiKeyRejected",
    "Attempt",
    "ContextTooLong",
    "FieldComplete",
    "FieldDelta",
    "IncrementalFields",
    "InvalidReply",
    "LLMError",
    "LLMRequestError",
    "Message",
    "MissingApiKey",
    "ParsedAction",
    "ProviderUnavailable",
    "Reply",
    "ReplyForm",
    "ReplyFormChoice",
    "ReplyFormName",
    "ReplyStream",
    "RetryPolicy",
    "ToolCallRequest",
    "ToolsUnsupported",
    "UnknownModel",
    "call_cost",
    "clean_code",
    "context_limit",
    "count_tokens",
    "echoed",
    "next_action",
    "parse_action",
    "price_known",
    "repair_message",
    "reply_form",
    "stream_action",
]
