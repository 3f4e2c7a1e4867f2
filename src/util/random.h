// Cryptographically secure randomness and the identifiers built from it.
#pragma once
#include <cstdint>
#include <string>

namespace imago {

// Fills `n` bytes from the OS CSPRNG (OpenSSL RAND_bytes); aborts if it fails.
std::string random_bytes(size_t n);
uint64_t random_u64();
// Uniform integer in [0, bound).
uint64_t random_below(uint64_t bound);

// Random string over [0-9A-Za-z] of the given length.
std::string random_base62(size_t length);
// Lower-case hex of `bytes` random bytes.
std::string random_hex(size_t bytes);
// RFC 4122 version 4 UUID, lower case.
std::string random_uuid();
// An id such as "key_3fA9..." : prefix + '_' + 20 base62 characters (119 bits).
std::string new_id(std::string_view prefix);
// The same shape as new_id, unique but not secret: a per-thread splitmix64 sequence seeded once
// from the CSPRNG, for ids minted on a hot path (request ids) where a RAND_bytes call and its
// locks per id would cost more than the rest of the request's bookkeeping. Never for tokens.
std::string new_unique_id(std::string_view prefix);

bool is_uuid(std::string_view s);

}  // namespace imago
