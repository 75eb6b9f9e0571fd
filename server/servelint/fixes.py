"""Building fix edits on top of a launch's host (the format-specific editor)."""

from __future__ import annotations

from servelint.args import Use
from servelint.model import Edit, Fix, Launch, Span, Token


def rename_option(launch: Launch, use_token: Token, written: str, name_span: Span,
                  new_name: str) -> Edit | None:
    """Respell the option name of a token, keeping any `=value` after it."""
    if name_span != use_token.span or use_token.text == written:
        if name_span != use_token.span:
            return Edit(name_span, new_name)
        return launch.host.replace(use_token, new_name)
    # The name is inside a quoted word such as "--tp_size=2": rewrite the whole word.
    if use_token.text is None:
        return None
    rest = use_token.text[len(written):]
    return launch.host.replace(use_token, new_name + rest)


def remove_tokens(launch: Launch, first: int, last: int) -> Edit | None:
    return launch.host.remove(launch.tokens[first], launch.tokens[last])


def remove_use(launch: Launch, use: Use) -> Edit | None:
    return remove_tokens(launch, use.index, use.last_index)


def fix(title: str, edit: Edit | None, preferred: bool = False, safe: bool = True) -> list[Fix]:
    """A one-edit fix, or nothing when the host cannot express the edit."""
    if edit is None:
        return []
    return [Fix(title, [edit], preferred=preferred, safe=safe)]


def replace_option_words(launch: Launch, first: int, last: int, words: list[str]) -> Edit | None:
    """Rewrite the words from index `first` to `last` (an option and the values it owns)
    as `words`; no words removes them."""
    if not words:
        return remove_tokens(launch, first, last)
    return launch.host.replace_words(launch.tokens[first], launch.tokens[last], words)
