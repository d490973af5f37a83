"""
Decorator module imported by toolset code files (`from toolstore.toolset import tool`).
Provides the @tool decorator that marks functions as agent-callable.

    @tool                      # category pending until an admin sets it
    @tool(category="read")     # read | write | execute | external
    @tool("write")
"""

from typing import Callable, Any

_REGISTRY: dict[str, Callable] = {}

CATEGORIES = ("read", "write", "execute", "external")


def tool(fn: Callable | str | None = None, *, category: str | None = None) -> Any:
    """Decorator: mark a function as a toolset entry point."""
    if isinstance(fn, str):
        category, fn = fn, None
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"@tool category must be one of {', '.join(CATEGORIES)}, got {category!r}")

    def mark(f: Callable) -> Callable:
        _REGISTRY[f.__name__] = f
        f._is_toolset_tool = True
        f._toolset_category = category
        return f

    if fn is None:
        return mark
    return mark(fn)


def get_tool(name: str) -> Callable | None:
    """Get a registered tool function by name."""
    return _REGISTRY.get(name)


def get_tool_names() -> list[str]:
    """Get all registered tool names."""
    return list(_REGISTRY.keys())


def clear_registry() -> None:
    """Clear the registry (called between toolset loads)."""
    _REGISTRY.clear()
