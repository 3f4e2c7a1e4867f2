// HTTP sessions over plain TCP: the one instantiation of Session this file compiles.
#include "http/session_impl.h"

namespace imago::http::detail {
template class Session<PlainStream>;
}  // namespace imago::http::detail
