#pragma once

namespace imago {
// `imagod admin ...` (argv after the word "admin").
int admin_main(int argc, char** argv);
}  // namespace imago
