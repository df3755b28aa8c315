// What every GPU target's kernels share, whichever machine runs them: the
// kernel's shell (the IR's parameters by value, the target's calling
// convention and attributes), the block's shared memory as one dynamic
// array, threads numbered linearly in their block, shuffles as 32-bit
// pieces that the target moves between lanes, the error report record,
// the math functions, and the step between the two e4m3 FP8 formats.
//
// ABI: tensors are global pointers, then their shapes and strides, then
// scalars, as the host launcher's 8-byte slots hold them. Shared memory is
// `flyrt_shared` (the kernel's static arrays, then `smem=`). A report (an
// out-of-bounds index under FLYDSL_DEBUG_BOUNDS) claims the module global
// `flyrt_report` {i32 taken, i32 which, i64 values[report_values]}; the
// runtime reads it after the launch and formats report_messages(f)[which].
// Where the runtime sets `flyrt_report_mirror` (an i64 address of host
// memory the GPU can write, 0 if none), the claiming thread also copies the
// report there as it ends, `taken` last, so the host reads it without a copy
// (once, at the thread's end: not a copy of those stores at every report).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "../lowering.hpp"

namespace flyrt::codegen
{

inline constexpr const char* report_global = "flyrt_report";
inline constexpr const char* report_mirror_global = "flyrt_report_mirror";
inline constexpr const char* shared_global = "flyrt_shared";
inline constexpr int report_values = 16;

// The messages of a kernel's report ops, in the order `which` numbers them.
std::vector<std::string> report_messages(const ir::function& f);

class gpu_kernel_lowering : public function_lowering
{
public:
    using function_lowering::function_lowering;

    void emit() override;

protected:
    // -- what a GPU target provides ----------------------------------------------

    virtual unsigned calling_convention() const = 0;
    // Attributes from the kernel's known block size and occupancy wish.
    virtual void annotate_kernel() = 0;
    // Each 32-bit piece as lane `lane` of this warp holds it.
    virtual std::vector<llvm::Value*> move_pieces(const std::vector<llvm::Value*>& pieces,
                                                  llvm::Value* lane) = 0;
    // Float64 exp, exp2, log and log2 (sqrt is an instruction everywhere).
    virtual llvm::Value* f64_math(ir::arith kind, llvm::Value* x) = 0;
    // The device library's scalar function for math `kind` (sin, cos, tanh,
    // erf, pow; f32 or f64), which the JIT links into the kernel.
    virtual std::string library_function(ir::arith kind, bool f64) const = 0;
    // The intrinsic of the target's one-instruction f32 exp2 (arith::exp2_approx).
    virtual const char* approximate_exp2() const = 0;
    // A fence after which the host sees this thread's earlier stores before its later ones.
    virtual void fence_for_host() = 0;
    // patch_e4m3_specials' rare path: `decoded` with the special codes' lanes replaced by `format`'s
    // reading of them. Neutrally a compare and select a lane.
    virtual llvm::Value* with_e4m3_specials(llvm::Value* bytes, llvm::Value* decoded, ir::fp8_format format);

    // -- shared by GPU targets ---------------------------------------------------

    void shuffle(const ir::op& o) override;
    llvm::Value* shared_memory() override;
    void report(const ir::op& o) override;
    llvm::Value* math(ir::arith kind, llvm::ArrayRef<llvm::Value*> operands, ir::scalar s) override;

    // The name math `kind` has in C's libm ("sin", "pow", ...).
    static const char* libm_name(ir::arith kind);

    llvm::Value* linear_thread();
    llvm::Value* thread_count();
    // `decoded`: e4m3 `bytes` (a u8 vector) read in the other e4m3 format
    // and scaled to `format`'s value (x0.5 from e4m3fn to e4m3fnuz, x2 the
    // other way), which is right but for the three special codes (0x80,
    // 0x7F and 0xFF); those lanes get `format`'s reading.
    llvm::Value* patch_e4m3_specials(llvm::Value* bytes, llvm::Value* decoded, ir::fp8_format format);
    // The module's `flyrt_shared` of `bytes` (0: an external array sized
    // at launch), made on first use.
    llvm::GlobalVariable* shared_array(std::uint64_t bytes);
    // The module's global `name` (8-byte aligned, zero, in global memory the runtime finds by name), made on
    // first use.
    llvm::GlobalVariable* zeroed_global(const char* name, llvm::Type* type);
    // A u8 scalar as a 1-lane vector (to decode scalars and vectors alike).
    llvm::Value* as_vector(llvm::Value* bytes);

private:
    // The record as LLVM sees it.
    llvm::StructType* report_record();
    // At the thread's end: the record copied to the host's mirror if this thread claimed it.
    void mirror_report();

    std::unordered_map<const ir::op*, std::int32_t> m_report_index;
    std::size_t m_report_values_used = 0;  // the most values a report of the kernel records
    llvm::AllocaInst* m_claimed = nullptr; // i1: this thread claimed the record (kernels that report)
};

} // namespace flyrt::codegen
