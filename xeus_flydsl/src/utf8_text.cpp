#include "utf8_text.hpp"

namespace xflydsl
{
namespace
{

// Length a sequence starting with `lead` must have; 0 for an invalid lead.
std::size_t sequence_length(unsigned char lead)
{
    if (lead < 0x80)
    {
        return 1;
    }
    if (lead >= 0xC2 && lead <= 0xDF)
    {
        return 2;
    }
    if (lead >= 0xE0 && lead <= 0xEF)
    {
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4)
    {
        return 4;
    }
    return 0;
}

bool is_continuation(unsigned char byte)
{
    return (byte & 0xC0) == 0x80;
}

// Number of valid bytes of the sequence at `bytes[pos]` (0: invalid here).
// Overlong and surrogate encodings are rejected by the second-byte ranges.
std::size_t valid_sequence_at(std::string_view bytes, std::size_t pos)
{
    const auto lead = static_cast<unsigned char>(bytes[pos]);
    const std::size_t length = sequence_length(lead);
    if (length <= 1 || pos + length > bytes.size())
    {
        return length == 1 ? 1 : 0;
    }
    const auto second = static_cast<unsigned char>(bytes[pos + 1]);
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead == 0xE0)
    {
        low = 0xA0;
    }
    else if (lead == 0xED)
    {
        high = 0x9F;
    }
    else if (lead == 0xF0)
    {
        low = 0x90;
    }
    else if (lead == 0xF4)
    {
        high = 0x8F;
    }
    if (second < low || second > high)
    {
        return 0;
    }
    for (std::size_t i = 2; i < length; ++i)
    {
        if (!is_continuation(static_cast<unsigned char>(bytes[pos + i])))
        {
            return 0;
        }
    }
    return length;
}

} // namespace

std::size_t complete_utf8_prefix(std::string_view bytes)
{
    // A truncated sequence can only start within the last three bytes.
    const std::size_t size = bytes.size();
    const std::size_t first = size > 3 ? size - 3 : 0;
    for (std::size_t pos = size; pos-- > first;)
    {
        const auto byte = static_cast<unsigned char>(bytes[pos]);
        if (is_continuation(byte))
        {
            continue;
        }
        const std::size_t length = sequence_length(byte);
        return (length > 1 && pos + length > size) ? pos : size;
    }
    return size;
}

std::string sanitize_utf8(std::string_view bytes)
{
    static constexpr std::string_view replacement = "\xEF\xBF\xBD";
    std::string text;
    text.reserve(bytes.size());
    std::size_t pos = 0;
    while (pos < bytes.size())
    {
        const std::size_t length = valid_sequence_at(bytes, pos);
        if (length == 0)
        {
            text += replacement;
            ++pos;
        }
        else
        {
            text.append(bytes.substr(pos, length));
            pos += length;
        }
    }
    return text;
}

} // namespace xflydsl
