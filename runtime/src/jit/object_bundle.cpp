#include "object_bundle.hpp"

#include <cstdint>
#include <stdexcept>

namespace flyrt::jit
{
namespace
{

constexpr std::string_view magic = "FLYRT-OBJECTS-1\n";

void put_size(std::string& out, std::uint64_t size)
{
    for (int byte = 0; byte < 8; ++byte)
    {
        out.push_back(static_cast<char>((size >> (8 * byte)) & 0xff));
    }
}

std::uint64_t get_size(std::string_view in)
{
    std::uint64_t size = 0;
    for (int byte = 0; byte < 8; ++byte)
    {
        size |= std::uint64_t(static_cast<unsigned char>(in[byte])) << (8 * byte);
    }
    return size;
}

} // namespace

std::string pack_objects(const std::vector<std::string>& objects)
{
    std::string bundle(magic);
    put_size(bundle, objects.size());
    for (const std::string& object : objects)
    {
        put_size(bundle, object.size());
        bundle += object;
    }
    return bundle;
}

std::vector<std::string_view> unpack_objects(std::string_view bundle)
{
    if (bundle.substr(0, magic.size()) != magic || bundle.size() < magic.size() + 8)
    {
        throw std::runtime_error("not a flyrt object bundle");
    }
    std::string_view rest = bundle.substr(magic.size());
    const std::uint64_t count = get_size(rest);
    rest.remove_prefix(8);
    std::vector<std::string_view> objects;
    for (std::uint64_t i = 0; i < count; ++i)
    {
        if (rest.size() < 8 || rest.size() - 8 < get_size(rest))
        {
            throw std::runtime_error("truncated flyrt object bundle");
        }
        const std::uint64_t size = get_size(rest);
        objects.push_back(rest.substr(8, size));
        rest.remove_prefix(8 + size);
    }
    return objects;
}

} // namespace flyrt::jit
