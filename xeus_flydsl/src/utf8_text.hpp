// Bytes read from file descriptors become JSON strings, which must be valid
// UTF-8 (nlohmann::json throws on anything else, and xeus would then lose
// the message): keep a multi-byte character split across reads for the next
// read, and replace bytes that can never be valid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace xflydsl
{

// Length of the longest prefix of `bytes` that does not end inside a
// multi-byte sequence which later bytes could still complete.
std::size_t complete_utf8_prefix(std::string_view bytes);

// `bytes` with every invalid sequence replaced by U+FFFD.
std::string sanitize_utf8(std::string_view bytes);

} // namespace xflydsl
