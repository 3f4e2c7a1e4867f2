// HTTPS sessions (OpenSSL): the one instantiation of Session this file compiles.
#include "http/session_impl.h"

namespace imago::http::detail {
template class Session<TlsStream>;
}  // namespace imago::http::detail
