"""Text and paths on their way into the C++ core, which takes UTF-8 strings only.

Anything else (bytes, a str holding lone surrogates from undecodable file-name bytes, a
non-string) is turned into one of our errors here, naming what was wrong, rather than reaching
the bindings and failing with their signature listing.
"""

import os

__all__ = ["checked_text", "checked_path", "display_text", "undecodable_at"]


def undecodable_at(text):
    """The index of the first character of ``text`` that cannot be encoded as UTF-8, or None."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start


def display_text(text):
    """``text`` with undecodable characters (surrogate escapes) shown as U+FFFD; for names that
    appear only in messages, such as the file a class was defined in."""
    if undecodable_at(text) is None:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def checked_text(value, what, error):
    """``value`` as a str the core can take; raises ``error`` naming ``what`` otherwise."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{what} is not valid UTF-8 (byte 0x{value[e.start]:02x} at offset "
                        f"{e.start})") from None
    if not isinstance(value, str):
        raise error(f"{what} must be a str, got {type(value).__name__}")
    at = undecodable_at(value)
    if at is not None:
        raise error(f"{what} is not valid text: character {at} (U+{ord(value[at]):04X}) comes "
                    f"from a byte that is not UTF-8; PyPTO needs UTF-8 names and text")
    return value


def checked_path(value, what, error):
    """A path (str, bytes or os.PathLike) as a str the core can take, or ``error``."""
    try:
        value = os.fspath(value)
    except TypeError:
        raise error(f"{what} must be a path (str, bytes or os.PathLike), "
                    f"got {type(value).__name__}") from None
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{what} {value!r} is not valid UTF-8 (byte 0x{value[e.start]:02x}); "
                        f"choose a directory whose name is UTF-8") from None
    if undecodable_at(value) is not None:
        raise error(f"{what} {display_text(value)!r} is not valid UTF-8 (it holds bytes that "
                    f"are not); choose a directory whose name is UTF-8")
    return value
