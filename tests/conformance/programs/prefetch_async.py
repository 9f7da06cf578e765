# construct: pl.prefetch.make_context / async_prefetch / session / wait (GM -> L2 prefetch)
# expect: unsupported
# names: pl.prefetch.make_context not supported PrefetchAsyncContext
"""An asynchronous prefetch of a global tensor into L2 before a kernel reads it. The prefetch
changes no value; its handle types are not part of this compiler's IR yet."""

import pypto.language as pl


@pl.program
class Prefetched:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 1024], pl.FP32],
          y: pl.Out[pl.Tensor[[1, 1024], pl.FP32]]) -> pl.Tensor[[1, 1024], pl.FP32]:
        ctx = pl.prefetch.make_context()
        evt = pl.prefetch.async_prefetch(x, ctx)
        session = pl.prefetch.session(ctx)
        pl.prefetch.wait(evt, session)
        return pl.store(pl.load(x, [0, 0], [1, 1024]), [0, 0], y)
