// Scheduling priority of a session's own threads (docs/conversation.md, "Keeping up with the
// viewer"). Speech recognition must keep up with the viewer in real time while the room renders
// 25 frames a second on the same cores: the render thread lowers its own priority, and the ears
// thread asks for a higher one. Linux keeps a nice value per thread, so each thread sets its own.
#pragma once

namespace imago::live {

// Nice offsets from the process's own nice value.
inline constexpr int kRenderNiceOffset = 5;  // always allowed (lowering)
inline constexpr int kEarsNiceOffset = -5;   // needs CAP_SYS_NICE or RLIMIT_NICE; else unchanged

// Moves the calling thread's nice value by `offset` (clamped to -20..19). Returns whether it
// changed; raising the priority without the privilege leaves it unchanged.
bool adjust_this_thread_nice(int offset);

}  // namespace imago::live
