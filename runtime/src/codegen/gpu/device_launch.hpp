// How host launchers launch kernels loaded on a GPU, whichever GPU target
// compiled them: `i32 flyrt_device_launch(ptr kernel, ptr slots, ptr
// geometry, i64 stream)`, `kernel` from the launcher's table of loaded
// kernels (launch/device_kernel.hpp has the runtime side).
#pragma once

#include "../target_codegen.hpp"

namespace flyrt::codegen
{

inline constexpr const char* device_launch_symbol = "flyrt_device_launch";

llvm::Value* emit_device_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call);

} // namespace flyrt::codegen
