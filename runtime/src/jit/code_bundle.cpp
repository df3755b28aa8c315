#include "code_bundle.hpp"

#include <cstdint>
#include <stdexcept>

namespace flyrt::jit
{
namespace
{

constexpr std::string_view magic = "FLYRT-CODE-5\n";

void put_size(std::string& out, std::uint64_t size)
{
    for (int byte = 0; byte < 8; ++byte)
    {
        out.push_back(static_cast<char>((size >> (8 * byte)) & 0xff));
    }
}

void put_string(std::string& out, std::string_view text)
{
    put_size(out, text.size());
    out += text;
}

// Reads sizes and strings off the front of a payload, refusing to run past its end.
class reader
{
public:
    explicit reader(std::string_view in) : m_rest(in) {}

    std::uint64_t size()
    {
        if (m_rest.size() < 8)
        {
            throw std::runtime_error("truncated flyrt code bundle");
        }
        std::uint64_t size = 0;
        for (int byte = 0; byte < 8; ++byte)
        {
            size |= std::uint64_t(static_cast<unsigned char>(m_rest[byte])) << (8 * byte);
        }
        m_rest.remove_prefix(8);
        return size;
    }

    std::string text()
    {
        const std::uint64_t length = size();
        if (m_rest.size() < length)
        {
            throw std::runtime_error("truncated flyrt code bundle");
        }
        std::string out(m_rest.substr(0, length));
        m_rest.remove_prefix(length);
        return out;
    }

    // A count of entries that each take at least 8 more bytes.
    std::uint64_t count()
    {
        const std::uint64_t n = size();
        if (n > m_rest.size() / 8)
        {
            throw std::runtime_error("truncated flyrt code bundle");
        }
        return n;
    }

    bool done() const { return m_rest.empty(); }

private:
    std::string_view m_rest;
};

} // namespace

std::string pack(const compiled_code& code)
{
    std::string out(magic);
    put_size(out, code.host_objects.size());
    for (std::size_t i = 0; i < code.host_objects.size(); ++i)
    {
        put_string(out, code.host_objects[i]);
        put_string(out, i < code.host_digests.size() ? code.host_digests[i] : std::string());
    }
    put_size(out, code.images.size());
    for (const device_image& image : code.images)
    {
        put_string(out, image.kernel);
        put_string(out, image.code);
        put_string(out, image.digest);
        put_string(out, image.binary);
        put_size(out, image.reports.size());
        for (const std::string& report : image.reports)
        {
            put_string(out, report);
        }
        put_size(out, image.parameters);
        for (std::int32_t size : image.known_block)
        {
            put_size(out, static_cast<std::uint32_t>(size));
        }
        put_size(out, image.arguments.size());
        for (const argument_place& place : image.arguments)
        {
            put_size(out, place.offset);
            put_size(out, place.size);
        }
    }
    return out;
}

compiled_code unpack(std::string_view payload)
{
    if (payload.substr(0, magic.size()) != magic)
    {
        throw std::runtime_error("not a flyrt code bundle");
    }
    reader in(payload.substr(magic.size()));
    compiled_code code;
    for (std::uint64_t i = in.count(); i > 0; --i)
    {
        code.host_objects.push_back(in.text());
        code.host_digests.push_back(in.text());
    }
    for (std::uint64_t i = in.count(); i > 0; --i)
    {
        device_image image;
        image.kernel = in.text();
        image.code = in.text();
        image.digest = in.text();
        image.binary = in.text();
        for (std::uint64_t j = in.count(); j > 0; --j)
        {
            image.reports.push_back(in.text());
        }
        image.parameters = static_cast<std::uint32_t>(in.size());
        for (std::int32_t& size : image.known_block)
        {
            size = static_cast<std::int32_t>(in.size());
        }
        for (std::uint64_t j = in.count(); j > 0; --j)
        {
            argument_place place;
            place.offset = static_cast<std::uint32_t>(in.size());
            place.size = static_cast<std::uint32_t>(in.size());
            image.arguments.push_back(place);
        }
        code.images.push_back(std::move(image));
    }
    if (!in.done())
    {
        throw std::runtime_error("trailing bytes after a flyrt code bundle");
    }
    return code;
}

} // namespace flyrt::jit
