// The CPU's block-level bounds inference (codegen/cpu/bounds_inference):
// its verdict for a block, emitted as LLVM IR, JIT-compiled and called with
// the block's sizes, as a launch computes it before the block's threads run.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/cpu/bounds_inference.hpp"
#include "flyrt/builder.hpp"
#include "kernel_index.hpp"

using namespace flyrt;
using ir::scalar;

namespace
{

const ir::type i32{scalar::i32};
const ir::type ptr_f32{scalar::ptr, scalar::f32};

// kernel copy(x, n, size): i = block * block_dim + thread; if i < n: x[i] = 0, the
// store bounds-checked against size (0 <= i < size, else a report), as the frontend checks it.
void build_guarded_store(ir::module& m)
{
    ir::function_builder k(
        m, "copy", ir::function_kind::kernel, {ptr_f32, i32, i32}, {"x", "n", "size"}, {"copy.py", 1});
    const auto& p = k.parameters();
    auto i = test::global_index(k, 2);
    auto guard = k.begin_if(k.compare(ir::predicate::lt, i, p[1], 3), 3);
    k.enter(guard, 0);
    auto inside = k.binary(ir::arith::bit_and,
                           k.compare(ir::predicate::ge, i, k.constant_int(i32, 0, 4), 4),
                           k.compare(ir::predicate::lt, i, p[2], 4),
                           4);
    auto check = k.begin_if(inside, 4);
    k.enter(check, 0);
    k.store(p[0], i, k.constant_int(ir::type{scalar::f32}, 0, 4), 4);
    k.yield({}, 4);
    k.leave();
    k.enter(check, 1);
    k.report("index out of bounds", {i}, 4);
    k.yield({}, 4);
    k.leave();
    k.finish(check);
    k.yield({}, 3);
    k.leave();
    k.enter(guard, 1);
    k.yield({}, 3);
    k.leave();
    k.finish(guard);
}

using verdict_function = std::int32_t (*)(std::int32_t n,
                                          std::int32_t size,
                                          std::int32_t block,
                                          std::int32_t dim);

// The inference's verdict for one block of `copy`, as a function of n, size, the block and its size.
class guarded_store_verdict
{
public:
    guarded_store_verdict()
    {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        build_guarded_store(m_module);
        const ir::function& f = *m_module.functions.front();
        codegen::cpu::bounds_inference inference(f);
        std::vector<const ir::op*> ops;
        for (const auto& o : f.body.ops)
        {
            ops.push_back(o.get());
        }
        decides = inference.decides(ops);

        auto context = std::make_unique<llvm::LLVMContext>();
        auto module = std::make_unique<llvm::Module>("verdict", *context);
        llvm::Type* i32_type = llvm::Type::getInt32Ty(*context);
        auto* type = llvm::FunctionType::get(i32_type, {i32_type, i32_type, i32_type, i32_type}, false);
        auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "verdict", module.get());
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", fn));
        llvm::Value* n = fn->getArg(0);
        llvm::Value* size = fn->getArg(1);
        codegen::cpu::block_frame frame;
        frame.parameter = [&](ir::value_id id) { return id == f.parameters[1] ? n : size; };
        frame.block_idx = {fn->getArg(2), b.getInt32(0), b.getInt32(0)};
        frame.block_idx_last = frame.block_idx;
        frame.block_dim = {fn->getArg(3), b.getInt32(1), b.getInt32(1)};
        frame.grid_dim = {b.getInt32(1024), b.getInt32(1), b.getInt32(1)};
        b.CreateRet(b.CreateZExt(inference.emit_verdict(b, ops, frame), i32_type));

        m_jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
        llvm::cantFail(
            m_jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
        m_verdict = llvm::cantFail(m_jit->lookup("verdict")).toPtr<verdict_function>();
    }

    bool holds(std::int32_t n, std::int32_t size, std::int32_t block, std::int32_t dim) const
    {
        return m_verdict(n, size, block, dim) != 0;
    }

    bool decides = false;

private:
    ir::module m_module;
    std::unique_ptr<llvm::orc::LLJIT> m_jit;
    verdict_function m_verdict = nullptr;
};

} // namespace

TEST(BoundsInference, AGuardNarrowsTheIndexItProtects)
{
    const guarded_store_verdict verdict;
    ASSERT_TRUE(verdict.decides);
    // A 16-element copy in a block of 256: threads 16 to 255 never reach the check.
    EXPECT_TRUE(verdict.holds(16, 16, 0, 256));
    // The edge block of a 300-element copy: threads past 299 stop at the guard.
    EXPECT_TRUE(verdict.holds(300, 300, 1, 256));
    EXPECT_TRUE(verdict.holds(300, 300, 0, 256));
}

TEST(BoundsInference, AGuardThatLetsAnIndexPastTheTensorKeepsTheChecks)
{
    const guarded_store_verdict verdict;
    EXPECT_FALSE(verdict.holds(16, 8, 0, 256));    // n past the tensor: threads 8 to 15 would go out
    EXPECT_FALSE(verdict.holds(300, 299, 1, 256)); // the edge block's thread 299
    EXPECT_TRUE(verdict.holds(300, 299, 0, 256));  // the block before it stays inside
    // A block no thread of which passes the guard has nothing to check.
    EXPECT_TRUE(verdict.holds(16, 8, 3, 256));
}
