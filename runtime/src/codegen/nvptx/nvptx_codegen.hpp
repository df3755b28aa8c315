// The NVIDIA target: each kernel a PTX entry (`ptx_kernel` calling
// convention) in a module of its own, launched from host code through the
// loaded-kernel table (device_launch.hpp) and the CUDA driver.
//
// ABI: the kernel takes the IR's parameters by value (tensors as global
// pointers, their shapes and strides, scalars), so the driver copies them
// out of the launcher's 8-byte slots. Shared memory is one dynamic array,
// `flyrt_shared` (the kernel's static arrays, then `smem=`). A report (an
// out-of-bounds index under FLYDSL_DEBUG_BOUNDS) claims the module global
// `flyrt_report` {i32 taken, i32 which, i64 values[report_values]}; the
// runtime reads it after the launch and formats report_messages(f)[which].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../target_codegen.hpp"

namespace flyrt::codegen::nvptx
{

inline constexpr const char* report_global = "flyrt_report";
inline constexpr const char* shared_global = "flyrt_shared";
inline constexpr int report_values = 16;

std::unique_ptr<target_codegen> make_nvptx_codegen(const target& t);

// The messages of a kernel's report ops, in the order `which` numbers them.
std::vector<std::string> report_messages(const ir::function& f);

} // namespace flyrt::codegen::nvptx
