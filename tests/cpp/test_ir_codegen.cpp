// The IR, its verifier and the backends, without Python: build a module,
// verify it, compile it for the CPU and run it, or to PTX for NVIDIA GPUs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "flyrt/builder.hpp"
#include "flyrt/verifier.hpp"
#include "jit/code_bundle.hpp"
#include "jit/compiler.hpp"
#include "jit/jit_engine.hpp"
#include "kernel_index.hpp"

using namespace flyrt;
using ir::scalar;

namespace
{

ir::type i32{scalar::i32};
ir::type f32{scalar::f32};
ir::type ptr_f32{scalar::ptr, scalar::f32};

// kernel saxpy(x, y, a, n): y[i] = a * x[i] + y[i] for i < n; host launches it.
void build_saxpy(ir::module& m)
{
    ir::function_builder k(m,
                           "saxpy",
                           ir::function_kind::kernel,
                           {ptr_f32, ptr_f32, f32, i32},
                           {"x", "y", "a", "n"},
                           {"saxpy.py", 1});
    const auto& p = k.parameters();
    auto i = test::global_index(k, 2);
    auto inside = k.begin_if(k.compare(ir::predicate::lt, i, p[3], 3), 3);
    k.enter(inside, 0);
    auto v = k.fma(p[2], k.load(p[0], i, 4), k.load(p[1], i, 4), 4);
    k.store(p[1], i, v, 4);
    k.yield({}, 4);
    k.leave();
    k.enter(inside, 1);
    k.yield({}, 3);
    k.leave();
    k.finish(inside);

    ir::function_builder h(m,
                           "launch",
                           ir::function_kind::host,
                           {ptr_f32, ptr_f32, f32, i32},
                           {"x", "y", "a", "n"},
                           {"saxpy.py", 10});
    const auto& q = h.parameters();
    auto block = h.constant_int(i32, 32, 11);
    auto grid =
        h.binary(ir::arith::div, h.binary(ir::arith::add, q[3], h.constant_int(i32, 31, 11), 11), block, 11);
    auto one = h.constant_int(i32, 1, 11);
    auto zero = h.constant_int(i32, 0, 11);
    auto stream = h.constant_int(ir::type{scalar::i64}, ir::default_stream, 11);
    h.launch("saxpy", {grid, one, one, block, one, one, zero, stream}, {q[0], q[1], q[2], q[3]}, 12);
}

using entry_function = std::int32_t (*)(const std::uint64_t*, void* const*);

// Compiles `m` for this CPU and loads it.
jit::loaded_object load_for_cpu(const ir::module& m)
{
    return jit::loaded_object(jit::unpack(jit::compile(m, cpu_target(32))).host_objects);
}

std::uint64_t slot(const void* p)
{
    return reinterpret_cast<std::uint64_t>(p);
}

} // namespace

TEST(IrCodegen, CompilesAndRunsALaunchOverAGrid)
{
    ir::module m;
    m.name = "saxpy";
    build_saxpy(m);
    ASSERT_NO_THROW(ir::verify(m, cpu_target(32)));

    jit::loaded_object code = load_for_cpu(m);
    auto entry = reinterpret_cast<entry_function>(code.address("launch"));
    std::vector<float> x(100), y(104, -1.0f);
    for (int i = 0; i < 100; ++i)
    {
        x[i] = static_cast<float>(i);
        y[i] = 1.0f;
    }
    float a = 2.0f;
    std::uint32_t a_bits;
    std::memcpy(&a_bits, &a, sizeof a);
    const std::uint64_t slots[] = {slot(x.data()), slot(y.data()), a_bits, 100};
    ASSERT_EQ(entry(slots, nullptr), 0);
    for (int i = 0; i < 100; ++i)
    {
        EXPECT_EQ(y[i], 2.0f * i + 1.0f);
    }
    for (int i = 100; i < 104; ++i)
    {
        EXPECT_EQ(y[i], -1.0f) << "written past n at " << i;
    }
}

TEST(IrCodegen, LoopCarriedValuesAndWhileLoops)
{
    // host-free check through a kernel: out[0] = sum_{k<n} k; out[1] = steps of a while
    ir::module m;
    m.name = "loops";
    ir::type i64{scalar::i64};
    ir::type ptr_i64{scalar::ptr, scalar::i64};
    {
        ir::function_builder k(
            m, "loops", ir::function_kind::kernel, {ptr_i64, i64}, {"out", "n"}, {"loops.py", 1});
        const auto& p = k.parameters();
        auto zero = k.constant_int(i64, 0, 2);
        auto one = k.constant_int(i64, 1, 2);
        auto loop = k.begin_for(zero, p[1], one, {zero}, 3);
        k.enter(loop, 0);
        const auto args = k.region_arguments(loop, 0);
        k.yield({k.binary(ir::arith::add, args[1], args[0], 4)}, 4);
        k.leave();
        auto sum = k.finish(loop)[0];
        k.store(p[0], zero, sum, 5);

        auto w = k.begin_while({p[1], zero}, 6); // halve until 0, counting
        k.enter(w, 0);
        const auto before = k.region_arguments(w, 0);
        k.condition(k.compare(ir::predicate::gt, before[0], zero, 6), {before[0], before[1]}, 6);
        k.leave();
        k.enter(w, 1);
        const auto after = k.region_arguments(w, 1);
        k.yield({k.binary(ir::arith::div, after[0], k.constant_int(i64, 2, 7), 7),
                 k.binary(ir::arith::add, after[1], one, 7)},
                7);
        k.leave();
        auto steps = k.finish(w)[1];
        k.store(p[0], one, steps, 8);
    }
    {
        ir::function_builder h(
            m, "run", ir::function_kind::host, {ptr_i64, i64}, {"out", "n"}, {"loops.py", 10});
        auto one = h.constant_int(i32, 1, 11);
        auto zero = h.constant_int(i32, 0, 11);
        auto stream = h.constant_int(i64, ir::default_stream, 11);
        h.launch("loops",
                 {one, one, one, one, one, one, zero, stream},
                 {h.parameters()[0], h.parameters()[1]},
                 11);
    }
    ASSERT_NO_THROW(ir::verify(m, cpu_target(32)));
    jit::loaded_object code = load_for_cpu(m);
    auto entry = reinterpret_cast<entry_function>(code.address("run"));
    std::int64_t out[2] = {0, 0};
    const std::uint64_t slots[] = {slot(out), 10};
    ASSERT_EQ(entry(slots, nullptr), 0);
    EXPECT_EQ(out[0], 45);
    EXPECT_EQ(out[1], 4); // 10 -> 5 -> 2 -> 1 -> 0
}

TEST(IrVerifier, RejectsAValueUsedOutsideItsRegion)
{
    ir::module m;
    ir::function_builder k(m, "bad", ir::function_kind::kernel, {ptr_f32}, {"out"}, {"bad.py", 1});
    auto cond = k.compare(
        ir::predicate::lt, k.special(ir::special_register::thread_idx, 0, 2), k.constant_int(i32, 4, 2), 2);
    auto branch = k.begin_if(cond, 3);
    k.enter(branch, 0);
    auto inner = k.constant_float(f32, 1.0, 4);
    k.yield({}, 4);
    k.leave();
    k.enter(branch, 1);
    k.yield({}, 3);
    k.leave();
    k.finish(branch);
    k.store(k.parameters()[0], k.constant_int(i32, 0, 6), inner, 6);
    try
    {
        ir::verify(m, cpu_target(32));
        FAIL() << "the verifier accepted a value leaking out of a branch";
    }
    catch (const ir::verify_error& e)
    {
        EXPECT_EQ(e.loc.file, "bad.py");
        EXPECT_EQ(e.loc.line, 6);
        EXPECT_NE(std::string(e.what()).find("is used where it is not defined"), std::string::npos);
    }
}

TEST(IrVerifier, RejectsALoopIndexUsedAfterItsLoop)
{
    ir::module m;
    ir::function_builder k(m, "bad", ir::function_kind::kernel, {ptr_f32}, {"out"}, {"bad.py", 1});
    auto loop =
        k.begin_for(k.constant_int(i32, 0, 2), k.constant_int(i32, 4, 2), k.constant_int(i32, 1, 2), {}, 2);
    const ir::value_id index = k.region_arguments(loop, 0).at(0);
    k.enter(loop, 0);
    k.yield({}, 3);
    k.leave();
    k.finish(loop);
    k.store(k.parameters()[0], index, k.constant_float(f32, 1.0, 5), 5);
    try
    {
        ir::verify(m, cpu_target(32));
        FAIL() << "the verifier accepted a loop's index after the loop";
    }
    catch (const ir::verify_error& e)
    {
        EXPECT_EQ(e.loc.line, 5);
        EXPECT_NE(std::string(e.what()).find("is used where it is not defined"), std::string::npos);
    }
}

TEST(IrVerifier, RejectsMismatchedTypesAndMisplacedOps)
{
    ir::module m;
    ir::function_builder h(m, "host", ir::function_kind::host, {i32, f32}, {"n", "a"}, {"h.py", 1});
    h.binary(ir::arith::add, h.parameters()[0], h.parameters()[1], 2);
    EXPECT_THROW(ir::verify(m, cpu_target(32)), ir::verify_error);

    ir::module m2;
    ir::function_builder h2(m2, "host", ir::function_kind::host, {}, {}, {"h.py", 1});
    h2.special(ir::special_register::thread_idx, 0, 3);
    try
    {
        ir::verify(m2, cpu_target(32));
        FAIL();
    }
    catch (const ir::verify_error& e)
    {
        EXPECT_EQ(e.loc.line, 3);
        EXPECT_NE(std::string(e.what()).find("only inside a kernel"), std::string::npos);
    }
}

TEST(NvptxCodegen, EmitsAPtxEntryThatLoadsAndStoresGlobalMemory)
{
    ir::module m;
    m.name = "saxpy";
    build_saxpy(m);
    const target gpu = nvptx_target(9, 0);
    ASSERT_NO_THROW(ir::verify(m, gpu));
    const jit::compiled_code code = jit::unpack(jit::compile(m, gpu));
    ASSERT_EQ(code.images.size(), 1u);
    const jit::device_image& image = code.images[0];
    EXPECT_EQ(image.kernel, "saxpy");
    EXPECT_EQ(image.parameters, 4u);
    EXPECT_NE(image.code.find(".target sm_90"), std::string::npos) << image.code;
    EXPECT_NE(image.code.find(".visible .entry saxpy("), std::string::npos) << image.code;
    EXPECT_NE(image.code.find("ld.global"), std::string::npos) << image.code;
    EXPECT_NE(image.code.find("st.global"), std::string::npos) << image.code;
    EXPECT_NE(image.code.find("%tid.x"), std::string::npos) << image.code;
    EXPECT_EQ(image.code.find(".extern .func"), std::string::npos) << image.code;
    // The launcher is host code that launches it through the kernel table.
    EXPECT_FALSE(code.host_objects.empty());
}

TEST(NvptxCodegen, ArchitecturesBeyondLlvmGetItsNewestPtx)
{
    EXPECT_EQ(nvptx_target(8, 9).cpu, "sm_89");
    EXPECT_EQ(nvptx_target(9, 0).features, "+ptx80");
    EXPECT_EQ(nvptx_target(12, 0).cpu, "sm_90");
    EXPECT_THROW(nvptx_target(5, 2), std::invalid_argument);
    EXPECT_NE(nvptx_target(9, 0).id(), cpu_target(32).id());
}
