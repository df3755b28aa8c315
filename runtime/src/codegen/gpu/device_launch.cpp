#include "device_launch.hpp"

namespace flyrt::codegen
{

llvm::Value* emit_device_launch_call(llvm::IRBuilder<>& b, llvm::Module& host, const launch_call& call)
{
    llvm::Type* ptr = b.getPtrTy();
    llvm::Value* kernel =
        b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, call.kernels, call.kernel_index), "kernel");
    llvm::FunctionCallee launch = host.getOrInsertFunction(
        device_launch_symbol,
        llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr, ptr, b.getInt64Ty()}, false));
    return b.CreateCall(launch, {kernel, call.slots, call.geometry, call.stream});
}

} // namespace flyrt::codegen
