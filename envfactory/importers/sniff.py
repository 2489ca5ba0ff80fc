"""Tell which log format a record is in, from its structure alone (for ``import auto``).

The formats differ in how they spell a tool call: native ``steps``, BFCL ``ground_truth``, OpenAI
chat ``tool_calls`` / ``role: tool``, Responses ``function_call`` items, Anthropic ``tool_use`` /
``tool_result`` blocks, Gemini ``functionCall`` / ``functionResponse`` parts, Bedrock ``toolUse``
/ ``toolResult`` blocks, Cohere v1 ``CHATBOT`` turns' ``tool_calls`` and ``tool_results``, Mistral
Conversations ``function.call`` / ``function.result`` entries, LangChain ``AIMessage``
``tool_calls`` and ``ToolMessage`` answers, MCP JSON-RPC ``tools/call`` messages. A conversation with no tool call at all is plain chat, which every chat
importer reads the same way (as zero steps): it is reported as ``openai-chat``.
"""

from __future__ import annotations

from typing import Any

from envfactory.contracts.errors import TrajectoryError
from envfactory.importers.anthropic import BLOCK_TYPES
from envfactory.importers.bedrock import BLOCK_KEYS, response_message
from envfactory.importers.cohere import is_record as is_cohere_record
from envfactory.importers.cohere import is_turn as is_cohere_turn
from envfactory.importers.gemini import CALL_KEYS, RESPONSE_KEYS
from envfactory.importers.langchain import calls_tools as langchain_calls_tools
from envfactory.importers.langchain import message_fields as langchain_message
from envfactory.importers.mistral import is_entry as is_mistral_entry
from envfactory.importers.mistral import is_record as is_mistral_record
from envfactory.importers.openai_chat import RUN_STEP, run_steps, stored_messages
from envfactory.importers.openai_responses import ITEM_TYPES
from envfactory.importers.streams import is_message
from envfactory.trajectory import is_native_record

_RESPONSES_ITEMS = ITEM_TYPES
_ANTHROPIC_BLOCKS = BLOCK_TYPES
_SCAN = 10_000
"""Items looked at before giving up on a list."""


def sniff(data: Any, *, plain: str = "openai-chat") -> str:
    """The format name of one record (``native``, ``openai-chat``, ``openai-responses``,
    ``anthropic`` or ``bfcl``); ``TrajectoryError`` when the structure fits none of them. A
    conversation without any tool call is ``plain`` (the format of the records around it, when
    the caller knows it)."""
    found = _sniff(data)
    if found is None:
        from envfactory.importers import FORMATS  # the package's one list, complete once it is loaded

        named = "|".join(f for f in FORMATS if f != "auto")
        raise TrajectoryError(
            f"cannot tell the log format from its structure; name it: envfactory import {{{named}}} FILE"
        )
    return plain if found == _PLAIN else found


_PLAIN = "plain"  # a conversation without tool calls


def _sniff(data: Any) -> str | None:
    if isinstance(data, dict):
        return _sniff_object(data)
    if not isinstance(data, list):
        return None
    dicts = [x for x in data[:_SCAN] if isinstance(x, dict)]
    if not dicts:
        return None
    if all(is_message(x) for x in dicts):
        return "mcp"
    if not any(_is_record(x) for x in dicts):
        return _sniff_items(dicts)  # one conversation: a list of messages or items
    plain = None
    for record in dicts:  # a list of conversations: the first one with a tool call decides
        found = _sniff_object(record)
        if found is not None and found != _PLAIN:
            return found
        plain = plain or found
    return plain


def _is_record(item: dict[str, Any]) -> bool:
    return (
        any(
            key in item
            for key in (
                "steps",
                "ground_truth",
                "messages",
                "choices",
                "contents",
                "candidates",
                "chat_history",
            )
        )
        or is_cohere_record(item)
        or ("type" not in item and any(isinstance(item.get(k), list) for k in ("input", "output", "data")))
    )


def _sniff_object(data: dict[str, Any]) -> str | None:
    if is_message(data):
        return "mcp"
    if "ground_truth" in data:
        return "bfcl"
    if is_native_record(data):
        return "native"
    if is_cohere_record(data):
        return "cohere"
    if is_mistral_record(data):
        return "mistral"
    if isinstance(data.get("messages"), list):
        return _sniff_items([m for m in data["messages"][:_SCAN] if isinstance(m, dict)])
    if isinstance(data.get("choices"), list) or data.get("object") == RUN_STEP:
        return "openai-chat"
    if data.get("object") == "list" and isinstance(data.get("data"), list):
        items = data["data"][:_SCAN]
        if run_steps(items):
            return "openai-chat"
        if stored_messages(items):
            return _sniff_items(items)
    if isinstance(data.get("contents"), list) or isinstance(data.get("candidates"), list):
        return "gemini"  # no other format has either
    if isinstance(response_message(data), dict):
        return "bedrock"
    message = data.get("message")
    if "type" not in data and isinstance(message, dict) and "role" in message:
        return _sniff_items([message])  # a chat response with one message (Ollama, Cohere v2)
    if "type" not in data and any(isinstance(data.get(k), list) for k in ("input", "output", "data")):
        return "openai-responses"
    if _kind(data) in _RESPONSES_ITEMS or "role" in data or langchain_message(data) is not None:
        return _sniff_items([data])
    return None


def _sniff_items(items: list[dict[str, Any]]) -> str:
    """Messages or items of one conversation: the first tool-bearing structure decides."""
    for item in items[:_SCAN]:
        if is_cohere_turn(item) and ("tool_calls" in item or "tool_results" in item):
            return "cohere"
        if is_mistral_entry(item) and item["type"].startswith("function."):
            return "mistral"
        if langchain_calls_tools(item):
            return "langchain"
        if _kind(item) in _RESPONSES_ITEMS:
            return "openai-responses"
        if "tool_calls" in item or "function_call" in item or item.get("role") in ("tool", "function"):
            return "openai-chat"
        content = item.get("content")
        if isinstance(content, list):
            blocks = [block for block in content if isinstance(block, dict)]
            if any(_kind(block) in _ANTHROPIC_BLOCKS for block in blocks):
                return "anthropic"
            if any(not BLOCK_KEYS.isdisjoint(block) for block in blocks):
                return "bedrock"
        parts = item.get("parts")
        if isinstance(parts, list) and any(
            isinstance(part, dict) and any(k in part for k in (*CALL_KEYS, *RESPONSE_KEYS)) for part in parts
        ):
            return "gemini"
    return _PLAIN


def _kind(item: dict[str, Any]) -> str | None:
    """An item's ``type`` when it is a string (a hostile log may put anything there)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


__all__ = ["sniff"]
