// Gives the heap's free pages back to the operating system.
//
// glibc's malloc keeps memory freed by a thread in that thread's arena, and trims an arena only
// from its top: free pages below a live chunk stay resident. A live room loads and frees tens of
// MB (its recogniser's decoder, render and speech buffers) on threads of its own; without an
// explicit trim those pages stayed resident (docs/live-protocol.md, "Memory").
#pragma once

namespace imago {

// malloc_trim(0) with glibc: every arena's free pages, also those below live chunks, are returned
// with MADV_DONTNEED. Walks every arena, taking each one's lock in turn: call it off hot paths
// (the room closer calls it once its queue is empty). No-op with other C libraries.
void release_free_memory();

}  // namespace imago
