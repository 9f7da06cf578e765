import pypto.language as pl


@pl.program
class P:
    pass
