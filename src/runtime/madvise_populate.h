// madvise's advice to map a range's pages in one call (Linux >= 5.14), for C libraries whose
// headers predate it. On older kernels the call fails with EINVAL and the pages fault in as usual.
#pragma once

#include <sys/mman.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
