"""PyPTO's ``pypto.backend.pto_backend`` names that programs and tests import.

PyPTO's backend writes ``.pto`` text for its hardware assembler (ptoas); this compiler generates
C++ for the CPU device instead (``ir.compile``), so that module's code generation has no
counterpart here. ``PartialCodegenError`` is PyPTO's error for a code generation that failed
after writing some files; a program this compiler cannot generate code for raises
``pypto.errors.CompileError`` (file:line:col), which is not one.
"""

from typing import Dict, Optional

__all__ = ["PartialCodegenError"]


class PartialCodegenError(RuntimeError):
    """Code generation failed after producing some files (``files``: path -> text)."""

    def __init__(self, message: str, files: Optional[Dict[str, str]] = None) -> None:
        super().__init__(message)
        self.files = dict(files or {})
