"""An MCP ``CallToolResult`` as a loopkit :class:`~loopkit.events.ToolResult`, and the check of its
structured content against the tool's ``outputSchema``.

Content blocks map as the MCP specification (revision 2026-07-28, server/tools, "Tool Result")
describes them: text stays text, an image stays an image, an embedded text resource gives its
text, and the blocks loopkit has no type for (audio, a resource link, a binary resource) become a
line of text that says what was there. ``structuredContent`` is kept in ``details`` under
``"structured_content"``; when a result has structured content but no content blocks, its JSON
is the text (the specification asks servers to send both, for clients like this one).
"""

from __future__ import annotations

import json
from typing import Any

from ..events import ToolResult
from ..messages import ImageContent, TextContent


def to_tool_result(result: Any, *, output_schema: dict[str, Any] | None = None, tool_name: str = "?") -> ToolResult:
    """The loopkit result of one ``tools/call``; an error result when ``isError`` is set, or when
    the structured content breaks the declared ``output_schema`` (clients SHOULD validate it)."""
    blocks = [_block(b) for b in result.content or ()]
    structured = result.structured_content
    has_structured = structured is not None or "structured_content" in result.model_fields_set
    if not blocks and has_structured:
        blocks = [TextContent(json.dumps(structured, ensure_ascii=False))]
    if not blocks:
        blocks = [TextContent("")]
    details = {"structured_content": structured} if has_structured else None
    if not result.is_error and output_schema is not None:
        problem = output_problem(result, output_schema)
        if problem is not None:
            text = f"MCP tool {tool_name!r} returned a result that does not match its outputSchema: {problem}"
            return ToolResult([TextContent(text), *blocks], details, True)
    return ToolResult(blocks, details, bool(result.is_error))


def result_text(result: Any) -> str:
    """The text a model would read from a result: every block's text, one per line."""
    return "\n".join(b.text for b in to_tool_result(result).content if isinstance(b, TextContent))


_VALIDATORS: dict[str, Any] = {}


def output_problem(result: Any, output_schema: dict[str, Any]) -> str | None:
    """Why ``result``'s structured content does not match ``output_schema`` (None when it does)."""
    if result.structured_content is None and "structured_content" not in result.model_fields_set:
        return "the tool declares an outputSchema but the result has no structuredContent"
    key = json.dumps(output_schema, sort_keys=True, default=str)
    validator = _VALIDATORS.get(key)
    if validator is None:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for

        cls = validator_for(output_schema, default=Draft202012Validator)  # 2020-12 is MCP's default dialect
        validator = _VALIDATORS[key] = cls(output_schema)
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(result.structured_content))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "the root"
    return f"at {where}: {error.message} (rule {error.validator!r})"


def _block(block: Any) -> TextContent | ImageContent:
    kind = getattr(block, "type", None)
    if kind == "text":
        return TextContent(block.text)
    if kind == "image":
        return ImageContent(data=block.data, mime_type=block.mime_type)
    if kind == "audio":
        return TextContent(f"[audio: {block.mime_type}, {len(block.data)} base64 characters]")
    if kind == "resource_link":
        about = f" ({block.description})" if getattr(block, "description", None) else ""
        return TextContent(f"[resource link: {block.name} <{block.uri}>{about}]")
    if kind == "resource":
        res = block.resource
        text = getattr(res, "text", None)
        if text is not None:
            return TextContent(text)
        mime = getattr(res, "mime_type", None) or "application/octet-stream"
        if mime.startswith("image/"):
            return ImageContent(data=res.blob, mime_type=mime)
        return TextContent(f"[resource {res.uri}: {mime}, {len(res.blob)} base64 characters]")
    dump = block.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(block, "model_dump") else str(block)
    return TextContent(json.dumps(dump, ensure_ascii=False))
