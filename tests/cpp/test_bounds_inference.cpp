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

// How the test kernel's guard reads and what its else side does.
struct guard_shape
{
    ir::predicate predicate = ir::predicate::lt; // i < n; gt reads n > i, ge n >= i, le i <= n
    bool else_stores = false;                    // the else side writes x[0] (an effect)
    bool bound_varies = false;                   // the bound is n + thread_idx.y (not the same for all)
};

// kernel copy(x, n, size): i = block * block_dim + thread; if i < n: x[i] = 0, the
// store bounds-checked against size (0 <= i < size, else a report), as the frontend checks it.
void build_guarded_store(ir::module& m, const guard_shape& shape)
{
    ir::function_builder k(
        m, "copy", ir::function_kind::kernel, {ptr_f32, i32, i32}, {"x", "n", "size"}, {"copy.py", 1});
    const auto& p = k.parameters();
    auto i = test::global_index(k, 2);
    auto bound = shape.bound_varies
                     ? k.binary(ir::arith::add, p[1], k.special(ir::special_register::thread_idx, 1, 3), 3)
                     : p[1];
    const bool swapped = shape.predicate == ir::predicate::gt || shape.predicate == ir::predicate::ge;
    auto guard = k.begin_if(k.compare(shape.predicate, swapped ? bound : i, swapped ? i : bound, 3), 3);
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
    if (shape.else_stores)
    {
        k.store(p[0], k.constant_int(i32, 0, 5), k.constant_int(ir::type{scalar::f32}, 1, 5), 5);
    }
    k.yield({}, 3);
    k.leave();
    k.finish(guard);
}

using block_function = std::int32_t (*)(std::int32_t n,
                                        std::int32_t size,
                                        std::int32_t block,
                                        std::int32_t dim);

// What the inference emits at block level for one block of `copy` (its
// verdict, or the end of its active x threads), JIT-compiled as a function
// of n, size, the block and its size, as a launch computes it before the
// block's threads run.
class block_level
{
public:
    enum class what
    {
        verdict,
        active_x
    };

    explicit block_level(what emitted, const guard_shape& shape = {})
    {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        build_guarded_store(m_module, shape);
        const ir::function& f = *m_module.functions.front();
        codegen::cpu::bounds_inference inference(f);
        std::vector<const ir::op*> ops;
        for (const auto& o : f.body.ops)
        {
            ops.push_back(o.get());
        }
        decides = inference.decides(ops);

        auto context = std::make_unique<llvm::LLVMContext>();
        auto module = std::make_unique<llvm::Module>("block_level", *context);
        llvm::Type* i32_type = llvm::Type::getInt32Ty(*context);
        auto* type = llvm::FunctionType::get(i32_type, {i32_type, i32_type, i32_type, i32_type}, false);
        auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "block_level", module.get());
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", fn));
        llvm::Value* n = fn->getArg(0);
        llvm::Value* size = fn->getArg(1);
        codegen::cpu::block_frame frame;
        frame.parameter = [&](ir::value_id id) { return id == f.parameters[1] ? n : size; };
        frame.block_idx = {fn->getArg(2), b.getInt32(0), b.getInt32(0)};
        frame.block_idx_last = frame.block_idx;
        frame.block_dim = {fn->getArg(3), b.getInt32(4), b.getInt32(1)};
        frame.grid_dim = {b.getInt32(1 << 24), b.getInt32(1), b.getInt32(1)};
        llvm::Value* result = emitted == what::verdict ? inference.emit_verdict(b, ops, frame)
                                                       : inference.emit_active_x(b, ops, frame);
        b.CreateRet(b.CreateZExt(result, i32_type));

        m_jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
        llvm::cantFail(
            m_jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
        m_function = llvm::cantFail(m_jit->lookup("block_level")).toPtr<block_function>();
    }

    std::int32_t operator()(std::int32_t n, std::int32_t size, std::int32_t block, std::int32_t dim) const
    {
        return m_function(n, size, block, dim);
    }

    bool decides = false;

private:
    ir::module m_module;
    std::unique_ptr<llvm::orc::LLJIT> m_jit;
    block_function m_function = nullptr;
};

// The verdict for one block of `copy`: whether every check holds.
struct guarded_store_verdict : block_level
{
    guarded_store_verdict() : block_level(what::verdict) {}

    bool holds(std::int32_t n, std::int32_t size, std::int32_t block, std::int32_t dim) const
    {
        return (*this)(n, size, block, dim) != 0;
    }
};

// The end of one block's x threads that can reach the guarded store.
std::int32_t active_x(const guard_shape& shape, std::int32_t n, std::int32_t block, std::int32_t dim)
{
    return block_level(block_level::what::active_x, shape)(n, n, block, dim);
}

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

TEST(BoundsInference, ThreadsPastTheGuardOfAnIndexDoNotRun)
{
    const guard_shape less{};
    EXPECT_EQ(active_x(less, 16, 0, 256), 16);   // 16 elements in a block of 256
    EXPECT_EQ(active_x(less, 300, 1, 256), 44);  // a grid's edge block
    EXPECT_EQ(active_x(less, 300, 0, 256), 256); // a full block
    EXPECT_EQ(active_x(less, 16, 3, 256), 0);    // a block past the end
    EXPECT_EQ(active_x(less, -5, 0, 256), 0);    // a negative count
    EXPECT_EQ(active_x(less, 0, 0, 1), 0);
    // Every way the same guard can be written.
    EXPECT_EQ(active_x({ir::predicate::gt}, 300, 1, 256), 44); // n > i
    EXPECT_EQ(active_x({ir::predicate::le}, 300, 1, 256), 45); // i <= n
    EXPECT_EQ(active_x({ir::predicate::ge}, 300, 1, 256), 45); // n >= i
}

TEST(BoundsInference, EveryThreadRunsWhereSkippingOneCouldChangeWhatHappens)
{
    // The else side has an effect: the threads that fail the guard have work too.
    EXPECT_EQ(active_x({ir::predicate::lt, true}, 16, 0, 256), 256);
    // A bound that differs between threads (it holds thread_idx.y).
    EXPECT_EQ(active_x({ir::predicate::lt, false, true}, 16, 0, 256), 256);
    // The index wraps past 2**31 in this block: intervals cannot follow it, so no thread is skipped.
    const std::int32_t last_block = (std::int32_t{1} << 23) - 1; // its index ends at 2**31 - 1
    EXPECT_EQ(active_x({}, INT32_MAX, last_block, 256), 255);
    EXPECT_EQ(active_x({}, INT32_MAX, last_block + 1, 256), 256);
}
