"""What litellm knows about a model's provider, asked offline: name, key variables, JSON mode,
tool calling."""

from __future__ import annotations

import os

from tui_agent.llm.errors import UnknownModel
from tui_agent.llm.runtime import litellm


def resolve_provider(model: str, api_base: str | None) -> tuple[str, str]:
    """(model name without provider prefix, provider); `UnknownModel` if litellm cannot tell."""
    try:
        bare_model, provider, _, _ = litellm().get_llm_provider(model=model, api_base=api_base)
    except Exception:
        raise UnknownModel(
            f"unknown model {model!r}: litellm cannot tell its provider; "
            "name it as provider/model, e.g. openai/gpt-4o-mini"
        ) from None
    return bare_model, provider


def missing_key_variables(model: str, api_base: str | None) -> list[str]:
    """The secret environment variables the provider needs that are not set."""
    report = litellm().validate_environment(model=model, api_base=api_base)
    return [name for name in report["missing_keys"] if _is_secret_name(name)]


def missing_key_message(model: str, missing: list[str]) -> str:
    """`OPENAI_API_KEY is not set (model openai/gpt-4o-mini needs it)`."""
    verb = "is" if len(missing) == 1 else "are"
    return f"{' and '.join(missing)} {verb} not set (model {model} needs it)"


def present_key_variable(provider: str) -> str | None:
    """The conventional variable holding `provider`'s key, if one is set."""
    stem = provider.upper()
    for name in (f"{stem}_API_KEY", f"{stem.replace('_', '')}_API_KEY"):
        if name in os.environ:
            return name
    return None


def supports_json_mode(bare_model: str, provider: str) -> bool:
    """Whether litellm says the provider takes `response_format` for this model."""
    try:
        params = litellm().get_supported_openai_params(
            model=bare_model, custom_llm_provider=provider
        )
    except Exception:
        return False
    return "response_format" in (params or [])


def tools_supported(model: str, api_base: str | None) -> bool:
    """Whether to offer native tool calls: litellm's flag for a model it knows; a custom
    `api_base` serving a model litellm does not know is taken as able (OpenAI-compatible)."""
    lt = litellm()
    try:
        known = lt.get_model_info(model).get("supports_function_calling")
    except Exception:  # litellm raises for a model missing from its map
        known = None
    if known is not None:
        return bool(known)
    if api_base:
        return True
    try:
        return bool(lt.supports_function_calling(model))
    except Exception:
        return False


def _is_secret_name(name: str) -> bool:
    return name.endswith(("_KEY", "_TOKEN", "_SECRET", "_KEY_ID"))
