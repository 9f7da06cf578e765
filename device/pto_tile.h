// Tile primitives used by generated kernels (filled in by the codegen stage).
#pragma once
