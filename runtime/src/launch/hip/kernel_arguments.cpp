#include "kernel_arguments.hpp"

#include <algorithm>
#include <cstring>

#include "../../jit/amdgpu_metadata.hpp"

namespace flyrt::launch::hip
{

std::size_t kernel_arguments_size(const std::vector<jit::argument_place>& places)
{
    std::size_t end = 0;
    for (const jit::argument_place& place : places)
    {
        end = std::max<std::size_t>(end, std::size_t(place.offset) + place.size);
    }
    return (end + 7) / 8 * 8;
}

void pack_kernel_arguments(const std::vector<jit::argument_place>& places,
                           const std::uint64_t* slots,
                           std::uint8_t* out)
{
    std::memset(out, 0, kernel_arguments_size(places));
    for (std::size_t i = 0; i < places.size(); ++i)
    {
        std::uint8_t bytes[8];
        for (int b = 0; b < 8; ++b)
        {
            bytes[b] = static_cast<std::uint8_t>(slots[i] >> (8 * b));
        }
        std::memcpy(out + places[i].offset, bytes, std::min<std::size_t>(places[i].size, 8));
    }
}

std::string packed_kernel_arguments(std::string_view code_object,
                                    const std::string& kernel,
                                    const std::vector<std::uint64_t>& slots)
{
    const std::vector<jit::argument_place> places = jit::argument_places(code_object, kernel, slots.size());
    std::string buffer(kernel_arguments_size(places), '\0');
    pack_kernel_arguments(places, slots.data(), reinterpret_cast<std::uint8_t*>(buffer.data()));
    return buffer;
}

} // namespace flyrt::launch::hip
