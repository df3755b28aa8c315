// Lowers a verified flyrt module to LLVM IR for the CPU backend.
//
// ABI of the generated code (see launch/cpu_launch.hpp for the runtime side):
//   host launcher   i32 @<name>(ptr slots)             slot i (8 bytes) holds parameter i
//   kernel          void @<name>.blocks(ptr slots, ptr geometry, i64 first, i64 last, ptr shared)
//                   runs blocks [first, last) of the grid, each block's threads
//                   as loops over thread_idx z, y, x.
// A launch in a host function packs the kernel's arguments into slots and
// calls flyrt_cpu_launch; the launcher returns its non-zero status on error.
#pragma once

#include <memory>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "flyrt/ir.hpp"

namespace flyrt::codegen
{

inline constexpr const char* blocks_suffix = ".blocks";
inline constexpr const char* launch_symbol = "flyrt_cpu_launch";
inline constexpr const char* report_symbol = "flyrt_report_error";

std::unique_ptr<llvm::Module> emit_cpu_module(const ir::module& m, llvm::LLVMContext& context);

} // namespace flyrt::codegen
