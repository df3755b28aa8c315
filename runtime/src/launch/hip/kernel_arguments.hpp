// An AMD kernel's explicit arguments as one buffer, laid out as its code
// object's metadata says (HIP reads each argument at that offset and adds
// the hidden ones itself): each parameter is the low `size` bytes of its
// 8-byte launcher slot, little-endian as the GPU reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../../jit/code_bundle.hpp"

namespace flyrt::launch::hip
{

// The buffer's size: the end of the last argument, rounded up to 8 bytes.
std::size_t kernel_arguments_size(const std::vector<jit::argument_place>& places);

// Fills `out` (kernel_arguments_size bytes) from the launcher's slots.
void pack_kernel_arguments(const std::vector<jit::argument_place>& places,
                           const std::uint64_t* slots,
                           std::uint8_t* out);

// The buffer a launch of `kernel` packs from `slots`, placed as AMD code
// object `code_object` says (a compile's packing, seen without a GPU).
std::string packed_kernel_arguments(std::string_view code_object,
                                    const std::string& kernel,
                                    const std::vector<std::uint64_t>& slots);

} // namespace flyrt::launch::hip
