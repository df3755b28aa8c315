// What an AMD code object says of its kernels: the HSA metadata note
// (NT_AMDGPU_METADATA, msgpack) that the HIP runtime itself reads, for the
// kernel-argument layout a launch must fill and the resources a kernel
// takes (registers, LDS, scratch, spills).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "code_bundle.hpp"

namespace flyrt::jit
{

struct kernel_argument
{
    std::uint32_t offset = 0; // in the kernarg segment
    std::uint32_t size = 0;
    std::string kind; // .value_kind: global_buffer, by_value, hidden_block_count_x, ...
};

struct code_object_kernel
{
    std::string name;
    std::vector<kernel_argument> arguments; // explicit and hidden, in order
    std::uint32_t kernarg_bytes = 0;        // .kernarg_segment_size
    std::uint32_t group_segment_bytes = 0;  // static LDS
    std::uint32_t private_segment_bytes = 0;
    std::uint32_t sgprs = 0;
    std::uint32_t vgprs = 0;
    std::uint32_t agprs = 0;
    std::uint32_t sgpr_spills = 0;
    std::uint32_t vgpr_spills = 0;
    std::uint32_t wavefront_size = 0;
};

// The kernels of an AMD code object (an ELF `ld.lld -shared` made); throws
// std::runtime_error for anything that is not one.
std::vector<code_object_kernel> read_code_object(std::string_view elf);

// Where the code object puts the first `count` arguments of `kernel` (its
// parameters), as HIP reads them when the kernel is launched.
std::vector<argument_place>
argument_places(std::string_view elf, const std::string& kernel, std::size_t count);

} // namespace flyrt::jit
