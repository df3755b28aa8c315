// A process's first compiles, made on threads at once (as the autotuner warms
// its configs), all finish: LLVM's target registry is a list, and two threads
// registering the native target at once once made it a cycle that
// lookupTarget walked forever.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "flyrt/builder.hpp"
#include "jit/code_bundle.hpp"
#include "jit/compiler.hpp"
#include "kernel_index.hpp"

using namespace flyrt;
using ir::scalar;

namespace
{

// kernel fill(y): y[i] = value; a module per thread, so no compile is another's memo hit.
ir::module fill_module(double value)
{
    ir::module m;
    ir::function_builder k(
        m, "fill", ir::function_kind::kernel, {ir::type{scalar::ptr, scalar::f32}}, {"y"}, {"fill.py", 1});
    k.store(
        k.parameters()[0], test::global_index(k, 2), k.constant_float(ir::type{scalar::f32}, value, 2), 2);
    return m;
}

// Compiles one module per thread, every thread starting when the last is ready; 0 if all compiled.
int compile_on_threads_at_once(int threads)
{
    std::vector<ir::module> modules;
    for (int t = 0; t < threads; ++t)
    {
        modules.push_back(fill_module(t));
    }
    std::mutex mutex;
    std::condition_variable all_ready;
    int ready = 0;
    std::vector<std::thread> workers;
    std::vector<int> compiled(threads, 0);
    for (int t = 0; t < threads; ++t)
    {
        workers.emplace_back(
            [&, t]
            {
                {
                    std::unique_lock<std::mutex> lock(mutex);
                    if (++ready == threads)
                    {
                        all_ready.notify_all();
                    }
                    all_ready.wait(lock, [&] { return ready == threads; });
                }
                try
                {
                    compiled[t] = !jit::unpack(jit::compile(modules[t], cpu_target(32))).host_objects.empty();
                }
                catch (const std::exception& error)
                {
                    std::fprintf(stderr, "thread %d: %s\n", t, error.what());
                }
            });
    }
    for (std::thread& worker : workers)
    {
        worker.join();
    }
    for (int done : compiled)
    {
        if (!done)
        {
            return 1;
        }
    }
    return 0;
}

} // namespace

TEST(ConcurrentCompiles, AFreshProcessCompilingOnThreadsAtOnceFinishes)
{
    // Each try is a child forked before this process has compiled anything: a fresh registry.
    constexpr int tries = 20;
    for (int attempt = 0; attempt < tries; ++attempt)
    {
        const pid_t child = fork();
        ASSERT_NE(child, -1);
        if (child == 0)
        {
            _exit(compile_on_threads_at_once(8));
        }
        int status = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        pid_t waited = 0;
        while ((waited = waitpid(child, &status, WNOHANG)) == 0 &&
               std::chrono::steady_clock::now() < deadline)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (waited == 0)
        {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            FAIL() << "try " << attempt << ": compiles on 8 threads at once still running after 60 s";
        }
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "try " << attempt << ": status " << status;
    }
}
