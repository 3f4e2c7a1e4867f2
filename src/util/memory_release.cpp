#include "util/memory_release.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace imago {

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace imago
