"""Text utilities in Python: counts, slugs, and e-mail addresses found in text. Runs offline.

@timeout 5000
"""
import re
import unicodedata
from collections import Counter
from typing import Literal, Optional, TypedDict

from toolstore.toolset import tool


class TextStats(TypedDict):
    characters: int
    words: int
    lines: int
    top_words: list[list]


_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@tool(category="read")
def word_count(text: str, top: int = 5) -> TextStats:
    """Count characters, words and lines, and list the most frequent words.

    Args:
        text: The text to count.
        top: How many of the most frequent words to return (0 for none).
    """
    if top < 0:
        raise ValueError("top must be 0 or more")
    words = _words(text)
    return {
        "characters": len(text),
        "words": len(words),
        "lines": text.count("\n") + 1 if text else 0,
        "top_words": [[w, n] for w, n in Counter(words).most_common(top)],
    }


@tool("read")
def slugify(text: str, separator: Literal["-", "_"] = "-", max_length: Optional[int] = None) -> str:
    """Turn text into a URL slug: ASCII, lower case, words joined by the separator.

    Args:
        text: The title or phrase.
        separator: "-" or "_".
        max_length: Cut the slug to this many characters (at a word boundary).
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    parts = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = separator.join(parts)
    if max_length is not None and len(slug) > max_length:
        cut = slug[:max_length]
        if slug[max_length] != separator and separator in cut:
            cut = cut.rsplit(separator, 1)[0]
        slug = cut
    return slug


@tool(category="read")
def extract_emails(text: str, unique: bool = True) -> list[str]:
    """Find the e-mail addresses in a text, in order of appearance.

    Args:
        text: The text to search.
        unique: Return each address once (case-insensitive).
    """
    found = re.findall(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", text)
    if not unique:
        return found
    seen: set[str] = set()
    out = []
    for address in found:
        key = address.lower()
        if key not in seen:
            seen.add(key)
            out.append(address)
    return out
