// What a compile produces, as one payload (what the disk cache stores):
// the host launcher's relocatable objects (one per function) and, for GPU
// targets, one device image per kernel with the messages its error reports
// carry.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flyrt::jit
{

// Where one of a kernel's parameters goes in an AMD kernarg segment.
struct argument_place
{
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
};

struct device_image
{
    std::string kernel;               // its entry point
    std::string code;                 // PTX, or an AMD code object (ELF)
    std::string binary;               // NVIDIA: a cubin of the PTX ("": the driver compiles it)
    std::vector<std::string> reports; // report messages, by index
    std::uint32_t parameters = 0;     // 8-byte argument slots it takes
    std::array<std::int32_t, 3> known_block{{0, 0, 0}}; // the block size it was compiled for (0: any)
    std::vector<argument_place> arguments;              // AMD: from the code object's metadata, per parameter
    std::string digest; // what the compile memo keeps `code` under ("": not kept)
};

struct compiled_code
{
    std::vector<std::string> host_objects;
    std::vector<std::string> host_digests; // the memo's key of each object ("": not kept)
    std::vector<device_image> images;      // in the order of the module's kernels
};

std::string pack(const compiled_code& code);

// The code of a payload `pack` made; throws std::runtime_error on anything
// else (a truncated or foreign payload).
compiled_code unpack(std::string_view payload);

} // namespace flyrt::jit
