"""TEMPORARY STUB (replaced by the helper's module)."""

from tui_agent.sandbox.models import ExecuteRequest, ExecuteResult

SEARCH_DOCUMENTATION_TOOL = {
    "type": "function",
    "function": {
        "name": "search_documentation",
        "description": "API documentation of an installed library",
        "parameters": {
            "type": "object",
            "properties": {"library": {"type": "string"}, "query": {"type": "string"}},
            "required": ["library", "query"],
        },
    },
}
CODE = """
def main(library, query):
    import importlib, inspect
    m = importlib.import_module(library)
    return (m.__doc__ or "")[:500]
"""


def doc_search_request(library, query, *, timeout=15.0):
    return ExecuteRequest(code=CODE, args=[library, query], timeout=timeout)


def read_doc_answer(result: ExecuteResult, library, query) -> str:
    if not result.success:
        return f"Error: {result.error}"
    return str(result.result)
