# construct: pl.split_aiv(mode=UP_DOWN) over full-width vector code that reads the lane (halved op by op)
# expect: unsupported
# names: pl.split_aiv UP_DOWN aiv_shard lane
"""Full-width vector code in a data-parallel region, which the NPU compiler halves op by op
(each load, compute and store narrowed to the lane's half, offsets moved by lane * half). Code
that does not read the lane index runs whole on this device (the halves together are the whole);
code that does, like this, is refused."""

import pypto.language as pl


@pl.program
class Halved:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[512, 128], pl.FP32], b: pl.Tensor[[512, 128], pl.FP32],
             out: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            offset = aiv_id * 128
            tile_a: pl.Tile[[128, 128], pl.FP32] = pl.load(a, [offset, 0], [128, 128])
            tile_b: pl.Tile[[128, 128], pl.FP32] = pl.load(b, [offset, 0], [128, 128])
            out = pl.store(pl.add(tile_a, tile_b), [offset, 0], out)
        return out
