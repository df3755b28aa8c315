// Target-neutral lowering of one flyrt function to LLVM IR: types,
// constants, arithmetic, casts, vectors, loads and stores, and structured
// control flow. A target derives from it, emits the function's shell
// (signature, parameters, how threads map to the hardware) and provides
// the hooks below for what differs between targets.
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "flyrt/ir.hpp"
#include "flyrt/target.hpp"

namespace flyrt::codegen
{

class function_lowering
{
public:
    // `code_target` is what this function's code runs on (host launchers:
    // the CPU, whatever their kernels run on); it gives the address spaces.
    function_lowering(const ir::module& m,
                      const ir::function& f,
                      const target& code_target,
                      llvm::Module& out);
    virtual ~function_lowering() = default;
    function_lowering(const function_lowering&) = delete;
    function_lowering& operator=(const function_lowering&) = delete;

    // Emits the function into the output module.
    virtual void emit() = 0;

protected:
    // -- what a target provides --------------------------------------------------

    virtual llvm::Value* special(ir::special_register which, int dim);
    virtual void barrier(const ir::op& o);
    virtual void shuffle(const ir::op& o);
    virtual void mma(const ir::op& o);
    // ldmatrix: the verifier lets it reach NVIDIA's lowering alone.
    virtual void matrix_load(const ir::op& o);
    // The block's shared memory (static arrays, then `smem=`), as a byte pointer.
    virtual llvm::Value* shared_memory();
    // FP8 bytes (u8 scalar or vector) decoded exactly to float type `to`;
    // the neutral version is integer code.
    virtual llvm::Value* decode_fp8(llvm::Value* bytes, ir::fp8_format format, llvm::Type* to);
    // A math function of float scalars or vectors: exp, exp2, log, log2,
    // sqrt, rsqrt, sin, cos, tanh, erf (one operand) or pow (two).
    virtual llvm::Value* math(ir::arith kind, llvm::ArrayRef<llvm::Value*> operands, ir::scalar s) = 0;
    virtual void report(const ir::op& o);
    // fx.printf: a thread's formatted output.
    virtual void print(const ir::op& o);
    virtual void launch(const ir::op& o);
    // Atomics and fences as LLVM's atomic instructions under sync_scope().
    virtual void atomic(const ir::op& o);
    virtual void fence(const ir::op& o);
    // fx.async_copy, _commit and _wait. Neutrally a copy lands at once (a load
    // and a store, zeros where its fill is false), so committing and waiting
    // are nothing; GPUs with copies that proceed override all three.
    virtual void async_copy(const ir::op& o);
    virtual void async_commit(const ir::op&) {}
    virtual void async_wait(const ir::op&) {}
    // Neutrally nothing: each kernel starts after the one ahead of it in the
    // stream ends. NVIDIA GPUs from sm_90 let them overlap.
    virtual void grid_dependency(const ir::op&) {}
    // The LLVM sync scope of a flyrt scope on this target (neutral: the system's).
    virtual llvm::SyncScope::ID sync_scope(ir::memory_scope scope);
    // A value where it is used, and where it is defined; the CPU keeps values
    // that cross a barrier in per-thread slots.
    virtual llvm::Value* value(ir::value_id id);
    virtual void bind(ir::value_id id, llvm::Value* v);
    // Structured if: both branches, the results merged.
    virtual void emit_if(const ir::op& o);

    // -- for targets -------------------------------------------------------------

    // Line information, once m_llvm_fn exists: the function becomes a DWARF
    // subprogram of its Python file, and each op emitted after carries its
    // file and line (PTX .loc on NVIDIA, line tables elsewhere), so that
    // profilers and debuggers name the user's lines.
    void describe_source();

    llvm::Type* llvm_type(ir::scalar kind);
    llvm::Type* llvm_type(const ir::type& t);
    ir::scalar kind_of(ir::value_id id) const { return m_fn.type_of(id).kind; }
    // Emits a region's ops; returns the values of its terminator (if any).
    std::vector<llvm::Value*> emit_region(const ir::region& r);
    void emit_op(const ir::op& o);
    llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) { return m_b.CreateUnaryIntrinsic(id, x); }
    // The op's operands in an array of 8-byte slots, made once in the entry
    // block (an alloca on the op's path would grow the stack per loop trip);
    // a null pointer when it has none.
    llvm::Value* operand_slots(const ir::op& o);
    // A math library's scalar function `name` (float or double operands, the
    // same type back) applied lane by lane.
    llvm::Value* call_per_lane(const std::string& name, llvm::ArrayRef<llvm::Value*> operands);
    [[noreturn]] void unsupported(const ir::op& o, const std::string& what) const;
    // The element a load, store or atomic names: its pointer plus offset (the
    // operands from `pointer` on; an async copy's source is at 2).
    llvm::Value* address(const ir::op& o, llvm::Type* element, std::size_t pointer = 0);

    const ir::module& m_module;
    const ir::function& m_fn;
    const target& m_target;
    llvm::Module& m_out;
    llvm::LLVMContext& m_ctx;
    llvm::IRBuilder<> m_b;
    std::vector<llvm::Value*> m_values;
    llvm::Function* m_llvm_fn = nullptr;

private:
    const llvm::DILocation* location_of(const ir::location& loc);

    llvm::DISubprogram* m_scope = nullptr;
    llvm::Value* constant(const ir::type& t, const ir::op& o);
    llvm::Value* unary(ir::arith kind, ir::value_id operand);
    llvm::Value* safe_divisor(llvm::Value* a, llvm::Value* b, bool is_signed, llvm::Value*& by_zero);
    llvm::Value* integer_divide(ir::arith kind, llvm::Value* a, llvm::Value* b, bool is_signed);
    llvm::Value* binary(ir::arith kind, ir::value_id lhs, ir::value_id rhs);
    llvm::Value* compare(ir::predicate p, ir::value_id lhs, ir::value_id rhs);
    llvm::Value* reduce(ir::arith kind, ir::value_id vector);
    llvm::Value* fma(const ir::op& o);
    llvm::Value* cast(ir::value_id operand, const ir::type& result);
    unsigned alignment(const ir::op& o, const ir::type& t) const;
    unsigned piece_lanes(const ir::type& t, unsigned align) const;
    llvm::Value* load(const ir::op& o);
    void store(const ir::op& o);
    void emit_for(const ir::op& o);
    void emit_while(const ir::op& o);
};

} // namespace flyrt::codegen
